/* SPDX-License-Identifier: MIT */
/*
 * Deadlock detection: AA, ABBA, longer cycles, the held-lock table limit,
 * out-of-order unlocks, absence of false positives on chains, and the report
 * hook. Scenarios after the kernel's rqspinlock selftests, rewritten for
 * threads.
 */
#include "testutil.h"

#include <fcntl.h>
#include <sys/syscall.h>

static int32_t my_tid(void)
{
	return (int32_t)syscall(SYS_gettid);
}

static int holds(const struct rqspinlock_thread_info *ti, const void *lock)
{
	for (uint32_t i = 0; i < ti->nr_held && i < RQSPINLOCK_NR_HELD; i++)
		if (ti->held[i] == lock)
			return 1;
	return 0;
}

/* ---- AA ---- */

static void test_aa(void)
{
	rqspinlock_t a = RQSPINLOCK_INIT, b = RQSPINLOCK_INIT;
	struct rqspinlock_stats before, after;
	sigset_t flags;
	uint64_t t0;

	/* Detected at once, not after spinning: well under the (long) timeout. */
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	tu_stats(&before);
	CHECK_EQ(res_spin_lock(&a), 0);
	t0 = rqu_now_ns();
	CHECK_EQ(res_spin_lock(&a), -EDEADLK);
	CHECK_LT(rqu_now_ns() - t0, TU_LONG_TIMEOUT_NS / 4);
	CHECK_EQ(tu_word(&a), tu_owner()); /* still held by us */
	CHECK_EQ(res_spin_trylock(&a), -EBUSY);
	CHECK_EQ(res_spin_lock_irqsave(&a, &flags), -EDEADLK);
	/* AA with another lock taken in between. */
	CHECK_EQ(res_spin_lock(&b), 0);
	CHECK_EQ(res_spin_lock(&a), -EDEADLK);
	CHECK_EQ(res_spin_lock(&b), -EDEADLK);
	res_spin_unlock(&b);
	res_spin_unlock(&a);
	CHECK_EQ(tu_word(&a), 0);
	CHECK_EQ(tu_word(&b), 0);
	CHECK_EQ(res_spin_lock(&a), 0);
	res_spin_unlock(&a);
	tu_stats(&after);
	CHECK_EQ(after.deadlock_aa - before.deadlock_aa, 4);
}

/* ---- ABBA: 16 threads A-then-B against one B-then-A ---- */

#define ABBA_THREADS 16

struct abba_many {
	rqspinlock_t a, b;
	atomic_int stop;
	atomic_long false_deadlocks; /* -EDEADLK on A while holding nothing */
};

static void *ab_worker(void *arg)
{
	struct abba_many *s = arg;

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		int r = res_spin_lock(&s->a);

		if (r == -EDEADLK)
			atomic_fetch_add_explicit(&s->false_deadlocks, 1, memory_order_relaxed);
		if (r != 0)
			continue;
		if (res_spin_lock(&s->b) == 0)
			res_spin_unlock(&s->b);
		res_spin_unlock(&s->a);
	}
	return NULL;
}

static void test_abba_many(void)
{
	struct abba_many s = {.a = RQSPINLOCK_INIT, .b = RQSPINLOCK_INIT};
	uint64_t deadline = rqu_now_ns() + 10 * TU_NS_PER_S;
	pthread_t t[ABBA_THREADS];
	long iters = 0, timeouts = 0;
	int found = 0;

	res_spin_set_timeout_ns(0);
	for (int i = 0; i < ABBA_THREADS; i++)
		tu_thread_start(&t[i], ab_worker, &s);
	for (; !found && iters < 100000000 && rqu_now_ns() < deadline; iters++) {
		int r;

		if (res_spin_lock(&s.b) != 0)
			continue;
		/*
		 * A critical section on B (1 ms): an A-then-B thread that takes A
		 * meanwhile then waits for B, so that our wait for A closes the
		 * cycle (otherwise it mostly closes on their side: their
		 * -EDEADLK on B, ignored).
		 */
		tu_busy_ns(1000000);
		r = res_spin_lock(&s.a);
		if (r == 0)
			res_spin_unlock(&s.a);
		found = r == -EDEADLK;
		timeouts += r == -ETIMEDOUT;
		res_spin_unlock(&s.b);
	}
	atomic_store_explicit(&s.stop, 1, memory_order_relaxed);
	for (int i = 0; i < ABBA_THREADS; i++)
		tu_thread_join(t[i]);
	printf("# B-then-A: -EDEADLK %s after %ld iterations (%ld timeouts)\n",
	       found ? "seen" : "NOT seen", iters, timeouts);
	CHECK(found);
	CHECK_EQ(atomic_load(&s.false_deadlocks), 0);
	CHECK_EQ(tu_word(&s.a), 0);
	CHECK_EQ(tu_word(&s.b), 0);
}

/* ---- threads each holding one lock and then taking the next one's ---- */

#define RING_MAX 6

struct ring {
	rqspinlock_t locks[RING_MAX];
	int n;            /* threads (and locks) */
	int closed;       /* 1: the last thread waits for lock 0 (a cycle); 0: a chain */
	uint64_t hold_ns; /* chain: how long the last thread holds its lock */
	pthread_barrier_t all_hold;
	struct ring_result {
		int r;
		int32_t tid;
		uint64_t elapsed;
	} res[RING_MAX];
	atomic_int next;
};

static void *ring_worker(void *arg)
{
	struct ring *s = arg;
	int i = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);
	rqspinlock_t *mine = &s->locks[i];
	rqspinlock_t *want = &s->locks[(i + 1) % s->n];
	uint64_t t0;

	s->res[i].tid = my_tid();
	CHECK_EQ(res_spin_lock(mine), 0);
	pthread_barrier_wait(&s->all_hold);
	if (!s->closed && i == s->n - 1) {
		tu_sleep_ns(s->hold_ns);
		res_spin_unlock(mine);
		s->res[i].r = 0;
		return NULL;
	}
	t0 = rqu_now_ns();
	s->res[i].r = res_spin_lock(want);
	s->res[i].elapsed = rqu_now_ns() - t0;
	if (s->res[i].r == 0)
		res_spin_unlock(want);
	res_spin_unlock(mine);
	return NULL;
}

/* Runs one round; returns how many threads got -EDEADLK. */
static int ring_round(struct ring *s)
{
	pthread_t t[RING_MAX];
	int deadlocks = 0;

	atomic_store(&s->next, 0);
	pthread_barrier_init(&s->all_hold, NULL, (unsigned)s->n);
	for (int i = 0; i < s->n; i++)
		tu_thread_start(&t[i], ring_worker, s);
	for (int i = 0; i < s->n; i++)
		tu_thread_join(t[i]);
	pthread_barrier_destroy(&s->all_hold);
	for (int i = 0; i < s->n; i++) {
		CHECK(s->res[i].r == 0 || s->res[i].r == -EDEADLK);
		if (s->res[i].r == -EDEADLK) {
			CHECK_LT(s->res[i].elapsed, TU_LONG_TIMEOUT_NS / 4);
			deadlocks++;
		}
		CHECK_EQ(tu_word(&s->locks[i]), 0);
	}
	return deadlocks;
}

static void cycle_test(int n, uint64_t (*counter)(const struct rqspinlock_stats *))
{
	struct ring s = {.n = n, .closed = 1};
	struct rqspinlock_stats before, after;
	long rounds = tu_scaled(20), found = 0;

	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	tu_stats(&before);
	for (long i = 0; i < rounds; i++) {
		int d = ring_round(&s);

		CHECK_GE(d, 1);
		found += d;
	}
	tu_stats(&after);
	printf("# %d-thread cycle: %ld rounds, %ld -EDEADLK; abba %+lld, cycle %+lld\n", n, rounds,
	       found, (long long)(after.deadlock_abba - before.deadlock_abba),
	       (long long)(after.deadlock_cycle - before.deadlock_cycle));
	CHECK_GT(counter(&after), counter(&before));
	CHECK_EQ(after.timeout, before.timeout);
	res_spin_set_timeout_ns(0);
}

static uint64_t abba_count(const struct rqspinlock_stats *st)
{
	return st->deadlock_abba;
}

static uint64_t cycle_count(const struct rqspinlock_stats *st)
{
	return st->deadlock_cycle;
}

static void test_abba_pair(void)
{
	cycle_test(2, abba_count);
}

static void test_cycle3(void)
{
	cycle_test(3, cycle_count);
}

/* A chain T0 -> T1 -> ... -> T5 that ends at a thread that releases: no cycle. */
static void test_chain(void)
{
	struct ring s = {.n = RING_MAX, .closed = 0, .hold_ns = 50 * TU_NS_PER_MS};
	struct rqspinlock_stats before, after;

	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	tu_stats(&before);
	for (long i = 0; i < tu_scaled(12); i++)
		CHECK_EQ(ring_round(&s), 0);
	tu_stats(&after);
	CHECK_EQ(after.deadlock_abba + after.deadlock_cycle + after.deadlock_aa,
	         before.deadlock_abba + before.deadlock_cycle + before.deadlock_aa);
	CHECK_EQ(after.timeout, before.timeout);
	res_spin_set_timeout_ns(0);
}

/* ---- the held-lock table limit ---- */

#define HELD_MAX_LOCKS 34

static int lock_timed(rqspinlock_t *l, uint64_t *elapsed)
{
	uint64_t t0 = rqu_now_ns();
	int r = res_spin_lock(l);

	*elapsed = rqu_now_ns() - t0;
	return r;
}

/*
 * An AA on a lock the table does not track: found through the locked byte,
 * which names this thread, where the thread has an owner id; otherwise only
 * the timeout ends it.
 */
static void check_untracked_aa(rqspinlock_t *l)
{
	uint64_t elapsed;

	res_spin_set_timeout_ns(tu_owner() != 1 ? TU_LONG_TIMEOUT_NS : 20 * TU_NS_PER_MS);
	if (tu_owner() != 1) {
		CHECK_EQ(lock_timed(l, &elapsed), -EDEADLK);
		CHECK_LT(elapsed, TU_LONG_TIMEOUT_NS / 4);
	} else {
		CHECK_EQ(lock_timed(l, &elapsed), -ETIMEDOUT);
		CHECK_GE(elapsed, 20 * TU_NS_PER_MS);
	}
	CHECK_EQ(TU_LOCKED(tu_word(l)), tu_owner());
}

static void test_held_max(void)
{
	rqspinlock_t locks[HELD_MAX_LOCKS];

	_Static_assert(RQSPINLOCK_NR_HELD == 31, "the indices below assume 31 tracked entries");
	for (int i = 0; i < HELD_MAX_LOCKS; i++)
		res_spin_lock_init(&locks[i]);
	for (int i = 0; i < HELD_MAX_LOCKS; i++)
		CHECK_EQ(res_spin_lock(&locks[i]), 0);
	/* Entries 31 and up are not tracked. */
	check_untracked_aa(&locks[32]);
	check_untracked_aa(&locks[31]);
	check_untracked_aa(&locks[33]);
	res_spin_set_timeout_ns(50 * TU_NS_PER_MS);
	/* Tracked entries (0..30) are still detected. */
	CHECK_EQ(res_spin_lock(&locks[4]), -EDEADLK);
	CHECK_EQ(res_spin_lock(&locks[30]), -EDEADLK);
	CHECK_EQ(res_spin_lock(&locks[0]), -EDEADLK);
	for (int i = HELD_MAX_LOCKS - 1; i >= 0; i--) {
		CHECK_EQ(tu_word(&locks[i]), tu_owner());
		res_spin_unlock(&locks[i]);
		CHECK_EQ(tu_word(&locks[i]), 0);
	}
	/* The table is empty and works again. */
	CHECK_EQ(res_spin_lock(&locks[32]), 0);
	CHECK_EQ(res_spin_lock(&locks[32]), -EDEADLK);
	res_spin_unlock(&locks[32]);
	res_spin_set_timeout_ns(0);
}

/* ---- out-of-order unlock ---- */

/*
 * Takes @p l while another thread holds it for 30 ms, so that this thread
 * goes through the slow path: a stale entry of @p l in this thread's table
 * would give a false -EDEADLK there.
 */
static void check_no_stale_entry(rqspinlock_t *l)
{
	struct tu_holder h;

	tu_holder_start(&h, l, 30 * TU_NS_PER_MS);
	CHECK_EQ(res_spin_lock(l), 0);
	res_spin_unlock(l);
	tu_holder_join(&h);
	CHECK_EQ(tu_word(l), 0);
}

static void check_aa(rqspinlock_t *l)
{
	CHECK_EQ(res_spin_lock(l), -EDEADLK);
}

static void test_ooo_unlock(void)
{
	rqspinlock_t a = RQSPINLOCK_INIT, b = RQSPINLOCK_INIT, c = RQSPINLOCK_INIT;

	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	CHECK_EQ(res_spin_lock(&a), 0);
	CHECK_EQ(res_spin_lock(&b), 0);
	res_spin_unlock(&a);
	CHECK_EQ(tu_word(&a), 0);
	check_aa(&b);
	res_spin_unlock(&b);
	CHECK_EQ(tu_word(&b), 0);

	CHECK_EQ(res_spin_lock(&b), 0);
	check_aa(&b);
	res_spin_unlock(&b);
	CHECK_EQ(res_spin_lock(&a), 0);
	check_aa(&a);
	res_spin_unlock(&a);
	check_no_stale_entry(&a);
	check_no_stale_entry(&b);

	/* Middle entry out first. */
	CHECK_EQ(res_spin_lock(&a), 0);
	CHECK_EQ(res_spin_lock(&b), 0);
	CHECK_EQ(res_spin_lock(&c), 0);
	res_spin_unlock(&b);
	check_aa(&a);
	check_aa(&c);
	check_no_stale_entry(&b);
	res_spin_unlock(&a);
	check_aa(&c);
	check_no_stale_entry(&a);
	res_spin_unlock(&c);
	check_no_stale_entry(&c);
	CHECK_EQ(tu_word(&a) | tu_word(&b) | tu_word(&c), 0);
	res_spin_set_timeout_ns(0);
}

/*
 * Out-of-order unlocks while more than RQSPINLOCK_NR_HELD locks are held:
 * the tracked ones are still detected, and once everything is released the
 * table is clean (no stale entry, AA works).
 */
static void test_held_max_ooo(void)
{
	rqspinlock_t locks[HELD_MAX_LOCKS];
	const int out_of_order[] = {5, 32, 0, 31, 17};
	int held[HELD_MAX_LOCKS];
	int r;

	res_spin_set_timeout_ns(20 * TU_NS_PER_MS);
	for (int i = 0; i < HELD_MAX_LOCKS; i++) {
		res_spin_lock_init(&locks[i]);
		CHECK_EQ(res_spin_lock(&locks[i]), 0);
		held[i] = 1;
	}
	for (size_t k = 0; k < sizeof(out_of_order) / sizeof(out_of_order[0]); k++) {
		res_spin_unlock(&locks[out_of_order[k]]);
		held[out_of_order[k]] = 0;
		CHECK_EQ(tu_word(&locks[out_of_order[k]]), 0);
		for (int i = 0; i < HELD_MAX_LOCKS; i++) {
			if (!held[i])
				continue;
			r = res_spin_lock(&locks[i]);
			/* Tracked when taken, or named by the byte: found. */
			if (i < RQSPINLOCK_NR_HELD || tu_owner() != 1)
				CHECK_EQ(r, -EDEADLK);
			else
				CHECK(r == -EDEADLK || r == -ETIMEDOUT);
			CHECK_EQ(tu_word(&locks[i]), tu_owner());
		}
	}
	for (int i = HELD_MAX_LOCKS - 1; i >= 0; i--)
		if (held[i])
			res_spin_unlock(&locks[i]);
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	for (int i = 0; i < HELD_MAX_LOCKS; i++) {
		CHECK_EQ(tu_word(&locks[i]), 0);
		if (i % 4 == 0 || i >= 30)
			check_no_stale_entry(&locks[i]);
	}
	CHECK_EQ(res_spin_lock(&locks[33]), 0);
	check_aa(&locks[33]);
	res_spin_unlock(&locks[33]);
	res_spin_set_timeout_ns(0);
}

#define HOLES_LOCKS 40
#define HOLES_FREED 30

/*
 * Take 40 locks (the last 9 untracked), then release the 30 oldest: the
 * thread holds 10, one tracked and nine in holes the unlocks left. An AA
 * on any of the ten is still found, and the locks work again afterwards.
 */
static void test_untracked_holes(void)
{
	rqspinlock_t locks[HOLES_LOCKS];

	for (int i = 0; i < HOLES_LOCKS; i++) {
		res_spin_lock_init(&locks[i]);
		CHECK_EQ(res_spin_lock(&locks[i]), 0);
	}
	for (int i = 0; i < HOLES_FREED; i++)
		res_spin_unlock(&locks[i]);
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	CHECK_EQ(res_spin_lock(&locks[HOLES_FREED]), -EDEADLK); /* tracked */
	for (int i = HOLES_FREED + 1; i < HOLES_LOCKS; i++)
		check_untracked_aa(&locks[i]);
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	for (int i = HOLES_LOCKS - 1; i >= HOLES_FREED; i--)
		res_spin_unlock(&locks[i]);
	for (int i = 0; i < HOLES_LOCKS; i += 3) {
		CHECK_EQ(tu_word(&locks[i]), 0);
		check_no_stale_entry(&locks[i]);
	}
	CHECK_EQ(res_spin_lock(&locks[HOLES_LOCKS - 1]), 0);
	check_aa(&locks[HOLES_LOCKS - 1]);
	res_spin_unlock(&locks[HOLES_LOCKS - 1]);
	res_spin_set_timeout_ns(0);
}

#define OOO_LOCKS 8

/*
 * Random lock/unlock of a private set of 8 locks. After each step, one lock
 * is probed: a held one must give -EDEADLK (its entry is still found); a free
 * one is made to look owned by someone else and must time out (a stale entry
 * would give -EDEADLK).
 */
static long ooo_random_run(uint64_t seed, long steps)
{
	rqspinlock_t locks[OOO_LOCKS];
	int held[OOO_LOCKS] = {0};
	long probes = 0;

	for (int i = 0; i < OOO_LOCKS; i++)
		res_spin_lock_init(&locks[i]);
	for (long s = 0; s < steps; s++) {
		int i = (int)(tu_rand(&seed) % OOO_LOCKS), j = (int)(tu_rand(&seed) % OOO_LOCKS);

		if (held[i])
			res_spin_unlock(&locks[i]);
		else
			CHECK_EQ(res_spin_lock(&locks[i]), 0);
		held[i] = !held[i];
		if (held[j]) {
			CHECK_EQ(res_spin_lock(&locks[j]), -EDEADLK);
		} else if (s % 16 == 0) {
			atomic_store_explicit(&locks[j].val, 1, memory_order_relaxed);
			CHECK_EQ(res_spin_lock(&locks[j]), -ETIMEDOUT);
			res_spin_lock_init(&locks[j]);
		}
		probes++;
	}
	for (int i = 0; i < OOO_LOCKS; i++) {
		if (held[i])
			res_spin_unlock(&locks[i]);
		CHECK_EQ(tu_word(&locks[i]), 0);
	}
	return probes;
}

static void test_ooo_random(void)
{
	res_spin_set_timeout_ns(2 * TU_NS_PER_MS);
	ooo_random_run(0x1234567ULL, tu_scaled(4000));
	res_spin_set_timeout_ns(0);
}

static void *ooo_random_thread(void *arg)
{
	ooo_random_run((uint64_t)(uintptr_t)arg, tu_scaled(3000));
	return NULL;
}

static void test_ooo_concurrent(void)
{
	pthread_t t[4];

	/* Only self-inflicted waits here: a short timeout is safe. */
	res_spin_set_timeout_ns(2 * TU_NS_PER_MS);
	for (int i = 0; i < 4; i++)
		tu_thread_start(&t[i], ooo_random_thread, (void *)(uintptr_t)(0x5151 + i * 7919));
	for (int i = 0; i < 4; i++)
		tu_thread_join(t[i]);
	res_spin_set_timeout_ns(0);
}

/* ---- report hook ---- */

#define MAX_REPORTS 16

static struct rqspinlock_report reports[MAX_REPORTS];
static atomic_int nreports;
static int hook_cookie;

/* Async-signal-safe: copies the report into a static slot. */
static void record_report(const struct rqspinlock_report *r, void *arg)
{
	int i = atomic_fetch_add_explicit(&nreports, 1, memory_order_relaxed);

	if (arg != &hook_cookie)
		tu_fail(__FILE__, __LINE__, "report hook called with the wrong argument");
	if (i < MAX_REPORTS)
		memcpy(&reports[i], r, sizeof(*r));
}

static void check_aa_report(const struct rqspinlock_report *r, const rqspinlock_t *l)
{
	CHECK_EQ(r->event, RQSPINLOCK_EV_AA);
	CHECK_EQ(r->error, -EDEADLK);
	CHECK(r->lock == l);
	CHECK_EQ(r->nested, 0);
	CHECK_EQ(r->self.tid, my_tid());
	CHECK(holds(&r->self, l));
	CHECK_LE(r->nr_peers, RQSPINLOCK_REPORT_MAX_PEERS);
	CHECK_LE(r->nr_frames, RQSPINLOCK_REPORT_MAX_FRAMES);
}

/* An ABBA report from one of the two ring threads of @p s. */
static void check_abba_report(const struct rqspinlock_report *r, const struct ring *s)
{
	int me = r->self.tid == s->res[0].tid ? 0 : 1;
	const rqspinlock_t *mine = &s->locks[me], *want = &s->locks[1 - me];

	CHECK_EQ(r->event, RQSPINLOCK_EV_ABBA);
	CHECK_EQ(r->error, -EDEADLK);
	CHECK_EQ(r->self.tid, s->res[me].tid);
	CHECK(r->lock == want);
	CHECK(holds(&r->self, mine));
	CHECK_GE(r->nr_peers, 1);
	CHECK_LE(r->nr_peers, RQSPINLOCK_REPORT_MAX_PEERS);
	CHECK_EQ(r->peers[0].tid, s->res[1 - me].tid);
	/* A peer that was not a victim holds its lock until we release ours,
	 * after this report. One that got -EDEADLK too releases its own after
	 * its own report, which may come before ours is made. What it waited
	 * for is as the detector saw it: our lock. */
	if (s->res[1 - me].r == 0)
		CHECK(holds(&r->peers[0], want));
	CHECK(r->peers[0].waits_for == mine);
}

static void *hold_forever(void *arg)
{
	CHECK_EQ(res_spin_lock(arg), 0);
	return NULL;
}

static void test_report_hook(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT, other = RQSPINLOCK_INIT;
	struct ring s = {.n = 2, .closed = 1};
	pthread_t t;
	int n;

	res_spin_set_report_hook(record_report, &hook_cookie);

	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(res_spin_lock(&other), 0);
	CHECK_EQ(res_spin_lock(&l), -EDEADLK);
	CHECK_EQ(atomic_load(&nreports), 1);
	check_aa_report(&reports[0], &l);
	CHECK(holds(&reports[0].self, &other));
	res_spin_unlock(&other);
	res_spin_unlock(&l);

	/* A timeout is reported too. */
	res_spin_set_timeout_ns(20 * TU_NS_PER_MS);
	tu_thread_start(&t, hold_forever, &other);
	tu_thread_join(t);
	CHECK_EQ(res_spin_lock(&other), -ETIMEDOUT);
	CHECK_EQ(atomic_load(&nreports), 2);
	CHECK_EQ(reports[1].event, RQSPINLOCK_EV_TIMEOUT);
	CHECK_EQ(reports[1].error, -ETIMEDOUT);
	CHECK(reports[1].lock == &other);
	CHECK_EQ(reports[1].self.tid, my_tid());

	/* ABBA: every report made is about the pair. */
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	atomic_store(&nreports, 0);
	CHECK_GE(ring_round(&s), 1);
	n = atomic_load(&nreports);
	CHECK_GE(n, 1);
	CHECK_LE(n, 2);
	for (int i = 0; i < n; i++)
		check_abba_report(&reports[i], &s);

	/* No hook, no report. */
	res_spin_set_report_hook(NULL, NULL);
	atomic_store(&nreports, 0);
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(res_spin_lock(&l), -EDEADLK);
	res_spin_unlock(&l);
	CHECK_EQ(atomic_load(&nreports), 0);
	res_spin_set_timeout_ns(0);
}

/* Run with RQSPINLOCK_REPORT=1: the stock reporter writes to stderr. */
static void test_report_stderr(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	char buf[16384], addr[32];
	int p[2], saved;
	ssize_t n;

	const char *report_env = getenv("RQSPINLOCK_REPORT");

	CHECK(report_env && strcmp(report_env, "1") == 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0);
	CHECK_EQ(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(res_spin_lock(&l), -EDEADLK);
	res_spin_unlock(&l);
	CHECK_EQ(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	CHECK_GT(n, 0);
	buf[n] = '\0';
	printf("# stderr report (%zd bytes):\n%s\n", n, buf);
	CHECK(strstr(buf, "AA") != NULL);
	CHECK(strstr(buf, "EDEADLK") != NULL);
	/* It names the lock. */
	snprintf(addr, sizeof(addr), "%p", (void *)&l);
	CHECK(strstr(buf, addr) != NULL);
}

/* A hook that sets errno, as a hook that writes may. */
static void clobber_errno(const struct rqspinlock_report *r, void *arg)
{
	(void)r;
	(void)arg;
	errno = EIO;
}

/* The caller's errno survives a report, whatever the hook does to it. */
static void test_report_errno(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;

	res_spin_set_report_hook(clobber_errno, NULL);
	CHECK_EQ(res_spin_lock(&l), 0);
	errno = 4242;
	CHECK_EQ(res_spin_lock(&l), -EDEADLK);
	CHECK_EQ(errno, 4242);
	res_spin_unlock(&l);
	res_spin_set_report_hook(NULL, NULL);
}

static int sigpipe_pending(void)
{
	sigset_t pending;

	CHECK_EQ(sigpending(&pending), 0);
	return sigismember(&pending, SIGPIPE) == 1;
}

/* One AA reported by the stock reporter to a stderr whose reader is gone. */
static void aa_to_broken_stderr(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	int p[2], saved;

	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0);
	CHECK_EQ(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	close(p[1]);
	CHECK_EQ(res_spin_lock(&l), 0);
	errno = 4242;
	CHECK_EQ(res_spin_lock(&l), -EDEADLK);
	CHECK_EQ(errno, 4242);
	res_spin_unlock(&l);
	CHECK_EQ(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
}

/*
 * Run with RQSPINLOCK_REPORT=1. The stock reporter writing to a broken
 * pipe: SIGPIPE's default action (ending the process) does not happen, no
 * SIGPIPE is left pending, errno is kept; and a SIGPIPE the caller had
 * pending (blocked) before stays pending.
 */
static void test_report_stderr_broken(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t set, old;
	int sig;

	CHECK_EQ(sigaction(SIGPIPE, &dfl, NULL), 0);
	aa_to_broken_stderr();
	CHECK(!sigpipe_pending());

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
	CHECK_EQ(pthread_kill(pthread_self(), SIGPIPE), 0);
	CHECK(sigpipe_pending());
	aa_to_broken_stderr();
	CHECK(sigpipe_pending());
	CHECK_EQ(sigwait(&set, &sig), 0);
	CHECK_EQ(sig, SIGPIPE);
	CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

/* ---- the report hook changed while failures are being reported ---- */

static int cookie_a, cookie_b;
static atomic_long hook_calls, hook_mismatches;
static atomic_int hook_stop;

static void hook_a(const struct rqspinlock_report *r, void *arg)
{
	(void)r;
	atomic_fetch_add_explicit(&hook_calls, 1, memory_order_relaxed);
	if (arg != &cookie_a)
		atomic_fetch_add_explicit(&hook_mismatches, 1, memory_order_relaxed);
}

static void hook_b(const struct rqspinlock_report *r, void *arg)
{
	(void)r;
	atomic_fetch_add_explicit(&hook_calls, 1, memory_order_relaxed);
	if (arg != &cookie_b)
		atomic_fetch_add_explicit(&hook_mismatches, 1, memory_order_relaxed);
}

/* Fails one AA after another, each reported to the hook in force. */
static void *aa_failer(void *arg)
{
	rqspinlock_t *l = arg;

	while (!atomic_load_explicit(&hook_stop, memory_order_relaxed)) {
		CHECK_EQ(res_spin_lock(l), 0);
		CHECK_EQ(res_spin_lock(l), -EDEADLK);
		res_spin_unlock(l);
	}
	return NULL;
}

/*
 * res_spin_set_report_hook() from one thread while others report failures:
 * every hook call gets the argument installed with that hook (and, under
 * ThreadSanitizer, the hook record is never written while it is read).
 */
static void test_report_hook_change(void)
{
	rqspinlock_t locks[2] = {RQSPINLOCK_INIT, RQSPINLOCK_INIT};
	pthread_t t[2];
	uint64_t end;
	long changes = 0;

	atomic_store(&hook_stop, 0);
	res_spin_set_report_hook(hook_a, &cookie_a);
	for (int i = 0; i < 2; i++)
		tu_thread_start(&t[i], aa_failer, &locks[i]);
	end = rqu_now_ns() + (uint64_t)tu_scaled(500) * TU_NS_PER_MS;
	while (rqu_now_ns() < end) {
		res_spin_set_report_hook(hook_b, &cookie_b);
		res_spin_set_report_hook(hook_a, &cookie_a);
		changes += 2;
	}
	atomic_store(&hook_stop, 1);
	for (int i = 0; i < 2; i++)
		tu_thread_join(t[i]);
	res_spin_set_report_hook(NULL, NULL);
	printf("# %ld hook changes, %ld hook calls, %ld with another hook's argument\n", changes,
	       atomic_load(&hook_calls), atomic_load(&hook_mismatches));
	CHECK_GT(atomic_load(&hook_calls), 0);
	CHECK_EQ(atomic_load(&hook_mismatches), 0);
}

/* ---- the lock word names the owner: a stale entry does not hide it ---- */

/*
 * S takes L and keeps its entry; the main thread then releases L for it (a
 * non-owner unlock), so S's table lists L while it does not hold it. The
 * next owner of L is the only thread the lock word names.
 */
struct stale {
	rqspinlock_t l, m;
	atomic_int s_lists, done, next;
	pthread_barrier_t both_hold;
	int32_t t2_tid;
	int r[2]; /* side 0 (T2) and side 1 (T3) */
	uint64_t ns[2];
};

static void *stale_lister(void *arg)
{
	struct stale *s = arg;

	CHECK_EQ(res_spin_lock(&s->l), 0);
	atomic_store(&s->s_lists, 1);
	TU_WAIT_UNTIL(atomic_load(&s->done), 3 * TU_SETUP_MS);
	res_spin_unlock(&s->l); /* drops the stale entry (L is free by now) */
	return NULL;
}

static void stale_start(struct stale *s, pthread_t *lister)
{
	memset(s, 0, sizeof(*s));
	tu_thread_start(lister, stale_lister, s);
	TU_WAIT_UNTIL(atomic_load(&s->s_lists), TU_SETUP_MS);
	res_spin_unlock(&s->l); /* not ours: S's entry stays */
	CHECK_EQ(tu_word(&s->l), 0);
}

static void stale_end(struct stale *s, pthread_t lister)
{
	atomic_store(&s->done, 1);
	tu_thread_join(lister);
	CHECK_EQ(tu_word(&s->l), 0);
	CHECK_EQ(tu_word(&s->m), 0);
}

/* Side 0, T2, holds L (named in its word, listed by S too) and waits for
 * M; side 1, T3, holds M and waits for L. */
static void *stale_side(void *arg)
{
	struct stale *s = arg;
	int i = atomic_fetch_add(&s->next, 1);
	rqspinlock_t *mine = i ? &s->m : &s->l, *want = i ? &s->l : &s->m;
	uint64_t t0;

	CHECK_EQ(res_spin_lock(mine), 0);
	pthread_barrier_wait(&s->both_hold);
	t0 = rqu_now_ns();
	s->r[i] = res_spin_lock(want);
	s->ns[i] = rqu_now_ns() - t0;
	if (s->r[i] == 0)
		res_spin_unlock(want);
	res_spin_unlock(mine);
	return NULL;
}

/*
 * An ABBA through a lock that a stale entry lists too: the word names T2 as
 * L's owner, so T2's entry is believed and the cycle is found, within a
 * fraction of the timeout. (From the tables alone, two threads list L and
 * neither entry can be believed: both waiters would time out.)
 */
static void test_stale_entry_abba(void)
{
	struct rqspinlock_stats before, after;
	struct stale s;
	pthread_t lister, t2, t3;

	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	stale_start(&s, &lister);
	pthread_barrier_init(&s.both_hold, NULL, 2);
	tu_stats(&before);
	tu_thread_start(&t2, stale_side, &s);
	tu_thread_start(&t3, stale_side, &s);
	tu_thread_join(t2);
	tu_thread_join(t3);
	tu_stats(&after);
	pthread_barrier_destroy(&s.both_hold);
	stale_end(&s, lister);
	printf("# T2 %d after %.3f ms, T3 %d after %.3f ms\n", s.r[0], (double)s.ns[0] / 1e6,
	       s.r[1], (double)s.ns[1] / 1e6);
	CHECK(s.r[0] == -EDEADLK || s.r[1] == -EDEADLK);
	for (int i = 0; i < 2; i++) {
		CHECK(s.r[i] == 0 || s.r[i] == -EDEADLK);
		if (s.r[i])
			CHECK_LT(s.ns[i], TU_LONG_TIMEOUT_NS / 4);
	}
	CHECK_GT(after.deadlock_abba, before.deadlock_abba);
	CHECK_EQ(after.timeout, before.timeout);
	res_spin_set_timeout_ns(0);
}

static void *stale_holder(void *arg)
{
	struct stale *s = arg;

	s->t2_tid = my_tid();
	CHECK_EQ(res_spin_lock(&s->l), 0);
	pthread_barrier_wait(&s->both_hold); /* holds L */
	pthread_barrier_wait(&s->both_hold); /* the waiter timed out */
	res_spin_unlock(&s->l);
	return NULL;
}

/* A timeout's report names L's owner from its word, though S lists L too
 * (from the tables alone: two claimants, no owner named). */
static void test_stale_entry_owner(void)
{
	struct stale s;
	pthread_t lister, t2;

	res_spin_set_report_hook(record_report, &hook_cookie);
	atomic_store(&nreports, 0);
	res_spin_set_timeout_ns(20 * TU_NS_PER_MS);
	stale_start(&s, &lister);
	pthread_barrier_init(&s.both_hold, NULL, 2);
	tu_thread_start(&t2, stale_holder, &s);
	pthread_barrier_wait(&s.both_hold);
	CHECK_EQ(res_spin_lock(&s.l), -ETIMEDOUT);
	pthread_barrier_wait(&s.both_hold);
	tu_thread_join(t2);
	pthread_barrier_destroy(&s.both_hold);
	stale_end(&s, lister);
	res_spin_set_report_hook(NULL, NULL);
	CHECK_EQ(atomic_load(&nreports), 1);
	CHECK_EQ(reports[0].event, RQSPINLOCK_EV_TIMEOUT);
	CHECK_EQ(reports[0].owner.tid, s.t2_tid);
	res_spin_set_timeout_ns(0);
}

static const struct tu_test tests[] = {
    TU_TEST("deadlock_aa", test_aa, 20, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_abba_many", test_abba_many, 40, TU_TAS),
    TU_TEST("deadlock_abba_pair", test_abba_pair, 50, TU_TAS),
    TU_TEST("deadlock_cycle3", test_cycle3, 50, TU_TAS),
    TU_TEST("deadlock_chain", test_chain, 50, TU_TAS),
    TU_TEST("deadlock_held_max", test_held_max, 30, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_ooo_unlock", test_ooo_unlock, 30, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_held_max_ooo", test_held_max_ooo, 40, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_untracked_holes", test_untracked_holes, 30, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_ooo_random", test_ooo_random, 40, TU_TAS),
    TU_TEST("deadlock_ooo_concurrent", test_ooo_concurrent, 40, TU_TAS),
    TU_TEST("deadlock_report_hook", test_report_hook, 40, TU_TAS),
    TU_TEST("deadlock_report_hook_change", test_report_hook_change, 30, 0),
    TU_TEST("deadlock_stale_entry_abba", test_stale_entry_abba, 40, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_stale_entry_owner", test_stale_entry_owner, 20, TU_TAS),
    TU_TEST("deadlock_report_stderr", test_report_stderr, 20, TU_TAS, .env = "RQSPINLOCK_REPORT=1"),
    TU_TEST("deadlock_report_errno", test_report_errno, 20, 0),
    TU_TEST("deadlock_report_stderr_broken", test_report_stderr_broken, 20, 0,
            .env = "RQSPINLOCK_REPORT=1"),
};

TU_MAIN(tests)
