/* SPDX-License-Identifier: MIT */
/*
 * Deferred reuse (reclaim.c). liburcu's call_rcu() worker sleeps 10 ms
 * between batches, which at millions of updates per second strands far
 * more elements than a preallocated pool can spare; so removed elements go
 * to a lock-free retire stack (push by CAS: async-signal-safe, no
 * allocation) drained by one library thread that waits for a grace period
 * with urcu_memb's synchronize_rcu() and then runs each element's reuse
 * function. Writers help when too many wait. Above the readers and the
 * freelists; the map kinds use it.
 */
#ifndef RQMAP_RECLAIM_H
#define RQMAP_RECLAIM_H

#include <stdint.h>

struct rqfl;
struct rqfl_node;

struct rqmap_retire {
	struct rqmap_retire *next;
	struct rqfl *fl; /* freelist to return to; NULL: free() (no-prealloc) */
	uint32_t home;   /* list of @fl to push to */
};

/* Pop a free element. A context that may wait for a grace period first
 * recycles the retired elements itself when more than fl->help_above wait. */
struct rqfl_node *rqmap_pop(struct rqfl *fl);
/* help_above of a map's freelist: spare / RQMAP_HELP_DIVISOR. The rest of
 * the spare pool stays free for contexts that cannot wait (docs/MAPS.md). */
#define RQMAP_HELP_DIVISOR 8
/* Same; when the freelist is empty, a context that may wait recycles retired
 * elements itself and waits for the batches other threads hold, until it
 * gets one. NULL: it may not wait (nested, in a read-side section), or
 * nothing was retired anywhere for 50 ms (every element is live or held by
 * operations in flight). */
struct rqfl_node *rqmap_pop_or_wait(struct rqfl *fl);

/* Start the reclaim thread if needed. Normal context (map creation). */
int rqmap_reclaim_start(void);
/* After a grace period, push @r (the first member of its element) to list
 * @home of @fl, or free() it when @fl is NULL. Async-signal-safe. */
void rqmap_retire(struct rqmap_retire *r, struct rqfl *fl, uint32_t home);

#endif /* RQMAP_RECLAIM_H */
