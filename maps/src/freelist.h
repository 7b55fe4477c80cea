/* SPDX-License-Identifier: MIT */
/*
 * Per-thread freelist (the kernel's percpu_freelist, thread slots for CPUs).
 *
 * One list per registry slot (slot modulo nr_lists; threads without a slot
 * are given one round-robin) plus a shared list that keeps a reserve for
 * handlers; each list has its own rqspinlock. Push goes to the
 * caller's list and falls back to the others when a lock fails (a signal
 * handler that interrupted the owner of its own list gets -EDEADLK there);
 * pop takes from the caller's list, then steals. Nothing allocates, so both
 * are async-signal-safe. Elements are never lost: push retries until a lock
 * is taken.
 */
#ifndef RQMAP_FREELIST_H
#define RQMAP_FREELIST_H

#include <rqspinlock.h>
#include <stdatomic.h>
#include <stdint.h>

struct rqfl_node {
	/* written under the lock of the list holding the node; atomic (relaxed)
	 * only because the memory is shared with RCU-retired elements */
	_Atomic(struct rqfl_node *) next;
};

struct rqfl_head {
	rqspinlock_t lock;
	_Atomic uint32_t n;                /* elements; relaxed, read unlocked as a hint */
	_Atomic(struct rqfl_node *) first; /* written under lock; peeked unlocked */
	uint32_t pushes; /* pushes so far (wraps); under lock: rqfl_pop()'s proof of empty */
} __attribute__((aligned(64)));

struct rqfl {
	uint32_t nr_lists;       /* per-slot lists; lists[nr_lists] is the shared one */
	struct rqfl_head *lists; /* nr_lists + 1 heads */
	uint32_t help_above;     /* rqmap_pop_or_wait(): help the grace period once more
	                            elements than this wait for one (set by the map) */
};

/** Default number of per-slot lists. */
#define RQFL_DEFAULT_LISTS 64
/** Elements kept in the shared list for handlers that cannot use their own. */
#define RQFL_RESERVE 64
/** Locked passes rqfl_pop() makes at most while pushes keep changing the
 * lists behind it. */
#define RQFL_POP_PASSES 16
/** Trylock passes of a nested rqfl_pop(): enough for busy lists to be
 * released by their running holders. */
#define RQFL_NESTED_PASSES 64

int rqfl_init(struct rqfl *fl, uint32_t nr_lists);
void rqfl_destroy(struct rqfl *fl);
/* The list the calling thread pushes to and pops from first. */
uint32_t rqfl_home(const struct rqfl *fl);
/* Push @node, trying list @home first. */
void rqfl_push(struct rqfl *fl, struct rqfl_node *node, uint32_t home);
/* Push the chain @first..@last (@n elements, linked through next). */
void rqfl_push_chain(struct rqfl *fl, struct rqfl_node *first, struct rqfl_node *last, uint32_t n,
                     uint32_t home);
/* Same, trying list @list first whatever the shared list's reserve. */
void rqfl_push_chain_at(struct rqfl *fl, struct rqfl_node *first, struct rqfl_node *last,
                        uint32_t n, uint32_t list);
/* Pop an element, caller's list first. NULL only when two passes that locked
 * every list found every list empty with no push in between (the freelist was
 * empty at one instant), or when every free element sits in lists whose
 * locks kept failing (held by a context this one interrupted, or timed out)
 * over RQFL_POP_PASSES waiting passes (RQFL_NESTED_PASSES trylock passes
 * when nested, see rqfl_pop()), or after that many passes that pushes kept
 * outrunning. */
struct rqfl_node *rqfl_pop(struct rqfl *fl);
/* Spread @n elements of @size bytes starting at @base over the lists. */
void rqfl_populate(struct rqfl *fl, void *base, size_t size, uint32_t n);
/* Elements in all lists; exact only when nobody pushes or pops. */
uint64_t rqfl_count(struct rqfl *fl);

#endif /* RQMAP_FREELIST_H */
