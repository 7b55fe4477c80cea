/* SPDX-License-Identifier: MIT */
/*
 * Experiments on the unlock, not locks to use: the uncontended pair is a
 * `lock cmpxchg` on the 32-bit word and the unlock's store, and on some
 * cores a store narrower than the next pair's locked read-modify-write of
 * the same word (the qspinlock layout's byte unlock) is not forwarded to
 * it, which costs more than the rest of the pair (docs/BENCHMARKS.md,
 * "Core speed against glibc"). These types measure that on the core at
 * hand, uncontended (--uncontended, --tight) and in the hand-over
 * (--hammer):
 *
 *   word-byte            a test-and-CAS lock on one word: CAS 0 -> owner,
 *                        unlocked by a release store of the low byte (the
 *                        qspinlock layout's unlock, with nothing else)
 *   word-store           the same, unlocked by a 32-bit release store
 *                        (pthread_spin_unlock's shape); right for this
 *                        lock, whose other bytes stay 0, not for the
 *                        queued word, whose waiters write the upper bytes
 *   word-cas             the same, unlocked by CAS owner -> 0, falling
 *                        back to the byte store when it fails (the
 *                        correct word-wide unlock for the queued word)
 *   rqspinlock-casunlock rqspinlock's inline fast path (<rqspinlock/inline.h>),
 *                        its unlock releasing by CAS (word = our owner id
 *                        alone -> 0), else by the byte store: the library's
 *                        lock with the word-wide unlock, slow paths and all
 *
 * Named only: "all" leaves them out.
 */
#define RQSPINLOCK_INLINE

#include "rqtorture.h"

/* What the word-* locks write into the locked byte (an owner id). */
#define WORD_OWNER 2u

static inline int word_lock(_Atomic uint32_t *w)
{
	uint32_t seen = 0;

	/* acquire: pairs with the release of each word-* unlock */
	while (!atomic_compare_exchange_strong_explicit(w, &seen, WORD_OWNER, memory_order_acquire,
	                                                memory_order_relaxed)) {
		while (atomic_load_explicit(w, memory_order_relaxed) != 0)
			cpu_relax();
		seen = 0;
	}
	return 0;
}

/* The low byte of @w, the locked byte of the qspinlock layout. */
static _Atomic uint8_t *word_low_byte(_Atomic uint32_t *w)
{
	return (_Atomic uint8_t *)(void *)w;
}

static inline void word_byte_unlock(_Atomic uint32_t *w)
{
	/* release: pairs with the acquire CAS in word_lock() */
	atomic_store_explicit(word_low_byte(w), 0, memory_order_release);
}

static inline void word_store_unlock(_Atomic uint32_t *w)
{
	/* release: pairs with the acquire CAS in word_lock() */
	atomic_store_explicit(w, 0, memory_order_release);
}

/* Release @w, whose locked byte is @owner: by CAS if nothing else is set,
 * else by the byte store. */
static inline void word_cas_release(_Atomic uint32_t *w, uint32_t owner)
{
	/* release: pairs with the next owner's acquire, as the byte store */
	if (!atomic_compare_exchange_strong_explicit(w, &owner, 0, memory_order_release,
	                                             memory_order_relaxed))
		/* release: likewise */
		atomic_store_explicit(word_low_byte(w), 0, memory_order_release);
}

static inline void word_cas_unlock(_Atomic uint32_t *w)
{
	word_cas_release(w, WORD_OWNER);
}

/* The lk_ops wrappers (lkop_*: one call each, as every type pays). */
static LKOP int lkop_word_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	return word_lock(&l->word);
}

#define WORD_UNLOCK_OP(how)                                                                        \
	static LKOP void lkop_word_##how##_unlock(union lk_lock *l, union lk_node *n)              \
	{                                                                                          \
		(void)n;                                                                           \
		word_##how##_unlock(&l->word);                                                     \
	}
WORD_UNLOCK_OP(byte)
WORD_UNLOCK_OP(store)
WORD_UNLOCK_OP(cas)

static void word_init(union lk_lock *l)
{
	atomic_init(&l->word, 0);
}

/* res_spin_inline_unlock() with the word-wide release: the same top-entry
 * check, the same order (release, signal fence, count). Every acquisition
 * writes the thread's owner id (rqspinlock_held_abi::owner) into the
 * locked byte, so the CAS succeeds whenever no waiter has set a bit. */
static inline void rq_cas_unlock(rqspinlock_t *lock)
{
	_Atomic uintptr_t *table = RQSPINLOCK_INLINE_TABLE();
	struct rqspinlock_held_abi *t = res_spin_inline_head(table);
	uint32_t cnt = atomic_load_explicit(&t->cnt, memory_order_relaxed);

	if (RQSPINLOCK_LOAD_OWN(res_spin_inline_entry(table, cnt)) != (uintptr_t)lock) {
		res_spin_unlock_slow_abi(lock);
		return;
	}
	word_cas_release(&lock->val, t->owner);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&t->cnt, cnt - 1, memory_order_relaxed);
}

static LKOP int lkop_rqcas_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	return res_spin_lock(&l->rq);
}

static LKOP void lkop_rqcas_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	rq_cas_unlock(&l->rq);
}

static const struct lk_ops unlock_ops[] = {
    {"word-byte", "CAS word lock, byte-store unlock (unlock experiment); not in 'all'",
     LK_NAMED_ONLY | LK_UNLOCK_EXP, true, NULL, NULL, word_init, NULL, lkop_word_lock,
     lkop_word_byte_unlock},
    {"word-store", "CAS word lock, 32-bit-store unlock (unlock experiment); not in 'all'",
     LK_NAMED_ONLY | LK_UNLOCK_EXP, true, NULL, NULL, word_init, NULL, lkop_word_lock,
     lkop_word_store_unlock},
    {"word-cas", "CAS word lock, CAS-else-byte unlock (unlock experiment); not in 'all'",
     LK_NAMED_ONLY | LK_UNLOCK_EXP, true, NULL, NULL, word_init, NULL, lkop_word_lock,
     lkop_word_cas_unlock},
    {"rqspinlock-casunlock",
     "rqspinlock inline, unlock by word CAS else byte store (experiment); not in 'all'",
     LK_RESILIENT | LK_NAMED_ONLY | LK_UNLOCK_EXP, true, NULL, rq_prepare_queued, rq_init, NULL,
     lkop_rqcas_lock, lkop_rqcas_unlock},
};

const struct lk_ops *lk_unlock_ops(size_t *n)
{
	*n = sizeof(unlock_ops) / sizeof(unlock_ops[0]);
	return unlock_ops;
}

/* Tight loops (tight.c) of the experiments: the pair inline in the loop. */
LK_TIGHT_LOOP(tight_word_byte, word_lock(&l->word), word_byte_unlock(&l->word))
LK_TIGHT_LOOP(tight_word_store, word_lock(&l->word), word_store_unlock(&l->word))
LK_TIGHT_LOOP(tight_word_cas, word_lock(&l->word), word_cas_unlock(&l->word))
LK_TIGHT_LOOP(tight_rqcas, res_spin_lock(&l->rq), rq_cas_unlock(&l->rq))

lk_tight_fn lk_unlock_tight(const char *name)
{
	static const struct lk_tight_entry loops[] = {{"word-byte", tight_word_byte},
	                                              {"word-store", tight_word_store},
	                                              {"word-cas", tight_word_cas},
	                                              {"rqspinlock-casunlock", tight_rqcas}};

	return lk_tight_find(loops, sizeof(loops) / sizeof(loops[0]), name);
}
