/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, process-shared locks: a lock that other processes may take too,
 * in shared memory. A queue tail names a thread slot of one process,
 * meaningless in another, so these locks never queue: the lock word carries
 * a mark (RQ_SHARED_MARK, set by res_spin_lock_init_shared() and never
 * cleared by lock or unlock), the fast-path CAS 0 -> locked fails on it, and
 * the slow path's entry diverts every waiter here, to a bounded test-and-set
 * loop. Uses layers 0 to 5, its waits bounded by timeout.c.
 *
 * Words: (mark, gen, unlocked) = RQ_SHARED_MARK | gen, (mark, gen, locked) =
 * RQ_SHARED_MARK | gen | RQ_LOCKED_VAL, where gen (RQ_SHARED_GEN_MASK, in
 * the pending byte beside the mark) counts acquisitions modulo 64: each one
 * advances it, the unlock (a store to the locked byte) keeps it. The
 * pending bit and the tail stay 0. Any other word with the mark is garbage:
 * never taken here, so its waiters time out. (Besides
 * a corrupted word, the queued waiters of a private lock that a reset
 * marked under them make such words: they may still set or drop their
 * pending bit, and take the lock over, keeping the mark, rq_take_unlocked()
 * in lockword.h.)
 *
 * The deadline restarts whenever the lock changes hands: when the waiter
 * sees it free and loses the race for it, and when it finds it held with
 * another gen than at its last look (taken and released between two looks,
 * which under contention, or for a waiter napping among more threads than
 * CPUs, is how most hand-overs pass unseen). The timeout bounds one owner's
 * critical section, as on the queued path, and a waiter that merely lost to
 * others under contention keeps waiting, like a plain spin lock. (Exactly
 * a multiple of 64 acquisitions between two looks go unseen: that wait's
 * deadline then runs on, as it would without gen.) An owner that never releases (a
 * process that died holding the lock) yields -ETIMEDOUT after two timeouts.
 * Deadlock detection sees the waiters and owners of this process only;
 * cycles through another process end in -ETIMEDOUT.
 */
#include <errno.h>

#include "slowpath.h"
#include "pshared.h"

static bool shared_free(uint32_t val)
{
	return (val & ~RQ_SHARED_GEN_MASK) == RQ_SHARED_MARK;
}

static bool shared_held(uint32_t val)
{
	return (val & ~RQ_SHARED_GEN_MASK) == (RQ_SHARED_MARK | RQ_LOCKED_VAL);
}

/* @val: a free word; takes it, advancing its gen. */
static int shared_try_word(_Atomic uint32_t *word, uint32_t val)
{
	uint32_t taken =
	    RQ_SHARED_MARK | ((val + RQ_SHARED_GEN_ONE) & RQ_SHARED_GEN_MASK) | RQ_LOCKED_VAL;

	/* acquire: pairs with the unlock's release store (rq_store_unlocked) */
	return atomic_compare_exchange_strong_explicit(word, &val, taken, memory_order_acquire,
	                                               memory_order_relaxed);
}

bool rq_shared_trylock(_Atomic uint32_t *word)
{
	uint32_t val = rq_word_load_relaxed(word);

	return shared_free(val) && shared_try_word(word, val);
}

int rq_shared_slowpath(struct rq_attempt *w)
{
	_Atomic uint32_t *word = &w->lock->val;
	int err;

	rq_stat_inc(w->self, RQ_STAT_TAS);
	if (rq_shared_trylock(word))
		return 0;
	rq_wait_publish(w);
	rq_wait_start(w, RQ_LOCKED_MASK, RQ_PHASE_SHARED);
	for (uint32_t seen = rq_word_load_relaxed(word);;) {
		uint32_t val = rq_word_load_relaxed(word);

		if (shared_free(val)) {
			if (shared_try_word(word, val))
				return 0;
			/* The owner changed hands: a new critical section. */
			w->deadline = 0;
		} else if (val != seen && shared_held(val) && shared_held(seen)) {
			/* Taken again since our last look: likewise. */
			w->deadline = 0;
		}
		seen = val;
		err = rq_wait_poll(w);
		if (err)
			return err;
	}
}

RQ_EXPORT void res_spin_lock_init_shared(rqspinlock_t *lock)
{
	/* Atomic, and release, for the same reasons as res_spin_lock_init():
	 * pairs with shared_try_word()'s acquire. */
	if (lock)
		atomic_store_explicit(&lock->val, RQ_SHARED_MARK, memory_order_release);
}
