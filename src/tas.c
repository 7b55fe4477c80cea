/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, the test-and-set slow paths and the slow-path mode switch. They
 * use layers 0 to 5, their waits bounded by timeout.c.
 *
 * rq_tas_slowpath() is the resilient test-and-set lock (the kernel's
 * resilient_tas_spin_lock, used there under virtualization): spin until the
 * lock is free, then take it with a CAS. It serves the whole process in
 * RQSPINLOCK_MODE_TAS and, always, threads without a registry slot (they have
 * no queue nodes). It has no queue, so no FIFO order; it waits at most two
 * timeouts, like a queue head, with the same deadlock checks. Unlike the
 * kernel's, it also claims the pending bit when free (see spin_trylock()).
 *
 * rq_trylock_fallback() serves a nested context whose thread already has a
 * queue node in use (and node exhaustion): same loop, one timeout.
 *
 * Both take the lock only as any arrival may (a CAS on a lock with neither
 * owner nor pending claimant) or as the holder of the pending bit, so they
 * mix safely with queued waiters on the same lock.
 */
#include <errno.h>

#include "slowpath.h"
#include "tas.h"

_Atomic int rq_mode = RQSPINLOCK_MODE_QUEUED;

/*
 * Take the lock when it has neither owner nor pending claimant, or claim the
 * pending bit when nobody holds it and then wait for the owner only.
 * Claiming pending matters when queued waiters share the lock: their heads
 * hold it almost always under contention, and a pure test-and-set waiter
 * would then never see the lock free and time out, starved.
 */
static int spin_trylock(rqspinlock_t *lock, struct rq_attempt *w)
{
	_Atomic uint32_t *word = &lock->val;
	int pending = 0, err;
	uint32_t val;

	for (;;) {
		/* relaxed: taking the lock is an acquire CAS (slowpath.c,
		 * spin_while_locked()) */
		val = rq_word_load_relaxed(word);
		if (pending && !(val & RQ_LOCKED_MASK)) {
			if (rq_pending_to_locked_noted(w->self, word, val))
				return 0;
			pending = 0; /* the word was reset under us */
		} else if (!pending) {
			if (!(val & RQ_LOCKED_PENDING_MASK) &&
			    rq_try_steal(word, w->self->held.owner))
				return 0;
			pending = rq_take_pending_noted(w->self, word, &val, rq_head_try_pending);
			if (pending)
				continue;
		}
		err = rq_wait_poll(w);
		if (err) {
			if (pending)
				rq_drop_pending_noted(w->self, word);
			return err;
		}
	}
}

int rq_tas_slowpath(struct rq_attempt *w)
{
	rq_stat_inc(w->self, RQ_STAT_TAS);
	if (rq_try_steal(&w->lock->val, w->self->held.owner))
		return 0;
	rq_wait_publish(w);
	rq_wait_start(w, ~0u, RQ_PHASE_TAS);
	return spin_trylock(w->lock, w);
}

int rq_trylock_fallback(struct rq_attempt *w)
{
	rq_stat_inc(w->self, RQ_STAT_NO_NODE);
	rq_wait_publish(w);
	rq_wait_start(w, ~0u, RQ_PHASE_TRYLOCK);
	return spin_trylock(w->lock, w);
}

RQ_EXPORT int res_spin_set_mode(enum rqspinlock_mode mode)
{
	if (mode != RQSPINLOCK_MODE_QUEUED && mode != RQSPINLOCK_MODE_TAS)
		return -EINVAL;
	/* relaxed: each slow path reads the mode once; both modes are safe
	 * together on one lock */
	atomic_store_explicit(&rq_mode, (int)mode, memory_order_relaxed);
	return 0;
}

RQ_EXPORT enum rqspinlock_mode res_spin_get_mode(void)
{
	return (enum rqspinlock_mode)atomic_load_explicit(&rq_mode, memory_order_relaxed);
}

/* The mode RQSPINLOCK_MODE asks for (env.c reads and validates it). */
__attribute__((constructor)) static void rq_mode_from_env(void)
{
	if (rq_env()->mode == RQSPINLOCK_MODE_TAS)
		res_spin_set_mode(RQSPINLOCK_MODE_TAS);
}
