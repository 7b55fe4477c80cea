/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, the resilient queued slow path: the pending waiter, the MCS
 * queue, recovery. Uses layers 0 to 5, its waits bounded by timeout.c.
 *
 * Lock word as (tail, pending, locked); '*' is any value, 'n' our tail.
 * docs/DESIGN.md section 3 has the full diagram.
 *
 *   fast path      (0,0,0) -> (0,0,1)
 *   pending        (0,0,1) -> (0,1,1) -> owner leaves (0,1,0) -> (0,0,1)
 *   steal          (*,0,0) -> (*,0,1)       while no head holds pending
 *   queue head     (n,0,*) -> (n,1,*) -> owner leaves (n,1,0)
 *                  alone:  (n,1,0) -> (0,0,1)
 *                  else:   (*,1,0) -> (*,0,1), successor becomes head
 *   take-overs are CASes that need the locked byte clear (rq_take_unlocked)
 *   unlock         (*,*,1) -> (*,*,0)
 *
 * Resilience adds exits to every waiting loop (docs/DESIGN.md, "Recovery"):
 *  - slow-path entry: AA check; acquisitions that need no waiting (a
 *    pending->locked hand-over, a free lock) cost nothing more. Before the
 *    first bit others would wait for (pending) or the queue, "we wait" is
 *    published; every wait phase starts with AA and cycle checks, and the
 *    queue is only joined after they passed;
 *  - pending waiter: one timeout; on failure it clears the pending bit;
 *  - queue head: two timeouts (owner + pending waiter ahead of it). On a
 *    timeout it tears the queue down in FIFO order; on a deadlock it hands
 *    the queue to its successor. With no successor it resets the tail;
 *  - non-head waiters: normally the head signals them, but each also has a
 *    deadline of its own (RQ_PHASE_QUEUED), runs the deadlock checks, and
 *    leaves by itself when its predecessor never signals (frozen by signal
 *    handlers, jumped out, forked away): it marks its node GONE, so that a
 *    late signal cannot land, and leaves like a head that failed. One told
 *    of a teardown fails with it (-ETIMEDOUT, and tells its successor) only
 *    while the stall lasts and it waited through it (teardown_applies());
 *    otherwise it heads the queue;
 *  - nobody ever waits for a successor to link: a leaving node that has none
 *    yet leaves it a mark with the verdict (rq_pass_on());
 *  - a nested context (signal handler) whose thread already has a queue node
 *    in use never queues: it could end up behind its own interrupted
 *    context. It takes the bounded trylock fallback instead.
 */
#include <errno.h>

#include "slowpath.h"
#include "pshared.h"
#include "report.h"
#include "tas.h"

/* What a waiter that leaves the queue on @err tells its successor: a
 * timeout tears the queue down, a deadlock hands it on. */
static uint32_t rq_verdict(int err)
{
	return err == -ETIMEDOUT ? RQ_NODE_TIMEOUT : RQ_NODE_HEAD;
}

/* 1: we must queue; 0: we own the lock; <0: error. */
enum { RQ_GO_QUEUE = 1 };

/* Spins a waiter that holds no other lock watches its owner before it sets
 * up a bounded wait: one poll interval of rq_wait_poll(). */
#define RQ_OWNER_SPINS 64u

/*
 * Watch the owner for at most @spins pauses; returns the last word seen.
 * The waits of the resilient lock read the word relaxed: they only watch,
 * and the lock is always taken by an acquire CAS (rq_take_unlocked(),
 * rq_try_steal(), rq_head_take()), which reads the owner's release store
 * or an RMW of its release sequence, so the owner's critical section
 * happens-before ours through the CAS, not through these loads.
 */
static uint32_t spin_while_locked(_Atomic uint32_t *word, uint32_t spins)
{
	uint32_t val;

	while ((val = rq_word_load_relaxed(word)) & RQ_LOCKED_MASK && spins--)
		rq_cpu_relax();
	return val;
}

static int pending_wait(struct rq_thread *t, rqspinlock_t *lock, uint32_t val, struct rq_attempt *w)
{
	_Atomic uint32_t *word = &lock->val;

	val = rq_wait_handover(word, val);
	if (val & ~RQ_LOCKED_MASK)
		return rq_try_steal(word, t->held.owner) ? 0 : RQ_GO_QUEUE;
	rq_wait_publish(w);
	if (!rq_take_pending_noted(t, word, &val, rq_try_set_pending))
		return rq_try_steal(word, t->held.owner) ? 0 : RQ_GO_QUEUE;
	/* An acquisition that cannot deadlock has no checks to run at the
	 * start of its wait, so it watches the owner first: most hand-overs
	 * complete within these spins and never pay for setting up the
	 * bounded wait. */
	if ((val & RQ_LOCKED_MASK) && !rq_can_deadlock(w->held_idx))
		val = spin_while_locked(word, RQ_OWNER_SPINS);
	if (val & RQ_LOCKED_MASK) {
		int err = 0;

		rq_wait_start(w, RQ_LOCKED_MASK, RQ_PHASE_PENDING);
		/* relaxed: see spin_while_locked() */
		while ((val = rq_word_load_relaxed(word)) & RQ_LOCKED_MASK) {
			err = rq_wait_poll(w);
			if (err) {
				rq_drop_pending_noted(t, word);
				return err;
			}
		}
	}
	/* Lost only if the word was reset under us: queue as a late arrival. */
	if (!rq_pending_to_locked_noted(t, word, val))
		return RQ_GO_QUEUE;
	rq_stat_inc(t, RQ_STAT_PENDING);
	return 0;
}

/*
 * Head of the queue: take the pending bit (waiting for a pending waiter
 * that came before the queue to finish), then wait for the owner to leave.
 * Two timeouts: the pending waiter's critical section and the owner's.
 */
static int head_wait(struct rq_thread *t, rqspinlock_t *lock, struct rq_qnode *node, uint32_t tail,
                     struct rq_attempt *w)
{
	_Atomic uint32_t *word = &lock->val;
	int pending = 0, claim, err;
	uint32_t val;

	rq_wait_start(w, RQ_LOCKED_PENDING_MASK, RQ_PHASE_HEAD);
	rq_wait_note(t, RQ_NOTE_HEAD, true);
	for (;;) {
		val = rq_word_load_relaxed(word); /* see spin_while_locked() */
		if (!pending)
			pending = rq_take_pending_noted(t, word, &val, rq_head_try_pending);
		if (pending && !(val & RQ_LOCKED_MASK)) {
			claim = rq_head_take(word, tail, val, t->held.owner);
			if (claim >= 0)
				break;
			/* the word was reset under us: the bit is gone */
			rq_wait_note_pending(t, false);
			pending = 0;
		}
		err = rq_wait_poll(w);
		if (!err)
			continue;
		if (pending)
			rq_drop_pending_noted(t, word);
		rq_wait_note(t, RQ_NOTE_HEAD, false);
		if (err != -ETIMEDOUT)
			rq_stat_inc(t, RQ_STAT_HANDOFF);
		rq_leave_queue(word, node, tail, rq_verdict(err));
		return err;
	}
	if (!claim)
		rq_pass_on(node, RQ_NODE_HEAD);
	rq_wait_note(t, RQ_NOTE_HEAD, false);
	rq_wait_note_pending(t, false);
	return 0;
}

/*
 * Behind others in the queue: wait for the predecessor's signal, on our own
 * deadline. Returns the state to act on: RQ_NODE_HEAD or RQ_NODE_TIMEOUT as
 * signalled, or RQ_NODE_GONE when we left by ourselves (*err says why).
 */
static uint32_t queued_wait(struct rq_qnode *node, struct rq_attempt *w, int *err)
{
	/* The value we linked with (rq_link_behind()): our generation in the
	 * WAIT state. Not a fresh load: the predecessor may have signalled
	 * already, and waiting for a change from the signalled value would
	 * wait for a signal that came. Relaxed: only we change the generation. */
	uint32_t mine = (atomic_load_explicit(&node->locked, memory_order_relaxed) &
	                 ~RQ_NODE_STATE_MASK) |
	                RQ_NODE_WAIT,
	         st;

	rq_wait_start(w, ~0u, RQ_PHASE_QUEUED);
	w->queued = true;
	w->spin = 1; /* the checks ran just before we queued */
	while ((st = rq_node_state(node)) == mine) {
		*err = rq_wait_poll(w);
		if (*err)
			return rq_node_abandon(node, mine);
	}
	return st & RQ_NODE_STATE_MASK;
}

/*
 * The node this thread queues with: the one it used last, unless a mark in
 * it still waits for a successor that may link late (rq_pass_on()). Relaxed:
 * a mark is our own store, or was replaced by the successor's exchange.
 * Only the context with node_count 0 queues, and handlers run to completion
 * above it, so t->qnode needs no atomics.
 */
static struct rq_qnode *pick_node(struct rq_thread *t)
{
	for (uint32_t i = 0; i < RQ_NR_NODES; i++) {
		uint32_t k = (t->qnode + i) % RQ_NR_NODES;

		if (!rq_link_is_mark(
		        atomic_load_explicit(&t->nodes[k].next, memory_order_relaxed))) {
			t->qnode = k;
			return &t->nodes[k];
		}
	}
	return NULL;
}

/*
 * A teardown reached us while we waited (a waiter ahead timed out): do we
 * fail with it? Only if the stall it reports is still there and we waited
 * through it. @seen is the word's owner and pending bytes when we queued:
 * if the owner changed (or, for a lock that was free with its pending bit
 * set, either byte), or nothing holds the lock or its pending bit now, the
 * lock has moved on. And a waiter that has not waited a timeout of its own
 * queued after the stall began, behind a teardown already under way (as
 * failed waiters that queue again at once do): failing it would keep the
 * teardown going for as long as they come, while the lock works, and the
 * same owner taking the lock again would hide that the stall is over. Such
 * a waiter heads the queue instead (the waiter ahead left: the state a
 * hand-off makes), on its own deadline.
 */
static bool teardown_applies(const struct rq_attempt *w, _Atomic uint32_t *word, uint32_t seen)
{
	uint32_t now = rq_word_load_relaxed(word) & RQ_LOCKED_PENDING_MASK;
	/* An owner's stall is its locked byte: the pending bit we saw may
	 * have been the head's that signalled us, dropped before it did. */
	uint32_t mask = (seen & RQ_LOCKED_MASK) ? RQ_LOCKED_MASK : RQ_LOCKED_PENDING_MASK;

	if (!now || (now & mask) != (seen & mask))
		return false;
	return w->deadline && rq_now_ns() - w->start >= w->duration / w->timeouts;
}

static int queue_wait(struct rq_thread *t, rqspinlock_t *lock, struct rq_attempt *w)
{
	_Atomic uint32_t *word = &lock->val;
	uint32_t nidx = rq_node_get(t);
	struct rq_qnode *node = NULL;
	uint32_t tail, st, seen;
	int err = 0;

	rq_wait_publish(w);
	/* A nested context never queues; nor does a thread whose nodes all
	 * wait for late successors. */
	if (unlikely(nidx > 0 || !(node = pick_node(t)))) {
		err = rq_trylock_fallback(w);
		goto out;
	}
	rq_stat_inc(t, RQ_STAT_SLOWPATH);
	rq_node_init(node, (uintptr_t)lock);
	/* The node may have been cold; the lock may be free by now. */
	if (rq_try_steal(word, t->held.owner))
		goto release;
	/* Before queueing: look for a deadlock (AA and cycles) once. */
	if (rq_can_deadlock(w->held_idx)) {
		rq_wait_start(w, ~0u, RQ_PHASE_CHECK);
		err = rq_wait_poll(w);
		if (err)
			goto release;
	}
	tail = rq_encode_tail(t->slot, t->qnode);
	seen = rq_word_load_relaxed(word) & RQ_LOCKED_PENDING_MASK;
	st = rq_enqueue(word, node, tail, (uintptr_t)lock);
	if (st == RQ_NODE_TIMEOUT) {
		/* A mark: the waiter ahead left on a timeout before we linked.
		 * We saw nothing of that stall (@seen is from just now): head
		 * the queue, on our own deadline. */
		st = RQ_NODE_HEAD;
	} else if (st == RQ_NODE_WAIT) {
		st = queued_wait(node, w, &err);
		if (st == RQ_NODE_TIMEOUT && !err && !teardown_applies(w, word, seen))
			st = RQ_NODE_HEAD; /* the waiter ahead left: we are next */
	}
	if (st == RQ_NODE_HEAD) {
		err = head_wait(t, lock, node, tail, w);
	} else {
		/* A waiter ahead timed out (pass the teardown on), or we left
		 * by ourselves (GONE, err set): leave as a failed head would. */
		if (st == RQ_NODE_TIMEOUT) {
			/* Not a deadline of ours: whatever our probe read of
			 * the owner says nothing about this failure. */
			w->cycle.event = RQSPINLOCK_EV_TIMEOUT;
			w->cycle.owner = (struct rqspinlock_owner_info){0};
			err = -ETIMEDOUT;
		}
		rq_leave_queue(word, node, tail, rq_verdict(err));
	}
release:
	/* A mark left for a late successor keeps the node (and its lock
	 * field, which that successor checks) until it links. */
	if (!rq_link_is_mark(atomic_load_explicit(&node->next, memory_order_relaxed)))
		rq_node_release(node);
out:
	rq_node_put(t);
	return err;
}

static int queued_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t val,
                           struct rq_attempt *w)
{
	int err;

	/* A context whose thread already sits in a queue goes straight to
	 * the fallback (through queue_wait(), which never queues it): the
	 * fallback steals or takes the pending bit itself, so the whole call
	 * is one bounded wait, not a pending wait and then the fallback. */
	if (unlikely(atomic_load_explicit(&t->node_count, memory_order_relaxed)))
		return queue_wait(t, lock, w);
	err = pending_wait(t, lock, val, w);

	if (err != RQ_GO_QUEUE)
		return err;
	return queue_wait(t, lock, w);
}

int rq_lock_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx, uint32_t val)
{
	struct rq_attempt w;
	int err;

	rq_attempt_init(&w, t, lock, held_idx);
	err = rq_can_deadlock(held_idx) ? rq_check_aa(t, lock, held_idx) : 0;
	if (unlikely(err)) {
		w.cycle = (struct rq_cycle){.event = RQSPINLOCK_EV_AA};
		return rq_fail(t, lock, held_idx, err, &w.cycle, false);
	}
	if (unlikely(val & RQ_SHARED_MARK))
		err = rq_shared_slowpath(&w);
	else if (t->slot == RQ_NO_SLOT ||
	         atomic_load_explicit(&rq_mode, memory_order_relaxed) == RQSPINLOCK_MODE_TAS)
		err = rq_tas_slowpath(&w);
	else
		err = queued_slowpath(t, lock, val, &w);
	if (likely(!err)) {
		rq_held_mark_held(t, held_idx, lock);
		if (w.published)
			rq_wait_pop(t);
		return 0;
	}
	return rq_fail(t, lock, held_idx, err, &w.cycle, w.published);
}
