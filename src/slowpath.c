/* SPDX-License-Identifier: MIT */
/*
 * The resilient queued slow path.
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
 *    timeout it tears the queue down in FIFO order (successors get
 *    -ETIMEDOUT); on a deadlock it hands the queue to its successor. With no
 *    successor it resets the tail;
 *  - non-head waiters never time out by themselves: the head signals them;
 *  - a nested context (signal handler) whose thread already has a queue node
 *    in use never queues: it could end up behind its own interrupted
 *    context. It takes the bounded trylock fallback instead.
 */
#include <errno.h>

#include "internal.h"
#include "qhelpers.h"

/* 1: we must queue; 0: we own the lock; <0: error. */
enum { RQ_GO_QUEUE = 1 };

static int pending_wait(struct rq_thread *t, rqspinlock_t *lock, uint32_t idx, uint32_t val,
                        struct rq_wait *w)
{
	_Atomic uint32_t *word = &lock->val;

	val = rq_wait_handover(word, val);
	if (val & ~RQ_LOCKED_MASK)
		return rq_try_steal(word) ? 0 : RQ_GO_QUEUE;
	rq_wait_publish(w, t, lock, idx);
	if (!rq_take_pending_noted(t, word, &val, rq_try_set_pending))
		return rq_try_steal(word) ? 0 : RQ_GO_QUEUE;
	if (val & RQ_LOCKED_MASK) {
		int err = 0;

		rq_wait_start(w, lock, t, idx, RQ_LOCKED_MASK, 1);
		while (rq_load_word_acquire(word) & RQ_LOCKED_MASK) {
			err = rq_wait_poll(w);
			if (err) {
				rq_drop_pending_noted(t, word);
				return err;
			}
		}
	}
	rq_pending_to_locked_noted(t, word);
	rq_stat_inc(t, RQ_STAT_PENDING);
	return 0;
}

/*
 * Head of the queue: take the pending bit (waiting for a pending waiter
 * that came before the queue to finish), then wait for the owner to leave.
 * Two timeouts: the pending waiter's critical section and the owner's.
 */
static int head_wait(struct rq_thread *t, rqspinlock_t *lock, uint32_t idx, struct rq_qnode *node,
                     uint32_t tail, struct rq_wait *w)
{
	_Atomic uint32_t *word = &lock->val;
	int pending = 0, err;
	uint32_t val;

	rq_wait_start(w, lock, t, idx, RQ_LOCKED_PENDING_MASK, 2);
	for (;;) {
		val = rq_load_word_acquire(word);
		if (!pending)
			pending = rq_take_pending_noted(t, word, &val, rq_head_try_pending);
		if (pending && !(val & RQ_LOCKED_MASK))
			break;
		err = rq_wait_poll(w);
		if (!err)
			continue;
		if (pending)
			rq_drop_pending_noted(t, word);
		if (err == -ETIMEDOUT) {
			rq_leave_queue(word, node, tail, RQ_NODE_TIMEOUT);
		} else {
			rq_stat_inc(t, RQ_STAT_HANDOFF);
			rq_leave_queue(word, node, tail, RQ_NODE_HEAD);
		}
		return err;
	}
	rq_head_claim(word, node, tail, val);
	rq_wait_note_pending(t, false);
	return 0;
}

static int queue_wait(struct rq_thread *t, rqspinlock_t *lock, uint32_t idx, struct rq_wait *w)
{
	_Atomic uint32_t *word = &lock->val;
	uint32_t nidx = rq_node_get(t);
	struct rq_qnode *node;
	uint32_t tail;
	int err = 0;

	rq_wait_publish(w, t, lock, idx);
	if (unlikely(nidx > 0)) {
		/* Nested context, or out of nodes: never queue. */
		err = rq_trylock_fallback(t, lock, idx, w);
		goto out;
	}
	rq_stat_inc(t, RQ_STAT_SLOWPATH);
	node = &t->nodes[nidx];
	rq_node_init(node);
	/* The node may have been cold; the lock may be free by now. */
	if (rq_try_steal(word))
		goto out;
	/* Before queueing: look for a deadlock (AA and cycles) once. */
	rq_wait_start(w, lock, t, idx, ~0u, 1);
	err = rq_wait_poll(w);
	if (err)
		goto out;
	tail = rq_encode_tail(t->slot, nidx);
	if (rq_enqueue(word, node, tail, (uintptr_t)lock) &&
	    rq_wait_node(node) == RQ_NODE_TIMEOUT) {
		/* The head timed out: pass the teardown on and leave. */
		rq_leave_queue(word, node, tail, RQ_NODE_TIMEOUT);
		w->cycle.event = RQSPINLOCK_EV_TIMEOUT;
		err = -ETIMEDOUT;
		goto out;
	}
	err = head_wait(t, lock, idx, node, tail, w);
out:
	rq_node_put(t);
	return err;
}

static int queued_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t idx, uint32_t val,
                           struct rq_wait *w)
{
	int err;

	/* A context whose thread already sits in a queue goes straight to
	 * the fallback: it must not even touch the pending bit, which could
	 * make a queue head wait for a successor it will never get (found
	 * by reading the Spin model's traces). */
	if (unlikely(atomic_load_explicit(&t->node_count, memory_order_relaxed)))
		return queue_wait(t, lock, idx, w);
	err = pending_wait(t, lock, idx, val, w);

	if (err != RQ_GO_QUEUE)
		return err;
	return queue_wait(t, lock, idx, w);
}

int rq_lock_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t idx, uint32_t val)
{
	struct rq_wait w; /* not zeroed as a whole: it is big and this is hot */
	int err;

	w.published = false;
	w.cycle.event = 0;
	w.cycle.n = 0;
	err = rq_check_aa(t, lock, idx);
	if (unlikely(err)) {
		w.cycle = (struct rq_cycle){.event = RQSPINLOCK_EV_AA};
		return rq_fail(t, lock, idx, err, &w.cycle, false);
	}
	if (unlikely(val & RQ_SHARED_MARK))
		err = rq_shared_slowpath(t, lock, idx, &w);
	else if (t->slot == RQ_NO_SLOT ||
	         atomic_load_explicit(&rq_mode, memory_order_relaxed) == RQSPINLOCK_MODE_TAS)
		err = rq_tas_slowpath(t, lock, idx, &w);
	else
		err = queued_slowpath(t, lock, idx, val, &w);
	if (likely(!err)) {
		rq_held_mark_held(t, idx, lock);
		if (w.published)
			rq_wait_pop(t);
		return 0;
	}
	return rq_fail(t, lock, idx, err, &w.cycle, w.published);
}
