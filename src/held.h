/* SPDX-License-Identifier: MIT */
/*
 * Layer 3, what a thread publishes about itself for deadlock detection: its
 * held-lock table (struct rq_held, written on every lock and unlock) and, on
 * the slow path only, its wait record (struct rq_waitrec: the locks its
 * nested contexts wait for). Uses layers 0 and 1 (the unlock store).
 * Detection (layer 4) reads both; nothing here looks at other threads.
 */
#ifndef RQ_HELD_H
#define RQ_HELD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "registry.h"

/*
 * Held-table entries are lock addresses (4-byte aligned) with two tag bits:
 * ACQUIRING while the lock is being acquired on a slow path (for a thread
 * without an owner id, every acquisition: its fast path is the slow
 * entry), RELEASING from just before a slow-path unlock's store until the
 * entry is cleared (out-of-order unlocks; every unlock of a thread without
 * an id). The fast path of a thread with an owner id writes its entry
 * untagged before its CAS and, after its unlock store, drops the count
 * below it without clearing it: an untagged entry means "held while the
 * locked byte names the thread" (detect.c, untagged_entry_held()), and
 * "held" for a thread without an id. Slots above the count mean nothing.
 */
#define RQ_ENTRY_RELEASING ((uintptr_t)1)
#define RQ_ENTRY_ACQUIRING ((uintptr_t)2)
#define RQ_ENTRY_TAGS      (RQ_ENTRY_RELEASING | RQ_ENTRY_ACQUIRING)
/*
 * A slot that names no lock: no address, both tags, so that it matches no
 * lock, NULL included (the inline unlock of NULL never takes it for its own
 * top entry). Below the count it is a hole: a lock held but not tracked
 * (with more than RQ_NR_HELD locks held, an unlock below moves the first
 * untracked lock into the last slot). Above the count, where the slow paths
 * leave it, it means nothing, as a fast unlock's stale entry there does.
 */
#define RQ_ENTRY_NONE RQSPINLOCK_HELD_NONE

/* Entries of a table whose count or depth is @cnt that are tracked (the
 * rest are not). */
static inline uint32_t rq_held_tracked(uint32_t cnt)
{
	return cnt < RQ_NR_HELD ? cnt : RQ_NR_HELD;
}

/*
 * How many locks @t holds or is acquiring, from its count @cnt: the count,
 * or with more than RQ_NR_HELD the deep field (the count is then
 * RQ_HELD_OVERFLOW, so that the inline unlock's read of its top entry
 * stays in the record).
 */
static inline uint32_t rq_held_depth_from(const struct rq_thread *t, uint32_t cnt)
{
	return cnt < RQ_HELD_OVERFLOW ? cnt : atomic_load_explicit(&t->deep, memory_order_relaxed);
}

/* This thread's own depth (nothing to order with its own writes). */
static inline uint32_t rq_held_depth(const struct rq_thread *t)
{
	return rq_held_depth_from(t, atomic_load_explicit(&t->held.cnt, memory_order_relaxed));
}

/* Another thread's depth, for a detector. */
static inline uint32_t rq_held_depth_acquire(const struct rq_thread *t)
{
	/* acquire: pairs with rq_held_set_depth_release()'s store of the count */
	return rq_held_depth_from(t, atomic_load_explicit(&t->held.cnt, memory_order_acquire));
}

/*
 * @t now holds @depth locks, with the count stored with @order. Past
 * RQ_NR_HELD the number goes to deep first and the count (RQ_HELD_OVERFLOW)
 * after it. A signal handler restores the count, and deep whenever the
 * count was RQ_HELD_OVERFLOW; as the depth moves by one at a time, a
 * handler that finds the count at RQ_NR_HELD and goes past it returns with
 * deep at RQ_HELD_OVERFLOW, the value a 31 -> 32 push wrote first. So the
 * overflowed count never comes with the number of an earlier overflow.
 */
static inline void rq_held_set_depth_explicit(struct rq_thread *t, uint32_t depth,
                                              memory_order order)
{
	if (depth > RQ_NR_HELD) {
		atomic_store_explicit(&t->deep, depth, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		depth = RQ_HELD_OVERFLOW;
	}
	atomic_store_explicit(&t->held.cnt, depth, order);
}

/* A push or a drop: its entries, and deep, are seen with the count. */
static inline void rq_held_set_depth_release(struct rq_thread *t, uint32_t depth)
{
	/* release: pairs with the acquire loads of cnt (claim_below(),
	 * rq_held_depth_acquire()) */
	rq_held_set_depth_explicit(t, depth, memory_order_release);
}

/*
 * A held-table entry as read: a lock's address and its tag bits. The table
 * stores the plain integer (the layout <rqspinlock/inline.h> bakes in);
 * readers look at it only through the functions below.
 */
struct rq_entry {
	uintptr_t bits;
};

/* Entry @i of @t's table, read by @t or by a detector. */
static inline struct rq_entry rq_held_entry(const struct rq_thread *t, uint32_t i)
{
	return (struct rq_entry){atomic_load_explicit(&t->held.locks[i], memory_order_relaxed)};
}

/* The entry for @lock with @tags (0: held). */
static inline struct rq_entry rq_entry_make(const rqspinlock_t *lock, uintptr_t tags)
{
	return (struct rq_entry){(uintptr_t)lock | tags};
}

/* The lock @e names, whatever its tags; NULL for RQ_ENTRY_NONE. */
static inline rqspinlock_t *rq_entry_lock(struct rq_entry e)
{
	return (rqspinlock_t *)(e.bits & ~RQ_ENTRY_TAGS);
}

/* Its tags: 0 (held), RQ_ENTRY_ACQUIRING or RQ_ENTRY_RELEASING (both: none). */
static inline uintptr_t rq_entry_tags(struct rq_entry e)
{
	return e.bits & RQ_ENTRY_TAGS;
}

/* Is @e the entry for @lock with exactly @tags? */
static inline bool rq_entry_is(struct rq_entry e, const rqspinlock_t *lock, uintptr_t tags)
{
	return e.bits == rq_entry_make(lock, tags).bits;
}

/* Entry @held_idx (if tracked) becomes @lock with @tags. */
static inline void rq_held_set_tags(struct rq_thread *t, uint32_t held_idx,
                                    const rqspinlock_t *lock, uintptr_t tags)
{
	if (likely(held_idx < RQ_NR_HELD))
		atomic_store_explicit(&t->held.locks[held_idx], rq_entry_make(lock, tags).bits,
		                      memory_order_relaxed);
}

/*
 * Take the entry, tagged ACQUIRING, before the first CAS of an acquisition
 * that had no entry yet (the slow entry after a failed bound check, and
 * trylock), so that no window hides an AA from a signal handler. Relaxed:
 * remote detectors that miss the entry simply look again 1 ms later.
 * Returns the entry's index.
 */
static inline uint32_t rq_held_push(struct rq_thread *t, const rqspinlock_t *lock)
{
	uint32_t held_idx = rq_held_depth(t);

	/* see rq_held_drop() for what the release store pairs with */
	rq_held_set_depth_release(t, held_idx + 1);
	/* A signal handler from here on pushes above index held_idx. */
	atomic_signal_fence(memory_order_seq_cst);
	rq_held_set_tags(t, held_idx, lock, RQ_ENTRY_ACQUIRING);
	/* and before the caller's CAS: a handler that finds the lock taken
	 * finds the entry (an acquire CAS lets earlier stores sink below it) */
	atomic_signal_fence(memory_order_seq_cst);
	return held_idx;
}

/* The fast path's CAS failed: its untagged entry @held_idx becomes a
 * slow-path acquisition's, before anything touches the lock word or the
 * wait record (which counts only with this tag: wait_entry_live()). */
static inline void rq_held_mark_acquiring(struct rq_thread *t, uint32_t held_idx,
                                          const rqspinlock_t *lock)
{
	rq_held_set_tags(t, held_idx, lock, RQ_ENTRY_ACQUIRING);
}

/* The acquisition succeeded: entry @held_idx now means "held". */
static inline void rq_held_mark_held(struct rq_thread *t, uint32_t held_idx,
                                     const rqspinlock_t *lock)
{
	rq_held_set_tags(t, held_idx, lock, 0);
}

/* Undo rq_held_push() of a failed acquisition (entry @held_idx is ours, on top). */
void rq_held_drop(struct rq_thread *t, uint32_t held_idx);
/* Unlock with the entry not on top, untracked, or missing; @depth: rq_held_depth(). */
void rq_unlock_slow(struct rq_thread *t, rqspinlock_t *lock, uint32_t depth);

/* ---- the wait record (slow path only) ---- */
/* About to wait for @lock, whose entry is @held_idx. */
void rq_wait_push(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx);
/*
 * The current (innermost) wait, for @lock, looks at its lock word and
 * publishes what it sees in its view (struct rq_waitview), for detectors
 * that follow the waits-for chain through this thread. Called by the
 * waiting loops' polls (timeout.c) only, with their own lock. Returns the
 * owner the word names, with its wait generation in *@gen (the view stays
 * certified while that generation does); NULL (and 0) if it names none.
 */
const struct rq_thread *rq_wait_observe(struct rq_thread *t, rqspinlock_t *lock, uint32_t *gen);
/* A detector asks @t for a fresh view (relaxed: the detector waits for the
 * view itself to change, and a request seen late costs only time). */
static inline void rq_wait_ask(struct rq_thread *t)
{
	atomic_store_explicit(&t->view.ask, 1, memory_order_relaxed);
}
#define RQ_NOTE_PENDING 0u
#define RQ_NOTE_HEAD    8u
/*
 * The current wait took (@on) or gave up its lock's pending bit
 * (RQ_NOTE_PENDING), or became or stopped being its queue's head
 * (RQ_NOTE_HEAD). Only this thread writes the mask; a signal handler
 * interrupting the load/store pair leaves its own bits as it found them
 * (clear) before returning. Relaxed: detectors read it only as evidence
 * they confirm over two checks, and rq_clear_orphaned_pending() as the sign
 * of a live holder, where a note seen late costs that holder only its
 * priority. Inline: it runs twice on every contended acquisition.
 */
static inline void rq_wait_note(struct rq_thread *t, uint32_t what, bool on)
{
	uint32_t nw = atomic_load_explicit(&t->wr.nwait, memory_order_relaxed);
	uint32_t bits = atomic_load_explicit(&t->wr.pend, memory_order_relaxed);

	if (nw == 0 || nw > RQ_NR_WAIT)
		return;
	bits = on ? bits | 1u << (nw - 1 + what) : bits & ~(1u << (nw - 1 + what));
	atomic_store_explicit(&t->wr.pend, bits, memory_order_relaxed);
}
static inline void rq_wait_note_pending(struct rq_thread *t, bool held)
{
	rq_wait_note(t, RQ_NOTE_PENDING, held);
}
/* Only this thread (and its signal handlers, which undo their pushes before
 * returning) writes its wait record: plain load + store, no RMW. */
static inline void rq_wait_bump_gen(struct rq_thread *t)
{
	uint32_t gen = atomic_load_explicit(&t->wr.gen, memory_order_relaxed);

	/* release: a detector that reads the new generation also sees the
	 * record written before it; pairs with read_wait()'s acquire */
	atomic_store_explicit(&t->wr.gen, gen + 1, memory_order_release);
}

/* The current wait ended (lock taken or given up). Inline: it runs on the
 * hand-over, between the waiter taking the lock and its critical section. */
static inline void rq_wait_pop(struct rq_thread *t)
{
	uint32_t nw = atomic_load_explicit(&t->wr.nwait, memory_order_relaxed);

	/* release: pairs with read_wait()'s acquire (generation changes) */
	atomic_store_explicit(&t->wr.nwait, nw - 1, memory_order_release);
	rq_wait_bump_gen(t);
}

#endif /* RQ_HELD_H */
