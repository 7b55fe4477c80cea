/* SPDX-License-Identifier: MIT */
/*
 * Layer 1, the baseline "QL": the kernel's queued spin lock without
 * resilience, built on the lock word and MCS queue alone (lockword.h, and
 * the registry for its queue nodes), as the resilient slow path is, so
 * that benchmarks measure exactly what resilience adds: the held-lock table,
 * the timeouts and the detection. It waits forever.
 */
#include <errno.h>

#include "rqspinlock/qspinlock.h"
#include "lockword.h"
#include "registry.h"

static void ql_spin_on_word(_Atomic uint32_t *word)
{
	uint32_t spins = 0;

	while (!rq_try_steal(word, RQ_LOCKED_VAL))
		rq_spin_or_yield(&spins);
}

static void ql_wait_unlocked(_Atomic uint32_t *word, uint32_t *val)
{
	uint32_t spins = 0;

	while ((*val = rq_load_word_acquire(word)) & RQ_LOCKED_MASK)
		rq_spin_or_yield(&spins);
}

/* Queue head: take the pending bit, then wait for the owner to leave. */
static void ql_head(_Atomic uint32_t *word, struct rq_qnode *node, uint32_t tail)
{
	uint32_t spins = 0, val;

	for (;;) {
		val = rq_load_word_acquire(word);
		if (rq_head_try_pending(word, &val))
			break;
		rq_spin_or_yield(&spins);
	}
	if (val & RQ_LOCKED_MASK)
		ql_wait_unlocked(word, &val);
	if (!rq_head_claim(word, tail, val))
		rq_signal_node(rq_wait_next(node), RQ_NODE_HEAD);
}

static void ql_queue(struct rq_thread *t, _Atomic uint32_t *word)
{
	uint32_t nidx = rq_node_get(t);
	struct rq_qnode *node;
	uint32_t tail;

	/* Out of nodes, or the node is the resilient lock's (in use or
	 * waiting for a late successor, rq_pass_on()): no queue. */
	if (unlikely(nidx >= RQ_NR_NODES ||
	             atomic_load_explicit(&t->nodes[nidx].lock, memory_order_relaxed))) {
		ql_spin_on_word(word);
		goto out;
	}
	node = &t->nodes[nidx];
	rq_node_init(node, (uintptr_t)word);
	if (rq_try_steal(word, RQ_LOCKED_VAL))
		goto release;
	tail = rq_encode_tail(t->slot, nidx);
	if (rq_enqueue(word, node, tail, (uintptr_t)word) == RQ_NODE_WAIT)
		rq_wait_node(node);
	ql_head(word, node, tail);
release:
	rq_node_release(node);
out:
	rq_node_put(t);
}

static __attribute__((noinline)) void ql_slowpath(_Atomic uint32_t *word, uint32_t val)
{
	struct rq_thread *t = rq_self_get();

	if (unlikely(t->slot == RQ_NO_SLOT)) {
		ql_spin_on_word(word);
		return;
	}
	val = rq_wait_handover(word, val);
	if (rq_try_set_pending(word, &val)) {
		if (val & RQ_LOCKED_MASK)
			ql_wait_unlocked(word, &val);
		rq_clear_pending_set_locked(word);
		return;
	}
	if (!rq_try_steal(word, RQ_LOCKED_VAL))
		ql_queue(t, word);
}

RQ_EXPORT void ql_spin_lock(ql_spinlock_t *lock)
{
	uint32_t val;

	if (likely(rq_try_0_to_locked(&lock->val, &val, RQ_LOCKED_VAL)))
		return;
	ql_slowpath(&lock->val, val);
}

RQ_EXPORT int ql_spin_trylock(ql_spinlock_t *lock)
{
	return rq_trylock_word(&lock->val, RQ_LOCKED_VAL) ? 0 : -EBUSY;
}

RQ_EXPORT void ql_spin_unlock(ql_spinlock_t *lock)
{
	rq_store_unlocked(&lock->val);
}
