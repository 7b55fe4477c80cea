/* SPDX-License-Identifier: MIT */
/*
 * Layer 1, the lock word and the MCS queue (the kernel's qspinlock.h role):
 * one copy of each transition, shared by the resilient slow paths
 * (slowpath.c, tas.c, pshared.c) and the baseline QL (qlock.c). Uses
 * only layer 0 (registry.h: queue nodes live in the per-thread record, tails
 * name registry slots). It knows nothing about timeouts, held-lock tables
 * or deadlocks.
 *
 * Lock word (32 bits, little-endian byte order shown):
 *
 *   bits  0- 7  locked byte   the owner while the lock is taken: its id
 *                             (RQ_OWNER_FIRST + registry slot), or
 *                             RQ_OWNER_ANON (1), which names nobody
 *   bits  8-15  pending byte  bit 8: the pending bit, held by the one waiter
 *                             allowed to take the lock next (the pending
 *                             waiter, or the queue head once it claimed it);
 *                             bit 15: the process-shared mark (pshared.c)
 *   bits 16-17  tail index    which of the tail thread's 4 queue nodes
 *   bits 18-31  tail slot     registry slot of the last queued thread, plus 1
 *
 * Only whole-word atomics are used on the word, except two stores, as the
 * kernel's: the unlock, a release store of the locked byte, and (in QL
 * only) the pending waiter's take-over, a store of the low half (locked
 * and pending bytes). Both start at the word's lowest-addressed byte, so
 * all accesses name the same address, which is what ThreadSanitizer keys
 * its happens-before edges on.
 */
#ifndef RQ_LOCKWORD_H
#define RQ_LOCKWORD_H

#include <stdatomic.h>
#include <stdint.h>

#include "registry.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "rqspinlock: the byte-wide unlock store assumes a little-endian lock word"
#endif

/* What QL, process-shared locks and a test's stand-in owner write. */
#define RQ_LOCKED_VAL          RQ_OWNER_ANON
#define RQ_LOCKED_MASK         0x000000ffu
#define RQ_PENDING_VAL         (1u << 8)
#define RQ_PENDING_MASK        0x0000ff00u
#define RQ_LOCKED_PENDING_MASK (RQ_LOCKED_MASK | RQ_PENDING_MASK)
#define RQ_TAIL_IDX_OFFSET     16
#define RQ_TAIL_IDX_BITS       2
#define RQ_TAIL_SLOT_OFFSET    (RQ_TAIL_IDX_OFFSET + RQ_TAIL_IDX_BITS)
#define RQ_TAIL_MASK           0xffff0000u
/* Process-shared (marked) locks (pshared.c): in the pending byte, which is
 * otherwise only 0 or 1. */
#define RQ_SHARED_MARK (1u << 15)
/* ... and bits 9..14 of that byte count its acquisitions (modulo 64): a
 * waiter that finds the word taken by another owner than when it last
 * looked knows that the lock changed hands, even if it never saw it free. */
#define RQ_SHARED_GEN_ONE  (1u << 9)
#define RQ_SHARED_GEN_MASK (0x3fu << 9)

/* How long to wait for an in-progress pending->locked hand-over. */
#define RQ_PENDING_LOOPS 512

/* States of a queue node (the low bits of rq_qnode::locked). */
enum {
	RQ_NODE_WAIT = 0,    /* queued, not yet head */
	RQ_NODE_HEAD = 1,    /* predecessor left: this node heads the queue */
	RQ_NODE_TIMEOUT = 2, /* a waiter ahead timed out: leave and tell the successor,
	                      * unless the stall is over (teardown_applies()) */
	RQ_NODE_GONE = 3,    /* its waiter left by itself; signals no longer land */
};
#define RQ_NODE_STATE_MASK 3u
#define RQ_NODE_GEN_ONE    4u /* one generation in rq_qnode::locked */

static inline void rq_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static inline uint32_t rq_encode_tail(uint32_t slot, uint32_t idx)
{
	return ((slot + 1) << RQ_TAIL_SLOT_OFFSET) | (idx << RQ_TAIL_IDX_OFFSET);
}

/*
 * Only for tails that passed rq_node_plausible(): the slot field is nonzero
 * and below the registry's high-water mark.
 */
static inline struct rq_qnode *rq_decode_tail(uint32_t tail)
{
	uint32_t slot = (tail >> RQ_TAIL_SLOT_OFFSET) - 1;
	uint32_t idx = (tail >> RQ_TAIL_IDX_OFFSET) & ((1u << RQ_TAIL_IDX_BITS) - 1);

	return &rq_thread_at(slot)->nodes[idx];
}

static inline uint32_t rq_word_load_relaxed(_Atomic uint32_t *word)
{
	return atomic_load_explicit(word, memory_order_relaxed);
}

/* The fast-path transition 0 -> locked by @owner; also every trylock. */
static inline int rq_try_0_to_locked(_Atomic uint32_t *word, uint32_t *seen, uint32_t owner)
{
	*seen = 0;
	/* acquire: pairs with the release store in rq_store_unlocked() */
	return atomic_compare_exchange_strong_explicit(word, seen, owner, memory_order_acquire,
	                                               memory_order_relaxed);
}

static inline int rq_trylock_word(_Atomic uint32_t *word, uint32_t owner)
{
	uint32_t seen;

	if (rq_word_load_relaxed(word) != 0)
		return 0;
	return rq_try_0_to_locked(word, &seen, owner);
}

/*
 * Take the lock if neither an owner nor a claimant (pending bit) is there,
 * even while a queue exists: *,0,0 -> *,0,1. Queue heads take the pending
 * bit as soon as they run (rq_head_try_pending), so a free lock can only be
 * "stolen" while the head is not running, i.e. preempted or not yet told it
 * heads the queue. That is what keeps a queued lock from collapsing when
 * there are more threads than cores; the kernel's paravirt qspinlock does
 * the same for preempted vCPUs. rq_try_steal_seen() tries it on the word
 * as last seen (@val, e.g. by a failed CAS), rq_try_steal() on a fresh load.
 */
static inline int rq_try_steal_seen(_Atomic uint32_t *word, uint32_t val, uint32_t owner)
{
	if (val & RQ_LOCKED_PENDING_MASK)
		return 0;
	/* acquire: pairs with the release in rq_store_unlocked() */
	return atomic_compare_exchange_strong_explicit(word, &val, val | owner,
	                                               memory_order_acquire, memory_order_relaxed);
}

static inline int rq_try_steal(_Atomic uint32_t *word, uint32_t owner)
{
	return rq_try_steal_seen(word, rq_word_load_relaxed(word), owner);
}

static inline void rq_store_unlocked(_Atomic uint32_t *word)
{
	/* Byte view of the word's lowest byte (the locked byte). */
	_Atomic uint8_t *locked = (_Atomic uint8_t *)(void *)word;

	/* release: pairs with the acquire CAS/loads of the next owner */
	atomic_store_explicit(locked, 0, memory_order_release);
}

/* Set pending; returns the old word. 0,0,* -> 0,1,* */
static inline uint32_t rq_fetch_set_pending(_Atomic uint32_t *word)
{
	/* acquire: if the owner already left, we own the lock after the
	 * take-over; pairs with the unlock's release */
	return atomic_fetch_or_explicit(word, RQ_PENDING_VAL, memory_order_acquire);
}

/* *,1,* -> *,0,*: only our bit. The pending byte also carries the
 * process-shared mark, which a reset with res_spin_lock_init_shared() may
 * have put there under us (a waiter that then times out must leave the
 * lock shared). */
static inline void rq_clear_pending(_Atomic uint32_t *word)
{
	atomic_fetch_and_explicit(word, ~RQ_PENDING_VAL, memory_order_relaxed);
}

/*
 * *,1,0 -> *,0,1: the pending waiter takes the lock it already waited for.
 * QL only (qlock.c): a store to the word's low half (locked and pending
 * bytes), as the kernel's clear_pending_set_locked(): while we hold the
 * pending bit no one else writes either byte, and a tail CAS that raced
 * with the store fails and retries on the new value. A store, not a
 * read-modify-write: it is on the hand-over, right after the owner's
 * unlock, where a locked instruction would keep the next acquisition
 * waiting for our store buffer to drain. The resilient lock cannot trust
 * the pending bit that far and takes over with rq_take_unlocked().
 */
static inline void rq_clear_pending_set_locked(_Atomic uint32_t *word)
{
	_Atomic uint16_t *locked_pending = (_Atomic uint16_t *)(void *)word;

	atomic_store_explicit(locked_pending, (uint16_t)RQ_LOCKED_VAL, memory_order_relaxed);
}

/*
 * *,*,0 -> *,0,1 by CAS: a waiter that holds the pending bit and saw the
 * owner leave (@val, its last view of the word) takes the lock. Returns 0
 * if the locked byte is set. Under the protocol that never happens (while
 * the pending bit is held, steals and the fast path need both bytes clear),
 * but res_spin_lock_init() may reset the word under a waiter (an owner
 * that died holding the lock, rqspinlock.h "Abandoned calls"): the bit it
 * holds is then gone, another thread may take the lock, and a blind store
 * would make two owners. The CAS only ever takes an unlocked word, and
 * keeps a process-shared mark that a reset with res_spin_lock_init_shared()
 * put there (the taker then owns the shared lock, as shared_try_word()'s
 * CAS would make it, with the anonymous owner that lock always has).
 */
static inline int rq_take_unlocked(_Atomic uint32_t *word, uint32_t val, uint32_t owner)
{
	while (!(val & RQ_LOCKED_MASK)) {
		uint32_t by = (val & RQ_SHARED_MARK) ? RQ_OWNER_ANON : owner;

		/* acquire: pairs with the release in rq_store_unlocked() of
		 * the owner whose unlock we take the lock after */
		if (atomic_compare_exchange_weak_explicit(
		        word, &val, (val & (RQ_TAIL_MASK | RQ_SHARED_MARK)) | by,
		        memory_order_acquire, memory_order_relaxed))
			return 1;
	}
	return 0;
}

/*
 * Swap the tail field, keeping locked and pending. Returns the old word.
 * acq_rel: release publishes our freshly initialised node to the successor
 * that reads this tail; acquire makes the predecessor's node initialisation
 * (published by its own xchg) visible before we link into it.
 */
static inline uint32_t rq_xchg_tail(_Atomic uint32_t *word, uint32_t tail)
{
	uint32_t old = rq_word_load_relaxed(word);

	/* acq_rel: pairs with the predecessor's and the successor's swap (above) */
	while (!atomic_compare_exchange_weak_explicit(word, &old, (old & ~RQ_TAIL_MASK) | tail,
	                                              memory_order_acq_rel, memory_order_relaxed))
		;
	return old;
}

/*
 * Clear the tail if it is still @tail, whatever locked/pending do meanwhile.
 * Returns 1 when cleared (no successor will ever link), 0 when another
 * thread queued behind us (it will link into our node soon).
 */
static inline int rq_try_clear_tail(_Atomic uint32_t *word, uint32_t tail)
{
	uint32_t old = rq_word_load_relaxed(word);

	while ((old & RQ_TAIL_MASK) == tail) {
		/* relaxed: our node is no longer published once this succeeds */
		if (atomic_compare_exchange_weak_explicit(word, &old, old & ~RQ_TAIL_MASK,
		                                          memory_order_relaxed,
		                                          memory_order_relaxed))
			return 1;
	}
	return 0;
}

/* Take one of this thread's queue nodes; returns its nesting index. */
static inline uint32_t rq_node_get(struct rq_thread *t)
{
	uint32_t idx = atomic_load_explicit(&t->node_count, memory_order_relaxed);

	atomic_store_explicit(&t->node_count, idx + 1, memory_order_relaxed);
	/* A signal handler arriving from here on sees the count raised and
	 * takes the next node, so it cannot overwrite the one we initialise. */
	atomic_signal_fence(memory_order_seq_cst);
	return idx;
}

static inline void rq_node_put(struct rq_thread *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&t->node_count,
	                      atomic_load_explicit(&t->node_count, memory_order_relaxed) - 1,
	                      memory_order_relaxed);
}

/*
 * A node's next field holds, once a successor linked, the successor's state
 * value (generation | RQ_NODE_WAIT) << 32 | its tail code. Tail codes have
 * their low 16 bits clear, so a value with a nonzero low half below 1 << 16
 * is a mark instead: the verdict (RQ_NODE_HEAD or RQ_NODE_TIMEOUT) that a
 * node which left without waiting for its successor to link leaves for it.
 */
static inline int rq_link_is_mark(uint64_t link)
{
	return (uint32_t)link != 0 && (uint32_t)link < (1u << RQ_TAIL_IDX_OFFSET);
}

/*
 * Start a new use (generation) of @node, queued on @lock. Relaxed: the node
 * is published by our tail exchange (rq_xchg_tail(), release). A signal for
 * an earlier generation that lands after this store fails its compare
 * (rq_signal_node()); one that lands before is overwritten here.
 */
static inline void rq_node_init(struct rq_qnode *node, uintptr_t lock)
{
	uint32_t st = atomic_load_explicit(&node->locked, memory_order_relaxed);

	atomic_store_explicit(&node->lock, lock, memory_order_relaxed);
	atomic_store_explicit(&node->next, 0, memory_order_relaxed);
	atomic_store_explicit(&node->locked, (st & ~RQ_NODE_STATE_MASK) + RQ_NODE_GEN_ONE,
	                      memory_order_relaxed);
}

/* This use of @node is over; nobody links behind it any more. */
static inline void rq_node_release(struct rq_qnode *node)
{
	/* relaxed: read only by rq_node_plausible() of successors that read
	 * our tail, and they all linked already (see rq_pass_on()) */
	atomic_store_explicit(&node->lock, 0, memory_order_relaxed);
}

/*
 * Link @node (tail code @tail) behind @prev, whose tail we just replaced.
 * Returns what was there: 0 normally, a mark when @prev already left.
 * acq_rel: release makes our node's initialisation visible to prev's thread
 * before it signals us (pairs with the acquire in rq_pass_on()); acquire
 * pairs with the release of a mark (rq_pass_on()), which we act on as on a
 * signal.
 */
static inline uint64_t rq_link_behind(struct rq_qnode *prev, struct rq_qnode *node, uint32_t tail)
{
	uint64_t link =
	    (uint64_t)atomic_load_explicit(&node->locked, memory_order_relaxed) << 32 | tail;

	/* acq_rel: pairs with rq_pass_on() (above) */
	return atomic_exchange_explicit(&prev->next, link, memory_order_acq_rel);
}

static inline uint64_t rq_peek_next(struct rq_qnode *node)
{
	/* acquire: pairs with rq_link_behind(): the successor's node
	 * initialisation is visible before we signal it */
	return atomic_load_explicit(&node->next, memory_order_acquire);
}

/*
 * Tell the successor named by @link what to do: become head, or leave on
 * timeout. Only the generation it linked with is signalled: a successor that
 * left by itself (RQ_NODE_GONE), or whose node was reused since, is skipped.
 */
static inline void rq_signal_node(uint64_t link, uint32_t how)
{
	struct rq_qnode *next = rq_decode_tail((uint32_t)link);
	uint32_t expect = (uint32_t)(link >> 32);

	/* release: pairs with the acquire load in the successor's wait
	 * (rq_node_state()) or its failed abandon (rq_node_abandon()) */
	atomic_compare_exchange_strong_explicit(&next->locked, &expect, expect | how,
	                                        memory_order_release, memory_order_relaxed);
}

static inline uint32_t rq_node_state(struct rq_qnode *node)
{
	/* acquire: pairs with rq_signal_node() */
	return atomic_load_explicit(&node->locked, memory_order_acquire);
}

/*
 * A waiter leaves the queue by itself: WAIT -> GONE for its generation
 * @mine. Returns RQ_NODE_GONE when it did, else the state a predecessor
 * signalled first (to be acted on as usual).
 */
static inline uint32_t rq_node_abandon(struct rq_qnode *node, uint32_t mine)
{
	/* acquire (on failure): pairs with rq_signal_node()'s release */
	if (atomic_compare_exchange_strong_explicit(&node->locked, &mine, mine | RQ_NODE_GONE,
	                                            memory_order_acquire, memory_order_acquire))
		return RQ_NODE_GONE;
	return mine & RQ_NODE_STATE_MASK;
}

/* The owner and the pending waiter are gone when these bits are clear.
 * QL's waits (qlock.c): its claims are relaxed (rq_head_claim()) or plain
 * stores (rq_clear_pending_set_locked()), so the load orders them. */
static inline uint32_t rq_load_word_acquire(_Atomic uint32_t *word)
{
	/* acquire: pairs with the release in rq_store_unlocked(), so the
	 * previous critical section happens-before ours */
	return atomic_load_explicit(word, memory_order_acquire);
}

/*
 * Spin helper for unbounded waits (QL, and the short waits for a successor
 * to link): pause, and yield the CPU every so often so that a preempted
 * thread we wait for can run when there are more threads than cores.
 */
#define RQ_SPINS_PER_YIELD 64u
static inline void rq_spin_or_yield(uint32_t *spins)
{
	if ((++*spins % RQ_SPINS_PER_YIELD) == 0)
		rq_yield();
	else
		rq_cpu_relax();
}

/* QL only: wait, unbounded, until a successor has linked behind @node. */
static inline uint64_t rq_wait_next(struct rq_qnode *node)
{
	uint64_t next;
	uint32_t spins = 0;

	while (!(next = rq_peek_next(node)))
		rq_spin_or_yield(&spins);
	return next;
}

/*
 * Resilient lock: leave @node, telling the successor @how to go on, without
 * waiting for one to link (it may never run again). If none has linked yet,
 * a mark with the verdict is left in next, and the successor acts on it as
 * on a signal when it links (rq_enqueue()). Until that happens the node must
 * not be reused: its thread skips marked nodes (pick_node() in slowpath.c).
 * Returns 1 when the node is done with, 0 when a mark waits for a successor.
 */
static inline int rq_pass_on(struct rq_qnode *node, uint32_t how)
{
	uint64_t link = rq_peek_next(node);

	/* A CAS, not an exchange: a successor that linked meanwhile must find
	 * its link, not a mark, left in next (the node is reused only without
	 * a mark). Release on success pairs with rq_link_behind()'s acquire of
	 * the mark; acquire on failure as in rq_peek_next(). */
	if (!link && atomic_compare_exchange_strong_explicit(
	                 &node->next, &link, how, memory_order_acq_rel, memory_order_acquire))
		return 0;
	if (!rq_link_is_mark(link))
		rq_signal_node(link, how);
	return 1;
}

/* Wait, a bounded number of spins, for an in-progress pending->locked
 * hand-over (0,1,0 -> 0,0,1) to finish. Returns the last word seen. */
static inline uint32_t rq_wait_handover(_Atomic uint32_t *word, uint32_t val)
{
	for (uint32_t n = RQ_PENDING_LOOPS; val == RQ_PENDING_VAL && n; n--) {
		rq_cpu_relax();
		val = rq_word_load_relaxed(word);
	}
	return val;
}

/*
 * Try to become the pending waiter (0,0,* -> 0,1,*). Returns 1 when we are
 * it; *val then holds the word as our bit left it (locked or not), as
 * rq_head_try_pending() leaves it. Returns 0 when there is contention: the
 * caller queues.
 */
static inline int rq_try_set_pending(_Atomic uint32_t *word, uint32_t *val)
{
	if (*val & ~RQ_LOCKED_MASK)
		return 0;
	*val = rq_fetch_set_pending(word);
	if (!(*val & ~RQ_LOCKED_MASK)) {
		*val |= RQ_PENDING_VAL;
		return 1;
	}
	/* Someone queued or is pending, or a reset marked the word shared:
	 * undo our bit if we set it. */
	if (!(*val & RQ_PENDING_VAL))
		rq_clear_pending(word);
	return 0;
}

/*
 * Could the node named by @tail really be queued on our @lock? A tail
 * written by this library names a node of a live thread whose lock field
 * names this very lock: set before the tail was published (our acq_rel
 * rq_xchg_tail() read that tail, so the field is visible), cleared only once
 * no successor can still link. Anything else came from a garbage or
 * corrupted lock word (or another process): linking behind it would wait
 * for a signal nobody sends, or corrupt another lock's queue.
 */
static inline int rq_node_plausible(uint32_t tail, const struct rq_qnode *node, uintptr_t lock)
{
	uint32_t slot = (tail >> RQ_TAIL_SLOT_OFFSET) - 1;
	uint32_t idx = (tail >> RQ_TAIL_IDX_OFFSET) & ((1u << RQ_TAIL_IDX_BITS) - 1);
	struct rq_thread *owner;

	if (slot >= rq_slot_bound())
		return 0;
	owner = rq_thread_at(slot);
	return &owner->nodes[idx] != node && rq_thread_in_use(owner) &&
	       atomic_load_explicit(&owner->nodes[idx].lock, memory_order_relaxed) == lock;
}

/*
 * Publish our tail and link behind the previous one, if any. Returns
 * RQ_NODE_WAIT when we must wait for the predecessor's signal, RQ_NODE_HEAD
 * when we head the queue, RQ_NODE_TIMEOUT when the predecessor already left
 * on a timeout (its mark, rq_pass_on()).
 */
static inline uint32_t rq_enqueue(_Atomic uint32_t *word, struct rq_qnode *node, uint32_t tail,
                                  uintptr_t lock)
{
	uint32_t old = rq_xchg_tail(word, tail) & RQ_TAIL_MASK;
	uint64_t was;

	if (!old)
		return RQ_NODE_HEAD;
	if (unlikely(!rq_node_plausible(old, node, lock)))
		return RQ_NODE_HEAD; /* garbage tail: head a fresh queue */
	was = rq_link_behind(rq_decode_tail(old), node, tail);
	if (likely(!was))
		return RQ_NODE_WAIT;
	/* The predecessor left (a mark), or another node linked there first
	 * (a corrupted word made two tails name it): nobody will signal us. */
	return rq_link_is_mark(was) ? (uint32_t)was : RQ_NODE_HEAD;
}

/*
 * The queue head claims the pending bit (*,0,* -> *,1,*), which stops both
 * new pending waiters and steals: from now on only the head can take the
 * lock. Returns 1 on success; *val is refreshed either way.
 */
static inline int rq_head_try_pending(_Atomic uint32_t *word, uint32_t *val)
{
	if (*val & RQ_PENDING_MASK)
		return 0;
	/* acquire: if the owner is already gone this value is the one we take
	 * the lock on; pairs with the release in rq_store_unlocked() */
	if (!atomic_compare_exchange_strong_explicit(word, val, *val | RQ_PENDING_VAL,
	                                             memory_order_acquire, memory_order_relaxed))
		return 0;
	*val |= RQ_PENDING_VAL;
	return 1;
}

/*
 * The head holds the pending bit and saw the owner leave (@val): take the
 * lock. Alone in the queue: n,1,0 -> 0,0,1, and returns 1. Otherwise
 * *,1,0 -> *,0,1, returns 0, and the caller makes the successor the new head.
 * QL's version, with the kernel's store; rq_head_take() is the resilient one.
 */
static inline int rq_head_claim(_Atomic uint32_t *word, uint32_t tail, uint32_t val)
{
	/* relaxed: our acquire load of @val already ordered us after the
	 * previous owner, and only the pending-bit holder may set locked */
	if ((val & RQ_TAIL_MASK) == tail &&
	    atomic_compare_exchange_strong_explicit(word, &val, RQ_LOCKED_VAL, memory_order_relaxed,
	                                            memory_order_relaxed))
		return 1;
	rq_clear_pending_set_locked(word);
	return 0;
}

/*
 * As rq_head_claim(), by CAS only (rq_take_unlocked()), taking the lock
 * for @owner (rq_held::owner): returns 1 alone in the queue, 0 with
 * successors, -1 if an owner came first (the word was reset under us; the
 * pending bit is no longer ours).
 */
static inline int rq_head_take(_Atomic uint32_t *word, uint32_t tail, uint32_t val, uint32_t owner)
{
	/* acquire: pairs with the release in rq_store_unlocked(). Equal to
	 * @val is not the store @val was read from once a reset went by: a
	 * stale holder's take-over or drop clears the pending bit we took,
	 * the tail stays ours, and a steal and its unlock between our load
	 * and this CAS bring the word back to @val (test
	 * core_window_head_take_aba). Free on x86, where every CAS is a
	 * full barrier. */
	if ((val & RQ_TAIL_MASK) == tail &&
	    atomic_compare_exchange_strong_explicit(word, &val, owner, memory_order_acquire,
	                                            memory_order_relaxed))
		return 1;
	return rq_take_unlocked(word, val, owner) ? 0 : -1;
}

/*
 * Resilient lock: leave the queue without the lock, telling the successor
 * @how to go on: RQ_NODE_TIMEOUT (tear down in FIFO order) or RQ_NODE_HEAD
 * (hand the queue over). With no successor, reset the tail instead. Never
 * waits. Returns as rq_pass_on().
 */
static inline int rq_leave_queue(_Atomic uint32_t *word, struct rq_qnode *node, uint32_t tail,
                                 uint32_t how)
{
	if (rq_try_clear_tail(word, tail))
		return 1;
	return rq_pass_on(node, how);
}

/* QL only: spin on our node, unbounded, until told to head the queue. */
static inline void rq_wait_node(struct rq_qnode *node)
{
	uint32_t spins = 0;

	while (!(rq_node_state(node) & RQ_NODE_STATE_MASK))
		rq_spin_or_yield(&spins);
}

#endif /* RQ_LOCKWORD_H */
