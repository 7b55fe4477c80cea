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
	uint64_t t0 = rqu_now_ns();
	int r;

	(void)sig;
	atomic_store_explicit(&probe.entered, 1, memory_order_relaxed);
	r = res_spin_lock(lock);
	probe.elapsed = rqu_now_ns() - t0;
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

/* ---- handlers at the held table's overflow boundary ---- */

#define OVF_BASE  34 /* the thread's own locks: 28 to 33 held, around the table's 31 */
#define OVF_EXTRA 4  /* more, taken and released out of order */
#define OVF_NEST  4  /* the handler's */

static rqspinlock_t ovf_base[OVF_BASE], ovf_extra[OVF_EXTRA], ovf_nest[OVF_NEST];
static volatile sig_atomic_t ovf_bad; /* the handler's failures, as bits */
static atomic_int ovf_runs, ovf_stop;
static uint64_t ovf_seed = 12345; /* the handler's own tu_rand() state */

/* Shuffles @ord, @n indices 0..n-1. */
static void ovf_shuffle(int *ord, int n, uint64_t *seed)
{
	for (int i = 0; i < n; i++)
		ord[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(tu_rand(seed) % (uint64_t)(i + 1)), x = ord[i];

		ord[i] = ord[j];
		ord[j] = x;
	}
}

/* Takes 1 to OVF_NEST locks of its own and releases them in random order.
 * Async-signal-safe. */
static void ovf_handler(int sig)
{
	int saved_errno = errno, m = 1 + (int)(tu_rand(&ovf_seed) % OVF_NEST), ord[OVF_NEST];

	(void)sig;
	for (int i = 0; i < m; i++)
		if (res_spin_lock(&ovf_nest[i]) != 0)
			ovf_bad |= 1;
	ovf_shuffle(ord, m, &ovf_seed);
	for (int i = 0; i < m; i++)
		res_spin_unlock(&ovf_nest[ord[i]]);
	for (int i = 0; i < m; i++)
		if (tu_word(&ovf_nest[i]) != 0)
			ovf_bad |= 2;
	atomic_fetch_add_explicit(&ovf_runs, 1, memory_order_relaxed);
	errno = saved_errno;
}

static void *ovf_sender(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	uint64_t seed = 7;

	while (!atomic_load_explicit(&ovf_stop, memory_order_relaxed)) {
		pthread_kill(target, SIGUSR1);
		for (volatile uint32_t i = 0, n = 200 + (uint32_t)(tu_rand(&seed) % 400); i < n;
		     i++)
			;
	}
	return NULL;
}

/* One round: 28 to 33 locks (the table tracks 31), 1 to 4 more by lock or
 * trylock, an AA probe, then the extras released out of order with one of
 * the first locks among them, and the rest in reverse. */
static void ovf_round(uint64_t *seed)
{
	int k = 28 + (int)(tu_rand(seed) % 6), n = 1 + (int)(tu_rand(seed) % OVF_EXTRA);
	int ord[OVF_EXTRA], mid = (int)(tu_rand(seed) % (uint64_t)k), mid_done = 0;

	for (int i = 0; i < k; i++)
		CHECK_EQ(res_spin_lock(&ovf_base[i]), 0);
	for (int i = 0; i < n; i++)
		CHECK_EQ(tu_rand(seed) & 1 ? res_spin_trylock(&ovf_extra[i])
		                           : res_spin_lock(&ovf_extra[i]),
		         0);
	CHECK_EQ(res_spin_lock(&ovf_base[mid < RQSPINLOCK_NR_HELD ? mid : 0]), -EDEADLK);
	ovf_shuffle(ord, n, seed);
	for (int i = 0; i < n; i++) {
		if (!mid_done && tu_rand(seed) & 1) {
			res_spin_unlock(&ovf_base[mid]);
			mid_done = 1;
		}
		res_spin_unlock(&ovf_extra[ord[i]]);
	}
	for (int i = k - 1; i >= 0; i--)
		if (i != mid || !mid_done)
			res_spin_unlock(&ovf_base[i]);
	for (int i = 0; i < OVF_BASE; i++)
		CHECK_EQ(tu_word(&ovf_base[i]), 0);
	for (int i = 0; i < OVF_EXTRA; i++)
		CHECK_EQ(tu_word(&ovf_extra[i]), 0);
}

/*
 * A thread that holds about as many locks as its table tracks, and more,
 * interrupted all the time by a handler that takes and releases locks of
 * its own (signals from another thread, so they land anywhere, inside the
 * library's count and depth updates too): every lock is taken and
 * released, tracked locks stay detectable (AA), and no unlock is ever
 * counted as one of a lock not held.
 */
static void test_signal_overflow(void)
{
	struct rqspinlock_stats before, after;
	uint64_t end = rqu_now_ns() + (uint64_t)(300 * tu_scale()) * TU_NS_PER_MS;
	pthread_t self = pthread_self(), sender;
	uint64_t seed = 1;
	long rounds = 0;

	tu_install_handler(SIGUSR1, ovf_handler);
	tu_stats(&before);
	tu_thread_start(&sender, ovf_sender, &self);
	do {
		ovf_round(&seed);
		rounds++;
	} while (rqu_now_ns() < end && !ovf_bad);
	atomic_store_explicit(&ovf_stop, 1, memory_order_relaxed);
	tu_thread_join(sender);
	tu_stats(&after);
	printf("# %ld rounds, %d handler runs\n", rounds, atomic_load(&ovf_runs));
	CHECK_EQ(ovf_bad, 0);
	CHECK_GT(atomic_load(&ovf_runs), 0);
	CHECK_EQ(after.unlock_not_held, before.unlock_not_held);
}

static const struct tu_test tests[] = {
    TU_TEST("core_irqsave", test_irqsave, 30, TU_TAS | TU_INLINE),
    TU_TEST("deadlock_signal_aa", test_signal_aa, 30, TU_TAS | TU_INLINE),
    TU_TEST("core_signal_overflow", test_signal_overflow, 30, TU_TAS | TU_INLINE),
    /* A pending waiter, a queue head and a non-head waiter: only the queued
     * slow path builds a queue, TAS mode has none to interrupt. */
    TU_TEST("deadlock_signal_queued_waiter", test_signal_queued_waiter, 40, 0),
};

TU_MAIN(tests)
