/* SPDX-License-Identifier: MIT */
/*
 * Waiters that vanish or are frozen, and lock words changed under waiting
 * threads: every other waiter still returns within its own bound, and the
 * lock works again afterwards (rqspinlock.h, "Abandoned calls";
 * docs/DESIGN.md, "Abandoned queue nodes").
 *
 *  - a queue head frozen under a storm of its own signal handlers;
 *  - the lock word re-initialised, zeroed or overwritten while threads wait;
 *  - a queue head whose thread already has four nested waits (base context
 *    plus three handlers), with a successor behind it;
 *  - pthread_cancel() of the pending waiter and of the queue head, and a
 *    failure reported while a cancellation is pending;
 *  - siglongjmp() out of a handler that interrupted the head or a queued
 *    waiter, fork() from a handler that interrupted a queued waiter, and
 *    fork() while a frozen waiter holds the pending bit of a free lock;
 *  - a lock in MAP_SHARED memory used by two processes (documented as
 *    unsupported: bounded, never a hang).
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>

/* Queued mode: wait until the word shows @p cond; TAS mode has no queue to
 * watch, so give the thread time to start waiting instead. */
#define ARRIVE(cond)                                                                               \
	do {                                                                                       \
		if (tu_is_tas())                                                                   \
			tu_sleep_ms(20);                                                           \
		else                                                                               \
			TU_WAIT_UNTIL(cond, TU_SETUP_MS);                                          \
	} while (0)

/* Start a waiter on @p l and wait until it is queued as the new tail (or,
 * with @p pending, as the pending waiter). */
static void arrive(struct tu_waiter *w, rqspinlock_t *l, int pending)
{
	uint32_t tail = TU_TAIL(tu_word(l));

	tu_waiter_start(w, l);
	if (pending) /* TAS mode's first waiter takes the pending bit too */
		TU_WAIT_UNTIL(TU_PENDING(tu_word(l)) != 0 || tu_waiter_done(w), TU_SETUP_MS);
	else
		ARRIVE(TU_TAIL(tu_word(l)) != tail || tu_waiter_done(w));
}

/* Wait at most @p bound for @p done to be set; fail with @p what otherwise. */
static void wait_done(atomic_int *done, uint64_t bound, const char *what)
{
	uint64_t end = rqu_now_ns() + bound;

	while (!atomic_load_explicit(done, memory_order_relaxed)) {
		if (rqu_now_ns() > end)
			tu_fail(__FILE__, __LINE__, "%s: no return after %.0f ms", what,
			        (double)bound / 1e6);
		tu_sleep_ms(1);
	}
}

/* A res_spin_lock() result that keeps the promise: acquired or an error. */
static void check_result(int r)
{
	if (r != 0 && r != -ETIMEDOUT && r != -EDEADLK)
		tu_fail(__FILE__, __LINE__, "unexpected result %d", r);
}

/* Own bound of a waiter: as a non-head waiter, then as the head. */
static uint64_t own_bound(uint64_t timeout)
{
	return 6 * timeout + tu_slack_ns(TU_STALL_NS);
}

/* ---- 1. a queue head frozen under its own signal handlers ---- */

static rqspinlock_t storm_m;
static atomic_int storm_stop;

static void storm_handler(int sig)
{
	(void)sig;
	if (res_spin_lock(&storm_m) == 0) /* held by the waiter behind us */
		res_spin_unlock(&storm_m);
}

static void *storm_fn(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	while (!atomic_load_explicit(&storm_stop, memory_order_relaxed)) {
		pthread_kill(target, SIGUSR1);
		tu_sleep_ms(1);
	}
	return NULL;
}

/* Takes M (storm_m unless @m), then waits for L. */
struct m_then_l {
	rqspinlock_t *l, *m;
	pthread_t t;
	atomic_int result, has_m, done;
};

static void *m_then_l_fn(void *arg)
{
	struct m_then_l *x = arg;
	rqspinlock_t *m = x->m ? x->m : &storm_m;

	CHECK_EQ(res_spin_lock(m), 0);
	atomic_store_explicit(&x->has_m, 1, memory_order_relaxed);
	atomic_store(&x->result, res_spin_lock(x->l));
	if (atomic_load(&x->result) == 0)
		res_spin_unlock(x->l);
	res_spin_unlock(m);
	atomic_store_explicit(&x->done, 1, memory_order_relaxed);
	return NULL;
}

static rqspinlock_t fz_m; /* deadlock_frozen_queue's M */

static void test_storm_head(void)
{
	const uint64_t timeout = 20 * TU_NS_PER_MS;
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_holder owner;
	struct tu_waiter pend, head;
	struct m_then_l behind = {.l = &l};
	pthread_t storm;
	uint32_t tail;

	res_spin_set_timeout_ns(timeout * 50); /* no timeout while setting up */
	res_spin_lock_init(&storm_m);
	tu_install_handler(SIGUSR1, storm_handler);
	tu_holder_start(&owner, &l, 0);
	arrive(&pend, &l, 1);
	arrive(&head, &l, 0);
	tail = TU_TAIL(tu_word(&l));
	res_spin_set_timeout_ns(timeout);
	atomic_init(&behind.has_m, 0);
	atomic_init(&behind.done, 0);
	tu_thread_start(&behind.t, m_then_l_fn, &behind);
	ARRIVE(TU_TAIL(tu_word(&l)) != tail || atomic_load(&behind.done));
	/* Freeze the head: its handlers wait for M (20 ms each), and the next
	 * signal is already pending when one returns. */
	atomic_store(&storm_stop, 0);
	tu_thread_start(&storm, storm_fn, &head.t);
	tu_sleep_ms(30);
	tu_holder_join(&owner); /* the pending waiter takes L and leaves */
	wait_done(&behind.done, own_bound(timeout), "waiter behind a frozen head");
	printf("# behind the frozen head: %d\n", atomic_load(&behind.result));
	check_result(atomic_load(&behind.result));
	atomic_store(&storm_stop, 1);
	tu_thread_join(storm);
	tu_thread_join(behind.t);
	CHECK_EQ(tu_waiter_join(&pend), 0);
	check_result(tu_waiter_join(&head));
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&l, 4, tu_scaled(5000));
	tu_check_lock_usable(&storm_m, 2, tu_scaled(1000));
}

/*
 * A cycle through a queue head frozen under its own handler, with 0, 1 or 2
 * more frozen waiters queued behind it (DESIGN.md section 7, "Frozen
 * claimants"): B holds M and waits for L behind them; each frozen waiter's
 * handler waits for M. Once L is free, only the head blocks it, so the
 * cycle B -> L -> head -> M -> B must end in -EDEADLK within milliseconds,
 * not in a timeout (2 s here); the other frozen waiters' tagged entries for
 * L claim nothing.
 * With @held, the owner keeps L meanwhile: B is queued behind the frozen
 * head, so the cycle is complete whoever holds L (a running owner, or
 * threads that take the free lock without queueing, as under a profiler's
 * storm), and must end in -EDEADLK while the owner still holds L.
 */
static atomic_int fz_results[3], fz_in_handler;
static _Thread_local int fz_index = -1;

static void fz_handler(int sig)
{
	int r;

	(void)sig;
	atomic_fetch_add(&fz_in_handler, 1);
	r = res_spin_lock(&fz_m);
	if (r == 0)
		res_spin_unlock(&fz_m);
	if (fz_index >= 0)
		atomic_store(&fz_results[fz_index], r);
}

struct fz_waiter {
	rqspinlock_t *l;
	int index;
	pthread_t t;
	atomic_int result, done;
};

static void *fz_waiter_fn(void *arg)
{
	struct fz_waiter *w = arg;
	int r;

	fz_index = w->index;
	r = res_spin_lock(w->l);
	if (r == 0)
		res_spin_unlock(w->l);
	atomic_store(&w->result, r);
	atomic_store(&w->done, 1);
	return NULL;
}

/* Has the cycle been broken: B returned, or a frozen waiter's handler did? */
static bool frozen_cycle_broken(struct m_then_l *b, int n)
{
	if (atomic_load(&b->done))
		return true;
	for (int i = 0; i < n; i++)
		if (atomic_load(&fz_results[i]) != 1)
			return true;
	return false;
}

static void frozen_queue(int extra, bool held)
{
	const uint64_t timeout = 2 * TU_NS_PER_S;
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_holder owner;
	struct tu_waiter pend;
	struct fz_waiter fw[3];
	struct m_then_l behind = {.l = &l, .m = &fz_m};
	uint64_t t0, took;
	int n = 1 + extra, deadlocks = 0;

	res_spin_set_timeout_ns(timeout);
	res_spin_lock_init(&fz_m);
	atomic_store(&fz_in_handler, 0);
	tu_install_handler(SIGUSR2, fz_handler);
	tu_holder_start(&owner, &l, 0);
	arrive(&pend, &l, 1);
	for (int i = 0; i < n; i++) {
		uint32_t tail = TU_TAIL(tu_word(&l));

		fw[i] = (struct fz_waiter){.l = &l, .index = i};
		atomic_store(&fz_results[i], 1);
		tu_thread_start(&fw[i].t, fz_waiter_fn, &fw[i]);
		TU_WAIT_UNTIL(TU_TAIL(tu_word(&l)) != tail, TU_SETUP_MS);
	}
	/* B takes M and queues on L behind them */
	atomic_init(&behind.has_m, 0);
	atomic_init(&behind.done, 0);
	{
		uint32_t tail = TU_TAIL(tu_word(&l));

		tu_thread_start(&behind.t, m_then_l_fn, &behind);
		TU_WAIT_UNTIL(TU_TAIL(tu_word(&l)) != tail, TU_SETUP_MS);
	}
	/* Freeze the head and the waiters behind it: their handlers wait for M. */
	for (int i = 0; i < n; i++)
		CHECK_EQ(pthread_kill(fw[i].t, SIGUSR2), 0);
	TU_WAIT_UNTIL(atomic_load(&fz_in_handler) == n, TU_SETUP_MS);
	/* Held: the cycle is complete now, timed from here. Otherwise it
	 * completes when the owner lets go, after the handlers are in their
	 * waits for M. */
	t0 = rqu_now_ns();
	if (!held) {
		tu_sleep_ms(5);
		t0 = rqu_now_ns();
	}
	if (held) {
		uint64_t end = t0 + tu_slack_ns(TU_STALL_NS) + 3 * timeout;

		while (!frozen_cycle_broken(&behind, n) && rqu_now_ns() < end)
			tu_sleep_ms(1);
		took = rqu_now_ns() - t0;
	}
	tu_holder_join(&owner); /* the pending waiter takes L and leaves */
	wait_done(&behind.done, tu_slack_ns(TU_STALL_NS) + 3 * timeout,
	          "B behind the frozen queue");
	if (!held)
		took = rqu_now_ns() - t0;
	for (int i = 0; i < n; i++) {
		wait_done(&fw[i].done, tu_slack_ns(TU_STALL_NS) + 3 * timeout, "frozen waiter");
		tu_thread_join(fw[i].t);
		CHECK_EQ(atomic_load(&fw[i].result), 0);
	}
	tu_thread_join(behind.t);
	printf("# %d extra frozen waiters%s: B %d, handlers", extra,
	       held ? ", L held meanwhile" : "", atomic_load(&behind.result));
	for (int i = 0; i < n; i++)
		printf(" %d", atomic_load(&fz_results[i]));
	printf(", %.1f ms\n", (double)took / 1e6);
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		deadlocks += atomic_load(&fz_results[i]) == -EDEADLK;
		CHECK(atomic_load(&fz_results[i]) == 0 || atomic_load(&fz_results[i]) == -EDEADLK);
	}
	deadlocks += atomic_load(&behind.result) == -EDEADLK;
	CHECK(atomic_load(&behind.result) == 0 || atomic_load(&behind.result) == -EDEADLK);
	CHECK_GE(deadlocks, 1);
	/* found, not timed out: well below one timeout */
	CHECK_LT(took, timeout / 2);
	CHECK_EQ(tu_waiter_join(&pend), 0);
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&l, 4, tu_scaled(5000));
}

static void test_frozen_queue(void)
{
	frozen_queue(0, false);
	frozen_queue(1, false);
	frozen_queue(2, false);
}

static void test_frozen_queue_held(void)
{
	frozen_queue(0, true);
	frozen_queue(1, true);
	frozen_queue(2, true);
}

/*
 * The same with a timer storm over four threads: SIGALRM every 10 us, each
 * handler taking the lock the threads take and a nested pair. Handlers run
 * with SIGALRM blocked, so a handler's call is a wait of its own that no
 * further signal stretches: each must return within its own bound. (The
 * on-CPU time of the longest call is printed too: the wall time of a wait
 * includes time off CPU, which a loaded machine makes long.)
 */
static rqspinlock_t alrm_l, alrm_a, alrm_b;
static atomic_ullong alrm_worst, alrm_worst_cpu;
static atomic_long alrm_calls;
static atomic_int alrm_stop;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * TU_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void keep_max(atomic_ullong *max, uint64_t v)
{
	if (v > atomic_load_explicit(max, memory_order_relaxed))
		atomic_store_explicit(max, v, memory_order_relaxed);
}

static void alrm_timed_lock(rqspinlock_t *l, rqspinlock_t *then)
{
	uint64_t t0 = rqu_now_ns(), c0 = thread_cpu_ns();
	int r = res_spin_lock(l);

	keep_max(&alrm_worst_cpu, thread_cpu_ns() - c0);
	keep_max(&alrm_worst, rqu_now_ns() - t0);
	atomic_fetch_add_explicit(&alrm_calls, 1, memory_order_relaxed);
	if (r != 0 && r != -ETIMEDOUT && r != -EDEADLK)
		tu_fail(__FILE__, __LINE__, "unexpected result %d", r);
	if (r != 0)
		return;
	if (then)
		alrm_timed_lock(then, NULL);
	res_spin_unlock(l);
}

static void alrm_handler(int sig)
{
	(void)sig;
	alrm_timed_lock(&alrm_l, NULL);
	alrm_timed_lock(&alrm_a, &alrm_b);
}

static void *alrm_worker(void *arg)
{
	sigset_t set;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!atomic_load_explicit(&alrm_stop, memory_order_relaxed)) {
		if (res_spin_lock(&alrm_l) == 0)
			res_spin_unlock(&alrm_l);
		if (res_spin_lock(&alrm_a) == 0) {
			if (res_spin_lock(&alrm_b) == 0)
				res_spin_unlock(&alrm_b);
			res_spin_unlock(&alrm_a);
		}
	}
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return NULL;
}

static void test_storm_all(void)
{
	const uint64_t timeout = 20 * TU_NS_PER_MS;
	struct itimerval on = {{0, 10}, {0, 10}}, off = {{0, 0}, {0, 0}};
	pthread_t t[4];
	sigset_t set;

	res_spin_set_timeout_ns(timeout);
	tu_install_handler(SIGALRM, alrm_handler);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* only the workers take it */
	atomic_store(&alrm_stop, 0);
	for (int i = 0; i < 4; i++)
		tu_thread_start(&t[i], alrm_worker, NULL);
	CHECK_EQ(setitimer(ITIMER_REAL, &on, NULL), 0);
	tu_sleep_ms((unsigned)tu_scaled(1000));
	CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	atomic_store(&alrm_stop, 1);
	for (int i = 0; i < 4; i++)
		tu_thread_join(t[i]);
	printf("# %ld handler calls, the longest %.1f ms, %.1f ms on CPU\n",
	       atomic_load(&alrm_calls), (double)atomic_load(&alrm_worst) / 1e6,
	       (double)atomic_load(&alrm_worst_cpu) / 1e6);
	CHECK_LE(atomic_load(&alrm_worst), own_bound(timeout));
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&alrm_l, 4, tu_scaled(5000));
	tu_check_lock_usable(&alrm_a, 2, tu_scaled(1000));
}

/* ---- 2. the lock word changed while threads wait ---- */

#define CHANGE_WAITERS 4

static void change_under_waiters(uint32_t value, int init)
{
	const uint64_t timeout = 50 * TU_NS_PER_MS;
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_waiter w[CHANGE_WAITERS];
	struct tu_holder owner;

	tu_set_context("word 0x%08x under waiters", value);
	res_spin_set_timeout_ns(timeout);
	tu_holder_start(&owner, &l, 0);
	for (int i = 0; i < CHANGE_WAITERS; i++)
		arrive(&w[i], &l, i == 0);
	if (init)
		res_spin_lock_init(&l);
	else
		atomic_store_explicit(&l.val, value, memory_order_relaxed);
	tu_holder_join(&owner);
	for (int i = 0; i < CHANGE_WAITERS; i++) {
		wait_done(&w[i].done, own_bound(timeout), "waiter on a changed word");
		check_result(tu_waiter_join(&w[i]));
	}
	res_spin_lock_init(&l);
	CHECK_EQ(res_spin_lock(&l), 0);
	res_spin_unlock(&l);
}

static void test_word_changed(void)
{
	static const uint32_t values[] = {0, 0xffffffffu, 0xfffc0000u, 0x00fc0000u, 0x00fc0101u};
	uint64_t rng = 0x2545f4914f6cdd1dULL;
	rqspinlock_t l = RQSPINLOCK_INIT;

	change_under_waiters(0, 1);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		change_under_waiters(values[i], 0);
	for (long i = 0; i < tu_scaled(4); i++)
		change_under_waiters((uint32_t)tu_rand(&rng), 0);
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&l, 4, tu_scaled(5000));
}

/* ---- 3. a queue head at nesting depth five ---- */

#define NEST 5 /* the base context plus four handlers */
static rqspinlock_t nest_locks[NEST];
static atomic_int nest_result[NEST];

static void nest_handler(int sig)
{
	int k = sig - SIGRTMIN + 1;
	int r = res_spin_lock(&nest_locks[k]);

	if (r == 0)
		res_spin_unlock(&nest_locks[k]);
	atomic_store(&nest_result[k], r == 0 ? 1 : r);
}

static void *nest_base_fn(void *arg)
{
	int r = res_spin_lock(&nest_locks[0]);

	(void)arg;
	if (r == 0)
		res_spin_unlock(&nest_locks[0]);
	atomic_store(&nest_result[0], r == 0 ? 1 : r);
	return NULL;
}

static void test_nested_head(void)
{
	struct tu_holder owners[NEST];
	struct tu_waiter pend, succ;
	rqspinlock_t *last = &nest_locks[NEST - 1];
	pthread_t base;
	uint32_t tail;

	if (TU_TSAN) {
		/* TSan delivers a signal that arrives during a handler only
		 * after that handler returned: no nesting to test. */
		printf("# nested signal handlers: not under TSan\n");
		return;
	}
	res_spin_set_timeout_ns(5 * TU_NS_PER_S); /* nothing times out */
	for (int k = 0; k < NEST; k++) {
		res_spin_lock_init(&nest_locks[k]);
		atomic_store(&nest_result[k], 0);
		if (k)
			tu_install_handler(SIGRTMIN + k - 1, nest_handler);
		tu_holder_start(&owners[k], &nest_locks[k], 0);
	}
	/* The last lock has a pending waiter: the innermost handler queues. */
	arrive(&pend, last, 1);
	tu_thread_start(&base, nest_base_fn, NULL);
	TU_WAIT_UNTIL(TU_PENDING(tu_word(&nest_locks[0])) != 0, TU_SETUP_MS);
	for (int k = 1; k < NEST - 1; k++) {
		CHECK_EQ(pthread_kill(base, SIGRTMIN + k - 1), 0);
		TU_WAIT_UNTIL(TU_PENDING(tu_word(&nest_locks[k])) != 0, TU_SETUP_MS);
	}
	tail = TU_TAIL(tu_word(last));
	CHECK_EQ(pthread_kill(base, SIGRTMIN + NEST - 2), 0);
	ARRIVE(TU_TAIL(tu_word(last)) != tail);
	arrive(&succ, last, 0); /* behind the depth-five head */
	tu_holder_join(&owners[NEST - 1]);
	wait_done(&succ.done, tu_slack_ns(3 * TU_NS_PER_S), "successor of a nested head");
	CHECK_EQ(tu_waiter_join(&succ), 0);
	CHECK_EQ(tu_waiter_join(&pend), 0);
	for (int k = NEST - 2; k >= 0; k--)
		tu_holder_join(&owners[k]);
	tu_thread_join(base);
	for (int k = 0; k < NEST; k++)
		CHECK_EQ(atomic_load(&nest_result[k]), 1);
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(last, 4, tu_scaled(5000));
}

/* ---- 4. pthread_cancel() of waiting threads ---- */

struct cancellable {
	rqspinlock_t *l;
	pthread_t t;
	atomic_int result, returned;
};

static void *cancellable_fn(void *arg)
{
	struct cancellable *c = arg;
	int r = res_spin_lock(c->l);

	atomic_store(&c->result, r);
	atomic_store(&c->returned, 1);
	if (r == 0)
		res_spin_unlock(c->l);
	pthread_testcancel();
	return NULL;
}

static void cancellable_start(struct cancellable *c, rqspinlock_t *l, int pending)
{
	uint32_t tail = TU_TAIL(tu_word(l));

	c->l = l;
	atomic_init(&c->result, 1);
	atomic_init(&c->returned, 0);
	tu_thread_start(&c->t, cancellable_fn, c);
	if (pending)
		TU_WAIT_UNTIL(TU_PENDING(tu_word(l)) != 0, TU_SETUP_MS);
	else
		ARRIVE(TU_TAIL(tu_word(l)) != tail);
}

static void test_cancel_waiters(void)
{
	const uint64_t timeout = 2 * TU_NS_PER_S; /* nobody times out */
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct cancellable pend, head;
	struct tu_waiter behind;
	struct tu_holder owner;
	void *ret;

	res_spin_set_timeout_ns(timeout);
	tu_holder_start(&owner, &l, 0);
	cancellable_start(&pend, &l, 1);
	cancellable_start(&head, &l, 0);
	arrive(&behind, &l, 0);
	tu_sleep_ms(20); /* all of them well into their waits */
	CHECK_EQ(pthread_cancel(pend.t), 0);
	CHECK_EQ(pthread_cancel(head.t), 0);
	tu_sleep_ms(20);
	tu_holder_join(&owner);
	wait_done(&behind.done, tu_slack_ns(3 * TU_NS_PER_S), "waiter behind cancelled ones");
	CHECK_EQ(tu_waiter_join(&behind), 0);
	/* Cancellation acted only after the calls returned, with the lock. */
	CHECK_EQ(pthread_join(pend.t, &ret), 0);
	CHECK(ret == PTHREAD_CANCELED);
	CHECK_EQ(pthread_join(head.t, &ret), 0);
	CHECK(ret == PTHREAD_CANCELED);
	CHECK_EQ(atomic_load(&pend.returned), 1);
	CHECK_EQ(atomic_load(&pend.result), 0);
	CHECK_EQ(atomic_load(&head.returned), 1);
	CHECK_EQ(atomic_load(&head.result), 0);
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&l, 4, tu_scaled(5000));
}

/*
 * A failure reported while a cancellation is pending: the stock reporter
 * writes to stderr (write(2) is a cancellation point), yet the call returns
 * its error, and the cancellation acts at the next cancellation point after
 * it, as for any other call of the library.
 */
static void *fail_with_cancel_pending(void *arg)
{
	struct cancellable *c = arg;
	int r;

	CHECK_EQ(res_spin_lock(c->l), 0);
	CHECK_EQ(pthread_cancel(pthread_self()), 0);
	r = res_spin_lock(c->l); /* AA, reported */
	atomic_store(&c->result, r);
	atomic_store(&c->returned, 1);
	res_spin_unlock(c->l);
	pthread_testcancel();
	return NULL;
}

static void test_cancel_report(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct cancellable c = {.l = &l};
	void *ret;

	atomic_init(&c.result, 1);
	atomic_init(&c.returned, 0);
	res_spin_set_report_hook(res_spin_report_stderr, NULL);
	tu_thread_start(&c.t, fail_with_cancel_pending, &c);
	CHECK_EQ(pthread_join(c.t, &ret), 0);
	res_spin_set_report_hook(NULL, NULL);
	CHECK(ret == PTHREAD_CANCELED);
	CHECK_EQ(atomic_load(&c.returned), 1);
	CHECK_EQ(atomic_load(&c.result), -EDEADLK);
	CHECK_EQ(tu_word(&l), 0);
	tu_check_lock_usable(&l, 2, tu_scaled(1000));
}

/* ---- 5. siglongjmp() out of a handler that interrupted a waiter ---- */

static sigjmp_buf jump_env;
static rqspinlock_t *jump_lock;
static atomic_int jump_done;

static void jump_handler(int sig)
{
	(void)sig;
	siglongjmp(jump_env, 1);
}

static void *jumper_fn(void *arg)
{
	(void)arg;
	if (sigsetjmp(jump_env, 1) == 0) {
		int r = res_spin_lock(jump_lock);

		if (r == 0)
			res_spin_unlock(jump_lock);
	}
	/* The rule: a thread that jumped out of a call never calls the
	 * library for that lock again; it exits. */
	atomic_store(&jump_done, 1);
	return NULL;
}

static void longjmp_test(int jumper_is_head)
{
	const uint64_t timeout = 20 * TU_NS_PER_MS;
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_waiter pend, head, behind;
	struct tu_holder owner;
	pthread_t jumper;
	uint32_t tail;

	res_spin_set_timeout_ns(timeout * 50);
	tu_install_handler(SIGUSR2, jump_handler);
	jump_lock = &l;
	atomic_store(&jump_done, 0);
	tu_holder_start(&owner, &l, 0);
	arrive(&pend, &l, 1);
	if (!jumper_is_head)
		arrive(&head, &l, 0);
	tail = TU_TAIL(tu_word(&l));
	tu_thread_start(&jumper, jumper_fn, NULL);
	ARRIVE(TU_TAIL(tu_word(&l)) != tail);
	res_spin_set_timeout_ns(timeout);
	arrive(&behind, &l, 0);
	CHECK_EQ(pthread_kill(jumper, SIGUSR2), 0);
	TU_WAIT_UNTIL(atomic_load(&jump_done), TU_SETUP_MS);
	tu_thread_join(jumper);
	tu_holder_join(&owner);
	wait_done(&behind.done, own_bound(timeout), "waiter behind a jumped-out waiter");
	check_result(tu_waiter_join(&behind));
	CHECK_EQ(tu_waiter_join(&pend), 0);
	if (!jumper_is_head)
		CHECK_EQ(tu_waiter_join(&head), 0);
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&l, 4, tu_scaled(5000));
}

static void test_longjmp_head(void)
{
	longjmp_test(1);
}

static void test_longjmp_queued(void)
{
	longjmp_test(0);
}

/* ---- 6. fork() from a handler that interrupted a queued waiter ---- */

static pid_t fork_parent;
static atomic_int fork_child_pid;

static void fork_handler(int sig)
{
	pid_t pid;

	(void)sig;
	pid = fork();
	if (pid == 0) {
		alarm(20); /* a hang kills the child: the parent sees SIGALRM */
		return;    /* the child goes on waiting, alone */
	}
	atomic_store(&fork_child_pid, (int)pid);
}

static void *forker_fn(void *arg)
{
	rqspinlock_t *l = arg;
	int r = res_spin_lock(l);

	if (getpid() != fork_parent) /* the child: its wait must have ended */
		_exit(r == 0 || r == -ETIMEDOUT || r == -EDEADLK ? 0 : 20);
	if (r == 0)
		res_spin_unlock(l);
	return NULL;
}

static void test_fork_in_handler(void)
{
	const uint64_t timeout = 200 * TU_NS_PER_MS;
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_waiter pend, head;
	struct tu_holder owner;
	pthread_t forker;
	uint32_t tail;
	int status;

	if (TU_TSAN) {
		printf("# fork() in a signal handler of a threaded process: not under TSan\n");
		return;
	}
	res_spin_set_timeout_ns(timeout);
	tu_install_handler(SIGUSR2, fork_handler);
	fork_parent = getpid();
	atomic_store(&fork_child_pid, 0);
	tu_holder_start(&owner, &l, 0);
	arrive(&pend, &l, 1);
	arrive(&head, &l, 0);
	tail = TU_TAIL(tu_word(&l));
	tu_thread_start(&forker, forker_fn, &l);
	ARRIVE(TU_TAIL(tu_word(&l)) != tail);
	CHECK_EQ(pthread_kill(forker, SIGUSR2), 0);
	TU_WAIT_UNTIL(atomic_load(&fork_child_pid) != 0, TU_SETUP_MS);
	tu_holder_join(&owner); /* the parent goes on; the child keeps a copy */
	status = tu_wait_child((pid_t)atomic_load(&fork_child_pid),
	                       (unsigned)(tu_slack_ns(10 * TU_NS_PER_S) / TU_NS_PER_S));
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	tu_thread_join(forker);
	CHECK_EQ(tu_waiter_join(&pend), 0);
	check_result(tu_waiter_join(&head));
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&l, 4, tu_scaled(5000));
}

/* ---- 6b. fork() while a waiter holds the pending bit of a free lock ---- */

static atomic_int thaw_frozen, frozen_now;

static void freeze_handler(int sig)
{
	(void)sig;
	atomic_store(&frozen_now, 1);
	while (!atomic_load(&thaw_frozen))
		tu_sleep_ms(1);
}

/* A child's thread: take and release the lock once. */
static void *orphan_taker(void *arg)
{
	rqspinlock_t *l = arg;
	int r = res_spin_lock(l);

	if (r == 0)
		res_spin_unlock(l);
	return (void *)(intptr_t)r;
}

/* The busy threads that starve a child's taker of CPU. */
static atomic_int starve_cpu;

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *starver(void *arg)
{
	(void)arg;
	pin_to_cpu(atomic_load(&starve_cpu));
	for (;;) /* the child's _exit() ends it */
		;
	return NULL;
}

static void *starved_taker(void *arg)
{
	pin_to_cpu(atomic_load(&starve_cpu));
	return orphan_taker(arg);
}

/* In the child: @nthreads threads take the lock at once; 0 when all got it
 * and the word is free after. With @nbusy > 0 they and @nbusy busy threads
 * share the first CPU (hence TU_OVERLOAD), so that the takers spend most of
 * their waits off CPU. */
static int orphan_child(rqspinlock_t *l, int nthreads, int nbusy)
{
	pthread_t th[2], busy;
	cpu_set_t set;
	void *r;
	int bad = 0;

	if (nbusy) {
		if (sched_getaffinity(0, sizeof(set), &set))
			return 12;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				atomic_store(&starve_cpu, c);
				break;
			}
		for (int i = 0; i < nbusy; i++)
			if (pthread_create(&busy, NULL, starver, NULL))
				return 11;
	}
	/* A trylock never waits, so it never clears the bit (rqspinlock.h,
	 * "Abandoned calls"). */
	if (res_spin_trylock(l) != -EBUSY)
		return 13;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, nbusy ? starved_taker : orphan_taker, l))
			return 11;
	for (int i = 0; i < nthreads; i++) {
		if (pthread_join(th[i], &r) || r)
			bad = 10;
	}
	if (bad || tu_word(l))
		return 10;
	/* Once a wait has taken it, the word is clean: a trylock takes it. */
	if (res_spin_trylock(l))
		return 14;
	res_spin_unlock(l);
	return 0;
}

/*
 * The pending waiter of a lock is frozen in a signal handler, the owner
 * unlocks (the lock is free, the frozen waiter's pending bit stays), and
 * the process forks. In the child the waiter is gone, but its pending bit
 * is in the word: no thread of the child notes it, so a wait of the child
 * clears it at its deadline and takes the lock, as it would take any lock
 * that was free at fork (before: -ETIMEDOUT on every call). With one
 * thread in the child and with two (each of which could take the other
 * for the pending bit's owner). With @nbusy busy threads on the takers'
 * CPU in the child, the takers are off CPU for most of their waits: the
 * bit is still cleared at the first deadline (before: the wait was
 * extended on the taker's own time off CPU up to the cap and failed,
 * without ever clearing it, on every call while the CPU stayed busy).
 * With @cap (0: the default), the wall-clock cap: at or below the head's
 * two timeouts it allows no extension, and the wait that clears the bit
 * at its deadline, the cap, still takes the lock (before: -ETIMEDOUT).
 */
static void fork_orphaned_pending(int child_threads, int nbusy, uint64_t cap)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_waiter pend;
	int status;
	pid_t pid;

	res_spin_set_timeout_ns(10 * TU_NS_PER_S); /* the setup is not timed */
	atomic_store(&thaw_frozen, 0);
	atomic_store(&frozen_now, 0);
	tu_install_handler(SIGUSR2, freeze_handler);
	CHECK_EQ(res_spin_lock(&l), 0);
	tu_waiter_start(&pend, &l);
	TU_WAIT_UNTIL(TU_PENDING(tu_word(&l)) != 0, TU_SETUP_MS);
	CHECK_EQ(pthread_kill(pend.t, SIGUSR2), 0);
	TU_WAIT_UNTIL(atomic_load(&frozen_now), TU_SETUP_MS);
	res_spin_unlock(&l);
	CHECK_EQ(tu_word(&l), 0x100u); /* free, pending */
	res_spin_set_timeout_ns(50 * TU_NS_PER_MS);
	res_spin_set_timeout_cap_ns(cap);
	pid = fork();
	if (pid == 0) {
		alarm(20);
		_exit(orphan_child(&l, child_threads, nbusy));
	}
	res_spin_set_timeout_cap_ns(0);
	CHECK(pid > 0);
	status = tu_wait_child(pid, (unsigned)(tu_slack_ns(10 * TU_NS_PER_S) / TU_NS_PER_S));
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	atomic_store(&thaw_frozen, 1);
	check_result(tu_waiter_join(&pend));
	res_spin_set_timeout_ns(0);
	tu_check_lock_usable(&l, 4, tu_scaled(5000));
}

/* fork() of a threaded process is not run under TSan. */
static bool fork_skipped(void)
{
	if (TU_TSAN)
		printf("# fork() of a threaded process: not under TSan\n");
	return TU_TSAN;
}

static void test_fork_orphaned_pending(void)
{
	if (fork_skipped())
		return;
	fork_orphaned_pending(1, 0, 0);
	fork_orphaned_pending(2, 0, 0);
}

static void test_fork_orphaned_pending_starved(void)
{
	if (fork_skipped())
		return;
	fork_orphaned_pending(1, 8, 0);
	fork_orphaned_pending(2, 8, 0);
}

static void test_fork_orphaned_pending_capped(void)
{
	if (fork_skipped())
		return;
	/* the cap at the timeout, and at the head's two */
	fork_orphaned_pending(1, 0, 50 * TU_NS_PER_MS);
	fork_orphaned_pending(2, 0, 50 * TU_NS_PER_MS);
	fork_orphaned_pending(1, 0, 100 * TU_NS_PER_MS);
}

/* ---- 7. a lock in MAP_SHARED memory, used by two processes ---- */

struct shared_area {
	rqspinlock_t lock;
	atomic_long errors;
};

struct shared_worker {
	struct shared_area *area;
	long iters;
	uint64_t bound, worst;
};

static void *shared_worker_fn(void *arg)
{
	struct shared_worker *w = arg;

	for (long i = 0; i < w->iters; i++) {
		uint64_t t0 = rqu_now_ns(), dt;
		int r = res_spin_lock(&w->area->lock);

		dt = rqu_now_ns() - t0;
		if (dt > w->worst)
			w->worst = dt;
		if (r == 0) {
			tu_busy_ns(2000);
			res_spin_unlock(&w->area->lock);
		} else {
			atomic_fetch_add(&w->area->errors, 1);
		}
	}
	return NULL;
}

static void test_process_shared(void)
{
	const uint64_t timeout = 10 * TU_NS_PER_MS;
	struct shared_area *area =
	    mmap(NULL, sizeof(*area), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct shared_worker w[2];
	pthread_t t[2];
	pid_t pid;
	int status;

	CHECK(area != MAP_FAILED);
	res_spin_lock_init(&area->lock);
	atomic_init(&area->errors, 0);
	res_spin_set_timeout_ns(timeout);
	for (int i = 0; i < 2; i++)
		w[i] = (struct shared_worker){area, tu_scaled(4000), own_bound(timeout), 0};
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) { /* one thread: no new threads after a threaded fork */
		alarm(30);
		shared_worker_fn(&w[0]);
		_exit(w[0].worst <= w[0].bound ? 0 : 21);
	}
	for (int i = 0; i < 2; i++)
		tu_thread_start(&t[i], shared_worker_fn, &w[i]);
	for (int i = 0; i < 2; i++)
		tu_thread_join(t[i]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	printf("# %ld errors; worst waits %.1f, %.1f ms\n", atomic_load(&area->errors),
	       (double)w[0].worst / 1e6, (double)w[1].worst / 1e6);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	for (int i = 0; i < 2; i++)
		CHECK_LE(w[i].worst, w[i].bound);
	res_spin_set_timeout_ns(0);
	munmap(area, sizeof(*area));
}

static const struct tu_test tests[] = {
    TU_TEST("core_storm_head", test_storm_head, 40, TU_TAS),
    TU_TEST("deadlock_frozen_queue", test_frozen_queue, 60, 0),
    TU_TEST("deadlock_frozen_queue_held", test_frozen_queue_held, 60, 0),
    TU_TEST("core_storm_all", test_storm_all, 40, TU_TAS),
    TU_TEST("core_word_changed", test_word_changed, 60, TU_TAS),
    TU_TEST("core_nested_head", test_nested_head, 40, TU_TAS),
    TU_TEST("core_cancel_waiters", test_cancel_waiters, 40, TU_TAS),
    TU_TEST("core_cancel_report", test_cancel_report, 20, TU_TAS),
    TU_TEST("core_longjmp_head", test_longjmp_head, 40, TU_TAS),
    TU_TEST("core_longjmp_queued", test_longjmp_queued, 40, TU_TAS),
    TU_TEST("core_fork_in_handler", test_fork_in_handler, 40, TU_TAS),
    TU_TEST("core_fork_orphaned_pending", test_fork_orphaned_pending, 40, 0),
    TU_TEST("core_fork_orphaned_pending_starved", test_fork_orphaned_pending_starved, 40,
            TU_OVERLOAD),
    TU_TEST("core_fork_orphaned_pending_capped", test_fork_orphaned_pending_capped, 40, 0),
    TU_TEST("core_process_shared", test_process_shared, 60, TU_TAS),
};

TU_MAIN(tests)
