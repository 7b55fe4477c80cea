/* SPDX-License-Identifier: MIT */
/*
 * Core behaviour: mutual exclusion, trylock, argument checks, the timeout
 * setter, static initialization, statistics, and the baseline QL.
 */
#include "testutil.h"

#include <rqspinlock/qspinlock.h>

/* ---- mutual exclusion ---- */

struct mutex_state {
	rqspinlock_t lock;
	struct tu_cs cs; /* protected by lock */
	long iters;
	atomic_long acquired, errors;
	atomic_long broken; /* unequal words seen on entry: two threads inside */
	atomic_int stop;
	pthread_barrier_t start;
};

/* Acquire in one of three ways, so that irqsave and trylock are covered too. */
static int mutex_acquire(struct mutex_state *s, long i, sigset_t *flags, int *irq)
{
	int r;

	*irq = (i % 8) == 0;
	if (*irq)
		return res_spin_lock_irqsave(&s->lock, flags);
	if ((i % 8) == 1) {
		r = res_spin_trylock(&s->lock);
		if (r != -EBUSY)
			return r;
	}
	return res_spin_lock(&s->lock);
}

static void *mutex_worker(void *arg)
{
	struct mutex_state *s = arg;
	sigset_t flags;
	long done = 0;
	int irq;

	pthread_barrier_wait(&s->start);
	for (long i = 0; tu_keep_going(i, s->iters, &s->stop); i++) {
		if (mutex_acquire(s, i, &flags, &irq) != 0) {
			atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
			continue;
		}
		if (!tu_cs_update(&s->cs))
			atomic_fetch_add_explicit(&s->broken, 1, memory_order_relaxed);
		if (irq)
			res_spin_unlock_irqrestore(&s->lock, &flags);
		else
			res_spin_unlock(&s->lock);
		done++;
	}
	atomic_fetch_add_explicit(&s->acquired, done, memory_order_relaxed);
	return NULL;
}

/* A pure mutual-exclusion test (long timeout): no errors at all. */
static void mutex_test(int nthreads)
{
	struct mutex_state s = {.lock = RQSPINLOCK_INIT};
	int stopped;

	s.iters = tu_scaled(200000) / nthreads + 1;
	res_spin_set_timeout_ns(TU_MUTEX_TIMEOUT_NS);
	pthread_barrier_init(&s.start, NULL, (unsigned)nthreads);
	stopped = tu_run_threads(nthreads, mutex_worker, &s, 700, &s.stop);
	pthread_barrier_destroy(&s.start);
	printf("# %d threads: %ld acquisitions (of %ld planned%s)\n", nthreads,
	       atomic_load(&s.acquired), s.iters * nthreads, stopped ? ", stopped at 700 ms" : "");
	CHECK_EQ(atomic_load(&s.errors), 0);
	CHECK_EQ(atomic_load(&s.broken), 0);
	CHECK_GT(atomic_load(&s.acquired), 0);
	tu_cs_check(&s.cs, atomic_load(&s.acquired));
	CHECK_EQ(tu_word(&s.lock), 0);
}

static void test_mutex_2(void)
{
	mutex_test(2);
}

static void test_mutex_4(void)
{
	mutex_test(4);
}

static void test_mutex_8(void)
{
	mutex_test(8);
}

static void test_mutex_16(void)
{
	mutex_test(16);
}

/* ---- trylock and argument checks ---- */

static rqspinlock_t try_lock_shared;

static void *trylock_other(void *arg)
{
	uint64_t t0 = rqu_now_ns();
	int r = res_spin_trylock(&try_lock_shared);

	*(uint64_t *)arg = rqu_now_ns() - t0;
	return (void *)(intptr_t)r;
}

static int trylock_from_thread(uint64_t *elapsed)
{
	pthread_t t;
	void *r;

	tu_thread_start(&t, trylock_other, elapsed);
	CHECK_EQ(pthread_join(t, &r), 0);
	return (int)(intptr_t)r;
}

static int signal_mask_blocks(int sig)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static void test_trylock(void)
{
	rqspinlock_t *l = &try_lock_shared;
	uint64_t elapsed = 0;
	sigset_t flags;

	/* A long timeout: a trylock that waited would be visible. */
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	res_spin_lock_init(l);
	CHECK_EQ(res_spin_trylock(l), 0);
	CHECK_EQ(TU_LOCKED(tu_word(l)), tu_owner());
	CHECK_EQ(res_spin_trylock(l), -EBUSY);
	CHECK_EQ(trylock_from_thread(&elapsed), -EBUSY);
	CHECK_LT(elapsed, TU_LONG_TIMEOUT_NS / 4);
	res_spin_unlock(l);
	CHECK_EQ(tu_word(l), 0);
	CHECK_EQ(trylock_from_thread(&elapsed), 0); /* that thread exits holding it */
	CHECK_EQ(res_spin_trylock(l), -EBUSY);
	res_spin_lock_init(l);

	/* A word with only the pending bit set is contended: trylock fails. */
	atomic_store_explicit(&l->val, 1u << 8, memory_order_relaxed);
	CHECK_EQ(res_spin_trylock(l), -EBUSY);
	res_spin_lock_init(l);

	CHECK_EQ(res_spin_lock(NULL), -EINVAL);
	CHECK_EQ(res_spin_trylock(NULL), -EINVAL);
	CHECK(!signal_mask_blocks(SIGUSR1));
	CHECK_EQ(res_spin_lock_irqsave(l, NULL), -EINVAL);
	CHECK_EQ(tu_word(l), 0);
	CHECK(!signal_mask_blocks(SIGUSR1));
	CHECK_EQ(res_spin_lock_irqsave(NULL, &flags), -EINVAL);
	CHECK(!signal_mask_blocks(SIGUSR1));
	CHECK_EQ(res_spin_lock_irqsave(l, &flags), 0);
	CHECK(signal_mask_blocks(SIGUSR1));
	res_spin_unlock_irqrestore(l, &flags);
	CHECK(!signal_mask_blocks(SIGUSR1));
	CHECK_EQ(tu_word(l), 0);
}

/* ---- unlock of NULL ---- */

#define NULL_UNLOCK_LOCKS (RQSPINLOCK_NR_HELD + 2)

static void *unlock_null_unregistered(void *arg)
{
	(void)arg;
	res_spin_unlock(NULL);
	return NULL;
}

/*
 * res_spin_unlock(NULL) releases nothing and is counted as an unlock of a
 * lock not held: from a thread that never locked, with locks held, and with
 * the held table in the state where its last tracked entry stands for an
 * untracked lock (more than RQSPINLOCK_NR_HELD held, one released out of
 * order).
 */
static void test_unlock_null(void)
{
	static rqspinlock_t l[NULL_UNLOCK_LOCKS];
	struct rqspinlock_stats st;
	sigset_t flags;
	pthread_t t;

	res_spin_reset_stats();
	tu_thread_start(&t, unlock_null_unregistered, NULL);
	tu_thread_join(t);
	for (int i = 0; i < NULL_UNLOCK_LOCKS; i++)
		CHECK_EQ(res_spin_lock(&l[i]), 0);
	res_spin_unlock(NULL);
	res_spin_unlock(&l[5]);                     /* out of order, tracked */
	res_spin_unlock(&l[NULL_UNLOCK_LOCKS - 1]); /* untracked */
	res_spin_unlock(NULL);
	sigemptyset(&flags);
	res_spin_unlock_irqrestore(NULL, &flags);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	CHECK_EQ(st.unlock_not_held, 4);
	for (int i = 0; i < NULL_UNLOCK_LOCKS - 1; i++) {
		if (i == 5)
			continue;
		CHECK_EQ(TU_LOCKED(tu_word(&l[i])), tu_owner());
		if (i < RQSPINLOCK_NR_HELD - 1)
			CHECK_EQ(res_spin_lock(&l[i]), -EDEADLK);
	}
	for (int i = NULL_UNLOCK_LOCKS - 2; i >= 0; i--)
		if (i != 5)
			res_spin_unlock(&l[i]);
	for (int i = 0; i < NULL_UNLOCK_LOCKS; i++)
		CHECK_EQ(tu_word(&l[i]), 0);
	CHECK_EQ(res_spin_get_stats(&st), 0);
	CHECK_EQ(st.unlock_not_held, 4);
}

/* ---- timeout setter ---- */

static void test_timeout_setter(void)
{
	const uint64_t def = RQSPINLOCK_DEFAULT_TIMEOUT_NS;

	CHECK_EQ(res_spin_get_timeout_ns(), def);
	CHECK_EQ(res_spin_set_timeout_ns(12345678), def);
	CHECK_EQ(res_spin_get_timeout_ns(), 12345678);
	CHECK_EQ(res_spin_set_timeout_ns(0), 12345678);
	CHECK_EQ(res_spin_get_timeout_ns(), def);
	CHECK_EQ(res_spin_set_timeout_ns(1), def);
	CHECK_EQ(res_spin_get_timeout_ns(), RQSPINLOCK_MIN_TIMEOUT_NS);
	CHECK_EQ(res_spin_set_timeout_ns(RQSPINLOCK_MIN_TIMEOUT_NS - 1), RQSPINLOCK_MIN_TIMEOUT_NS);
	CHECK_EQ(res_spin_get_timeout_ns(), RQSPINLOCK_MIN_TIMEOUT_NS);
	CHECK_EQ(res_spin_set_timeout_ns(RQSPINLOCK_MAX_TIMEOUT_NS + 1), RQSPINLOCK_MIN_TIMEOUT_NS);
	CHECK_EQ(res_spin_get_timeout_ns(), RQSPINLOCK_MAX_TIMEOUT_NS);
	CHECK_EQ(res_spin_set_timeout_ns(UINT64_MAX), RQSPINLOCK_MAX_TIMEOUT_NS);
	CHECK(res_spin_get_timeout_ns() == RQSPINLOCK_MAX_TIMEOUT_NS);
	CHECK(res_spin_set_timeout_ns(RQSPINLOCK_MAX_TIMEOUT_NS) == RQSPINLOCK_MAX_TIMEOUT_NS);
	CHECK_EQ(res_spin_set_timeout_ns(0), RQSPINLOCK_MAX_TIMEOUT_NS);
	CHECK_EQ(res_spin_get_timeout_ns(), def);
}

/* ---- static initialization ---- */

static rqspinlock_t static_init_lock = RQSPINLOCK_INIT;
static rqspinlock_t static_zero_lock;
static ql_spinlock_t static_ql_lock = QL_SPINLOCK_INIT;

/* Two threads share @p lock: exact counter, no errors. */
static void contend_on(rqspinlock_t *lock)
{
	tu_check_lock_usable(lock, 2, tu_scaled(20000));
}

static void lock_unlock_once(rqspinlock_t *lock)
{
	CHECK_EQ(tu_word(lock), 0);
	CHECK_EQ(res_spin_lock(lock), 0);
	CHECK_EQ(tu_word(lock), tu_owner()); /* the word names its owner */
	res_spin_unlock(lock);
	CHECK_EQ(tu_word(lock), 0);
}

static void test_static_init(void)
{
	rqspinlock_t on_stack = RQSPINLOCK_INIT;
	rqspinlock_t *heap = calloc(4, sizeof(*heap));
	rqspinlock_t memset_lock;

	CHECK(heap != NULL);
	memset(&memset_lock, 0, sizeof(memset_lock));
	lock_unlock_once(&static_init_lock);
	lock_unlock_once(&static_zero_lock);
	lock_unlock_once(&on_stack);
	lock_unlock_once(&heap[3]);
	lock_unlock_once(&memset_lock);
	contend_on(&static_init_lock);
	contend_on(&heap[1]);
	free(heap);

	CHECK_EQ(ql_spin_trylock(&static_ql_lock), 0);
	ql_spin_unlock(&static_ql_lock);
	ql_spin_lock(&static_ql_lock);
	ql_spin_unlock(&static_ql_lock);
	CHECK_EQ(atomic_load_explicit(&static_ql_lock.val, memory_order_relaxed), 0);
}

/* ---- statistics ---- */

static uint64_t stats_tas_entries(void)
{
	struct rqspinlock_stats st;

	tu_stats(&st);
	return st.lock_tas;
}

/*
 * Main holds the lock; waiters arrive one after the other (queued mode: the
 * first becomes the pending waiter, the second queues; TAS mode: each enters
 * the TAS slow path, which counts on entry); then main releases.
 */
static void stats_contend(rqspinlock_t *l, int nwaiters)
{
	struct tu_waiter w[2];

	CHECK_EQ(res_spin_lock(l), 0);
	for (int i = 0; i < nwaiters; i++) {
		tu_waiter_start(&w[i], l);
		if (tu_is_tas())
			TU_WAIT_UNTIL(stats_tas_entries() >= (uint64_t)i + 1, TU_SETUP_MS);
		else if (i == 0)
			TU_WAIT_UNTIL(TU_PENDING(tu_word(l)) != 0, TU_SETUP_MS);
		else
			TU_WAIT_UNTIL(TU_TAIL(tu_word(l)) != 0, TU_SETUP_MS);
	}
	res_spin_unlock(l);
	for (int i = 0; i < nwaiters; i++)
		CHECK_EQ(tu_waiter_join(&w[i]), 0);
}

static void *stats_timeout_fn(void *arg)
{
	return (void *)(intptr_t)res_spin_lock(arg);
}

static void test_stats(void)
{
	struct rqspinlock_stats st;
	rqspinlock_t l = RQSPINLOCK_INIT;
	pthread_t t;
	void *r;

	CHECK_EQ(res_spin_get_stats(NULL), -EINVAL);
	res_spin_set_timeout_ns(2 * TU_NS_PER_S);
	res_spin_reset_stats();
	tu_stats(&st);
	CHECK_EQ(st.lock_slowpath + st.lock_pending + st.lock_tas + st.timeout + st.deadlock_aa, 0);

	/* The fast path counts nothing. */
	lock_unlock_once(&l);
	tu_stats(&st);
	CHECK_EQ(st.lock_slowpath + st.lock_pending + st.lock_tas, 0);

	stats_contend(&l, 2);
	tu_stats(&st);
	if (tu_is_tas()) {
		CHECK_GE(st.lock_tas, 2);
	} else {
		CHECK_GE(st.lock_pending, 1);
		CHECK_GE(st.lock_slowpath, 1);
		CHECK_EQ(st.lock_tas, 0);
	}

	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(res_spin_lock(&l), -EDEADLK);
	tu_stats(&st);
	CHECK_EQ(st.deadlock_aa, 1);
	CHECK_EQ(st.timeout, 0);
	res_spin_set_timeout_ns(20 * TU_NS_PER_MS);
	tu_thread_start(&t, stats_timeout_fn, &l);
	CHECK_EQ(pthread_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, -ETIMEDOUT);
	res_spin_unlock(&l);
	tu_stats(&st);
	CHECK_EQ(st.timeout, 1);
	CHECK_EQ(st.unlock_not_held, 0);

	/* Unlocking a lock this thread does not hold still releases it. */
	atomic_store_explicit(&l.val, 1, memory_order_relaxed);
	res_spin_unlock(&l);
	CHECK_EQ(tu_word(&l), 0);
	tu_stats(&st);
	CHECK_EQ(st.unlock_not_held, 1);

	res_spin_reset_stats();
	tu_stats(&st);
	CHECK_EQ(st.lock_slowpath + st.lock_pending + st.lock_tas + st.timeout + st.deadlock_aa +
	             st.unlock_not_held,
	         0);
	res_spin_set_timeout_ns(0);
}

/* ---- switching modes while threads contend ---- */

static atomic_int toggler_quit;

static void *mode_toggler(void *arg)
{
	long flips = 0;

	(void)arg;
	while (!atomic_load_explicit(&toggler_quit, memory_order_relaxed)) {
		CHECK_EQ(
		    res_spin_set_mode(flips++ % 2 ? RQSPINLOCK_MODE_QUEUED : RQSPINLOCK_MODE_TAS),
		    0);
		tu_sleep_ns(100000);
	}
	return NULL;
}

/* Documented as safe: both slow paths only take the lock with 0 -> locked. */
static void test_mode_switch(void)
{
	enum rqspinlock_mode start = res_spin_get_mode();
	rqspinlock_t l = RQSPINLOCK_INIT;
	pthread_t t;

	CHECK_EQ(res_spin_set_mode((enum rqspinlock_mode)7), -EINVAL);
	CHECK_EQ(res_spin_get_mode(), start);
	tu_thread_start(&t, mode_toggler, NULL);
	tu_check_lock_usable(&l, 6, tu_scaled(100000));
	atomic_store_explicit(&toggler_quit, 1, memory_order_relaxed);
	tu_thread_join(t);
	CHECK_EQ(res_spin_set_mode(start), 0);
	CHECK_EQ(res_spin_get_mode(), start);
}

/* ---- the baseline QL ---- */

struct ql_state {
	ql_spinlock_t lock;
	struct tu_cs cs; /* protected by lock */
	long iters;
	atomic_long acquired, broken;
	atomic_int stop;
};

static void *ql_worker(void *arg)
{
	struct ql_state *s = arg;
	long done = 0;

	for (long i = 0; tu_keep_going(i, s->iters, &s->stop); i++) {
		ql_spin_lock(&s->lock);
		if (!tu_cs_update(&s->cs))
			atomic_fetch_add_explicit(&s->broken, 1, memory_order_relaxed);
		ql_spin_unlock(&s->lock);
		done++;
	}
	atomic_fetch_add_explicit(&s->acquired, done, memory_order_relaxed);
	return NULL;
}

static void *ql_trylock_other(void *arg)
{
	return (void *)(intptr_t)ql_spin_trylock(arg);
}

static void test_ql(void)
{
	struct ql_state s = {.lock = QL_SPINLOCK_INIT, .iters = tu_scaled(40000)};
	pthread_t t[1];
	void *r;

	tu_run_threads(4, ql_worker, &s, 700, &s.stop);
	CHECK_EQ(atomic_load(&s.broken), 0);
	CHECK_GT(atomic_load(&s.acquired), 0);
	tu_cs_check(&s.cs, atomic_load(&s.acquired));
	CHECK_EQ(atomic_load_explicit(&s.lock.val, memory_order_relaxed), 0);

	CHECK_EQ(ql_spin_trylock(&s.lock), 0);
	CHECK_EQ(ql_spin_trylock(&s.lock), -EBUSY);
	tu_thread_start(&t[0], ql_trylock_other, &s.lock);
	CHECK_EQ(pthread_join(t[0], &r), 0);
	CHECK_EQ((intptr_t)r, -EBUSY);
	ql_spin_unlock(&s.lock);
	CHECK_EQ(atomic_load_explicit(&s.lock.val, memory_order_relaxed), 0);
}

/*
 * Counters stay exact when a signal handler counts on the thread it
 * interrupts: each thread (at least STATS_CALLS times) and its handler
 * (at least STATS_HANDLERS times) make AA calls (-EDEADLK), each counted
 * once, while the main thread sends signals at them. Then a reset reads
 * zero although the exited threads' counters moved to the retired ones,
 * and counting goes on from zero.
 */
#define STATS_THREADS  3
#define STATS_CALLS    40000
#define STATS_HANDLERS 100 /* handler runs each thread waits for at least */

static atomic_int stats_done, stats_stop, stats_bad;
static _Atomic uint64_t stats_handler_calls, stats_thread_calls;
static _Thread_local volatile sig_atomic_t stats_handled_here;

static void stats_count_aa(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	int first = res_spin_lock(&l);
	int again = res_spin_lock(&l); /* AA: counted once */

	if (first != 0 || again != -EDEADLK)
		atomic_fetch_add_explicit(&stats_bad, 1, memory_order_relaxed);
	res_spin_unlock(&l);
}

static void stats_handler(int sig)
{
	(void)sig;
	stats_count_aa();
	stats_handled_here = stats_handled_here + 1;
	atomic_fetch_add_explicit(&stats_handler_calls, 1, memory_order_relaxed);
}

static void *stats_counter_fn(void *arg)
{
	sigset_t usr1;
	uint64_t calls = 0;

	(void)arg;
	for (; calls < STATS_CALLS || stats_handled_here < STATS_HANDLERS; calls++)
		stats_count_aa();
	atomic_fetch_add_explicit(&stats_thread_calls, calls, memory_order_relaxed);
	atomic_fetch_add_explicit(&stats_done, 1, memory_order_relaxed);
	/* Stay registered while signals come; a signal still pending when we
	 * block it is never handled, so it counts on neither side. */
	while (!atomic_load_explicit(&stats_stop, memory_order_relaxed))
		sched_yield();
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	return NULL;
}

static void test_stats_exact(void)
{
	pthread_t t[STATS_THREADS];
	struct rqspinlock_stats st;

	tu_install_handler(SIGUSR1, stats_handler);
	res_spin_reset_stats();
	for (int i = 0; i < STATS_THREADS; i++)
		tu_thread_start(&t[i], stats_counter_fn, NULL);
	while (atomic_load_explicit(&stats_done, memory_order_relaxed) < STATS_THREADS)
		for (int i = 0; i < STATS_THREADS; i++)
			pthread_kill(t[i], SIGUSR1);
	atomic_store_explicit(&stats_stop, 1, memory_order_relaxed);
	for (int i = 0; i < STATS_THREADS; i++)
		tu_thread_join(t[i]);
	CHECK_EQ(atomic_load(&stats_bad), 0);
	CHECK_GE(atomic_load(&stats_handler_calls), STATS_THREADS * STATS_HANDLERS);
	tu_stats(&st);
	CHECK_EQ(st.deadlock_aa,
	         atomic_load(&stats_thread_calls) + atomic_load(&stats_handler_calls));
	res_spin_reset_stats();
	tu_stats(&st);
	CHECK_EQ(st.deadlock_aa, 0);
	stats_count_aa();
	tu_stats(&st);
	CHECK_EQ(st.deadlock_aa, 1);
}

static const struct tu_test tests[] = {
    TU_TEST("core_mutex_2", test_mutex_2, 60, TU_TAS),
    TU_TEST("core_mutex_4", test_mutex_4, 60, TU_TAS | TU_INLINE),
    TU_TEST("core_mutex_8", test_mutex_8, 60, TU_TAS),
    TU_TEST("core_mutex_16", test_mutex_16, 60, TU_TAS),
    TU_TEST("core_trylock", test_trylock, 30, TU_TAS | TU_INLINE),
    TU_TEST("core_unlock_null", test_unlock_null, 20, TU_TAS | TU_INLINE),
    TU_TEST("core_timeout_setter", test_timeout_setter, 20, TU_TAS),
    TU_TEST("core_static_init", test_static_init, 40, TU_TAS),
    TU_TEST("core_stats", test_stats, 30, TU_TAS),
    TU_TEST("core_stats_exact", test_stats_exact, 60, TU_TAS),
    /* QL is the plain queued lock; RQSPINLOCK_MODE does not apply to it. */
    TU_TEST("core_ql", test_ql, 40, 0),
    TU_TEST("core_mode_switch", test_mode_switch, 40, TU_TAS),
};

TU_MAIN(tests)
