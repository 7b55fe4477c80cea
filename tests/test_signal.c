/* SPDX-License-Identifier: MIT */
/*
 * Signal handlers as the userspace "interrupts": irqsave keeps signals
 * pending, a handler that takes a lock its thread holds or waits for gets
 * -EDEADLK instead of hanging, and a handler interrupting a queued waiter can
 * still take other locks (the nested trylock fallback).
 */
#include "testutil.h"

static int blocked(int sig)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

/* ---- irqsave keeps a signal pending until irqrestore ---- */

static atomic_int usr1_runs;

static void count_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&usr1_runs, 1, memory_order_relaxed);
}

/* A failing irqsave restores the mask: SIGUSR1 unblocked, SIGUSR2 still blocked. */
static void check_mask_restored(void)
{
	CHECK(!blocked(SIGUSR1));
	CHECK(blocked(SIGUSR2));
	CHECK_EQ(raise(SIGUSR1), 0);
	TU_WAIT_UNTIL(atomic_load(&usr1_runs) == 1, TU_SETUP_MS);
	atomic_store(&usr1_runs, 0);
}

static void test_irqsave(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	sigset_t flags, usr2;
	struct tu_holder h;

	tu_install_handler(SIGUSR1, count_usr1);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0);

	CHECK_EQ(res_spin_lock_irqsave(&l, &flags), 0);
	CHECK(blocked(SIGUSR1));
	CHECK_EQ(raise(SIGUSR1), 0);
	tu_sleep_ms(20);
	CHECK_EQ(atomic_load(&usr1_runs), 0);
	res_spin_unlock_irqrestore(&l, &flags);
	/* A pending unblocked signal is delivered before the mask change returns. */
	CHECK_EQ(atomic_load(&usr1_runs), 1);
	CHECK_EQ(tu_word(&l), 0);
	CHECK(!blocked(SIGUSR1));
	CHECK(blocked(SIGUSR2)); /* the saved mask is restored, not emptied */
	atomic_store(&usr1_runs, 0);

	/* Failure by AA. */
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(res_spin_lock_irqsave(&l, &flags), -EDEADLK);
	check_mask_restored();
	res_spin_unlock(&l);

	/* Failure by timeout. */
	res_spin_set_timeout_ns(20 * TU_NS_PER_MS);
	tu_holder_start(&h, &l, 0);
	CHECK_EQ(res_spin_lock_irqsave(&l, &flags), -ETIMEDOUT);
	check_mask_restored();
	tu_holder_join(&h);
	res_spin_set_timeout_ns(0);
	CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr2, NULL), 0);
}

/* ---- a handler taking the lock its thread holds ---- */

struct handler_probe {
	_Atomic(rqspinlock_t *) lock;
	atomic_int entered, done, result;
	uint64_t elapsed; /* written before done is released */
};

static struct handler_probe probe;

static void probe_reset(rqspinlock_t *lock)
{
	atomic_store_explicit(&probe.entered, 0, memory_order_relaxed);
	atomic_store_explicit(&probe.done, 0, memory_order_relaxed);
	atomic_store_explicit(&probe.result, 1, memory_order_relaxed);
	/* Release: pairs with the acquire in probe_handler(); the signal itself
	 * orders them too, but TSan does not model pthread_kill(). */
	atomic_store_explicit(&probe.lock, lock, memory_order_release);
}

/* Takes probe.lock; unlocks it again if that worked. Async-signal-safe. */
static void probe_handler(int sig)
{
	/* Acquire: pairs with the release in probe_reset(). */
	rqspinlock_t *lock = atomic_load_explicit(&probe.lock, memory_order_acquire);
	int saved_errno = errno;
	uint64_t t0 = tu_now_ns();
	int r;

	(void)sig;
	atomic_store_explicit(&probe.entered, 1, memory_order_relaxed);
	r = res_spin_lock(lock);
	probe.elapsed = tu_now_ns() - t0;
	if (r == 0)
		res_spin_unlock(lock);
	atomic_store_explicit(&probe.result, r, memory_order_relaxed);
	/* Release: pairs with the acquire in probe_wait() (publishes elapsed). */
	atomic_store_explicit(&probe.done, 1, memory_order_release);
	errno = saved_errno;
}

static int probe_wait(void)
{
	/* Acquire: pairs with the release at the end of probe_handler(). */
	TU_WAIT_UNTIL(atomic_load_explicit(&probe.done, memory_order_acquire), TU_SETUP_MS);
	return atomic_load_explicit(&probe.result, memory_order_relaxed);
}

static void test_signal_aa(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct rqspinlock_stats before, after;

	/* A timeout would be far slower than the bound below. */
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	tu_install_handler(SIGUSR1, probe_handler);
	tu_stats(&before);
	CHECK_EQ(res_spin_lock(&l), 0);
	for (int i = 0; i < 2; i++) {
		probe_reset(&l);
		if (i == 0)
			CHECK_EQ(raise(SIGUSR1), 0);
		else
			CHECK_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
		CHECK_EQ(probe_wait(), -EDEADLK);
		CHECK_LT(probe.elapsed, TU_LONG_TIMEOUT_NS / 4);
		/* The outer critical section still owns the lock. */
		CHECK_EQ(tu_word(&l), tu_owner());
	}
	res_spin_unlock(&l);
	CHECK_EQ(tu_word(&l), 0);
	tu_stats(&after);
	CHECK_EQ(after.deadlock_aa - before.deadlock_aa, 2);
	/* The held table is consistent again: lock, AA, unlock. */
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(res_spin_lock(&l), -EDEADLK);
	res_spin_unlock(&l);
	CHECK_EQ(tu_word(&l), 0);
	res_spin_set_timeout_ns(0);
}

/* ---- a handler interrupting a non-head queued waiter ---- */

static uint32_t wait_new_tail(rqspinlock_t *l, uint32_t old)
{
	TU_WAIT_UNTIL(TU_TAIL(tu_word(l)) != old, TU_SETUP_MS);
	return TU_TAIL(tu_word(l));
}

/*
 * Queue-specific: needs a pending waiter, a head and a target queued behind
 * the head, which only the queued slow path builds.
 */
static void test_signal_queued_waiter(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT, m = RQSPINLOCK_INIT;
	struct tu_waiter pend, head, target, m_pend;
	struct rqspinlock_stats before, after;
	uint32_t tail;
	int r;

	/* Long enough that nobody times out while the queue is built, and that
	 * a timeout cannot pass for a detection. */
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	tu_install_handler(SIGUSR1, probe_handler);
	tu_stats(&before);
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(res_spin_lock(&m), 0);
	tu_waiter_start(&pend, &l);
	TU_WAIT_UNTIL(TU_PENDING(tu_word(&l)) != 0, TU_SETUP_MS);
	tu_waiter_start(&head, &l);
	tail = wait_new_tail(&l, 0);
	tu_waiter_start(&target, &l);
	tail = wait_new_tail(&l, tail);
	tu_waiter_start(&m_pend, &m); /* M: held by us, with a pending waiter */
	TU_WAIT_UNTIL(TU_PENDING(tu_word(&m)) != 0, TU_SETUP_MS);

	/* The target's handler takes L, which its thread is queued for: AA. */
	probe_reset(&l);
	CHECK_EQ(pthread_kill(target.t, SIGUSR1), 0);
	CHECK_EQ(probe_wait(), -EDEADLK);
	CHECK_LT(probe.elapsed, TU_LONG_TIMEOUT_NS / 4);
	CHECK_EQ(TU_TAIL(tu_word(&l)), tail); /* the target is still queued */

	/*
	 * Its handler takes M, busy with a pending waiter: it cannot queue (its
	 * thread's node is in L's queue) and uses the trylock fallback.
	 */
	probe_reset(&m);
	CHECK_EQ(pthread_kill(target.t, SIGUSR1), 0);
	TU_WAIT_UNTIL(atomic_load(&probe.entered), TU_SETUP_MS);
	tu_sleep_ms(50);
	res_spin_unlock(&m);
	CHECK_EQ(probe_wait(), 0);
	CHECK_EQ(tu_waiter_join(&m_pend), 0);
	CHECK_EQ(TU_TAIL(tu_word(&l)), tail);

	res_spin_unlock(&l);
	r = tu_waiter_join(&pend);
	CHECK(r == 0 || r == -ETIMEDOUT);
	r = tu_waiter_join(&head);
	CHECK(r == 0 || r == -ETIMEDOUT);
	r = tu_waiter_join(&target);
	CHECK(r == 0 || r == -ETIMEDOUT);
	tu_stats(&after);
	CHECK_GT(after.lock_no_node, before.lock_no_node);
	CHECK_EQ(tu_word(&l), 0);
	CHECK_EQ(tu_word(&m), 0);
	res_spin_set_timeout_ns(0);
}

static const struct tu_test tests[] = {
    TU_TEST("core_irqsave", test_irqsave, 30, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_signal_aa", test_signal_aa, 30, TU_TAS | TU_INLINE),
    /* A pending waiter, a queue head and a non-head waiter: only the queued
     * slow path builds a queue, TAS mode has none to interrupt. */
    TU_TEST("deadlock_signal_queued_waiter", test_signal_queued_waiter, 40, 0),
};

TU_MAIN(tests)
