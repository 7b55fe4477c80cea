/* SPDX-License-Identifier: MIT */
/*
 * Experiments, not locks: QL with a held-lock table's work around it, or
 * with its owner named in the lock word instead, to measure what the table
 * alone costs where rqspinlock loses to QL (the two-thread hammer). All
 * keep QL's slow path, with QL's CAS and unlock store inline as in
 * rqspinlock's fast path; none detects anything.
 *
 *   ql-notable      no table: the control for the inline CAS and store.
 *   ql-ktable       the kernel's fast-path table work (Linux
 *                   include/asm-generic/rqspinlock.h): count, entry, lock;
 *                   clear, unlock, count. Four stores, no tags, and no
 *                   check of the unlocked lock against the entry. (The
 *                   count's store is a release, as in inline.h; the
 *                   kernel's per-CPU increment is not: the same on x86.)
 *   ql-rqtable      rqspinlock's (<rqspinlock/inline.h>, less its NULL
 *                   test): count, entry, lock; the check of the top entry
 *                   against the lock (no bound check: the record has an
 *                   empty slot either side of the table), unlock, count.
 *                   Three table stores: the entry stays above the count
 *                   (the lock word's owner byte says it claims nothing).
 *   ql-owner        no table: the locked byte holds the owner's id
 *                   instead of 1 (after a contended acquisition, 1 until
 *                   QL's slow path returns).
 *   ql-owner-check  the same, and the unlock checks the id first.
 *
 * The table is the library's own per-thread record, reached as the inline
 * fast path reaches it (rqspinlock_table_abi), so the TLS and layout costs are
 * those of rqspinlock. A thread registers (res_spin_thread_slot()) the
 * first time its count fails the bound check; past RQSPINLOCK_NR_HELD locks
 * (rqtorture nests at most 8) the table is left alone, and so is the
 * read-only record that a thread without an owner id keeps (beyond 254
 * threads). Like the kernel's, these tables expect unlocks in the reverse
 * order of the locks, which is how rqtorture's nesting releases them:
 * another order would leave stale entries that the library reads if the
 * same thread later calls it. Named only: "all" leaves them out.
 * docs/BENCHMARKS.md, "The table's share", has what they showed.
 */
#define RQSPINLOCK_INLINE

#include <stdio.h>
#include <stdlib.h>

#include "rqtorture.h"

typedef struct rqspinlock_held_abi held_t;

_Static_assert(RQT_MAX_NEST < RQSPINLOCK_NR_HELD,
               "the experiments never hold more locks than the table tracks");

#define TABLE_LOAD(p)     atomic_load_explicit((p), memory_order_relaxed)
#define TABLE_STORE(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)

/* Count @l in the table @table (RQSPINLOCK_INLINE_TABLE(), read before the
 * signal fence, which would make the compiler read the TLS pointer again)
 * at index @n and write its entry (the count first, as the library and the
 * kernel do). */
static inline void table_put(_Atomic uintptr_t *table, uint32_t n, uintptr_t l)
{
	/* release: as in inline.h (what it pairs with is not measured here) */
	atomic_store_explicit(&res_spin_inline_head(table)->cnt, n + 1, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	TABLE_STORE(res_spin_inline_entry(table, n + 1), l);
}

/* Which table work an experiment does around QL. */
enum table_kind { TABLE_NONE, TABLE_KERNEL, TABLE_RQ };

/* QL's lock taken after a failed inline CAS: ql_spin_lock() tries its own
 * CAS once more before its slow path, the one cost the experiments add to
 * QL's own (ql-notable measures it). */
static __attribute__((noinline, cold)) int table_ql_contended(ql_spinlock_t *l)
{
	ql_spin_lock(l);
	return 0;
}

/* table_lock() past the bound check: register the thread (its record is
 * the read-only sentinel until then, and stays so without an owner id), or
 * leave an untracked lock out of the table. */
static __attribute__((noinline, cold)) int table_lock_cold(ql_spinlock_t *l)
{
	_Atomic uintptr_t *table;
	uint32_t n;

	(void)res_spin_thread_slot();
	table = RQSPINLOCK_INLINE_TABLE();
	n = TABLE_LOAD(&res_spin_inline_head(table)->cnt);
	if (n < RQSPINLOCK_NR_HELD)
		table_put(table, n, (uintptr_t)l);
	return table_ql_contended(l);
}

/* The lock: the table's push and QL's CAS inline, as in rqspinlock's fast
 * path. Everything else is a tail call. */
static inline __attribute__((always_inline)) int table_lock(ql_spinlock_t *l, enum table_kind kind)
{
	_Atomic uintptr_t *table = RQSPINLOCK_INLINE_TABLE();
	uint32_t n = UINT32_MAX, val = 0;

	if (kind != TABLE_NONE) {
		n = TABLE_LOAD(&res_spin_inline_head(table)->cnt);
		if (__builtin_expect(n >= RQSPINLOCK_NR_HELD, 0))
			return table_lock_cold(l);
		table_put(table, n, (uintptr_t)l);
	}
	/* acquire: pairs with the unlock's release store, as in QL */
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(
	                         &l->val, &val, 1u, memory_order_acquire, memory_order_relaxed),
	                     1))
		return 0;
	return table_ql_contended(l);
}

/* QL's unlock: a release store of the locked byte, inline. */
static inline void table_ql_unlock(ql_spinlock_t *l)
{
	/* release: pairs with the next owner's acquire CAS */
	atomic_store_explicit((_Atomic uint8_t *)(void *)&l->val, (uint8_t)0, memory_order_release);
}

/* The unlock: for rqspinlock's table its top check, then the count after
 * the unlock store (the entry stays); for the kernel's a bound check, the
 * clear before the store and the count after it. */
static inline __attribute__((always_inline)) void table_unlock(ql_spinlock_t *l,
                                                               enum table_kind kind)
{
	_Atomic uintptr_t *table;
	held_t *t;
	uint32_t top;

	if (kind == TABLE_NONE) {
		table_ql_unlock(l);
		return;
	}
	table = RQSPINLOCK_INLINE_TABLE();
	t = res_spin_inline_head(table);
	top = TABLE_LOAD(&t->cnt) - 1;
	/* slot top + 1 is locks[top] */
	if (__builtin_expect(kind == TABLE_RQ
	                         ? TABLE_LOAD(res_spin_inline_entry(table, top + 1)) != (uintptr_t)l
	                         : top >= RQSPINLOCK_NR_HELD,
	                     0)) {
		/* untracked (the experiments unlock in order) */
		table_ql_unlock(l);
		return;
	}
	if (kind == TABLE_KERNEL)
		TABLE_STORE(res_spin_inline_entry(table, top + 1), RQSPINLOCK_HELD_NONE);
	table_ql_unlock(l);
	atomic_signal_fence(memory_order_seq_cst);
	TABLE_STORE(&t->cnt, top);
}

/*
 * ql-owner: the locked byte holds the owner's id (2..254, from the thread's
 * TLS) instead of 1, which is all an AA check (and the holder lookup of an
 * ABBA check) needs; the unlock is QL's store. ql-owner-check: the unlock
 * first reads the locked byte to check that the caller owns the lock, as
 * counting unlock_not_held would. A design rqspinlock does not have.
 */
static __thread uint8_t owner_id __attribute__((tls_model("initial-exec")));
static _Atomic unsigned owner_next;

/* @l taken through QL's slow path (which sets the locked byte to 1), then
 * named ours: nobody else writes the locked byte while we hold it. */
static __attribute__((noinline, cold)) int owner_ql_contended(ql_spinlock_t *l)
{
	ql_spin_lock(l);
	atomic_store_explicit((_Atomic uint8_t *)(void *)&l->val, owner_id, memory_order_relaxed);
	return 0;
}

/* The thread's first lock: its id, then the lock. Ids are 2..254: 1 is
 * what QL's slow path leaves in the byte before the id replaces it. */
static __attribute__((noinline, cold)) int owner_lock_first(ql_spinlock_t *l)
{
	unsigned next = atomic_fetch_add_explicit(&owner_next, 1, memory_order_relaxed);

	owner_id = (uint8_t)(next % 253 + 2);
	return owner_ql_contended(l);
}

/* An unlock of a lock whose byte names another thread: in these runs a
 * broken experiment (every lock is released by its owner), so it stops the
 * run rather than skew it. */
static __attribute__((noinline, cold)) void owner_unlock_mismatch(unsigned found)
{
	fprintf(stderr, "rqtorture: ql-owner-check: the unlock found owner %u, not %u\n", found,
	        (unsigned)owner_id);
	abort();
}

static inline __attribute__((always_inline)) int owner_lock(ql_spinlock_t *l, bool check)
{
	uint32_t id = owner_id, val = 0;

	(void)check; /* the unlock's */
	if (__builtin_expect(!id, 0))
		return owner_lock_first(l);
	/* acquire: pairs with the unlock's release store, as in QL */
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(
	                         &l->val, &val, id, memory_order_acquire, memory_order_relaxed),
	                     1))
		return 0;
	return owner_ql_contended(l);
}

static inline __attribute__((always_inline)) void owner_unlock(ql_spinlock_t *l, bool check)
{
	_Atomic uint8_t *locked = (_Atomic uint8_t *)(void *)&l->val;

	if (check) {
		unsigned found = atomic_load_explicit(locked, memory_order_relaxed);

		if (__builtin_expect(found != owner_id, 0))
			owner_unlock_mismatch(found);
	}
	table_ql_unlock(l);
}

/* An experiment's lkop_* pair: @lock_fn(&l->ql, @arg), @unlock_fn(&l->ql, @arg). */
#define EXPERIMENT_TYPE(name, lock_fn, unlock_fn, arg)                                             \
	static LKOP int lkop_##name##_lock(union lk_lock *l, union lk_node *n)                     \
	{                                                                                          \
		(void)n;                                                                           \
		return lock_fn(&l->ql, arg);                                                       \
	}                                                                                          \
	static LKOP void lkop_##name##_unlock(union lk_lock *l, union lk_node *n)                  \
	{                                                                                          \
		(void)n;                                                                           \
		unlock_fn(&l->ql, arg);                                                            \
	}
EXPERIMENT_TYPE(qlnt, table_lock, table_unlock, TABLE_NONE)
EXPERIMENT_TYPE(qlkt, table_lock, table_unlock, TABLE_KERNEL)
EXPERIMENT_TYPE(qlrt, table_lock, table_unlock, TABLE_RQ)
EXPERIMENT_TYPE(qlow, owner_lock, owner_unlock, false)
EXPERIMENT_TYPE(qlowc, owner_lock, owner_unlock, true)

static const struct lk_ops table_ops[] = {
    {"ql-notable", "QL with the experiments' inline CAS and no table (their control); not in 'all'",
     LK_NAMED_ONLY, true, NULL, NULL, ql_init, NULL, lkop_qlnt_lock, lkop_qlnt_unlock},
    {"ql-ktable", "QL plus the kernel's fast-path table stores (experiment); not in 'all'",
     LK_NAMED_ONLY, true, NULL, NULL, ql_init, NULL, lkop_qlkt_lock, lkop_qlkt_unlock},
    {"ql-rqtable", "QL plus rqspinlock's fast-path table stores (experiment); not in 'all'",
     LK_NAMED_ONLY, true, NULL, NULL, ql_init, NULL, lkop_qlrt_lock, lkop_qlrt_unlock},
    {"ql-owner", "QL naming its owner in the locked byte, no table (experiment); not in 'all'",
     LK_NAMED_ONLY, true, NULL, NULL, ql_init, NULL, lkop_qlow_lock, lkop_qlow_unlock},
    {"ql-owner-check", "ql-owner whose unlock checks the owner (experiment); not in 'all'",
     LK_NAMED_ONLY, true, NULL, NULL, ql_init, NULL, lkop_qlowc_lock, lkop_qlowc_unlock},
};

const struct lk_ops *lk_table_ops(size_t *n)
{
	*n = sizeof(table_ops) / sizeof(table_ops[0]);
	return table_ops;
}
