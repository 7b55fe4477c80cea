/* SPDX-License-Identifier: MIT */
/*
 * Timeouts under CPU overload (docs/DESIGN.md section 6): a deadline counts
 * the owner's time on a CPU or asleep, not its time waiting for a CPU.
 *
 *  - timeout_overload: N busy threads pinned to one CPU, the lock hammered
 *    by one thread per CPU: no -ETIMEDOUT before the wall-clock cap (and,
 *    with no other load on the machine, none at all). The timeout is scaled
 *    so that N * (scheduler slice) / timeout matches 128 threads at the
 *    default 250 ms (rqtorture --overload 128 runs that one);
 *  - timeout_owner_spins: an owner spinning forever under the same overload
 *    gets its waiter -ETIMEDOUT within the cap;
 *  - timeout_owner_blocked: an owner blocked (in read()) while holding: -ETIMEDOUT within
 *    the plain bound, cause "blocked", the report names the owner;
 *  - timeout_owner_unknown: a word locked with no owner in any table:
 *    -ETIMEDOUT within the plain bound, cause "unknown";
 *  - timeout_waiter_starved: the waiter, not the owner, on the overloaded
 *    CPU, the owner asleep: -ETIMEDOUT at the cap, and the report has the
 *    owner's state and times from a read at the failure;
 *  - timeout_waiter_starved_small_cap: the same with a cap below the
 *    timeout: -ETIMEDOUT within the timeout, one cap and a grace;
 *  - timeout_behind_timed_out_head: a waiter queued behind a head that
 *    timed out fails with it, not on a deadline of its own: its report
 *    names no owner and its cause is "unknown";
 *  - timeout_teardown_ends: the teardown that follows a real timeout ends
 *    once the lock has moved on, however many waiters queue again.
 */
#include <sched.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lockword.h"
#include "rqspinlock.h"
#include "testutil.h"

#define OVERLOAD_THREADS 32
#define OWNER_TIMEOUT_NS (20 * TU_NS_PER_MS)
/* Busy threads beside a starved waiter: each gap between its polls is a
 * few scheduler slices, well over the 1 ms that counts as off CPU. */
#define STARVE_THREADS 8

struct overload {
	atomic_int go, stop;
	int nbusy;
	int cpus[2]; /* the first two CPUs we may use (equal if only one) */
	pthread_t busy[OVERLOAD_THREADS];
};

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
}

static void *busy_main(void *arg)
{
	struct overload *o = arg;

	/* Spin only once all are created: thread creation under TSan waits
	 * for each new thread to run, which the spinners would delay. */
	while (!atomic_load(&o->go))
		tu_sleep_ms(1);
	pin_to(o->cpus[0]);
	while (!atomic_load_explicit(&o->stop, memory_order_relaxed))
		;
	return NULL;
}

static void overload_start(struct overload *o, int n)
{
	cpu_set_t set;
	int found = 0;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &set))
			o->cpus[found++] = c;
	if (found == 1)
		o->cpus[1] = o->cpus[0];
	atomic_store(&o->go, 0);
	atomic_store(&o->stop, 0);
	o->nbusy = n;
	for (int i = 0; i < n; i++)
		tu_thread_start(&o->busy[i], busy_main, o);
	atomic_store(&o->go, 1);
}

static void overload_stop(struct overload *o)
{
	atomic_store(&o->stop, 1);
	for (int i = 0; i < o->nbusy; i++)
		CHECK_EQ(pthread_join(o->busy[i], NULL), 0);
}

/* ---- timeout_overload ---- */

struct hammer {
	struct overload *o;
	rqspinlock_t *lock;
	int cpu;
	uint64_t end;
	long *counter; /* protected by lock */
	long ops, timeouts, other;
	uint64_t shortest_timeout; /* ns, of the failed calls; UINT64_MAX: none */
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;

	pin_to(h->cpu);
	/* At least one acquisition each, however slow the start (a hang is
	 * the watchdog's). */
	while (rqu_now_ns() < h->end || h->ops == 0) {
		uint64_t t0 = rqu_now_ns();
		int r = res_spin_lock(h->lock);

		if (r == 0) {
			++*h->counter;
			tu_busy_ns(2000);
			res_spin_unlock(h->lock);
			h->ops++;
		} else if (r == -ETIMEDOUT) {
			t0 = rqu_now_ns() - t0;
			h->timeouts++;
			if (t0 < h->shortest_timeout)
				h->shortest_timeout = t0;
		} else
			h->other++;
	}
	return NULL;
}

/* Every failure's owner record, for the log: why no extension saved it. */
static void print_owner(const struct rqspinlock_report *r, void *arg)
{
	(void)arg;
	printf("# -ETIMEDOUT: owner slot %u tid %d state %c, over %.1f ms: on CPU %.1f ms, "
	       "waiting for a CPU %.1f ms\n",
	       r->owner.slot, (int)r->owner.tid, r->owner.state ? r->owner.state : '-',
	       (double)r->owner.window_ns / 1e6, (double)r->owner.on_cpu_ns / 1e6,
	       (double)r->owner.run_queue_ns / 1e6);
}

/*
 * The owner is runnable, so waits are extended, up to the cap: a failure
 * before the cap is a false timeout. Failures at the cap happen only when
 * the owner waited a whole cap for a CPU, which the designed load does not
 * cause but more load on the machine (a shared CI host) can.
 */
static void test_overload(void)
{
	/* 128 threads at 250 ms, scaled to OVERLOAD_THREADS threads */
	const uint64_t timeout = RQSPINLOCK_DEFAULT_TIMEOUT_NS * OVERLOAD_THREADS / 128;
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct overload o;
	struct hammer h[2];
	pthread_t th[2];
	struct rqspinlock_stats st;
	long counter = 0;
	uint64_t end, cap;

	res_spin_set_timeout_ns(timeout);
	cap = res_spin_get_timeout_cap_ns();
	res_spin_reset_stats();
	res_spin_set_report_hook(print_owner, NULL);
	overload_start(&o, OVERLOAD_THREADS);
	end = rqu_now_ns() + (uint64_t)tu_scaled(2500) * TU_NS_PER_MS;
	for (int i = 0; i < 2; i++) {
		h[i] = (struct hammer){&o, &lock, o.cpus[i], end, &counter, 0, 0, 0, UINT64_MAX};
		tu_thread_start(&th[i], hammer_main, &h[i]);
	}
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	overload_stop(&o);
	res_spin_set_report_hook(NULL, NULL);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	printf("# %d busy threads, timeout %.1f ms, cap %.1f ms: %ld + %ld acquisitions, "
	       "%ld + %ld timeouts, %llu deadline extensions\n",
	       OVERLOAD_THREADS, (double)timeout / 1e6, (double)cap / 1e6, h[0].ops, h[1].ops,
	       h[0].timeouts, h[1].timeouts, (unsigned long long)st.deadline_extensions);
	for (int i = 0; i < 2; i++)
		if (h[i].timeouts)
			CHECK_GE(h[i].shortest_timeout, cap);
	CHECK_EQ(h[0].other + h[1].other, 0);
	CHECK_EQ(counter, h[0].ops + h[1].ops);
	CHECK_GT(h[0].ops, 0);
	CHECK_GT(h[1].ops, 0);
	res_spin_set_timeout_ns(0);
}

/* ---- owners that never release ---- */

struct owner {
	rqspinlock_t *lock;
	int cpu;     /* -1: not pinned */
	int sleep;   /* 1: blocked in read() while holding, 0: spin */
	int wake[2]; /* sleep: a pipe; release() writes its byte */
	atomic_int held, release;
	int32_t tid;
	int slot;
};

static void *owner_main(void *arg)
{
	struct owner *w = arg;

	if (w->cpu >= 0)
		pin_to(w->cpu);
	w->tid = (int32_t)syscall(SYS_gettid);
	w->slot = res_spin_thread_slot();
	CHECK_EQ(res_spin_lock(w->lock), 0);
	atomic_store(&w->held, 1);
	if (w->sleep) {
		char c;

		/* Blocked for the whole wait: never runnable, however loaded
		 * the machine is. */
		CHECK_EQ(read(w->wake[0], &c, 1), 1);
	}
	while (!atomic_load_explicit(&w->release, memory_order_relaxed))
		;
	res_spin_unlock(w->lock);
	return NULL;
}

static struct rqspinlock_report last_report;
static atomic_int nr_reports;

static void keep_report(const struct rqspinlock_report *r, void *arg)
{
	(void)arg;
	last_report = *r;
	atomic_fetch_add(&nr_reports, 1);
}

/* An owner that holds @w->lock asleep (w->sleep set), and the report hook
 * that keeps what a failure reports, until sleeper_stop(). */
static void sleeper_start(struct owner *w, pthread_t *th)
{
	res_spin_set_report_hook(keep_report, NULL);
	CHECK_EQ(pipe(w->wake), 0);
	tu_thread_start(th, owner_main, w);
	TU_WAIT_UNTIL(atomic_load(&w->held), TU_SETUP_MS);
}

static void sleeper_stop(struct owner *w, pthread_t th)
{
	atomic_store(&w->release, 1);
	CHECK_EQ(write(w->wake[1], "x", 1), 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	close(w->wake[0]);
	close(w->wake[1]);
	res_spin_set_report_hook(NULL, NULL);
}

/* One timed res_spin_lock() of @lock that must fail: returns its duration. */
static uint64_t timed_failure(rqspinlock_t *lock, int cpu)
{
	uint64_t t0;
	int r;

	if (cpu >= 0)
		pin_to(cpu);
	t0 = rqu_now_ns();
	r = res_spin_lock(lock);
	t0 = rqu_now_ns() - t0;
	CHECK_EQ(r, -ETIMEDOUT);
	return t0;
}

static void check_causes_add_up(void)
{
	struct rqspinlock_stats st;

	CHECK_EQ(res_spin_get_stats(&st), 0);
	CHECK_EQ(st.timeout_owner_running + st.timeout_owner_blocked + st.timeout_owner_unknown,
	         st.timeout);
}

static void test_owner_spins(void)
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct overload o;
	struct owner w = {.lock = &lock, .sleep = 0};
	struct rqspinlock_stats st;
	pthread_t th;
	uint64_t dt, cap;

	res_spin_set_timeout_ns(OWNER_TIMEOUT_NS);
	cap = res_spin_get_timeout_cap_ns();
	CHECK_EQ(cap, RQSPINLOCK_DEFAULT_CAP_FACTOR * OWNER_TIMEOUT_NS);
	res_spin_reset_stats();
	overload_start(&o, OVERLOAD_THREADS);
	w.cpu = o.cpus[0];
	tu_thread_start(&th, owner_main, &w);
	TU_WAIT_UNTIL(atomic_load(&w.held), TU_SETUP_MS);
	dt = timed_failure(&lock, o.cpus[1]);
	atomic_store(&w.release, 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	overload_stop(&o);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	printf("# failed after %.1f ms (cap %.1f ms), %llu extensions\n", (double)dt / 1e6,
	       (double)cap / 1e6, (unsigned long long)st.deadline_extensions);
	/* One wait phase: the cap, plus a grace, plus scheduling slack. */
	CHECK_LE(dt, cap + 2 * OWNER_TIMEOUT_NS + tu_slack_ns(TU_STALL_NS));
	CHECK_EQ(st.timeout, 1);
	/* Seen running or runnable (or, with the waiter starved itself, not
	 * read at all), never asleep. */
	CHECK_EQ(st.timeout_owner_blocked, 0);
	check_causes_add_up();
	res_spin_set_timeout_ns(0);
}

/* One timeout, its one report naming the sleeping owner @w; with
 * @window, times over a window of two reads. */
static void check_blocked_report(const struct owner *w, const struct rqspinlock_stats *st,
                                 bool window)
{
	CHECK_EQ(st->timeout, 1);
	CHECK_EQ(st->timeout_owner_blocked, 1);
	CHECK_EQ(atomic_load(&nr_reports), 1);
	CHECK_EQ(last_report.owner.tid, w->tid);
	CHECK_EQ(last_report.owner.slot, w->slot);
	CHECK(last_report.owner.state == 'S' || last_report.owner.state == 'D');
	if (window)
		CHECK_GT(last_report.owner.window_ns, 0);
	CHECK_LE(last_report.owner.on_cpu_ns + last_report.owner.run_queue_ns,
	         last_report.owner.window_ns);
	check_causes_add_up();
}

static void test_owner_blocked(void)
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct owner w = {.lock = &lock, .cpu = -1, .sleep = 1};
	struct rqspinlock_stats st;
	pthread_t th;
	uint64_t dt;

	res_spin_set_timeout_ns(OWNER_TIMEOUT_NS);
	res_spin_reset_stats();
	sleeper_start(&w, &th);
	dt = timed_failure(&lock, -1);
	sleeper_stop(&w, th);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	printf("# failed after %.1f ms; owner tid %d state %c, on CPU %.1f ms, run queue %.1f ms\n",
	       (double)dt / 1e6, last_report.owner.tid, last_report.owner.state,
	       (double)last_report.owner.on_cpu_ns / 1e6,
	       (double)last_report.owner.run_queue_ns / 1e6);
	/* No extension for a sleeper: two timeouts (TAS mode) plus a grace. */
	CHECK_LE(dt, 3 * OWNER_TIMEOUT_NS + tu_slack_ns(TU_STALL_NS));
	/* Times over a window from the first read of the owner to the last:
	 * two reads, unless the waiter was itself off CPU across the probe
	 * (every extension here is on the waiter's account: the owner
	 * sleeps). */
	check_blocked_report(&w, &st, st.deadline_extensions == 0);
	res_spin_set_timeout_ns(0);
}

/*
 * The waiter starved instead: pinned to the overloaded CPU, it is off CPU
 * most of its wait, each deadline moves by that time until the cap, and the
 * owner, asleep all along, is read again when the wait fails: the report
 * gives its state then and its times since the probe.
 */
static void test_waiter_starved(void)
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct overload o;
	struct owner w = {.lock = &lock, .cpu = -1, .sleep = 1};
	struct rqspinlock_stats st;
	pthread_t th;
	uint64_t dt, cap;

	res_spin_set_timeout_ns(OWNER_TIMEOUT_NS);
	cap = res_spin_get_timeout_cap_ns();
	res_spin_reset_stats();
	sleeper_start(&w, &th);
	overload_start(&o, STARVE_THREADS);
	dt = timed_failure(&lock, o.cpus[0]);
	overload_stop(&o);
	sleeper_stop(&w, th);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	printf("# failed after %.1f ms (cap %.1f ms), %llu extensions; owner state %c, over "
	       "%.1f ms: on CPU %.1f ms, run queue %.1f ms\n",
	       (double)dt / 1e6, (double)cap / 1e6, (unsigned long long)st.deadline_extensions,
	       last_report.owner.state, (double)last_report.owner.window_ns / 1e6,
	       (double)last_report.owner.on_cpu_ns / 1e6,
	       (double)last_report.owner.run_queue_ns / 1e6);
	/* One phase at a time: within two caps each (TAS mode has one), plus slack. */
	CHECK_LE(dt, 4 * cap + tu_slack_ns(TU_STALL_NS));
	/* Usually after extensions on the waiter's account (printed above);
	 * a window either way: two reads, the last at the failure. */
	check_blocked_report(&w, &st, true);
	res_spin_set_timeout_ns(0);
}

/*
 * The same with a cap below the timeout: the waiter's own time off CPU
 * counts up to one cap more, not up to a whole timeout more (before: the
 * phase's duration, whatever the cap): the pending waiter fails within its
 * timeout, one cap and a grace.
 */
static void test_waiter_starved_small_cap(void)
{
	const uint64_t timeout = 3 * TU_NS_PER_S, cap = 1000; /* the smallest cap, 1 us */
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct overload o;
	struct owner w = {.lock = &lock, .cpu = -1, .sleep = 1};
	pthread_t th;
	uint64_t dt;

	res_spin_set_timeout_ns(timeout);
	res_spin_set_timeout_cap_ns(cap);
	sleeper_start(&w, &th);
	overload_start(&o, STARVE_THREADS);
	dt = timed_failure(&lock, o.cpus[0]);
	overload_stop(&o);
	sleeper_stop(&w, th);
	printf("# failed after %.1f ms (timeout %.1f ms, cap %.3f ms)\n", (double)dt / 1e6,
	       (double)timeout / 1e6, (double)cap / 1e6);
	CHECK_LE(dt, timeout + cap + timeout / 8 + tu_slack_ns(TU_STALL_NS));
	res_spin_set_timeout_cap_ns(0);
	res_spin_set_timeout_ns(0);
}

/*
 * The owner waits for another lock: A holds H and waits, as L's queue head,
 * for L, which B holds asleep for 1.5 timeouts (the pending waiter P ahead
 * of A times out on B's account). C waits for H meanwhile. A is blocked,
 * not faulty, and its own wait is bounded: C's deadline moves while A stays
 * in that one wait, and C takes H once A has had L, instead of failing at
 * one timeout on A's account (DESIGN.md 6a).
 */
struct h_then_l {
	rqspinlock_t *h, *l;
	atomic_int has_h, result;
};

static void *h_then_l_fn(void *arg)
{
	struct h_then_l *a = arg;
	int r;

	CHECK_EQ(res_spin_lock(a->h), 0);
	atomic_store(&a->has_h, 1);
	r = res_spin_lock(a->l);
	if (r == 0)
		res_spin_unlock(a->l);
	res_spin_unlock(a->h);
	atomic_store(&a->result, r);
	return NULL;
}

static void test_owner_waits(void)
{
	const uint64_t timeout = 200 * TU_NS_PER_MS;
	rqspinlock_t l = RQSPINLOCK_INIT, h = RQSPINLOCK_INIT;
	struct h_then_l a = {.h = &h, .l = &l};
	struct tu_holder b;
	struct tu_waiter p, c;
	pthread_t at;
	struct sched_param fifo = {.sched_priority = 1}, other = {.sched_priority = 0};
	int rp, rc;
	bool rt;

	res_spin_set_timeout_ns(timeout);
	tu_holder_start(&b, &l, timeout * 3 / 2);
	tu_waiter_start(&p, &l);
	TU_WAIT_UNTIL(TU_PENDING(tu_word(&l)) != 0, TU_SETUP_MS);
	tu_thread_start(&at, h_then_l_fn, &a);
	TU_WAIT_UNTIL(atomic_load(&a.has_h) && TU_TAIL(tu_word(&l)) != 0, TU_SETUP_MS);
	/* C real-time where allowed (root, as in CI): its own time off CPU,
	 * which a loaded machine makes long, would move its deadline too and
	 * hide the rule under test. */
	rt = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) == 0;
	tu_waiter_start(&c, &h);
	if (rt)
		CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
	tu_thread_join(at);
	rp = tu_waiter_join(&p);
	rc = tu_waiter_join(&c);
	printf("# pending waiter %d, A %d, C %d after %.1f ms%s\n", rp, atomic_load(&a.result), rc,
	       (double)(c.end - c.start) / 1e6, rt ? " (C real-time)" : "");
	CHECK(rp == 0 || rp == -ETIMEDOUT);
	CHECK_EQ(atomic_load(&a.result), 0);
	CHECK_EQ(rc, 0);
	tu_holder_join(&b);
	res_spin_set_timeout_ns(0);
}

static void test_owner_unknown(void)
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct rqspinlock_stats st;
	uint64_t dt;

	res_spin_set_timeout_ns(OWNER_TIMEOUT_NS);
	res_spin_reset_stats();
	res_spin_set_report_hook(keep_report, NULL);
	/* Locked, and nobody's table lists it (an overwritten word). */
	atomic_store_explicit(&lock.val, 1, memory_order_relaxed);
	dt = timed_failure(&lock, -1);
	res_spin_set_report_hook(NULL, NULL);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	printf("# failed after %.1f ms\n", (double)dt / 1e6);
	CHECK_LE(dt, 3 * OWNER_TIMEOUT_NS + tu_slack_ns(TU_STALL_NS));
	CHECK_EQ(st.timeout_owner_unknown, 1);
	CHECK_EQ(last_report.owner.tid, 0);
	/* No owner: the rest of the owner's record is zero, not left over. */
	CHECK_EQ(last_report.owner.slot, 0);
	CHECK_EQ(last_report.owner.state, 0);
	CHECK_EQ(last_report.owner.window_ns, 0);
	CHECK_EQ(last_report.owner.on_cpu_ns, 0);
	CHECK_EQ(last_report.owner.run_queue_ns, 0);
	check_causes_add_up();
	res_spin_lock_init(&lock);
	CHECK_EQ(res_spin_lock(&lock), 0);
	res_spin_unlock(&lock);
	res_spin_set_timeout_ns(0);
}

/* ---- a waiter behind a head that timed out ---- */

#define BEHIND_TIMEOUT_NS (100 * TU_NS_PER_MS)
/* Rounds run until one is torn down: each lasts 0.2 s on an idle machine,
 * 0.4 s when the teardown is missing, up to about 1.4 s under load. */
#define BEHIND_ROUNDS 10

/* Each failing thread's own last report (the hook runs on it). */
static _Thread_local struct rqspinlock_report my_report;

static void keep_my_report(const struct rqspinlock_report *r, void *arg)
{
	(void)arg;
	my_report = *r;
}

struct behind {
	struct tu_waiter w;
	struct rqspinlock_report report;
};

static void *behind_main(void *arg)
{
	struct behind *b = arg;

	memset(&my_report, 0, sizeof(my_report));
	tu_waiter_fn(&b->w);
	b->report = my_report;
	return NULL;
}

static void behind_start(struct behind *b, rqspinlock_t *lock)
{
	b->w.lock = lock;
	b->w.result = 1;
	atomic_init(&b->w.done, 0);
	tu_thread_start(&b->w.t, behind_main, b);
}

/*
 * Has the waiter that started after the head (whose tail was @tail_b)
 * linked behind it, while the head still waits? One read of the word: a
 * new tail while the pending bit is still taken (by the pending waiter,
 * which fails before the head, or by the head itself) means the head had
 * not left when the new waiter linked.
 */
static int linked_behind_head(rqspinlock_t *lock, uint32_t tail_b)
{
	uint32_t w = tu_word(lock);

	return tail_b && TU_PENDING(w) && TU_TAIL(w) && TU_TAIL(w) != tail_b;
}

/*
 * One round: an owner blocked while holding, a pending waiter, a queue
 * head and one waiter queued behind it. Returns 1 when the queued waiter's
 * -ETIMEDOUT came from the head's teardown: it linked behind the live head
 * and failed before its own deadline (three timeouts after it started);
 * 0 when the round cannot tell (a slow set-up on a loaded machine, or a
 * head whose wait was extended past that deadline by its time off CPU).
 */
static int behind_round(void)
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct owner w = {.lock = &lock, .cpu = -1, .sleep = 1};
	struct behind pend, head, queued;
	struct rqspinlock_stats st;
	pthread_t th;
	uint32_t tail_b;
	int linked = 0, torn_down;

	res_spin_reset_stats();
	CHECK_EQ(pipe(w.wake), 0);
	tu_thread_start(&th, owner_main, &w);
	TU_WAIT_UNTIL(atomic_load(&w.held), TU_SETUP_MS);
	behind_start(&pend, &lock);
	TU_WAIT_UNTIL(TU_PENDING(tu_word(&lock)) || tu_waiter_done(&pend.w), TU_SETUP_MS);
	behind_start(&head, &lock);
	TU_WAIT_UNTIL(TU_TAIL(tu_word(&lock)) || tu_waiter_done(&head.w), TU_SETUP_MS);
	tail_b = TU_TAIL(tu_word(&lock));
	behind_start(&queued, &lock);
	TU_WAIT_UNTIL((linked = linked_behind_head(&lock, tail_b)) || tu_waiter_done(&queued.w),
	              TU_SETUP_MS);
	CHECK_EQ(tu_waiter_join(&pend.w), -ETIMEDOUT);
	CHECK_EQ(tu_waiter_join(&head.w), -ETIMEDOUT);
	CHECK_EQ(tu_waiter_join(&queued.w), -ETIMEDOUT);
	atomic_store(&w.release, 1);
	CHECK_EQ(write(w.wake[1], "x", 1), 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	close(w.wake[0]);
	close(w.wake[1]);
	check_causes_add_up();
	torn_down = linked && queued.w.end - queued.w.start < 3 * BEHIND_TIMEOUT_NS;
	printf("# queued waiter %s, failed after %.1f ms (%s); its report's owner: tid %d "
	       "state %c\n",
	       linked ? "linked behind the head" : "not seen linked",
	       (double)(queued.w.end - queued.w.start) / 1e6,
	       torn_down ? "teardown" : "maybe its own deadline", (int)queued.report.owner.tid,
	       queued.report.owner.state ? queued.report.owner.state : '-');
	CHECK_EQ(queued.report.error, -ETIMEDOUT);
	if (!torn_down)
		return 0;
	/* Not a deadline of its own: no owner in the report, cause unknown. */
	CHECK_EQ(queued.report.owner.tid, 0);
	CHECK_EQ(queued.report.owner.state, 0);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	CHECK_EQ(st.timeout, 3);
	CHECK_GE(st.timeout_owner_unknown, 1);
	return 1;
}

static void test_behind_timed_out_head(void)
{
	int rounds = 0, torn_down;

	res_spin_set_timeout_ns(BEHIND_TIMEOUT_NS);
	res_spin_set_report_hook(keep_my_report, NULL);
	while (!(torn_down = behind_round()) && ++rounds < BEHIND_ROUNDS)
		;
	/* On a loaded machine a round may miss the setup, or the head's wait
	 * may be extended by its own time off CPU past the waiter's deadline,
	 * several rounds in a row; none torn down in BEHIND_ROUNDS means the
	 * teardown no longer reaches the waiter. */
	CHECK(torn_down);
	res_spin_set_report_hook(NULL, NULL);
	res_spin_set_timeout_ns(0);
}

/* ---- a teardown ends with the stall that started it ---- */

#define WAVE_THREADS    6
#define WAVE_TIMEOUT_NS (50 * TU_NS_PER_MS)
/* Longer than two caps, the most any wait lasts however long its thread
 * was off CPU: some waiter times out however loaded the machine is. */
#define WAVE_HOLD_NS (WAVE_TIMEOUT_NS * RQSPINLOCK_DEFAULT_CAP_FACTOR * 3)

struct wave {
	rqspinlock_t lock;
	atomic_int stop, hold; /* hold: the next owner holds for WAVE_HOLD_NS */
	_Atomic uint64_t hold_end;
	atomic_long failures, after_failures, acquired;
};

static void *wave_main(void *arg)
{
	struct wave *v = arg;

	while (!tu_stopped(&v->stop)) {
		int held_long;

		if (res_spin_lock(&v->lock)) {
			atomic_fetch_add(&v->failures, 1);
			if (atomic_load(&v->hold_end))
				atomic_fetch_add(&v->after_failures, 1);
			continue;
		}
		held_long = atomic_exchange(&v->hold, 0);
		if (held_long)
			tu_sleep_ns(WAVE_HOLD_NS); /* asleep: its waiters time out */
		atomic_fetch_add(&v->acquired, 1);
		res_spin_unlock(&v->lock);
		if (held_long) /* after the unlock: the stall is over */
			atomic_store(&v->hold_end, rqu_now_ns());
	}
	return NULL;
}

/*
 * One owner holds the lock past every waiter's bound while WAVE_THREADS
 * threads (more than the CPUs) hammer it: the queue head times out and the
 * queue is torn down, each waiter failing with -ETIMEDOUT. Waiters that
 * fail queue again at once, so a teardown that each waiter passed on
 * without looking kept failing them for as long as the hammering lasted,
 * while the lock worked (hundreds to thousands of failures after the hold
 * here). Once the hold is over, only the waits then in flight may fail:
 * at most one per thread.
 */
static void test_teardown_ends(void)
{
	struct wave v = {.lock = RQSPINLOCK_INIT};
	pthread_t th[WAVE_THREADS];
	uint64_t end;

	res_spin_set_timeout_ns(WAVE_TIMEOUT_NS);
	for (int i = 0; i < WAVE_THREADS; i++)
		tu_thread_start(&th[i], wave_main, &v);
	tu_sleep_ms(50);
	atomic_store(&v.hold, 1);
	TU_WAIT_UNTIL(atomic_load(&v.hold_end) != 0, 10 * TU_SETUP_MS);
	end = atomic_load(&v.hold_end);
	while (rqu_now_ns() < end + WAVE_TIMEOUT_NS * RQSPINLOCK_DEFAULT_CAP_FACTOR)
		tu_sleep_ms(10);
	atomic_store(&v.stop, 1);
	for (int i = 0; i < WAVE_THREADS; i++)
		tu_thread_join(th[i]);
	CHECK_EQ(tu_word(&v.lock), 0); /* no stray tail or pending bit */
	printf("# %ld acquisitions, %ld failures, %ld after the hold\n", atomic_load(&v.acquired),
	       atomic_load(&v.failures), atomic_load(&v.after_failures));
	CHECK_GT(atomic_load(&v.failures), 0); /* the hold did time waiters out */
	CHECK_LE(atomic_load(&v.after_failures), WAVE_THREADS);
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&v.lock, 4, tu_scaled(5000));
}

/* ---- process-shared locks: hand-overs the waiter never sees ---- */

#define SHARED_TIMEOUT_NS  (50 * TU_NS_PER_MS)
#define SHARED_HANDOVER_NS (1 * TU_NS_PER_MS)
/* Ten of the waiter's deadlines (a shared wait's is two timeouts). */
#define SHARED_HOLD_NS (20 * SHARED_TIMEOUT_NS)
#define SHARED_ROUNDS  5

/* The word after the next acquisition, as shared_try_word() makes it. */
static uint32_t shared_next(uint32_t held)
{
	return RQ_SHARED_MARK | ((held + RQ_SHARED_GEN_ONE) & RQ_SHARED_GEN_MASK) | RQ_LOCKED_VAL;
}

/*
 * Another process's threads pass a shared lock among themselves, each
 * unlock and the next lock falling between two looks of our waiter, so
 * that it never sees the word free (under contention, and for a waiter
 * napping among more threads than CPUs, most hand-overs pass so). The
 * stand-in rewrites the word from held to held, as that unlock and lock
 * leave it, every millisecond for ten of the waiter's deadlines, then
 * unlocks; no owner can be named (nobody's table lists it), as for
 * another process's. Every critical section is far shorter than the
 * timeout: the waiter must not time out, and takes the lock once it is
 * free. Returns 0 then, -ETIMEDOUT for a false timeout, 1 when the stand-in
 * itself stalled for a timeout (a long critical section: no conclusion).
 */
static int shared_handover_round(uint64_t *waited)
{
	rqspinlock_t lock;
	struct tu_waiter w;
	uint32_t word = RQ_SHARED_MARK | RQ_LOCKED_VAL;
	uint64_t start, last, gap = 0;
	int r;

	res_spin_lock_init_shared(&lock);
	atomic_store_explicit(&lock.val, word, memory_order_relaxed);
	tu_waiter_start(&w, &lock);
	start = last = rqu_now_ns();
	while (!tu_waiter_done(&w) && last - start < SHARED_HOLD_NS) {
		uint64_t now;

		tu_sleep_ns(SHARED_HANDOVER_NS);
		now = rqu_now_ns();
		gap = now - last > gap ? now - last : gap;
		last = now;
		word = shared_next(word);
		atomic_store_explicit(&lock.val, word, memory_order_relaxed);
	}
	/* The last owner's unlock: the locked byte cleared, gen kept. */
	atomic_store_explicit(&lock.val, word & ~RQ_LOCKED_MASK, memory_order_release);
	r = tu_waiter_join(&w);
	*waited = w.end - w.start;
	printf("# waiter: %d after %.1f ms; longest critical section %.1f ms\n", r,
	       (double)*waited / 1e6, (double)gap / 1e6);
	if (r == 0)
		return 0;
	CHECK_EQ(r, -ETIMEDOUT);
	return gap < SHARED_TIMEOUT_NS ? r : 1;
}

static void test_shared_unseen_handovers(void)
{
	rqspinlock_t lock;
	uint64_t waited = 0, dt;
	int r = 1;

	res_spin_set_timeout_ns(SHARED_TIMEOUT_NS);
	for (int round = 0; round < SHARED_ROUNDS && r == 1; round++)
		r = shared_handover_round(&waited);
	/* 1: the stand-in owner stalled for a timeout in every round;
	 * -ETIMEDOUT: a false timeout. */
	CHECK_EQ(r, 0);
	/* It waited through several deadlines, the lock changing hands. */
	CHECK_GE(waited, 4 * SHARED_TIMEOUT_NS);
	/* An owner that keeps the lock still times the waiter out. */
	res_spin_lock_init_shared(&lock);
	atomic_store_explicit(&lock.val, shared_next(RQ_SHARED_MARK), memory_order_relaxed);
	dt = timed_failure(&lock, -1);
	CHECK_LE(dt, res_spin_get_timeout_cap_ns() * 2 + tu_slack_ns(TU_STALL_NS));
	res_spin_set_timeout_ns(0);
}

static void test_cap_setter(void)
{
	CHECK_EQ(res_spin_set_timeout_cap_ns(5 * TU_NS_PER_S), 0);
	CHECK_EQ(res_spin_get_timeout_cap_ns(), 5 * TU_NS_PER_S);
	CHECK_EQ(res_spin_set_timeout_cap_ns(1), 5 * TU_NS_PER_S);
	CHECK_EQ(res_spin_get_timeout_cap_ns(), RQSPINLOCK_MIN_TIMEOUT_NS);
	CHECK_EQ(res_spin_set_timeout_cap_ns(UINT64_MAX), RQSPINLOCK_MIN_TIMEOUT_NS);
	CHECK_EQ(res_spin_get_timeout_cap_ns(), RQSPINLOCK_MAX_TIMEOUT_NS);
	CHECK_EQ(res_spin_set_timeout_cap_ns(0), RQSPINLOCK_MAX_TIMEOUT_NS);
	res_spin_set_timeout_ns(TU_NS_PER_MS);
	CHECK_EQ(res_spin_get_timeout_cap_ns(), RQSPINLOCK_DEFAULT_CAP_FACTOR * TU_NS_PER_MS);
	res_spin_set_timeout_ns(0);
}

static const struct tu_test tests[] = {
    TU_TEST("timeout_overload", test_overload, 60, TU_TAS | TU_OVERLOAD),
    TU_TEST("timeout_owner_spins", test_owner_spins, 60, TU_TAS | TU_OVERLOAD),
    TU_TEST("timeout_owner_blocked", test_owner_blocked, 40, TU_TAS),
    TU_TEST("timeout_owner_unknown", test_owner_unknown, 40, TU_TAS),
    TU_TEST("timeout_owner_waits", test_owner_waits, 30, 0),
    TU_TEST("timeout_waiter_starved", test_waiter_starved, 40, TU_TAS | TU_OVERLOAD),
    TU_TEST("timeout_waiter_starved_small_cap", test_waiter_starved_small_cap, 40, TU_OVERLOAD),
    TU_TEST("timeout_cap_setter", test_cap_setter, 20, 0),
    TU_TEST("timeout_shared_unseen_handovers", test_shared_unseen_handovers, 60, 0),
    TU_TEST("timeout_behind_timed_out_head", test_behind_timed_out_head, 30, 0),
    TU_TEST("timeout_teardown_ends", test_teardown_ends, 30, 0),
};

TU_MAIN(tests)
