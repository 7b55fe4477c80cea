/* SPDX-License-Identifier: MIT */
/*
 * Layer 3: the held-lock table and the wait record (held.h), the writer's
 * side. Uses layers 0 and 1 (the unlock store of an out-of-order unlock).
 *
 * Every thread keeps a table of the locks it holds or is acquiring (see
 * struct rq_held and the tag bits in held.h) and, on the slow path only,
 * a stack of the locks its nested contexts are waiting for. Other threads
 * read both to find deadlocks (detect.c). The lock word's locked byte names
 * the owner where it can (owner ids, registry.h); the tables say which of a
 * thread's contexts holds or waits for what, and are the only witness of an
 * anonymous owner.
 */
#include <errno.h>

#include "held.h"
#include "lockword.h"

static void held_set(struct rq_thread *t, uint32_t i, struct rq_entry e)
{
	atomic_store_explicit(&t->held.locks[i], e.bits, memory_order_relaxed);
}

void rq_held_drop(struct rq_thread *t, uint32_t held_idx)
{
	if (held_idx < RQ_NR_HELD)
		held_set(t, held_idx, rq_entry_make(NULL, RQ_ENTRY_NONE));
	/*
	 * release: the cleared entry must be visible before the lower count.
	 * Otherwise a remote reader could see the count of our next push with
	 * this stale entry and believe we still want the lock we gave up on;
	 * pairs with the acquire load of cnt in claim_below(). (The next push
	 * stores its count with release too, so a reader that sees that one
	 * sees our clearing as well.)
	 */
	rq_held_set_depth_release(t, held_idx);
}

/*
 * Remove entry @i of @n: the entries above shift down, and the last slot
 * becomes RQ_ENTRY_NONE: empty, or with more than RQ_NR_HELD locks held a
 * hole ("held, but untracked": the first untracked lock conceptually moves
 * into it).
 */
static void held_remove_at(struct rq_thread *t, uint32_t i, uint32_t n)
{
	uint32_t top = rq_held_tracked(n);

	/* Copy before overwrite: every held lock stays visible throughout. */
	for (; i + 1 < top; i++)
		held_set(t, i, rq_held_entry(t, i + 1));
	held_set(t, top - 1, rq_entry_make(NULL, RQ_ENTRY_NONE));
	rq_held_set_depth_release(t, n - 1); /* as in rq_held_drop() */
}

/* Index of the topmost tracked entry that is @want with @tags; -1 when
 * absent. */
static int held_find(const struct rq_thread *t, const rqspinlock_t *want, uintptr_t tags,
                     uint32_t n)
{
	for (uint32_t i = rq_held_tracked(n); i > 0; i--)
		if (rq_entry_is(rq_held_entry(t, i - 1), want, tags))
			return (int)i - 1;
	return -1;
}

void rq_unlock_slow(struct rq_thread *t, rqspinlock_t *lock, uint32_t depth)
{
	int i = depth ? held_find(t, lock, 0, depth) : -1;

	if (i >= 0) {
		/* Out-of-order unlock: tag, release, then drop the entry. */
		held_set(t, (uint32_t)i, rq_entry_make(lock, RQ_ENTRY_RELEASING));
		rq_store_unlocked(&lock->val);
		atomic_signal_fence(memory_order_seq_cst);
		held_remove_at(t, (uint32_t)i, depth);
		return;
	}
	rq_store_unlocked(&lock->val);
	atomic_signal_fence(memory_order_seq_cst);
	if (depth > RQ_NR_HELD) {
		/* An untracked lock: the depth still covers it. No entry
		 * changed, so the count has nothing to publish. */
		rq_held_set_depth_explicit(t, depth - 1, memory_order_relaxed);
		return;
	}
	i = depth ? held_find(t, NULL, RQ_ENTRY_NONE, depth) : -1;
	if (i >= 0)
		held_remove_at(t, (uint32_t)i, depth); /* was untracked, see above */
	else
		rq_stat_inc(t, RQ_STAT_UNLOCK_NOT_HELD);
}

void rq_wait_push(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx)
{
	uint32_t nw = atomic_load_explicit(&t->wr.nwait, memory_order_relaxed);

	if (nw < RQ_NR_WAIT) {
		atomic_store_explicit(&t->wr.lock[nw], lock, memory_order_relaxed);
		atomic_store_explicit(&t->wr.held_idx[nw], held_idx, memory_order_relaxed);
		/* Nothing seen yet: a detector that reads the new generation
		 * (release below) never takes an earlier wait's view for ours. */
		atomic_store_explicit(&t->view.seen[nw], 0, memory_order_relaxed);
		atomic_store_explicit(
		    &t->wr.pend,
		    atomic_load_explicit(&t->wr.pend, memory_order_relaxed) &
		        ~(1u << (nw + RQ_NOTE_PENDING) | 1u << (nw + RQ_NOTE_HEAD)),
		    memory_order_relaxed);
	}
	rq_wait_bump_gen(t);
	/*
	 * seq_cst: publish "we wait" before we read other threads' wait
	 * records (seq_cst loads in waiting_claim()), so that of two
	 * threads closing a cycle at the same time at least one sees the other
	 * (store->load ordering, as in Dekker's algorithm); it is also a
	 * release for read_wait()'s acquire. A thread that holds nothing
	 * (held_idx 0) cannot be in a cycle: plain release, and no cycle checks
	 * (run_checks()).
	 */
	if (held_idx > 0)
		atomic_store_explicit(&t->wr.nwait, nw + 1, memory_order_seq_cst);
	else
		atomic_store_explicit(&t->wr.nwait, nw + 1, memory_order_release);
	/*
	 * A signal handler that ran between filling the slot and raising
	 * nwait pushed its own wait into the same slot (and popped it again):
	 * write ours back. Handlers from here on push above us.
	 */
	atomic_signal_fence(memory_order_seq_cst);
	if (nw < RQ_NR_WAIT &&
	    (atomic_load_explicit(&t->wr.lock[nw], memory_order_relaxed) != lock ||
	     atomic_load_explicit(&t->wr.held_idx[nw], memory_order_relaxed) != held_idx)) {
		atomic_store_explicit(&t->wr.lock[nw], lock, memory_order_relaxed);
		atomic_store_explicit(&t->wr.held_idx[nw], held_idx, memory_order_relaxed);
		atomic_store_explicit(&t->view.seen[nw], 0, memory_order_relaxed);
		rq_wait_bump_gen(t);
	}
}

/*
 * Where the word names an owner, its wait generation is read first, then
 * the word again: a word read after the generation (acquire, pairing with
 * the release of rq_wait_bump_gen()) is no older than anything the owner
 * did before it entered that state, its unlock stores included. So a view
 * whose word names the owner and whose generation is still the owner's
 * current one shows the lock taken by the owner after the owner started
 * its current wait (detect.c, view_certifies()).
 */
const struct rq_thread *rq_wait_observe(struct rq_thread *t, rqspinlock_t *lock, uint32_t *gen)
{
	uint32_t nw = atomic_load_explicit(&t->wr.nwait, memory_order_relaxed);
	uint32_t val = rq_word_load_relaxed(&lock->val);
	uint32_t owner = rq_slot_of_owner(val & RQ_LOCKED_MASK);
	const struct rq_thread *named = NULL;
	uint64_t view;

	*gen = 0;
	if (nw == 0 || nw > RQ_NR_WAIT)
		return NULL;
	if (owner != RQ_NO_SLOT) {
		named = rq_thread_at(owner);
		/* acquire: see above; pairs with rq_wait_bump_gen()'s release */
		*gen = atomic_load_explicit(&named->wr.gen, memory_order_acquire);
		val = rq_word_load_relaxed(&lock->val);
		if (rq_slot_of_owner(val & RQ_LOCKED_MASK) != owner) {
			*gen = 0;
			named = NULL;
		}
	}
	view = (uint64_t)*gen << 32 | val;
	/* Stored only when it changes: a long wait writes its line rarely. */
	if (atomic_load_explicit(&t->view.seen[nw - 1], memory_order_relaxed) != view)
		atomic_store_explicit(&t->view.seen[nw - 1], view, memory_order_relaxed);
	return named;
}
