/* SPDX-License-Identifier: MIT */
/*
 * Recovery: owners that never release (stalled, exited, left behind by
 * fork()) and garbage lock words. Every wait ends with -ETIMEDOUT (or
 * -EDEADLK where the caller itself is the owner), and the lock is usable
 * again afterwards.
 */
#include "testutil.h"

#include <sys/wait.h>

/* The lock works normally: 4 threads, no errors, exact count, word back to 0. */
static void check_lock_usable(rqspinlock_t *lock)
{
	tu_check_lock_usable(lock, 4, tu_scaled(5000));
}

/* ---- stalled owner with a queue of waiters ---- */

#define STALL_WAITERS 5

/*
 * Queued mode: wait until waiter @p i is visibly in place: the first one as
 * the pending waiter, the next ones each as the new queue tail. (A waiter
 * that already gave up, after a long stall of this thread, ends the wait.)
 */
static void stall_wait_arrival(rqspinlock_t *l, struct tu_waiter *w, int i, uint32_t *tail)
{
	if (tu_is_tas()) {
		tu_sleep_ms(10);
		return;
	}
	if (i == 0) {
		TU_WAIT_UNTIL(TU_PENDING(tu_word(l)) != 0 || tu_waiter_done(w), TU_SETUP_MS);
		return;
	}
	TU_WAIT_UNTIL(TU_TAIL(tu_word(l)) != *tail || tu_waiter_done(w), TU_SETUP_MS);
	*tail = TU_TAIL(tu_word(l));
}

static void test_stalled_owner(void)
{
	/* Long enough for the queue to form before the pending waiter gives up. */
	const uint64_t timeout = 300 * TU_NS_PER_MS;
	/* The teardown passes from waiter to waiter: each must get a CPU. */
	const uint64_t bound = 2 * timeout + tu_slack_ns(TU_STALL_NS);
	struct rqspinlock_stats before, after;
	struct tu_waiter w[STALL_WAITERS];
	rqspinlock_t l = RQSPINLOCK_INIT;
	uint32_t tail = 0;

	res_spin_set_timeout_ns(timeout);
	tu_stats(&before);
	CHECK_EQ(res_spin_lock(&l), 0); /* the owner stalls until every waiter failed */
	for (int i = 0; i < STALL_WAITERS; i++) {
		tu_waiter_start(&w[i], &l);
		stall_wait_arrival(&l, &w[i], i, &tail);
	}
	for (int i = 0; i < STALL_WAITERS; i++)
		tu_waiter_join(&w[i]);
	for (int i = 0; i < STALL_WAITERS; i++)
		printf("# waiter %d: %d after %.1f ms\n", i, w[i].result,
		       (double)(w[i].end - w[i].start) / 1e6);
	for (int i = 0; i < STALL_WAITERS; i++) {
		CHECK_EQ(w[i].result, -ETIMEDOUT);
		CHECK_LE(w[i].end - w[i].start, bound);
		/* Nobody gives up before the first waiter waited one timeout. */
		CHECK_GE(w[i].end - w[0].start, timeout);
	}
	/* Pending bit and queue tail were cleaned up; only the owner remains. */
	CHECK_EQ(tu_word(&l), tu_owner());
	tu_stats(&after);
	CHECK_EQ(after.timeout - before.timeout, STALL_WAITERS);
	res_spin_unlock(&l);
	CHECK_EQ(tu_word(&l), 0);
	res_spin_set_timeout_ns(0);
	check_lock_usable(&l);
}

/* ---- a thread that exits while holding a lock ---- */

/* The owner id of the last thread that exited holding a lock. */
static _Atomic uint32_t exited_owner;

static void *lock_and_exit(void *arg)
{
	CHECK_EQ(res_spin_lock(arg), 0);
	atomic_store(&exited_owner, tu_owner());
	return NULL; /* exits holding it */
}

static void test_exit_holding(void)
{
	const uint64_t timeout = 20 * TU_NS_PER_MS;
	struct tu_waiter w[3];
	rqspinlock_t l = RQSPINLOCK_INIT, other = RQSPINLOCK_INIT;
	pthread_t t;

	res_spin_set_timeout_ns(timeout);
	tu_thread_start(&t, lock_and_exit, &l);
	tu_thread_join(t);
	CHECK_EQ(TU_LOCKED(tu_word(&l)), atomic_load(&exited_owner));

	CHECK_EQ(res_spin_lock(&l), -ETIMEDOUT);
	/* Several waiters at once, then one after the other (recycled slots). */
	for (int i = 0; i < 3; i++)
		tu_waiter_start(&w[i], &l);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(tu_waiter_join(&w[i]), -ETIMEDOUT);
		CHECK_LE(w[i].end - w[i].start, 2 * timeout + tu_slack_ns(TU_STALL_NS));
	}
	for (int i = 0; i < 3; i++) {
		tu_waiter_start(&w[i], &l);
		CHECK_EQ(tu_waiter_join(&w[i]), -ETIMEDOUT);
		tu_waiter_start(&w[i], &other);
		CHECK_EQ(tu_waiter_join(&w[i]), 0);
	}
	CHECK_EQ(TU_LOCKED(tu_word(&l)), atomic_load(&exited_owner));
	res_spin_lock_init(&l);
	res_spin_set_timeout_ns(0);
	check_lock_usable(&l);
}

/* A thread in the slot of the exited owner: what its AA check makes of
 * the abandoned lock, whose byte names that slot. */
struct recycled {
	rqspinlock_t *abandoned;
	int held;      /* locks it takes first */
	int same_slot; /* it got the exited owner's slot */
	int result;
	uint64_t elapsed; /* ns in res_spin_lock() on the abandoned lock */
};

#define RECYCLED_MAX_HELD 40

static void *recycled_thread(void *arg)
{
	struct recycled *a = arg;
	rqspinlock_t locks[RECYCLED_MAX_HELD];
	uint64_t t0;

	a->same_slot = tu_owner() == atomic_load(&exited_owner);
	if (!a->same_slot)
		return NULL;
	for (int i = 0; i < a->held; i++) {
		res_spin_lock_init(&locks[i]);
		CHECK_EQ(res_spin_lock(&locks[i]), 0);
	}
	t0 = rqu_now_ns();
	a->result = res_spin_lock(a->abandoned);
	a->elapsed = rqu_now_ns() - t0;
	for (int i = a->held - 1; i >= 0; i--)
		res_spin_unlock(&locks[i]);
	return NULL;
}

/* Runs @p a in fresh threads until one gets the exited owner's slot. */
static void run_in_recycled_slot(struct recycled *a)
{
	for (int tries = 0; tries < 16; tries++) {
		pthread_t t;

		tu_thread_start(&t, recycled_thread, a);
		tu_thread_join(t);
		if (a->same_slot)
			return;
	}
	CHECK(a->same_slot); /* the registry recycles a freed slot */
}

/*
 * The price of finding AAs on untracked locks through the locked byte
 * (docs/DESIGN.md section 7): a thread in an exited owner's slot waits for
 * that owner's abandoned lock like anyone else (-ETIMEDOUT) while its own
 * table is complete, but gets -EDEADLK at once while it holds more than 31
 * locks.
 */
static void test_exit_holding_untracked(void)
{
	const uint64_t timeout = 20 * TU_NS_PER_MS;
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct recycled a = {.abandoned = &l, .held = 3};
	pthread_t t;

	tu_thread_start(&t, lock_and_exit, &l);
	tu_thread_join(t);
	CHECK_EQ(TU_LOCKED(tu_word(&l)), atomic_load(&exited_owner));
	res_spin_set_timeout_ns(timeout);
	run_in_recycled_slot(&a);
	CHECK_EQ(a.result, -ETIMEDOUT);
	CHECK_GE(a.elapsed, timeout);
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	a = (struct recycled){.abandoned = &l, .held = RECYCLED_MAX_HELD};
	run_in_recycled_slot(&a);
	CHECK_EQ(a.result, -EDEADLK);
	CHECK_LT(a.elapsed, TU_LONG_TIMEOUT_NS / 4);
	res_spin_lock_init(&l);
	res_spin_set_timeout_ns(0);
	check_lock_usable(&l);
}

/* ---- re-initialising a lock while its pending waiter waits ---- */

/*
 * The documented recovery for a lock whose owner is gone: the owner exits
 * holding @l, a waiter becomes its pending waiter, and @reset re-initialises
 * the lock under it. The pending waiter then takes the lock from the new,
 * free word (its take-over must not assume the pending bit it set is still
 * in the word). Returns once the waiter has taken and released it.
 */
static void reset_under_pending_waiter(rqspinlock_t *l, void (*reset)(rqspinlock_t *))
{
	struct tu_waiter w;
	pthread_t t;

	res_spin_set_timeout_ns(5000 * TU_NS_PER_MS); /* no timeout before the re-init */
	tu_thread_start(&t, lock_and_exit, l);
	tu_thread_join(t);
	tu_waiter_start(&w, l);
	TU_WAIT_UNTIL(TU_PENDING(tu_word(l)) != 0 || tu_waiter_done(&w), TU_SETUP_MS);
	CHECK_EQ(tu_word(l), 0x100u | atomic_load(&exited_owner));
	reset(l);
	CHECK_EQ(tu_waiter_join(&w), 0);
	res_spin_set_timeout_ns(0);
}

/* res_spin_lock_init(): after the waiter's unlock the word is 0 and the
 * lock works normally. */
static void test_reinit_pending(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;

	reset_under_pending_waiter(&l, res_spin_lock_init);
	CHECK_EQ(tu_word(&l), 0);
	check_lock_usable(&l);
}

/* res_spin_lock_init_shared(): the waiter takes the shared lock over and
 * keeps its mark (the mark lives in the pending byte). */
static void test_reinit_shared_pending(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;

	reset_under_pending_waiter(&l, res_spin_lock_init_shared);
	CHECK_EQ(tu_word(&l), 0x8000u); /* free, still marked */
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(tu_word(&l), 0x8201u); /* mark, acquisition count 1, locked */
	res_spin_unlock(&l);
	CHECK_EQ(tu_word(&l), 0x8200u);
}

/* res_spin_lock_init_shared() under the pending waiter, and another process
 * takes the shared lock before the waiter sees it free: the waiter times
 * out and gives up its pending bit, which must leave the word marked (the
 * mark lives in the pending byte), or the shared lock would turn private
 * once its owner unlocks. */
static void test_reinit_shared_pending_timeout(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_waiter w;
	pthread_t t;

	res_spin_set_timeout_ns(300 * TU_NS_PER_MS);
	tu_thread_start(&t, lock_and_exit, &l);
	tu_thread_join(t);
	tu_waiter_start(&w, &l);
	TU_WAIT_UNTIL(TU_PENDING(tu_word(&l)) != 0 || tu_waiter_done(&w), TU_SETUP_MS);
	CHECK_EQ(tu_word(&l), 0x100u | atomic_load(&exited_owner));
	/* The reset and the other process's take (shared_try_word()'s CAS)
	 * in one store: marked, held by the anonymous owner. */
	atomic_store_explicit(&l.val, 0x8001u, memory_order_relaxed);
	CHECK_EQ(tu_waiter_join(&w), -ETIMEDOUT);
	CHECK_EQ(tu_word(&l), 0x8001u); /* still marked, no pending bit left */
	atomic_store_explicit(&l.val, 0x8000u, memory_order_relaxed); /* its unlock */
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(tu_word(&l), 0x8201u); /* mark, acquisition count 1, locked */
	res_spin_unlock(&l);
	CHECK_EQ(tu_word(&l), 0x8200u);
	res_spin_set_timeout_ns(0);
}

/* ---- re-initialising under contention: mutual exclusion holds ---- */

#define REINIT_CONTENDERS 2

struct reinit_run {
	rqspinlock_t lock;
	atomic_int inside;  /* threads in the critical section */
	atomic_long broken; /* entries that found another thread inside */
	atomic_long acquired;
	atomic_int stop;
};

/* The critical section: long enough that an overlapping owner shows. */
static void reinit_cs(struct reinit_run *r)
{
	if (atomic_fetch_add_explicit(&r->inside, 1, memory_order_relaxed))
		atomic_fetch_add_explicit(&r->broken, 1, memory_order_relaxed);
	tu_busy_ns(2000);
	atomic_fetch_sub_explicit(&r->inside, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->acquired, 1, memory_order_relaxed);
}

static void *reinit_contender(void *arg)
{
	struct reinit_run *r = arg;

	while (!tu_stopped(&r->stop)) {
		if (res_spin_lock(&r->lock))
			continue; /* timed out on the abandoned lock */
		reinit_cs(r);
		res_spin_unlock(&r->lock);
	}
	return NULL;
}

/* An owner that dies holding the lock (retrying while others hold it). */
static void *reinit_dier(void *arg)
{
	while (res_spin_lock(arg))
		;
	return NULL;
}

/*
 * The documented recovery, res_spin_lock_init() on a lock whose owner died,
 * while other threads keep calling: a pending waiter and a queue head that
 * set their bits before the reset must not take the lock over blindly when
 * the new word turns free, or they and a thread that took the fresh lock
 * both own it. Each round the lock is abandoned, waiters gather, and this
 * thread resets it and takes it at once.
 */
static void test_reinit_contended(void)
{
	struct reinit_run r = {.lock = RQSPINLOCK_INIT};
	uint64_t end = rqu_now_ns() + (uint64_t)tu_scaled(1500) * TU_NS_PER_MS;
	pthread_t t[REINIT_CONTENDERS], dier;
	long rounds = 0;

	res_spin_set_timeout_ns(20 * TU_NS_PER_MS);
	for (int i = 0; i < REINIT_CONTENDERS; i++)
		tu_thread_start(&t[i], reinit_contender, &r);
	while (rqu_now_ns() < end) {
		tu_thread_start(&dier, reinit_dier, &r.lock);
		tu_thread_join(dier);
		/* A waiter holds the pending bit (or the abandoned lock's
		 * waiters all gave up just now: reset anyway). */
		TU_WAIT_UNTIL(TU_PENDING(tu_word(&r.lock)) != 0 || rqu_now_ns() >= end,
		              TU_SETUP_MS);
		res_spin_lock_init(&r.lock);
		if (res_spin_lock(&r.lock) == 0) {
			reinit_cs(&r);
			res_spin_unlock(&r.lock);
		}
		rounds++;
	}
	atomic_store_explicit(&r.stop, 1, memory_order_relaxed);
	for (int i = 0; i < REINIT_CONTENDERS; i++)
		tu_thread_join(t[i]);
	printf("# %ld resets, %ld acquisitions, %ld overlapping\n", rounds,
	       atomic_load_explicit(&r.acquired, memory_order_relaxed),
	       atomic_load_explicit(&r.broken, memory_order_relaxed));
	CHECK_EQ(atomic_load_explicit(&r.broken, memory_order_relaxed), 0);
	/* The last dier's lock may still be held only if no reset followed. */
	res_spin_lock_init(&r.lock);
	res_spin_set_timeout_ns(0);
	check_lock_usable(&r.lock);
}

/* ---- re-initialising publishes the recovery's repairs ---- */

static long reinit_repaired; /* plain: protected by the lock */
static atomic_int reinit_go;

/* Started before the repair: only the lock can order it before the read. */
static void *reinit_reader(void *arg)
{
	rqspinlock_t *l = arg;
	long v;

	while (!atomic_load_explicit(&reinit_go, memory_order_relaxed))
		sched_yield();
	while (res_spin_lock(l))
		; /* the abandoned lock times out until the reset */
	v = reinit_repaired;
	res_spin_unlock(l);
	return (void *)v;
}

/*
 * The recovery for a lock whose owner died: repair what the lock protects,
 * then res_spin_lock_init() while others still call. The thread that takes
 * the fresh lock must see the repair: the reset is a release, paired with
 * the acquire of whatever takes the word next. With a relaxed store the
 * read is a data race (ThreadSanitizer reports it; a weakly ordered CPU, or
 * the compiler, may make the store to the word visible before the repair).
 */
static void test_reinit_publishes(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	pthread_t dier, reader;
	void *seen;

	res_spin_set_timeout_ns(2 * TU_NS_PER_MS);
	atomic_store_explicit(&reinit_go, 0, memory_order_relaxed);
	tu_thread_start(&reader, reinit_reader, &l);
	tu_thread_start(&dier, lock_and_exit, &l);
	tu_thread_join(dier);
	atomic_store_explicit(&reinit_go, 1, memory_order_relaxed);
	tu_busy_ns(5 * TU_NS_PER_MS); /* the reader waits on the abandoned lock */
	reinit_repaired = 42;
	res_spin_lock_init(&l);
	CHECK_EQ(pthread_join(reader, &seen), 0);
	CHECK_EQ((long)seen, 42);
	res_spin_set_timeout_ns(0);
	check_lock_usable(&l);
}

/* ---- fork() while another thread holds a lock ---- */

/* In the child: single-threaded, bounded by alarm(); status 0 = all as expected. */
static int fork_child(rqspinlock_t *held_by_other, rqspinlock_t *held_by_me,
                      rqspinlock_t *free_lock)
{
	alarm(10); /* a hang kills the child with SIGALRM: the parent sees it */
	res_spin_set_timeout_ns(20 * TU_NS_PER_MS);
	if (res_spin_lock(held_by_other) != -ETIMEDOUT)
		return 10;
	if (res_spin_lock(held_by_me) != -EDEADLK)
		return 11;
	res_spin_unlock(held_by_me);
	if (tu_word(held_by_me) != 0)
		return 12;
	if (res_spin_lock(free_lock) != 0)
		return 13;
	res_spin_unlock(free_lock);
	res_spin_lock_init(held_by_other);
	if (res_spin_lock(held_by_other) != 0)
		return 14;
	res_spin_unlock(held_by_other);
	return tu_word(held_by_other) == 0 && tu_word(free_lock) == 0 ? 0 : 15;
}

static void test_fork(void)
{
	rqspinlock_t a = RQSPINLOCK_INIT, mine = RQSPINLOCK_INIT, free_lock = RQSPINLOCK_INIT;
	struct tu_holder h;
	int status;
	pid_t pid;

	tu_holder_start(&h, &a, 0);
	CHECK_EQ(res_spin_lock(&mine), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(fork_child(&a, &mine, &free_lock));
	status = tu_wait_child(pid, 20);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	/* The parent is unaffected. */
	tu_holder_join(&h);
	res_spin_unlock(&mine);
	check_lock_usable(&a);
	check_lock_usable(&mine);
}

/* ---- garbage lock words ---- */

/* Values that hit the decoder's corners; random ones follow. */
static const uint32_t garbage_corners[] = {
    0xffffffffu, 0xffff0000u, 0xffff0101u, 0x00000100u, 0x00000101u, 0x000000ffu,
    0x00010000u, 0x00030000u, 0x00040000u, 0x00070000u, 0x00070001u, 0x00070101u,
    0xfffc0000u, 0xfffd0000u, 0xfffe0001u, 0x80000000u, 0x80030000u, 0x0000ff00u,
};

static uint32_t garbage_value(long i, uint64_t *rng)
{
	long n = (long)(sizeof(garbage_corners) / sizeof(garbage_corners[0]));
	uint32_t v;

	if (i < n)
		return garbage_corners[i];
	v = (uint32_t)tu_rand(rng);
	switch (i % 4) {
	case 0: /* nesting index 3, random slot */
		return v | 0x30000u;
	case 1: /* small slots, likely unused or our own */
		return (v & 0x0000ffffu) | ((uint32_t)(i % 64) << 18) | ((uint32_t)(i % 4) << 16);
	default:
		return v;
	}
}

/*
 * Writes many garbage values into a lock word and takes the lock: each call
 * must return in bounded time with 0, -ETIMEDOUT or -EDEADLK (no hang, no
 * crash, ASan clean); after res_spin_lock_init() the lock works normally.
 * @keep_tail: 0 clears the tail field, so only locked/pending bytes are garbage.
 */
static void garbage_test(int keep_tail)
{
	const uint64_t timeout = 2 * TU_NS_PER_MS;
	const uint64_t bound = 2 * timeout + tu_slack_ns(TU_STALL_NS);
	long n = tu_scaled(300), counts[3] = {0, 0, 0};
	rqspinlock_t l;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;

	res_spin_set_timeout_ns(timeout);
	for (long i = 0; i < n; i++) {
		uint32_t v = garbage_value(i, &rng) & (keep_tail ? ~0u : 0xffffu);
		uint64_t t0;
		int r;

		tu_set_context("garbage word %ld: 0x%08x", i, v);
		atomic_store_explicit(&l.val, v, memory_order_relaxed);
		t0 = rqu_now_ns();
		r = res_spin_lock(&l);
		if (rqu_now_ns() - t0 > bound || (r != 0 && r != -ETIMEDOUT && r != -EDEADLK))
			tu_fail(__FILE__, __LINE__, "word 0x%08x: %d after %.1f ms", v, r,
			        (double)(rqu_now_ns() - t0) / 1e6);
		counts[r == 0 ? 0 : r == -ETIMEDOUT ? 1 : 2]++;
		if (r == 0)
			res_spin_unlock(&l);
		res_spin_lock_init(&l);
		CHECK_EQ(res_spin_lock(&l), 0);
		res_spin_unlock(&l);
	}
	printf("# %ld words: %ld acquired, %ld timed out, %ld deadlock\n", n, counts[0], counts[1],
	       counts[2]);
	res_spin_set_timeout_ns(0);
	res_spin_lock_init(&l);
	check_lock_usable(&l);
}

static void test_garbage(void)
{
	garbage_test(1);
}

static void test_garbage_no_tail(void)
{
	garbage_test(0);
}

static const struct tu_test tests[] = {
    TU_TEST("core_stalled_owner", test_stalled_owner, 40, TU_TAS),
    TU_TEST("core_exit_holding", test_exit_holding, 40, TU_TAS),
    TU_TEST("core_exit_holding_untracked", test_exit_holding_untracked, 40, TU_TAS),
    TU_TEST("core_reinit_pending", test_reinit_pending, 40, 0),
    TU_TEST("core_reinit_contended", test_reinit_contended, 40, TU_TAS),
    TU_TEST("core_reinit_shared_pending", test_reinit_shared_pending, 40, 0),
    TU_TEST("core_reinit_shared_pending_timeout", test_reinit_shared_pending_timeout, 40, 0),
    TU_TEST("core_reinit_publishes", test_reinit_publishes, 40, TU_TAS),
    TU_TEST("core_fork", test_fork, 50, TU_TAS),
    TU_TEST("core_garbage", test_garbage, 50, TU_TAS),
    TU_TEST("core_garbage_no_tail", test_garbage_no_tail, 50, TU_TAS),
};

TU_MAIN(tests)
