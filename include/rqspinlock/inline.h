/* SPDX-License-Identifier: MIT */
/**
 * @file rqspinlock/inline.h
 * @brief The uncontended lock and unlock, as static inline code.
 *
 * Opt in with `#define RQSPINLOCK_INLINE` before `#include <rqspinlock.h>`
 * (as liburcu's `_LGPL_SOURCE`): res_spin_lock() and res_spin_unlock() then
 * become static inline functions that do the fast path in the caller and
 * call the library only for the rest (first use by a thread, more than
 * RQSPINLOCK_NR_HELD locks held, contention, out-of-order unlock). Results
 * and guarantees are those of the exported functions, which run this same
 * code.
 *
 * ABI caveat: the inline code bakes in the layout of the head of the
 * library's per-thread record (the held-lock table and the owner id) and
 * its protocol. It refers to symbols whose names carry
 * RQSPINLOCK_INLINE_ABI, so a program built
 * against one layout does not link (or load) with a library of another:
 * rebuild programs that use RQSPINLOCK_INLINE when the library's ABI
 * version changes. Programs without it depend on no layout.
 *
 * The per-thread pointer is initial-exec TLS: the library must be loaded at
 * program start (linked, not dlopen()ed later), as for any library with
 * initial-exec TLS.
 *
 * Private otherwise: include <rqspinlock.h>.
 */
#ifndef RQSPINLOCK_INLINE_H
#define RQSPINLOCK_INLINE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "word.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Layout version of the per-thread record's head and the protocol below.
 * Whether an unlock clears its entry is not part of it: nothing reads a
 * slot above the count, so inline code that clears and a library that
 * does not work together, and the other way round.
 */
#define RQSPINLOCK_INLINE_ABI 5

/*
 * C: <stdatomic.h> on _Atomic members, as the library. C++: the same
 * memory as plain members, through the GCC/Clang __atomic builtins (which
 * the C11 operations compile to).
 */
#ifdef __cplusplus
#define RQSPINLOCK_ATOMIC(type)        type
#define RQSPINLOCK_LOAD_RELAXED(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define RQSPINLOCK_STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define RQSPINLOCK_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RQSPINLOCK_CAS_ACQUIRE(p, e, d)                                                            \
	__atomic_compare_exchange_n((p), (e), (d), false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
#define RQSPINLOCK_SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define RQSPINLOCK_BYTE           uint8_t
#else
#define RQSPINLOCK_ATOMIC(type)        _Atomic type
#define RQSPINLOCK_LOAD_RELAXED(p)     atomic_load_explicit((p), memory_order_relaxed)
#define RQSPINLOCK_STORE_RELAXED(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define RQSPINLOCK_STORE_RELEASE(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define RQSPINLOCK_CAS_ACQUIRE(p, e, d)                                                            \
	atomic_compare_exchange_strong_explicit((p), (e), (d), memory_order_acquire,               \
	                                        memory_order_relaxed)
#define RQSPINLOCK_SIGNAL_FENCE() atomic_signal_fence(memory_order_seq_cst)
#define RQSPINLOCK_BYTE           _Atomic uint8_t
#endif

/*
 * The code below casts between the record's members, the lock word and its
 * bytes on purpose (each cast says why): C casts, which in C take _Atomic
 * off a pointer nothing then dereferences plainly. A user's -Wcast-qual or
 * -Wold-style-cast must not fire in this header.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#ifdef __cplusplus
#pragma GCC diagnostic ignored "-Wold-style-cast"
#endif

/*
 * A read of a table entry by the thread that owns the table. Only that
 * thread writes its entries (other threads' detectors only read them), and
 * a signal handler leaves the entries below its own as it found them, so
 * the owner's read races with no write and need not be atomic: a plain
 * read lets the compiler fold it into the unlock's compare (one
 * instruction with gcc, two with clang). In C the bytes are copied out of
 * the _Atomic object (character access; _Atomic uintptr_t has uintptr_t's
 * size and representation with gcc and clang); in C++ the member is plain.
 */
#ifdef __cplusplus
#define RQSPINLOCK_LOAD_OWN(p) (*(p))
#else
#define RQSPINLOCK_LOAD_OWN(p) res_spin_inline_load_own(p)
static inline uintptr_t res_spin_inline_load_own(const _Atomic uintptr_t *e)
{
	uintptr_t v;

	_Static_assert(sizeof(*e) == sizeof(v), "an entry is one uintptr_t");
	memcpy(&v, (const void *)e, sizeof(v));
	return v;
}
#endif

#define RQSPINLOCK_ABI_NAME_(name, v) name##_v##v
#define RQSPINLOCK_ABI_NAME(name, v)  RQSPINLOCK_ABI_NAME_(name, v)
#define rqspinlock_held_abi           RQSPINLOCK_ABI_NAME(rqspinlock_held, RQSPINLOCK_INLINE_ABI)
#define rqspinlock_table_abi          RQSPINLOCK_ABI_NAME(rqspinlock_table, RQSPINLOCK_INLINE_ABI)
#define res_spin_lock_slow_abi        RQSPINLOCK_ABI_NAME(res_spin_lock_slow, RQSPINLOCK_INLINE_ABI)
#define res_spin_unlock_slow_abi      RQSPINLOCK_ABI_NAME(res_spin_unlock_slow, RQSPINLOCK_INLINE_ABI)

/*
 * The head of the library's per-thread record: the table's count, the
 * value this thread's acquisitions write into the lock word's locked byte,
 * and the held-lock table, oldest lock first, between two slots that never
 * name a lock.
 *
 * The locked byte names the owner: 2 + the owner's registry slot for the
 * first 254 slots (1 names nobody: a thread beyond them or without a slot,
 * or a process-shared lock). Entries are lock addresses. The fast path
 * below writes an entry before its CAS and drops the count after its
 * unlock store, leaving the entry; what an untagged entry means, the
 * locked byte says: the lock is held while the byte names this thread.
 * Bit 1 set (being acquired) marks the entry of a slow-path acquisition,
 * bit 0 (being released) one of an out-of-order unlock. Slots above the
 * count mean nothing (a fast unlock's entry stays there until the next push
 * overwrites it). Below the count, a slot that names no lock holds
 * RQSPINLOCK_HELD_NONE, never 0, so that no entry equals a NULL lock: a
 * hole (a held lock that is not tracked).
 *
 * cnt is at most RQSPINLOCK_HELD_OVERFLOW, which says that the table is
 * full and more locks are held (untracked; the library keeps their number).
 * Counted from none_below, the top entry is therefore always in the record:
 * entry cnt, which is none_below for an empty table and none_above past a
 * full one, and neither names a lock. The unlock's check of its top entry
 * needs no bound check of its own.
 *
 * Only threads whose byte can name them get a record here; the others get
 * one whose cnt is RQSPINLOCK_HELD_OVERFLOW, so the library does their work
 * out of line. docs/DESIGN.md, "Fast path", has the protocol.
 */
#define RQSPINLOCK_HELD_NONE     ((uintptr_t)3)
#define RQSPINLOCK_HELD_OVERFLOW (RQSPINLOCK_NR_HELD + 1)

struct rqspinlock_held_abi {
	RQSPINLOCK_ATOMIC(uint32_t) cnt;
	/* Set when the thread registers, read only by the thread itself. */
	uint32_t owner;
	/* RQSPINLOCK_HELD_NONE in every record the fast path reads. */
	RQSPINLOCK_ATOMIC(uintptr_t) none_below;
	RQSPINLOCK_ATOMIC(uintptr_t) locks[RQSPINLOCK_NR_HELD];
	RQSPINLOCK_ATOMIC(uintptr_t) none_above;
};

/*
 * This thread's table as the fast path reads it: &none_below of its record,
 * so that the entry a count of n includes is n slots above it,
 * res_spin_inline_entry(table, n) (the count store's value indexes the
 * entry, and no constant offset remains for the compiler to fold into a
 * second index). The record is a read-only one whose cnt is
 * RQSPINLOCK_HELD_OVERFLOW until the thread's first call into the library,
 * and for good in a thread the locked byte cannot name (the library keeps
 * its own pointer to that thread's record).
 */
#ifndef RQSPINLOCK_INLINE_TABLE
extern __thread RQSPINLOCK_ATOMIC(uintptr_t) * rqspinlock_table_abi
    __attribute__((tls_model("initial-exec")));
#define RQSPINLOCK_INLINE_TABLE() rqspinlock_table_abi
#endif
/* The lock after a failed bound check (a full table, or more) when @idx
 * is UINT32_MAX; else after a failed CAS that saw @val, with entry @idx
 * pushed. */
int res_spin_lock_slow_abi(rqspinlock_t *lock, uint32_t idx, uint32_t val);
/* The unlock when @lock is not the top entry of a tracked table, or NULL. */
void res_spin_unlock_slow_abi(rqspinlock_t *lock);

/* The record whose table is @table (RQSPINLOCK_INLINE_TABLE()). */
static inline struct rqspinlock_held_abi *res_spin_inline_head(RQSPINLOCK_ATOMIC(uintptr_t) * table)
{
	char *head = (char *)table - offsetof(struct rqspinlock_held_abi, none_below);

	return (struct rqspinlock_held_abi *)(void *)head;
}

/* This thread's record, as the fast path reads it (for code that needs
 * only its head; the fast path itself also keeps the table). */
static inline struct rqspinlock_held_abi *res_spin_inline_self(void)
{
	return res_spin_inline_head(RQSPINLOCK_INLINE_TABLE());
}

/* Slot @n of @table: none_below for 0, locks[n - 1] for 1 to
 * RQSPINLOCK_NR_HELD, none_above for RQSPINLOCK_HELD_OVERFLOW. Computed in
 * bytes within the record, as its slots are three members, not one array. */
static inline RQSPINLOCK_ATOMIC(uintptr_t) *
    res_spin_inline_entry(RQSPINLOCK_ATOMIC(uintptr_t) * table, uint32_t n)
{
	return (RQSPINLOCK_ATOMIC(uintptr_t) *)(void *)((char *)table + sizeof(uintptr_t) * n);
}

/** The fast path of res_spin_lock(); same results. */
static inline int res_spin_inline_lock(rqspinlock_t *lock)
{
	RQSPINLOCK_ATOMIC(uintptr_t) * table;
	struct rqspinlock_held_abi *t;
	uint32_t n, val = 0;

	if (__builtin_expect(!lock, 0))
		return -EINVAL;
	table = RQSPINLOCK_INLINE_TABLE();
	t = res_spin_inline_head(table);
	n = RQSPINLOCK_LOAD_RELAXED(&t->cnt);
	if (__builtin_expect(n >= RQSPINLOCK_NR_HELD, 0))
		return res_spin_lock_slow_abi(lock, UINT32_MAX, 0);
	/* release: pairs with the detectors' acquire load of cnt */
	RQSPINLOCK_STORE_RELEASE(&t->cnt, n + 1);
	/* A signal handler from here on pushes above index n. */
	RQSPINLOCK_SIGNAL_FENCE();
	/* The entry before the CAS: held from the CAS on (the byte names us). */
	RQSPINLOCK_STORE_RELAXED(res_spin_inline_entry(table, n + 1), (uintptr_t)lock);
	/* A signal handler that finds the lock taken by the CAS finds the
	 * entry too (the acquire CAS alone would let the store sink below it). */
	RQSPINLOCK_SIGNAL_FENCE();
	/* acquire: pairs with the unlock's release store */
	if (__builtin_expect(RQSPINLOCK_CAS_ACQUIRE(&lock->val, &val, t->owner), 1))
		return (int)val; /* 0: the CAS found what it expected */
	return res_spin_lock_slow_abi(lock, n, val);
}

/** The fast path of res_spin_unlock(). */
static inline void res_spin_inline_unlock(rqspinlock_t *lock)
{
	RQSPINLOCK_ATOMIC(uintptr_t) *table = RQSPINLOCK_INLINE_TABLE();
	struct rqspinlock_held_abi *t = res_spin_inline_head(table);
	uint32_t cnt = RQSPINLOCK_LOAD_RELAXED(&t->cnt);
	uint32_t below = cnt - 1; /* computed first: gcc then needs no copy of cnt */

	/* Not the top entry of a tracked table (that of an empty table is
	 * none_below, of an overflowed one none_above), or NULL (no entry is
	 * 0, see RQSPINLOCK_HELD_NONE). */
	if (__builtin_expect(
	        RQSPINLOCK_LOAD_OWN(res_spin_inline_entry(table, cnt)) != (uintptr_t)lock, 0)) {
		res_spin_unlock_slow_abi(lock);
		return;
	}
	/* release: pairs with the next owner's acquire (the locked byte) */
	RQSPINLOCK_STORE_RELEASE((RQSPINLOCK_BYTE *)(void *)&lock->val, (uint8_t)0);
	/* From the store on, the byte no longer names us: the entry claims
	 * nothing, so it stays, above the count once the count drops (the
	 * next push overwrites it). The count drops after the store: no
	 * handler sees the byte name us without our entry below the count. */
	RQSPINLOCK_SIGNAL_FENCE();
	RQSPINLOCK_STORE_RELAXED(&t->cnt, below);
}

#pragma GCC diagnostic pop

#ifdef __cplusplus
}
#endif

#endif /* RQSPINLOCK_INLINE_H */
