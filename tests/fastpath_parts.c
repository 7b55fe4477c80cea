/* SPDX-License-Identifier: MIT */
/*
 * Where the uncontended pair's time goes: the inline fast path
 * (<rqspinlock/inline.h>) rebuilt with parts of its held-table work left
 * out, timed against QL in one run (interleaved, repeated, medians). An
 * experiment, not a lock: a variant without the table is not resilient.
 * docs/BENCHMARKS.md, "Fast path", has the figures and what they say.
 *
 * Variants (the flags below say what each keeps):
 *   full        the library's fast path as shipped: count, untagged entry,
 *               CAS; top check, unlock store, count (the entry stays)
 *   cleared     full, and the unlock clears the entry after its store
 *               (inline ABI 4 until the entry was left in place)
 *   tagged      the protocol with tags (inline ABI 3, and what threads
 *               without an owner id still run out of line): the entry
 *               ACQUIRING before the CAS and marked after it, RELEASING
 *               before the unlock store, cleared after it
 *   no-null     full without the NULL test
 *   count-only  the count's push and pop, no entry
 *   tls-only    the TLS load and the NULL test, no table
 *   lazy-count  the count as a high-water mark: the lock reuses an empty top
 *               slot and the unlock leaves the count alone (no count store
 *               on either side)
 *
 * As a test (CTest core_fastpath_parts, few pairs): every variant runs its
 * pairs on the fast path (no slow-path counter moves) and leaves the table
 * as it found it.
 *
 * Usage: fastpath_parts [PAIRS [REPS]] (default 20000 pairs, 3 reps).
 */
#define RQSPINLOCK_INLINE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rqspinlock.h>
#include <rqspinlock/qspinlock.h>

#include "fastpath_check.h"
#include "rqu_clock.h"
#include "rqu_stats.h"

enum {
	KEEP_NULL = 1,
	KEEP_TAGS = 2,  /* ACQUIRING before the CAS, the mark, RELEASING */
	KEEP_ENTRY = 4, /* the entry and the top check */
	KEEP_COUNT = 8,
	KEEP_CLEAR = 16, /* the entry's clear after the unlock store */
	KEEP_ALL = KEEP_NULL | KEEP_ENTRY | KEEP_COUNT, /* as shipped */
};

typedef struct rqspinlock_held_abi held_t;

#define LOAD(p)     atomic_load_explicit((p), memory_order_relaxed)
#define STORE(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)

static inline __attribute__((always_inline)) int part_lock(rqspinlock_t *lock, unsigned keep)
{
	_Atomic uintptr_t *table = RQSPINLOCK_INLINE_TABLE();
	held_t *t = res_spin_inline_head(table);
	uint32_t n = 0, val = 0;

	if ((keep & KEEP_NULL) && __builtin_expect(!lock, 0))
		return -EINVAL;
	if (keep & KEEP_COUNT) {
		n = LOAD(&t->cnt);
		if (__builtin_expect(n >= RQSPINLOCK_NR_HELD, 0))
			return res_spin_lock_slow_abi(lock, UINT32_MAX, 0);
		/* release: as in inline.h */
		atomic_store_explicit(&t->cnt, n + 1, memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
	}
	if (keep & KEEP_ENTRY)
		STORE(res_spin_inline_entry(table, n + 1),
		      (uintptr_t)lock + (keep & KEEP_TAGS ? 2 : 0));
	/* acquire: pairs with the unlock's release store */
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(&lock->val, &val, t->owner,
	                                                             memory_order_acquire,
	                                                             memory_order_relaxed),
	                     1)) {
		if ((keep & KEEP_ENTRY) && (keep & KEEP_TAGS))
			STORE(res_spin_inline_entry(table, n + 1), (uintptr_t)lock);
		return 0;
	}
	return res_spin_lock_slow_abi(lock, n, val);
}

static inline __attribute__((always_inline)) void part_unlock(rqspinlock_t *lock, unsigned keep)
{
	_Atomic uintptr_t *table = RQSPINLOCK_INLINE_TABLE();
	held_t *t = res_spin_inline_head(table);
	uint32_t top = 0;

	if (keep & KEEP_COUNT)
		top = LOAD(&t->cnt) - 1;
	/* With the entry, its check is the bound check too (the record has an
	 * empty slot either side of the table); without it, the count's own. */
	if (__builtin_expect(keep & KEEP_ENTRY
	                         ? LOAD(res_spin_inline_entry(table, top + 1)) != (uintptr_t)lock
	                         : (keep & KEEP_COUNT) && top >= RQSPINLOCK_NR_HELD,
	                     0)) {
		res_spin_unlock_slow_abi(lock);
		return;
	}
	if ((keep & KEEP_ENTRY) && (keep & KEEP_TAGS))
		STORE(res_spin_inline_entry(table, top + 1), (uintptr_t)lock + 1);
	/* release: pairs with the next owner's acquire */
	atomic_store_explicit((_Atomic uint8_t *)(void *)&lock->val, (uint8_t)0,
	                      memory_order_release);
	if (keep & KEEP_CLEAR)
		STORE(res_spin_inline_entry(table, top + 1), RQSPINLOCK_HELD_NONE);
	atomic_signal_fence(memory_order_seq_cst);
	if (keep & KEEP_COUNT)
		STORE(&t->cnt, top);
}

/* lazy-count: slot cnt - 1 is ours when it is empty; the count stays. */
static __attribute__((noinline)) int lazy_lock(rqspinlock_t *lock)
{
	held_t *t = res_spin_inline_self();
	uint32_t top, val = 0;

	if (__builtin_expect(!lock, 0))
		return -EINVAL;
	top = LOAD(&t->cnt) - 1;
	if (__builtin_expect(
	        top >= RQSPINLOCK_NR_HELD || LOAD(&t->locks[top]) != RQSPINLOCK_HELD_NONE, 0))
		return res_spin_lock_slow_abi(lock, UINT32_MAX, 0);
	STORE(&t->locks[top], (uintptr_t)lock);
	/* acquire: pairs with the unlock's release store */
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(&lock->val, &val, t->owner,
	                                                             memory_order_acquire,
	                                                             memory_order_relaxed),
	                     1))
		return 0;
	return res_spin_lock_slow_abi(lock, top, val);
}

static __attribute__((noinline)) void lazy_unlock(rqspinlock_t *lock)
{
	part_unlock(lock, (KEEP_ALL & ~KEEP_COUNT) | KEEP_CLEAR);
}

/* full: the shipped code itself. */
static __attribute__((noinline)) int full_lock(rqspinlock_t *l)
{
	return res_spin_inline_lock(l);
}

static __attribute__((noinline)) void full_unlock(rqspinlock_t *l)
{
	res_spin_inline_unlock(l);
}

#define VARIANT(name, keep)                                                                        \
	static __attribute__((noinline)) int name##_lock(rqspinlock_t *l)                          \
	{                                                                                          \
		return part_lock(l, keep);                                                         \
	}                                                                                          \
	static __attribute__((noinline)) void name##_unlock(rqspinlock_t *l)                       \
	{                                                                                          \
		part_unlock(l, keep);                                                              \
	}
VARIANT(cleared, KEEP_ALL | KEEP_CLEAR)
VARIANT(tagged, KEEP_ALL | KEEP_TAGS | KEEP_CLEAR)
VARIANT(nonull, KEEP_ALL & ~KEEP_NULL)
VARIANT(countonly, KEEP_NULL | KEEP_COUNT)
VARIANT(tlsonly, KEEP_NULL)

static __attribute__((noinline)) int ql_lock(rqspinlock_t *l)
{
	ql_spin_lock((ql_spinlock_t *)(void *)l);
	return 0;
}

static __attribute__((noinline)) void ql_unlock(rqspinlock_t *l)
{
	ql_spin_unlock((ql_spinlock_t *)(void *)l);
}

static const struct variant {
	const char *name;
	int (*lock)(rqspinlock_t *);
	void (*unlock)(rqspinlock_t *);
	uint32_t cnt; /* the table's count during the run */
} variants[] = {
    {"full", full_lock, full_unlock, 0},
    {"cleared", cleared_lock, cleared_unlock, 0},
    {"tagged", tagged_lock, tagged_unlock, 0},
    {"no-null", nonull_lock, nonull_unlock, 0},
    {"count-only", countonly_lock, countonly_unlock, 0},
    {"tls-only", tlsonly_lock, tlsonly_unlock, 0},
    {"lazy-count", lazy_lock, lazy_unlock, 1},
    {"ql", ql_lock, ql_unlock, 0},
};
#define NV (sizeof(variants) / sizeof(variants[0]))

static rqspinlock_t the_lock = RQSPINLOCK_INIT;
static ql_spinlock_t the_ql;
/* volatile: the variants get the lock as an unknown argument */
static rqspinlock_t *volatile lockp = &the_lock;
static rqspinlock_t *volatile qlp = (rqspinlock_t *)(void *)&the_ql;

/* ns per pair of @v, or a negative value when a pair failed. */
static double run_variant(const struct variant *v, long pairs)
{
	rqspinlock_t *l = v->lock == ql_lock ? qlp : lockp;
	held_t *t = res_spin_inline_self();
	double t0;

	/* slot 0 empty: lazy-count takes it only so, and full leaves its
	 * entry there */
	STORE(&t->locks[0], RQSPINLOCK_HELD_NONE);
	STORE(&t->cnt, v->cnt);
	t0 = (double)rqu_now_ns();
	for (long i = 0; i < pairs; i++) {
		if (v->lock(l) != 0)
			return -1;
		v->unlock(l);
	}
	t0 = ((double)rqu_now_ns() - t0) / (double)pairs;
	STORE(&t->cnt, 0);
	return t0;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	struct rqspinlock_stats before;
	static double ns[NV][101];

	if (pairs < 1 || reps < 1 || reps > 101) {
		fprintf(stderr, "usage: fastpath_parts [PAIRS [REPS (1..101)]]\n");
		return 2;
	}
	/* the first call registers the thread (slow entry): not timed */
	if (res_spin_lock(&the_lock) != 0)
		return 1;
	res_spin_unlock(&the_lock);
	res_spin_get_stats(&before);
	for (int r = 0; r < reps; r++)
		for (size_t v = 0; v < NV; v++)
			if ((ns[v][r] = run_variant(&variants[v], pairs)) < 0) {
				fprintf(stderr, "fastpath_parts: %s failed\n", variants[v].name);
				return 1;
			}
	if (!fast_path_only_since(&before, &the_lock)) {
		fprintf(stderr, "fastpath_parts: a pair left the fast path or the lock taken\n");
		return 1;
	}
	for (size_t v = 0; v < NV; v++)
		rqu_sort_doubles(ns[v], (size_t)reps);
	printf("ns per uncontended pair (median of %d interleaved runs of %ld pairs)\n", reps,
	       pairs);
	for (size_t v = 0; v < NV; v++)
		printf("%-11s %6.2f  vs ql %5.2f  vs full %+5.2f\n", variants[v].name,
		       ns[v][reps / 2], ns[v][reps / 2] / ns[NV - 1][reps / 2],
		       ns[v][reps / 2] - ns[0][reps / 2]);
	return 0;
}
