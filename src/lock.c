/* SPDX-License-Identifier: MIT */
/*
 * Layer 7, the fast path and the API: lock, trylock, unlock, init,
 * irqsave. Uses the held-lock table (layer 3) and enters the slow paths
 * (layer 6, rq_lock_slowpath()).
 *
 * The held-lock entry brackets the whole critical section: it is taken
 * before the fast-path CAS, and the count drops past it only after the
 * unlock store (the entry stays above the count, claiming nothing). A signal
 * handler that interrupts this thread anywhere in between and asks for the
 * same lock therefore always finds the entry (AA), and the locked byte
 * tells it whether the interrupted context holds the lock (the byte names
 * this thread: past the CAS, before the unlock store) or not (before the
 * CAS, or past the store). The fast path therefore writes no tags; it
 * runs only in threads with an owner id (rq_fast). The slow paths tag
 * their entries (held.h), which threads without an id rely on.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <pthread.h>

#include "slowpath.h"
#include "pshared.h"

RQ_EXPORT void res_spin_lock_init(rqspinlock_t *lock)
{
	/* An atomic store, not atomic_init(): re-initialising a lock that other
	 * threads still wait on is the documented recovery for a corrupted word
	 * or a dead owner, and their loads must not race with a plain write.
	 * release: the recovery repairs what the lock protects and then resets
	 * it; whoever takes the fresh word next (fast-path, steal or take-over
	 * CAS, all acquire, reading this store or a later RMW of its release
	 * sequence) must see the repair, as after an unlock. Pairs like
	 * rq_store_unlocked() (test core_reinit_publishes). */
	if (lock)
		atomic_store_explicit(&lock->val, 0, memory_order_release);
}

/* The inline fast path reaches the held table and the owner id through
 * rq_fast, and hard-codes the empty entry. */
_Static_assert(offsetof(struct rq_held, locks) ==
                       offsetof(struct rq_held, none_below) + sizeof(uintptr_t) &&
                   offsetof(struct rq_held, none_above) ==
                       offsetof(struct rq_held, locks) + sizeof(uintptr_t) * RQ_NR_HELD,
               "the unlock reads locks[-1] and locks[RQ_NR_HELD] as the two empty slots");
_Static_assert(RQ_ENTRY_ACQUIRING == 2 && RQ_ENTRY_RELEASING == 1 &&
                   RQ_ENTRY_NONE == (RQ_ENTRY_ACQUIRING | RQ_ENTRY_RELEASING),
               "inline.h hard-codes the entry tags and the empty entry");
_Static_assert(RQ_OWNER_FIRST + RQ_NR_OWNER_IDS - 1 <= RQ_LOCKED_MASK &&
                   RQ_OWNER_ANON == RQ_LOCKED_VAL && RQ_OWNER_ANON != 0,
               "every owner id fits the locked byte, and none is 0 (free)");

/*
 * The rest of res_spin_lock(), out of line so that the fast path calls
 * nothing and needs no stack frame. @held_idx UINT32_MAX: the bound check
 * failed (a thread whose fast-path record is the sentinel: unregistered,
 * or without an owner id; or RQ_NR_HELD locks tracked already): the same
 * acquisition with a tagged entry. Otherwise the CAS failed, having seen
 * @val: the fast path's entry becomes a slow-path one.
 */
RQ_EXPORT RQ_NOINLINE int res_spin_lock_slow_abi(rqspinlock_t *lock, uint32_t held_idx,
                                                 uint32_t val)
{
	struct rq_thread *t = rq_self_get();

	if (held_idx == UINT32_MAX) {
		held_idx = rq_held_push(t, lock);
		if (likely(rq_try_0_to_locked(&lock->val, &val, t->held.owner))) {
			rq_held_mark_held(t, held_idx, lock);
			return 0;
		}
	} else {
		rq_held_mark_acquiring(t, held_idx, lock);
	}
	/* A queue whose head has not claimed the pending bit yet (it is not
	 * running): every slow path's first move is to take the free lock (a
	 * steal). Without other locks held there is no AA check to run before
	 * it, so it is made here, without setting up an attempt. */
	if (!rq_can_deadlock(held_idx) && rq_try_steal_seen(&lock->val, val, t->held.owner)) {
		rq_held_mark_held(t, held_idx, lock);
		return 0;
	}
	return rq_lock_slowpath(t, lock, held_idx, val);
}

/* The fast path: res_spin_inline_lock() (<rqspinlock/inline.h>) has it. */
RQ_EXPORT int res_spin_lock(rqspinlock_t *lock)
{
	return res_spin_inline_lock(lock);
}

RQ_EXPORT int res_spin_trylock(rqspinlock_t *lock)
{
	struct rq_thread *t;
	uint32_t held_idx;

	if (unlikely(!lock))
		return -EINVAL;
	t = rq_self_get();
	held_idx = rq_held_push(t, lock);
	if (likely(rq_trylock_word(&lock->val, t->held.owner)) || rq_shared_trylock(&lock->val)) {
		rq_held_mark_held(t, held_idx, lock);
		return 0;
	}
	rq_held_drop(t, held_idx);
	return -EBUSY;
}

/* res_spin_unlock() of anything but the top entry of a tracked table (NULL too). */
RQ_EXPORT RQ_NOINLINE void res_spin_unlock_slow_abi(rqspinlock_t *lock)
{
	struct rq_thread *t = rq_self_get();

	if (unlikely(!lock)) {
		rq_stat_inc(t, RQ_STAT_UNLOCK_NOT_HELD);
		return;
	}
	rq_unlock_slow(t, lock, rq_held_depth(t));
}

/* The fast path: res_spin_inline_unlock() has it. */
RQ_EXPORT void res_spin_unlock(rqspinlock_t *lock)
{
	res_spin_inline_unlock(lock);
}

RQ_EXPORT int res_spin_lock_irqsave(rqspinlock_t *lock, sigset_t *flags)
{
	int err;

	if (unlikely(!lock || !flags))
		return -EINVAL;
	rq_block_signals(flags);
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
