/* SPDX-License-Identifier: MIT */
/*
 * The lock word's fast paths: lock, trylock, unlock, init, irqsave.
 *
 * The held-lock entry brackets the whole critical section: it is taken
 * (tagged ACQUIRING) before the fast-path CAS and cleared after the unlock
 * store. A signal handler that interrupts this thread anywhere in between
 * and asks for the same lock therefore always finds the entry (AA), and the
 * tags tell it whether the interrupted context holds the lock, is acquiring
 * it, or is already past its unlock store.
 */
#include <errno.h>
#include <signal.h>
#include <pthread.h>

#include "internal.h"
#include "qhelpers.h"

RQ_EXPORT void res_spin_lock_init(rqspinlock_t *lock)
{
	if (lock)
		atomic_init(&lock->val, 0);
}

/*
 * res_spin_lock() for a thread that is not registered yet (its record is the
 * sentinel) or tracks RQ_NR_HELD locks already. Out of line, so that the
 * fast path calls nothing and needs no stack frame.
 */
static __attribute__((noinline)) int lock_untracked(rqspinlock_t *lock)
{
	struct rq_thread *t = rq_self_get();
	uint32_t idx = rq_held_push(t, lock), val;

	if (likely(rq_try_0_to_locked(&lock->val, &val))) {
		rq_held_mark_held(t, idx, lock);
		return 0;
	}
	return rq_lock_slowpath(t, lock, idx, val);
}

RQ_EXPORT int res_spin_lock(rqspinlock_t *lock)
{
	struct rq_thread *t;
	uint32_t n, val;

	if (unlikely(!lock))
		return -EINVAL;
	t = rq_self;
	n = atomic_load_explicit(&t->held.cnt, memory_order_relaxed);
	if (unlikely(n >= RQ_NR_HELD))
		return lock_untracked(lock);
	rq_held_push_tracked(t, lock, n);
	if (likely(rq_try_0_to_locked(&lock->val, &val))) {
		rq_held_mark_held(t, n, lock);
		return 0;
	}
	return rq_lock_slowpath(t, lock, n, val);
}

RQ_EXPORT int res_spin_trylock(rqspinlock_t *lock)
{
	struct rq_thread *t;
	uint32_t idx;

	if (unlikely(!lock))
		return -EINVAL;
	t = rq_self_get();
	idx = rq_held_push(t, lock);
	if (likely(rq_trylock_word(&lock->val)) || rq_shared_trylock(&lock->val)) {
		rq_held_mark_held(t, idx, lock);
		return 0;
	}
	rq_held_drop(t, idx);
	return -EBUSY;
}

/* res_spin_unlock() of anything but the top entry of a tracked table. */
static __attribute__((noinline)) void unlock_not_top(rqspinlock_t *lock)
{
	struct rq_thread *t = rq_self_get();

	rq_unlock_slow(t, lock, atomic_load_explicit(&t->held.cnt, memory_order_relaxed));
}

RQ_EXPORT void res_spin_unlock(rqspinlock_t *lock)
{
	struct rq_thread *t = rq_self;
	/* the top entry's index; wraps for an empty table, and the sentinel's
	 * count fails the bound check too */
	uint32_t top = atomic_load_explicit(&t->held.cnt, memory_order_relaxed) - 1;
	uintptr_t want = (uintptr_t)lock;

	if (unlikely(top >= RQ_NR_HELD ||
	             atomic_load_explicit(&t->held.locks[top], memory_order_relaxed) != want)) {
		unlock_not_top(lock);
		return;
	}
	/* Tag first: from here a nested context does not count this lock as
	 * held (AA), nor does a remote detector; the release store below
	 * orders the tag before the lock is seen free. (+ for |: lea.) */
	atomic_store_explicit(&t->held.locks[top], want + RQ_ENTRY_RELEASING, memory_order_relaxed);
	rq_store_unlocked(&lock->val);
	atomic_store_explicit(&t->held.locks[top], 0, memory_order_relaxed);
	/* Clear before the count drops: a handler arriving in between pushes
	 * onto index top only after our clear. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&t->held.cnt, top, memory_order_relaxed);
}

RQ_EXPORT int res_spin_lock_irqsave(rqspinlock_t *lock, sigset_t *flags)
{
	sigset_t all;
	int err;

	if (unlikely(!lock || !flags))
		return -EINVAL;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, flags);
	err = res_spin_lock(lock);
	if (err)
		pthread_sigmask(SIG_SETMASK, flags, NULL);
	return err;
}

RQ_EXPORT void res_spin_unlock_irqrestore(rqspinlock_t *lock, const sigset_t *flags)
{
	res_spin_unlock(lock);
	if (flags)
		pthread_sigmask(SIG_SETMASK, flags, NULL);
}
