/* SPDX-License-Identifier: MIT */
/*
 * Layer 4, deadlock detection (detect.c): AA from this thread's own table
 * and wait record, ABBA and longer cycles by following the waits-for chain
 * through other threads' tables, wait records and views (it reads no lock
 * but the caller's own), and for the deadline path
 * the likely owner of a lock and the clear of a pending bit no live thread
 * holds. Uses layers 0, 1 and 3; it waits for nothing and writes only its
 * caller's results, and that orphaned pending bit.
 */
#ifndef RQ_DETECT_H
#define RQ_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "registry.h"

/* What a failed acquisition reports (report.c): detection's result. */
struct rq_cycle {
	enum rqspinlock_event event; /* 0: none */
	uint32_t n;                  /* threads in peers */
	struct rq_thread *peers[RQSPINLOCK_REPORT_MAX_PEERS];
	rqspinlock_t *waits[RQSPINLOCK_REPORT_MAX_PEERS]; /* what each waited for */
	struct rqspinlock_owner_info owner;               /* timeouts: who held the lock */
};

/* The thread that most likely holds @lock (not @self), or NULL. */
struct rq_thread *rq_find_owner(rqspinlock_t *lock, const struct rq_thread *self);
/*
 * Is @t stuck waiting for a lock (its innermost context waits)? *@gen gets
 * its wait generation: the same value at two reads means the same wait
 * lasted from one to the other. A lock's owner stuck in a wait is blocked,
 * not faulty: its own wait is bounded and detection covers cycles.
 */
bool rq_stuck_waiting(struct rq_thread *t, uint32_t *gen);
/* Clear the pending bit of free private @lock if no thread of this
 * process notes it (its holder is gone); true if cleared. */
bool rq_clear_orphaned_pending(rqspinlock_t *lock, const struct rq_thread *self);
/*
 * Can an acquisition whose held-table entry is @held_idx be part of a
 * deadlock? Not at index 0: nothing lies below it, so no context of its
 * thread holds or waits for anything, and it can close neither an AA nor a
 * cycle. The slow paths skip their checks (and the set-up of waits that only
 * run them) for it.
 */
static inline bool rq_can_deadlock(uint32_t held_idx)
{
	return held_idx != 0;
}
/* -EDEADLK when @self (its entry for @lock at @held_idx) already holds @lock
 * or an interrupted context of it waits for it; else 0. */
int rq_check_aa(struct rq_thread *self, rqspinlock_t *lock, uint32_t held_idx);
/*
 * A view a cycle check could not believe: it predates the wait of the owner
 * it names, or the waiter has not looked yet (detect.c, view_certifies()).
 * The check is worth repeating as soon as it changes.
 */
struct rq_stale_view {
	struct rq_thread *t;          /* the waiter (NULL: no such view) */
	const _Atomic uint64_t *seen; /* its view (registry memory) */
	uint64_t was;                 /* what the view showed */
	uint32_t gen;                 /* the waiter's wait generation then */
};
/* Has @s changed since the check (a fresh view, or the waiter moved on)? */
static inline bool rq_view_changed(const struct rq_stale_view *s)
{
	/* relaxed: a hint to check again; the check reads both again in order */
	return atomic_load_explicit(s->seen, memory_order_relaxed) != s->was ||
	       atomic_load_explicit(&s->t->wr.gen, memory_order_relaxed) != s->gen;
}
/* -EDEADLK (and @out filled) when @self's wait for @lock closes a cycle.
 * @suspect: kept by the caller between checks of one wait (0 at its start).
 * *@stale: set when a link could not be believed yet for a stale view
 * (struct rq_stale_view); untouched otherwise (the caller clears it before
 * every check). */
int rq_check_cycle(struct rq_thread *self, rqspinlock_t *lock, struct rq_cycle *out,
                   uint64_t *suspect, struct rq_stale_view *stale);
void rq_snapshot_thread(const struct rq_thread *t, struct rqspinlock_thread_info *out);

#endif /* RQ_DETECT_H */
