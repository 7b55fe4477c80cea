/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, the resilient queued slow path (slowpath.c), each wait bounded
 * (timeout.h), and the dispatcher among the slow paths; the pending-bit
 * transitions that it and the test-and-set paths (tas.h) share. The other
 * rooms of this layer: tas.h, pshared.h (process-shared locks) and
 * report.h (the undoing and reporting of a failed attempt). Uses layers 0
 * to 5.
 */
#ifndef RQ_SLOWPATH_H
#define RQ_SLOWPATH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "detect.h"
#include "held.h"
#include "lockword.h"
#include "registry.h"
#include "timeout.h"

/*
 * Pending-bit transitions of the lock word (layer 1) that also keep this
 * thread's wait record (layer 3) right.
 */
/*
 * Resilient lock only: detectors must know which waiter holds a pending bit
 * (wr.pend, frozen_culprit() in detect.c). The note goes up before every
 * attempt to take the bit: a signal handler arriving between a successful
 * attempt and a later note would freeze a holder nobody knows about. It
 * comes down when the attempt fails and once the bit is given up.
 */
typedef int (*rq_take_pending_fn)(_Atomic uint32_t *word, uint32_t *val);

static inline int rq_take_pending_noted(struct rq_thread *t, _Atomic uint32_t *word, uint32_t *val,
                                        rq_take_pending_fn take)
{
	if (*val & RQ_PENDING_MASK)
		return 0; /* someone holds it: no attempt, nothing to note */
	rq_wait_note_pending(t, true);
	/* The note before the attempt, as the compiler emits them too (an
	 * acquire RMW lets an earlier relaxed store sink below it): a bit
	 * nobody notes is taken for an orphan (rq_clear_orphaned_pending()). */
	atomic_signal_fence(memory_order_seq_cst);
	if (take(word, val))
		return 1;
	rq_wait_note_pending(t, false);
	return 0;
}

/* Give the pending bit up without the lock. */
static inline void rq_drop_pending_noted(struct rq_thread *t, _Atomic uint32_t *word)
{
	rq_clear_pending(word);
	rq_wait_note_pending(t, false);
}

/*
 * The owner left (@val, our last view of the word): turn our pending bit
 * into the lock. Returns 0 if the word was reset under us and an owner came
 * first (rq_take_unlocked()); the bit is not ours any more either way.
 */
static inline int rq_pending_to_locked_noted(struct rq_thread *t, _Atomic uint32_t *word,
                                             uint32_t val)
{
	int taken = rq_take_unlocked(word, val, t->held.owner);

	rq_wait_note_pending(t, false);
	return taken;
}

/* ---- slow paths ---- */
/*
 * The slow path: after the AA check, one of three: a process-shared lock's
 * test-and-set loop (pshared.c), the test-and-set path (tas.c: the TAS
 * mode, and threads without a registry slot, which have no queue nodes), or
 * the resilient queued path (slowpath.c). It lives with the queued path, so
 * that the compiler inlines the common case into it: in lock.c, with the
 * queued path behind a call, a hand-over costs 16 more instructions
 * (callgrind, tests/handover_pair). Out of line: the fast paths that call
 * it need no stack frame (LTO too).
 */
RQ_NOINLINE int rq_lock_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx,
                                 uint32_t val);

#endif /* RQ_SLOWPATH_H */
