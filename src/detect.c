/* SPDX-License-Identifier: MIT */
/*
 * Layer 4, deadlock detection: reads other threads' held-lock tables, wait
 * records and views (layer 3) and the caller's own lock word (layer 1),
 * through the registry (layer 0). Writes nothing but its caller's results,
 * with one exception for the deadline path: rq_clear_orphaned_pending()
 * clears, by CAS, a pending bit that no live thread holds.
 *
 * Memory: the only lock detection reads is the caller's own, the one it is
 * waiting for (its memory is the caller's until the call returns). Lock
 * addresses found in other threads' tables and wait records are compared,
 * never read through: their memory may have been freed since (a correct
 * program frees a lock after its last use, and it cannot know about our
 * scan). What the walk needs to know of such a lock's word, it takes from
 * the view of a thread that waits for it (struct rq_waitview): that waiter
 * reads the word of its own lock at every poll and publishes it, with the
 * named owner's wait generation, which certifies that the owner took the
 * lock before it started its current wait (view_certifies()).
 *
 * The locked byte names the owner's registry slot (registry.h, owner ids)
 * except for owners it cannot name (RQ_OWNER_ANON). Where it names one,
 * that thread is the owner and no table needs to be believed or searched;
 * where it does not, the tables are the only witness.
 *
 * AA: the lock we want is in our table below our own entry and a context
 * we interrupted owns it (untagged_entry_held(), tagged_entry_owns()); or
 * an interrupted context of ours is waiting for it (wait record); or, while
 * the table shows that we hold locks it does not track (depth past its end,
 * or a hole), the locked byte names us.
 *
 * ABBA and longer cycles: follow the waits-for chain. Only threads that are
 * waiting (their innermost context sits in a slow path) can be links: find
 * the waiting thread that holds the lock we want (the locked byte names it,
 * or for an anonymous owner an untagged entry), follow the
 * lock it waits for, and so on. Reaching ourselves again closes a cycle: -EDEADLK.
 * A chain that ends at a thread that is not waiting, or runs into a cycle
 * that does not include us, is not our deadlock (the members of that cycle
 * detect it themselves), so we keep waiting.
 *
 * A found cycle is verified before it is reported: read again, every member
 * must still be in the same wait (unchanged wait generation and table
 * depth) and still hold the lock that links it (no fence: on x86 loads are
 * not reordered with older loads; elsewhere see docs/DESIGN.md, section 7).
 * A thread that stays in one wait cannot release locks taken by the
 * contexts below it, so a verified cycle is a real one.
 */
#include <errno.h>
#include <stddef.h>

#include "detect.h"
#include "held.h"
#include "lockword.h"

/* Longest waits-for chain followed; longer ones are left to the timeout. */
#define RQ_MAX_CHAIN RQSPINLOCK_REPORT_MAX_PEERS

/*
 * A lock as the walk knows it: its address (compared only) and its word,
 * read by the caller itself (live: the caller's own lock) or taken from the
 * view of a thread that waits for it (cert: the named owner's wait
 * generation when that waiter read it). uncertified: set when a link was
 * refused only because the view predates the named owner's current wait
 * (the caller then checks again soon: rq_check_cycle()).
 */
struct rq_lockview {
	rqspinlock_t *lock;
	uint32_t val;
	uint32_t cert;
	bool live;
	bool uncertified;
};

/* The caller's own @lock, which it may read: its word as it is now. */
static struct rq_lockview own_view(rqspinlock_t *lock)
{
	return (struct rq_lockview){
	    .lock = lock, .val = rq_word_load_relaxed(&lock->val), .live = true};
}

/* @lock, which a thread waits for, as that thread's view @seen shows it
 * (0: none yet, the wait has not polled since it began; ask for one). */
static struct rq_lockview waiter_view(rqspinlock_t *lock, uint64_t seen)
{
	return (struct rq_lockview){
	    .lock = lock, .val = (uint32_t)seen, .cert = seen >> 32, .uncertified = !seen};
}

/*
 * May the walk believe that @t owns @v's lock because its word names @t?
 * A live word: yes. A view: only when the owner generation it carries is
 * @t's current one: the waiter read the word after @t entered the state it
 * is still in (rq_wait_observe()), so @t, stuck in that wait since, took
 * the lock before and cannot have released it. An older view may predate
 * an unlock store of @t's, in a context its current wait interrupted.
 */
static bool view_certifies(struct rq_lockview *v, const struct rq_thread *t)
{
	/* relaxed: the generation was read with acquire by read_wait() and
	 * chain_still_valid() compares it again before a report */
	if (v->live || atomic_load_explicit(&t->wr.gen, memory_order_relaxed) == v->cert) {
		v->uncertified = false;
		return true;
	}
	v->uncertified = true;
	return false;
}

/*
 * A wait record counts only while the entry it was pushed for is still in
 * the table, tagged ACQUIRING: rq_fail() clears the entry before it pops the
 * record, and in between the thread has already given up (a stale record
 * would make both members of an ABBA report it). Untracked entries (beyond
 * the table) cannot be checked and count.
 */
static bool wait_entry_live(const struct rq_thread *t, const rqspinlock_t *lock, uint32_t widx)
{
	return widx >= RQ_NR_HELD || rq_entry_is(rq_held_entry(t, widx), lock, RQ_ENTRY_ACQUIRING);
}

/* The word of the caller's own lock (the only lock detection reads). */
static uint32_t lock_word(rqspinlock_t *lock)
{
	return rq_word_load_relaxed(&lock->val);
}

/* The slot of the owner lock word @val names; RQ_NO_SLOT when the lock is
 * free or its owner is anonymous. */
static uint32_t word_owner(uint32_t val)
{
	return rq_slot_of_owner(val & RQ_LOCKED_MASK);
}

/* The same for the caller's own @lock as it is now. */
static uint32_t named_owner(rqspinlock_t *lock)
{
	return word_owner(lock_word(lock));
}

/*
 * Does an untagged entry of @t for @lock mean that @t holds it? A thread
 * with an owner id writes it untagged before its fast-path CAS and keeps
 * it so after its unlock store: it holds the lock while the locked byte
 * names it, or names nobody on a process-shared lock (whose owners are all
 * anonymous). A thread without an id tags every entry until it holds the
 * lock and from before its unlock store: untagged is held (or stale, after
 * another thread's unlock; held_believable() sorts that out).
 */
static bool untagged_entry_held(const struct rq_thread *t, const struct rq_lockview *v)
{
	uint32_t val = v->val, owner;

	if (!rq_thread_has_owner_id(t))
		return true;
	owner = word_owner(val);
	if (owner != RQ_NO_SLOT)
		return rq_thread_at(owner) == t;
	return (val & RQ_LOCKED_MASK) == RQ_OWNER_ANON && (val & RQ_SHARED_MARK);
}

/* The lock wait @k of @t waits for. */
static rqspinlock_t *wait_lock(const struct rq_thread *t, uint32_t k)
{
	return atomic_load_explicit(&t->wr.lock[k], memory_order_relaxed);
}

/*
 * Does a tagged entry of ours for @lock mean that a context we interrupted
 * owns it? With an owner id: exactly when the locked byte names us (past
 * its CAS, before its unlock store); one before its CAS, or waiting, is the
 * wait record's (every slow path publishes its wait before it touches the
 * word). Where the byte names nobody (our thread has no id, or the lock is
 * process-shared, whose owners are all anonymous), or the record holds
 * fewer waits than there are: whenever the word is taken. ACQUIRING: the
 * interrupted context owns it (between a slow entry's or trylock's CAS and
 * its mark) or is about to wait for it, where we could never overtake it.
 * RELEASING: owned until its unlock store, or re-taken by another thread
 * in the two instructions after it, which we cannot tell apart. Waiting
 * instead would livelock a thread hit by a timer signal faster than the
 * wait (docs/DESIGN.md).
 */
static bool tagged_entry_owns(const struct rq_thread *self, rqspinlock_t *lock, uint32_t nw)
{
	uint32_t byte = lock_word(lock) & RQ_LOCKED_MASK;

	if (self->held.owner != RQ_OWNER_ANON && byte != RQ_OWNER_ANON && nw <= RQ_NR_WAIT)
		return rq_slot_of_owner(byte) == self->slot;
	return byte != 0;
}

/*
 * Does the locked byte of @lock name @self? Then a context of this thread
 * holds it, tracked or not. Asked only of a thread that holds untracked
 * locks: a lock left held by an exited thread whose slot @self now has
 * names @self too, and a thread with a complete table would take that
 * abandoned lock for its own.
 */
/* untagged_entry_held() for @self's own @lock, read now. */
static bool own_entry_held(const struct rq_thread *self, rqspinlock_t *lock)
{
	struct rq_lockview v = own_view(lock);

	return untagged_entry_held(self, &v);
}

static bool byte_names_self(const struct rq_thread *self, rqspinlock_t *lock)
{
	return rq_thread_has_owner_id(self) && named_owner(lock) == self->slot;
}

int rq_check_aa(struct rq_thread *self, rqspinlock_t *lock, uint32_t held_idx)
{
	uint32_t nw = atomic_load_explicit(&self->wr.nwait, memory_order_relaxed);
	/* Past the table's end, or a hole in it: some held lock is untracked. */
	bool untracked = held_idx > RQ_NR_HELD;

	for (uint32_t i = 0; i < rq_held_tracked(held_idx); i++) {
		struct rq_entry e = rq_held_entry(self, i);

		if (rq_entry_is(e, NULL, RQ_ENTRY_NONE))
			untracked = true;
		if (rq_entry_lock(e) != lock)
			continue;
		if (rq_entry_tags(e) ? tagged_entry_owns(self, lock, nw)
		                     : own_entry_held(self, lock))
			return -EDEADLK;
	}
	if (untracked && byte_names_self(self, lock))
		return -EDEADLK;
	/* Waits of the contexts we interrupted (their entries lie below ours). */
	for (uint32_t i = 0; i < nw && i < RQ_NR_WAIT; i++) {
		uint32_t widx = atomic_load_explicit(&self->wr.held_idx[i], memory_order_relaxed);

		if (wait_lock(self, i) == lock && widx < held_idx &&
		    wait_entry_live(self, lock, widx))
			return -EDEADLK;
	}
	return 0;
}

/* What a thread is doing, as far as the waits-for chain cares. */
struct rq_link {
	struct rq_thread *t;
	rqspinlock_t *waits;          /* lock it waits for (NULL: not waiting) */
	uint64_t seen;                /* its view of the lock it waits for (waiter_view()) */
	const _Atomic uint64_t *view; /* where seen was read (its record's view line) */
	uint32_t gen;                 /* wait generation when read */
	uint32_t depth;               /* held-table depth when read (rq_held_depth_acquire()) */
	uint32_t widx;                /* held index of the waiting context's entry */
	bool frozen;                  /* holds it through a tagged entry (frozen_culprit()) */
	/* A frozen queue head that the previous member waits behind
	 * (find_queue_blocker()), or NULL. */
	const struct rq_thread *behind;
};

/*
 * Read @t's innermost wait. A thread is stuck waiting only if the waiting
 * context is its innermost one: a signal handler running above it (table
 * deeper than the waiting entry) is making progress.
 */
static void read_wait(struct rq_link *l)
{
	const struct rq_thread *t = l->t;
	/* acquire: pairs with the release increments in rq_wait_push/pop */
	uint32_t gen = atomic_load_explicit(&t->wr.gen, memory_order_acquire);
	uint32_t nw = atomic_load_explicit(&t->wr.nwait, memory_order_acquire);

	l->gen = gen;
	l->waits = NULL;
	l->depth = rq_held_depth_acquire(t);
	if (nw == 0 || nw > RQ_NR_WAIT)
		return;
	l->widx = atomic_load_explicit(&t->wr.held_idx[nw - 1], memory_order_relaxed);
	if (l->depth != l->widx + 1)
		return;
	l->waits = wait_lock(t, nw - 1);
	l->view = &t->view.seen[nw - 1];
	/* acquire: a re-read of the generation after it (chain_still_valid())
	 * is not satisfied early, as in a seqlock's read side */
	l->seen = atomic_load_explicit(l->view, memory_order_acquire);
	if (!wait_entry_live(t, l->waits, l->widx))
		l->waits = NULL;
}

/*
 * Is entry @i of @t (for @lock) the entry of the wait @t is in right now
 * (its innermost context waits)? Such a context does not own the lock, or
 * owns it only for the few instructions until it marks its entry. A wait
 * interrupted by a handler is frozen where it was, possibly just after it
 * acquired the lock: it counts as a claim.
 */
static bool entry_is_current_wait(struct rq_thread *t, const rqspinlock_t *lock, uint32_t i)
{
	struct rq_link l = {.t = t};

	read_wait(&l);
	return l.waits == lock && l.widx == i;
}

/* What a thread's table says about owning a lock. */
enum rq_claim {
	RQ_CLAIM_NONE,
	/* Tagged, and not the wait the thread is in right now: a context
	 * between a slow entry's or trylock's CAS (or a slow-path
	 * acquisition) and its mark, or between its RELEASING tag and its
	 * unlock store, owns the lock; one before its CAS, still waiting, or
	 * past its store does not. */
	RQ_CLAIM_MAYBE,
	RQ_CLAIM_HELD, /* untagged, and untagged_entry_held() */
};

/* What @t's entries below index @limit claim about @v's lock. */
static enum rq_claim claim_below(struct rq_thread *t, const struct rq_lockview *v, uint32_t limit)
{
	const rqspinlock_t *lock = v->lock;
	/* acquire: pairs with the release stores of cnt (push and drop) */
	uint32_t n = rq_held_tracked(atomic_load_explicit(&t->held.cnt, memory_order_acquire));
	enum rq_claim claim = RQ_CLAIM_NONE;

	if (limit < n)
		n = limit;
	for (uint32_t i = 0; i < n; i++) {
		struct rq_entry e = rq_held_entry(t, i);

		if (rq_entry_lock(e) != lock)
			continue;
		if (!rq_entry_tags(e)) {
			if (untagged_entry_held(t, v))
				return RQ_CLAIM_HELD;
		} else if (!entry_is_current_wait(t, lock, i)) {
			claim = RQ_CLAIM_MAYBE;
		}
	}
	return claim;
}

/* Does a wait of @t hold the pending bit of @lock (@what RQ_NOTE_PENDING),
 * or head its queue (RQ_NOTE_HEAD)? @frozen_only: not counting its current
 * (innermost) wait. */
static bool holds_note(const struct rq_thread *t, uint32_t what, const rqspinlock_t *lock,
                       bool frozen_only)
{
	/* acquire: pairs with the release/seq_cst stores in rq_wait_push/pop */
	uint32_t nw = atomic_load_explicit(&t->wr.nwait, memory_order_acquire);
	uint32_t bits = atomic_load_explicit(&t->wr.pend, memory_order_relaxed) >> what;

	if (frozen_only && nw > 0)
		nw--;
	for (uint32_t k = 0; k < nw && k < RQ_NR_WAIT; k++)
		if ((bits >> k & 1) && wait_lock(t, k) == lock)
			return true;
	return false;
}

/*
 * Is a queue node of @t queued on @lock and signalled to head it
 * (RQ_NODE_HEAD), a signal its waiter has not acted on yet? A waiter frozen
 * behind the head under its own handler becomes the head so when the head
 * leaves, and being frozen never notes it (RQ_NOTE_HEAD). The node is the
 * registry's memory; its lock field is compared, never read through.
 */
static bool signalled_head(const struct rq_thread *t, const rqspinlock_t *lock)
{
	for (uint32_t i = 0; i < RQ_NR_NODES; i++) {
		const struct rq_qnode *node = &t->nodes[i];

		/* relaxed: evidence that the frozen-cycle rule confirms over
		 * two checks (rq_check_cycle()), as the wait notes are */
		if (atomic_load_explicit(&node->lock, memory_order_relaxed) == (uintptr_t)lock &&
		    (atomic_load_explicit(&node->locked, memory_order_relaxed) &
		     RQ_NODE_STATE_MASK) == RQ_NODE_HEAD)
			return true;
	}
	return false;
}

/* Does @t head @lock's queue: its wait record says so (@frozen_only: a wait
 * other than its current one), or it was signalled to and has not acted? */
static bool heads_queue(const struct rq_thread *t, const rqspinlock_t *lock, bool frozen_only)
{
	return holds_note(t, RQ_NOTE_HEAD, lock, frozen_only) || signalled_head(t, lock);
}

/*
 * A stuck thread whose tagged entry for @lock lies below its waiting
 * context: that context is a signal handler, and the context it interrupted
 * is frozen inside a lock, unlock or wait of @lock until the handler
 * returns. Is it the reason nobody gets @lock?
 *  - @lock is locked: it owns @lock when it is past its CAS or slow-path
 *    acquisition (or before its unlock store). The locked byte says whether
 *    it does, where it names the owner. For an anonymous owner it is taken
 *    for the owner only when nobody else could be: no other thread has an
 *    entry for @lock other than the entry of the wait it is in right now.
 *    Any owner pushes its entry before its CAS and keeps it below its
 *    count until after its unlock store.
 *  - @lock is free but its pending bit is set: nobody may take it while the
 *    pending holder is frozen. Its wait record says it holds the bit, and no
 *    other thread's does (a running holder would take the lock at once).
 *  - @lock is free, no pending bit, but a queue: its waiters get nothing
 *    while the queue head is frozen before taking the pending bit. Its wait
 *    record says it heads the queue, and no other thread's says it heads
 *    one or holds the pending bit (a running one would take the lock).
 * Slot-less threads are invisible: with any alive, nobody is blamed.
 */
static bool frozen_culprit(struct rq_lockview *v, const struct rq_thread *cand)
{
	const rqspinlock_t *lock = v->lock;
	uint32_t val = v->val, bound = rq_slot_bound();
	uint32_t owner = word_owner(val);
	bool locked = val & RQ_LOCKED_MASK;
	bool head = !(val & RQ_LOCKED_PENDING_MASK);

	/* A named owner: it is cand, or cand does not own the lock. */
	if (owner != RQ_NO_SLOT)
		return rq_thread_at(owner) == cand && view_certifies(v, cand);
	if (rq_slotless_threads() || (head && !(val & RQ_TAIL_MASK)))
		return false;
	if (!locked &&
	    !(head ? heads_queue(cand, lock, true) : holds_note(cand, RQ_NOTE_PENDING, lock, true)))
		return false;
	for (uint32_t s = 0; s < bound; s++) {
		struct rq_thread *t = rq_thread_at(s);

		if (t == cand || !atomic_load_explicit(&t->wr.in_use, memory_order_relaxed))
			continue;
		if (locked ? claim_below(t, v, RQ_NR_HELD) != RQ_CLAIM_NONE
		           : holds_note(t, RQ_NOTE_PENDING, lock, false) ||
		                 (head && heads_queue(t, lock, false)))
			return false;
	}
	return true;
}

/*
 * Does the queue behind @from, a node queued on @lock, lead to a node of
 * @w through live links? Each successor must still be in the generation it
 * linked with and waiting (not signalled: its state is what it linked
 * with), queued on @lock, and its thread must not note that it heads the
 * queue (a successor that found a leaving head's mark heads without a
 * signal). The nodes are the registry's memory; @lock is compared, never
 * read through.
 */
static bool queue_leads_to(const struct rq_qnode *from, const rqspinlock_t *lock,
                           const struct rq_thread *w)
{
	uint32_t bound = rq_slot_bound();
	const struct rq_qnode *n = from;

	for (uint32_t hop = 0; hop < bound * RQ_NR_NODES; hop++) {
		/* relaxed, here and below: evidence that two checks confirm
		 * (frozen links, rq_check_cycle()) */
		uint64_t link = atomic_load_explicit(&n->next, memory_order_relaxed);
		uint32_t tail = (uint32_t)link, slot = (tail >> RQ_TAIL_SLOT_OFFSET) - 1;
		const struct rq_thread *t;

		if (!tail || rq_link_is_mark(link) || slot >= bound)
			return false;
		t = rq_thread_at(slot);
		n = rq_decode_tail(tail);
		if (atomic_load_explicit(&n->locked, memory_order_relaxed) !=
		        (uint32_t)(link >> 32) ||
		    atomic_load_explicit(&n->lock, memory_order_relaxed) != (uintptr_t)lock ||
		    holds_note(t, RQ_NOTE_HEAD, lock, false))
			return false;
		if (t == w)
			return true;
	}
	return false;
}

/*
 * Does @cand, stuck waiting for another lock, head @lock's queue from a
 * frozen context (a node signalled to head it, or one its frozen wait notes
 * heading), with @w queued behind it? Then @w waits for @cand's frozen
 * context whatever the lock word shows: only the head signals its
 * successor, and a free lock is taken meanwhile by threads that never
 * queued (rq_try_steal()), not by @w.
 */
static bool frozen_head_blocks(const struct rq_thread *cand, const rqspinlock_t *lock,
                               const struct rq_thread *w)
{
	bool noted = holds_note(cand, RQ_NOTE_HEAD, lock, true);

	for (uint32_t i = 0; i < RQ_NR_NODES; i++) {
		const struct rq_qnode *node = &cand->nodes[i];
		/* relaxed: as in queue_leads_to() */
		uint32_t st =
		    atomic_load_explicit(&node->locked, memory_order_relaxed) & RQ_NODE_STATE_MASK;

		if (atomic_load_explicit(&node->lock, memory_order_relaxed) == (uintptr_t)lock &&
		    (st == RQ_NODE_HEAD || (noted && st == RQ_NODE_WAIT)) &&
		    queue_leads_to(node, lock, w))
			return true;
	}
	return false;
}

/* Does @w wait for @lock in its queue, behind the head (no note that it
 * heads the queue or holds the pending bit, a node queued on @lock)? */
static bool queued_behind(const struct rq_thread *w, const rqspinlock_t *lock)
{
	if (holds_note(w, RQ_NOTE_HEAD, lock, false) || holds_note(w, RQ_NOTE_PENDING, lock, false))
		return false;
	for (uint32_t i = 0; i < RQ_NR_NODES; i++)
		/* relaxed: as in queue_leads_to() */
		if (atomic_load_explicit(&w->nodes[i].lock, memory_order_relaxed) ==
		        (uintptr_t)lock &&
		    (atomic_load_explicit(&w->nodes[i].locked, memory_order_relaxed) &
		     RQ_NODE_STATE_MASK) == RQ_NODE_WAIT)
			return true;
	return false;
}

/*
 * Does a thread other than @t list @lock as held, or claim it through a
 * tagged entry that is not its current wait (an owner between a slow
 * entry's or trylock's CAS and its mark, or releasing it)? Then @t's
 * untagged entry may be stale (a non-owner released the lock for its
 * owner, whose entry stays; rqspinlock.h), and nothing can be concluded
 * from it.
 */
static bool held_by_another(const struct rq_lockview *v, const struct rq_thread *t)
{
	uint32_t bound = rq_slot_bound();

	for (uint32_t s = 0; s < bound; s++) {
		struct rq_thread *o = rq_thread_at(s);

		if (o != t && atomic_load_explicit(&o->wr.in_use, memory_order_relaxed) &&
		    claim_below(o, v, RQ_NR_HELD) != RQ_CLAIM_NONE)
			return true;
	}
	return false;
}

/* An untagged entry of @t for a lock that is not taken, that the lock word
 * names another owner of, or (anonymous owner) that another thread claims
 * too, is stale: it links no cycle. */
static bool held_believable(struct rq_lockview *v, const struct rq_thread *t)
{
	uint32_t owner = word_owner(v->val);

	if (owner != RQ_NO_SLOT)
		return rq_thread_at(owner) == t && view_certifies(v, t);
	return (v->val & RQ_LOCKED_MASK) && !held_by_another(v, t);
}

/* Does @t have an entry for @lock, with any tag? */
static bool has_entry(const struct rq_thread *t, const rqspinlock_t *lock)
{
	/* acquire: pairs with the release stores of cnt (push and drop) */
	uint32_t n = rq_held_tracked(atomic_load_explicit(&t->held.cnt, memory_order_acquire));

	for (uint32_t i = 0; i < n; i++)
		if (rq_entry_lock(rq_held_entry(t, i)) == lock)
			return true;
	return false;
}

/* Does @t's table claim @lock (held, or tagged outside its current wait),
 * or could it hold it among locks beyond its table? */
static bool claims_lock(struct rq_thread *t, const struct rq_lockview *v)
{
	return claim_below(t, v, RQ_NR_HELD) != RQ_CLAIM_NONE ||
	       atomic_load_explicit(&t->held.cnt, memory_order_relaxed) > RQ_NR_HELD;
}

/* The one thread other than @self whose wait record notes @what (pending
 * bit or queue head) for @lock; NULL if none or several (*n: how many). */
static struct rq_thread *single_noted(const rqspinlock_t *lock, const struct rq_thread *self,
                                      uint32_t what, uint32_t *n)
{
	uint32_t bound = rq_slot_bound();
	struct rq_thread *found = NULL;

	for (uint32_t s = 0; s < bound; s++) {
		struct rq_thread *t = rq_thread_at(s);

		if (t != self && atomic_load_explicit(&t->wr.in_use, memory_order_relaxed) &&
		    holds_note(t, what, lock, false) && (*n)++ == 0)
			found = t;
	}
	return *n == 1 ? found : NULL;
}

/*
 * The pending bit of a free private lock that no thread of this process
 * notes: its holder is gone (a waiter of the parent, in a forked child; a
 * call abandoned by siglongjmp() or cancellation), and nobody else may ever
 * take the lock. Every holder notes the bit before it tries to set it
 * (rq_take_pending_noted(), slowpath.h), so a bit that no wait record
 * notes has no live holder, unless a thread without a slot, which scans
 * cannot see, holds it: with any alive, nothing is cleared. A live
 * holder's bit cleared by mistake (on weakly ordered memory the bit may be
 * seen before the note) costs only its priority: every take of the lock
 * is a CAS that needs the locked byte clear. Cleared by CAS from the word
 * judged; true if cleared.
 */
bool rq_clear_orphaned_pending(rqspinlock_t *lock, const struct rq_thread *self)
{
	uint32_t val = lock_word(lock), n = 0;

	if ((val & RQ_LOCKED_MASK) || !(val & RQ_PENDING_VAL) || (val & RQ_SHARED_MARK) ||
	    rq_slotless_threads())
		return false;
	if (holds_note(self, RQ_NOTE_PENDING, lock, false))
		return false;
	(void)single_noted(lock, self, RQ_NOTE_PENDING, &n);
	if (n)
		return false;
	return atomic_compare_exchange_strong_explicit(&lock->val, &val, val & ~RQ_PENDING_VAL,
	                                               memory_order_relaxed, memory_order_relaxed);
}

/*
 * For the deadline path (timeout.c): the thread the locked byte names, if
 * its table claims @lock (a slot's next thread has the same id but no
 * claim: at most the entry of its own wait for the lock). Otherwise, and
 * for an anonymous owner, an untagged entry; failing that a single
 * tagged claim; failing that the single other thread with any entry
 * for @lock: an owner preempted between its slow-path acquisition and its
 * mark still looks like it waits, and under CPU overload it stays there
 * long. When the lock word shows no owner, the thread that blocks us is the
 * one that takes the lock next, possibly preempted: with the pending bit
 * set the pending waiter (its wait record, else the same fallbacks), with
 * only a tail the queue's head (its wait record, no fallback: nobody holds
 * the lock).
 * A wrong guess costs only an extension, within the cap.
 */
struct rq_thread *rq_find_owner(rqspinlock_t *lock, const struct rq_thread *self)
{
	uint32_t bound = rq_slot_bound(), n_held = 0, n_maybe = 0, n_any = 0;
	struct rq_thread *held = NULL, *maybe = NULL, *any = NULL;

	struct rq_lockview v = own_view(lock);
	uint32_t val = v.val, named = word_owner(val), n_next = 0;
	struct rq_thread *next;

	if (!val)
		return NULL;
	if (named != RQ_NO_SLOT) {
		struct rq_thread *o = rq_thread_at(named);

		if (o != self && rq_thread_in_use(o) && claims_lock(o, &v))
			return o;
	}
	if (!(val & RQ_LOCKED_MASK)) {
		/* No owner: the thread that takes the lock next blocks us
		 * (possibly preempted): the pending waiter, or with only a
		 * tail in the word the queue's head. */
		uint32_t what = (val & RQ_PENDING_MASK) ? RQ_NOTE_PENDING : RQ_NOTE_HEAD;

		next = single_noted(lock, self, what, &n_next);
		if (n_next || what == RQ_NOTE_HEAD)
			return next;
	}
	for (uint32_t s = 0; s < bound; s++) {
		struct rq_thread *t = rq_thread_at(s);
		enum rq_claim claim;

		if (t == self || !atomic_load_explicit(&t->wr.in_use, memory_order_relaxed))
			continue;
		claim = claim_below(t, &v, RQ_NR_HELD);
		if (claim == RQ_CLAIM_HELD && n_held++ == 0)
			held = t;
		else if (claim == RQ_CLAIM_MAYBE && n_maybe++ == 0)
			maybe = t;
		else if (claim == RQ_CLAIM_NONE && has_entry(t, lock) && n_any++ == 0)
			any = t;
	}
	/* Several claimants of one kind: nothing to conclude. */
	if (n_held)
		return n_held == 1 ? held : NULL;
	if (n_maybe)
		return n_maybe == 1 ? maybe : NULL;
	return n_any == 1 ? any : NULL;
}

/*
 * For the deadline path: is @t stuck in a wait of this library (its
 * innermost context waits for a lock)? *@gen gets its wait generation,
 * which moves when that wait ends or another begins.
 */
bool rq_stuck_waiting(struct rq_thread *t, uint32_t *gen)
{
	struct rq_link l = {.t = t};

	read_wait(&l);
	*gen = l.gen;
	return l.waits != NULL;
}

/*
 * What @t, if it is stuck waiting, claims about @lock below its waiting
 * context (RQ_CLAIM_NONE when it is not waiting); @l gets its wait.
 */
static enum rq_claim waiting_claim(struct rq_thread *t, const struct rq_lockview *v,
                                   struct rq_link *l)
{
	*l = (struct rq_link){.t = t};
	/* seq_cst: pairs with the seq_cst store in rq_wait_push() */
	if (!atomic_load_explicit(&t->wr.nwait, memory_order_seq_cst) ||
	    !atomic_load_explicit(&t->wr.in_use, memory_order_relaxed))
		return RQ_CLAIM_NONE;
	read_wait(l);
	if (!l->waits)
		return RQ_CLAIM_NONE;
	return claim_below(t, v, l->widx);
}

/* @l links the chain: held untagged and believed, or a frozen culprit. */
static bool link_found(struct rq_lockview *v, enum rq_claim claim, struct rq_link *l)
{
	if (claim == RQ_CLAIM_HELD)
		return held_believable(v, l->t);
	l->frozen = claim == RQ_CLAIM_MAYBE && frozen_culprit(v, l->t);
	return l->frozen;
}

/* Tagged claimants a hop weighs as frozen culprits (more: the timeout). */
#define RQ_MAX_MAYBE 4

/*
 * The next link of the chain: a thread that holds @v's lock below its own
 * waiting entry and is stuck waiting. Threads that are not waiting cannot be
 * part of a deadlock, so only their one-line wait records are read; the
 * table of a waiting thread does not change while it waits. Failing an
 * untagged holder, a frozen tagged claimant that frozen_culprit() names the
 * one blocking the lock links: of a free lock, the frozen queue head or
 * pending holder, whatever other frozen waiters are queued behind it (only
 * it blocks; their tagged entries claim nothing); of an anonymously locked
 * one, the only claimant. A lock whose word names its owner has one
 * candidate, that thread (no other one's entry is believed, and no other
 * one is its frozen culprit): one record read instead of a scan of every
 * slot.
 */
static bool find_waiting_holder(struct rq_lockview *v, struct rq_link *out)
{
	uint32_t owner = word_owner(v->val), bound = rq_slot_bound(), n_maybe = 0;
	struct rq_link maybe[RQ_MAX_MAYBE];

	if (owner != RQ_NO_SLOT)
		return link_found(v, waiting_claim(rq_thread_at(owner), v, out), out);
	for (uint32_t s = 0; s < bound; s++) {
		struct rq_link l;
		enum rq_claim claim = waiting_claim(rq_thread_at(s), v, &l);

		if (claim == RQ_CLAIM_HELD && link_found(v, claim, &l)) {
			*out = l;
			return true;
		}
		if (claim == RQ_CLAIM_MAYBE && n_maybe < RQ_MAX_MAYBE)
			maybe[n_maybe++] = l;
	}
	for (uint32_t i = 0; i < n_maybe; i++) {
		if (link_found(v, RQ_CLAIM_MAYBE, &maybe[i])) {
			*out = maybe[i];
			return true;
		}
	}
	return false;
}

/*
 * The next link when @w (the previous member, or the caller) waits in @v's
 * lock's queue behind a frozen head: the stuck thread whose frozen context
 * heads the queue (frozen_head_blocks()). Scans every slot, but only for a
 * waiter queued behind the head.
 */
static bool find_queue_blocker(struct rq_lockview *v, const struct rq_thread *w,
                               struct rq_link *out)
{
	uint32_t bound = rq_slot_bound();

	if (!queued_behind(w, v->lock))
		return false;
	for (uint32_t s = 0; s < bound; s++) {
		struct rq_thread *t = rq_thread_at(s);

		if (t != w && waiting_claim(t, v, out) == RQ_CLAIM_MAYBE &&
		    frozen_head_blocks(t, v->lock, w)) {
			out->frozen = true;
			out->behind = w;
			return true;
		}
	}
	return false;
}

/* Does @l still hold @v's lock (the lock it linked by), as when it was found? */
static bool link_still_holds(const struct rq_link *l, struct rq_lockview *v)
{
	enum rq_claim claim = claim_below(l->t, v, l->widx);

	if (l->behind)
		return claim == RQ_CLAIM_MAYBE && queued_behind(l->behind, v->lock) &&
		       frozen_head_blocks(l->t, v->lock, l->behind);
	if (!l->frozen)
		return claim == RQ_CLAIM_HELD && held_believable(v, l->t);
	return claim == RQ_CLAIM_MAYBE && frozen_culprit(v, l->t);
}

/*
 * Read again: every member in the same wait, and holding the lock that
 * links it, as the caller sees its own lock now (@lock, link 0) and as the
 * previous member's view shows the others now.
 */
static bool chain_still_valid(rqspinlock_t *lock, const struct rq_link *path, uint32_t len)
{
	struct rq_lockview v = own_view(lock);

	for (uint32_t i = 0; i < len; i++) {
		struct rq_link now = {.t = path[i].t};

		if (!link_still_holds(&path[i], &v))
			return false;
		read_wait(&now);
		if (now.gen != path[i].gen || now.depth != path[i].depth ||
		    now.waits != path[i].waits)
			return false;
		v = waiter_view(now.waits, now.seen);
	}
	return true;
}

/*
 * A cycle through a frozen link is reported only when the same one (same
 * threads, same wait generations) is found by two consecutive checks, a
 * millisecond apart: its owner test reads many tables one after another and
 * could, in a lock changing hands during both reads, miss the new owner.
 */
static uint64_t frozen_signature(const struct rq_link *path, uint32_t len)
{
	uint64_t sig = 0;
	bool frozen = false;

	for (uint32_t i = 0; i < len; i++) {
		frozen |= path[i].frozen;
		sig = sig * 0x9e3779b97f4a7c15ull + (uintptr_t)path[i].t + path[i].gen;
	}
	return frozen ? sig | 1 : 0;
}

static int report_cycle(const struct rq_link *path, uint32_t hop, struct rq_cycle *out)
{
	out->event = hop == 1 ? RQSPINLOCK_EV_ABBA : RQSPINLOCK_EV_CYCLE;
	out->n = hop;
	for (uint32_t i = 0; i < hop; i++) {
		out->peers[i] = path[i].t;
		out->waits[i] = path[i].waits;
	}
	return -EDEADLK;
}

int rq_check_cycle(struct rq_thread *self, rqspinlock_t *lock, struct rq_cycle *out,
                   uint64_t *suspect, struct rq_stale_view *stale)
{
	struct rq_link path[RQ_MAX_CHAIN];
	struct rq_lockview want = own_view(lock);
	uint64_t seen = *suspect, sig;

	*suspect = 0;
	for (uint32_t hop = 0; hop < RQ_MAX_CHAIN; hop++) {
		struct rq_link *l = &path[hop];

		if (!find_waiting_holder(&want, l) &&
		    !find_queue_blocker(&want, hop ? path[hop - 1].t : self, l)) {
			/* A view older than its owner's wait: look again
			 * once its waiter (the previous link) has a fresh one. */
			if (want.uncertified)
				*stale = (struct rq_stale_view){.t = path[hop - 1].t,
				                                .seen = path[hop - 1].view,
				                                .was = path[hop - 1].seen,
				                                .gen = path[hop - 1].gen};
			return 0;
		}
		if (l->t == self) {
			/* The closing link (ourselves, holding the lock the
			 * last peer waits for, possibly through a frozen
			 * context of ours) is verified and confirmed too. */
			if (hop == 0 || !chain_still_valid(lock, path, hop + 1))
				return 0;
			sig = frozen_signature(path, hop + 1);
			if (sig && sig != seen) {
				*suspect = sig; /* confirm at the next check */
				return 0;
			}
			return report_cycle(path, hop, out);
		}
		for (uint32_t i = 0; i < hop; i++)
			if (path[i].t == l->t)
				return 0; /* a cycle without us: its members act */
		want = waiter_view(l->waits, l->seen);
	}
	return 0;
}

void rq_snapshot_thread(const struct rq_thread *t, struct rqspinlock_thread_info *out)
{
	struct rq_link l = {.t = (struct rq_thread *)t};
	/* acquire: pairs with the release stores of cnt (push and drop) */
	uint32_t n = rq_held_tracked(atomic_load_explicit(&t->held.cnt, memory_order_acquire));

	read_wait(&l);
	out->tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
	out->waits_for = l.waits;
	out->nr_held = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct rq_entry e = rq_held_entry(t, i);

		/* Untagged entries, without reading their locks' words: a
		 * peer may have released and freed a lock since the cycle
		 * was found. */
		if (rq_entry_lock(e) && !rq_entry_tags(e))
			out->held[out->nr_held++] = rq_entry_lock(e);
	}
}
