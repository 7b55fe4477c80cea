/* SPDX-License-Identifier: MIT */
/*
 * Layer 0, the per-thread record: the userspace stand-in for the kernel's
 * per-CPU data. struct rq_thread and the parts it is made of (queue nodes,
 * held-lock table, wait record, counters), the thread registry that hands
 * the records out (registry.c), the counters (stats.c) and the environment
 * (env.c). Uses nothing of the library above it; every other layer uses it.
 *
 * Layers (docs/DESIGN.md, "Source layout"), each using only those below:
 *   0 registry.h    per-thread record, registry, counters, environment
 *   1 lockword.h    lock word and MCS queue; qlock.c (QL) on it alone
 *   2 clock.h       clock, timeout settings, scheduler accounting
 *   3 held.h        held-lock table and wait record
 *   4 detect.h      AA, ABBA and cycle detection; the owner for a deadline,
 *                   and the clear of an orphaned pending bit
 *   5 timeout.h     one attempt's context and its bounded waits
 *   6 slowpath.h    the queued slow path and the choice among the slow
 *                   paths; tas.h (test-and-set, mode), pshared.h
 *                   (process-shared locks), report.h (failures)
 *   7 lock.c        fast path and API
 */
#ifndef RQ_REGISTRY_H
#define RQ_REGISTRY_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rqspinlock.h"

struct rq_thread;
/* This thread's record (registry.c). */
extern _Thread_local struct rq_thread *rq_self;
/* The table the fast path uses (registry.c): rq_self's where the locked
 * byte can name the thread, else the read-only sentinel's, whose count
 * sends every lock and unlock to the slow entries (which use rq_self).
 * Exported under its layout-versioned name for <rqspinlock/inline.h>,
 * which reads the held table through it (rq_fast_table()). */
extern _Thread_local _Atomic uintptr_t *rq_fast __asm__("rqspinlock_table_v5");
#define RQSPINLOCK_INLINE_TABLE() rq_fast
#include "rqspinlock/inline.h"
_Static_assert(RQSPINLOCK_INLINE_ABI == 5, "rq_fast's symbol name carries the inline ABI version");

#define RQ_EXPORT __attribute__((visibility("default")))
/* Kept out of line even where link-time optimization could inline it (the
 * pthread drop-in): a fast path that calls it needs no stack frame. */
#define RQ_NOINLINE __attribute__((noinline))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define RQ_NR_NODES 4
#define RQ_NR_HELD  RQSPINLOCK_NR_HELD
/* The table's count while more than RQ_NR_HELD locks are held (held.h). */
#define RQ_HELD_OVERFLOW RQSPINLOCK_HELD_OVERFLOW

/* Nested contexts (thread + signal handlers) that can wait at once. */
#define RQ_NR_WAIT 4
#define RQ_NO_SLOT UINT32_MAX

/*
 * Owner ids: what a thread's acquisitions write into a lock word's locked
 * byte (rq_held::owner). The thread in registry slot s < RQ_NR_OWNER_IDS
 * writes RQ_OWNER_FIRST + s; every other thread, and every acquisition of
 * a process-shared lock, writes RQ_OWNER_ANON, which names nobody. An id
 * names the slot, not the thread: a slot's next thread has the same id.
 */
#define RQ_OWNER_ANON   1u
#define RQ_OWNER_FIRST  2u
#define RQ_NR_OWNER_IDS 254u

static inline uint32_t rq_owner_of_slot(uint32_t slot)
{
	return slot < RQ_NR_OWNER_IDS ? RQ_OWNER_FIRST + slot : RQ_OWNER_ANON;
}

/* The slot a locked byte names, or RQ_NO_SLOT for 0 (free) and RQ_OWNER_ANON. */
static inline uint32_t rq_slot_of_owner(uint32_t owner)
{
	return owner >= RQ_OWNER_FIRST ? owner - RQ_OWNER_FIRST : RQ_NO_SLOT;
}

enum rq_stat {
	RQ_STAT_SLOWPATH,
	RQ_STAT_PENDING,
	RQ_STAT_NODE2,
	RQ_STAT_NODE3,
	RQ_STAT_NODE4,
	RQ_STAT_NO_NODE,
	RQ_STAT_TAS,
	RQ_STAT_TIMEOUT,
	RQ_STAT_AA,
	RQ_STAT_ABBA,
	RQ_STAT_CYCLE,
	RQ_STAT_HANDOFF,
	RQ_STAT_YIELD,
	RQ_STAT_NO_SLOT,
	RQ_STAT_UNLOCK_NOT_HELD,
	RQ_STAT_EXTEND,
	RQ_STAT_TIMEOUT_RUNNING,
	RQ_STAT_TIMEOUT_BLOCKED,
	RQ_STAT_TIMEOUT_UNKNOWN,
	RQ_STAT_NR
};

/*
 * One MCS queue node (lockword.h has the protocol). Every use of a node is a
 * new generation, so that a signal meant for an earlier use, written late by
 * a predecessor that was slow or frozen, cannot reach a later one.
 */
struct rq_qnode {
	/* Link to the successor: its state value (generation, RQ_NODE_WAIT)
	 * << 32 | its tail code; or a verdict mark left for a successor that
	 * links after we left; 0: none yet. */
	_Atomic uint64_t next;
	_Atomic uint32_t locked; /* generation << 2 | RQ_NODE_WAIT/HEAD/TIMEOUT/GONE */
	_Atomic uintptr_t lock;  /* the lock it is queued on; 0 when free */
};

/*
 * Locks this thread holds or is acquiring, oldest first: struct
 * rqspinlock_held_abi (<rqspinlock/inline.h>), whose layout the opt-in inline
 * fast path bakes in. Written only by the owning thread (and its signal
 * handlers, which always restore what they pushed before returning); read by
 * any thread for deadlock detection. More than RQ_NR_HELD locks held: cnt
 * is RQ_HELD_OVERFLOW and struct rq_thread's deep has the number (the
 * extra locks are untracked). held.h has the entries' tags and the
 * operations.
 */
#define rq_held rqspinlock_held_abi

/*
 * What deadlock detectors read about a thread besides its table: one cache
 * line, written only when the thread starts or stops waiting (slow path), so
 * that scanning every thread's record stays cheap. held.h has the
 * operations, except in_use, which is the registry's (rq_thread_in_use()).
 */
struct rq_waitrec {
	_Atomic uint32_t in_use; /* slot taken by a live thread */
	/* The locks this thread's nested contexts wait for, innermost last;
	 * gen changes on every push and pop. */
	_Atomic uint32_t nwait;
	_Atomic uint32_t gen;
	/* bit RQ_NOTE_PENDING + i: wait i holds its lock's pending bit;
	 * bit RQ_NOTE_HEAD + i: wait i heads its lock's queue */
	_Atomic uint32_t pend;
	_Atomic uint32_t held_idx[RQ_NR_WAIT]; /* held-table index of that wait */
	_Atomic(rqspinlock_t *) lock[RQ_NR_WAIT];
} __attribute__((aligned(64)));

/*
 * What each waiting context last saw of its own lock's word, for detectors
 * that follow the waits-for chain through this thread: they may not read
 * that lock themselves (its memory is not theirs: detect.c). A cache line
 * of its own, so that the waiter's periodic refresh (rq_wait_observe(),
 * held.h) does not disturb scans of struct rq_waitrec. Entry k: the word
 * in the low 32 bits and, where its locked byte names an owner, that
 * owner's wait generation read just before it in the high 32 (a view
 * "certified" for that owner); 0 until the wait first looks.
 */
struct rq_waitview {
	_Atomic uint64_t seen[RQ_NR_WAIT];
	/* Set by a detector that needs a fresher view (rq_wait_ask()); the
	 * waiter refreshes at its next spin and clears it. */
	_Atomic uint32_t ask;
} __attribute__((aligned(64)));

/* The per-thread record: one registry slot. */
struct rq_thread {
	struct rq_held held; /* written on every lock and unlock */
	struct rq_qnode nodes[RQ_NR_NODES];
	_Atomic uint32_t node_count; /* queue nodes in use (nesting) */
	uint32_t qnode;              /* resilient lock: the node it queues with */
	_Atomic int32_t tid;
	uint32_t slot; /* index in the registry, or RQ_NO_SLOT */
	struct rq_waitrec wr;
	struct rq_waitview view;
	_Atomic uint64_t stats[RQ_STAT_NR] __attribute__((aligned(64)));
	/* The number of locks held while held.cnt is RQ_HELD_OVERFLOW (more
	 * than RQ_NR_HELD); stale otherwise. rq_held_depth() reads both. Last:
	 * only a thread that holds more than RQ_NR_HELD locks writes it. */
	_Atomic uint32_t deep;
} __attribute__((aligned(64)));

/* What rq_fast holds for @t (the cast drops const only in type, for the
 * sentinel, which the fast paths never write). */
static inline _Atomic uintptr_t *rq_fast_table(const struct rq_thread *t)
{
	return (_Atomic uintptr_t *)&t->held.none_below;
}

/* ---- registry.c ---- */
/*
 * rq_self and rq_fast (declared above) are &rq_unregistered and its table
 * until the thread's first lock call; rq_fast stays so in a thread without
 * an owner id. The sentinel's count (RQ_HELD_OVERFLOW, over an empty table)
 * sends the fast paths to their slow entries, so they need no separate
 * test for an unregistered or unnamed thread: the slow entries call
 * rq_self_get(). Nothing ever writes the sentinel.
 */
extern const struct rq_thread rq_unregistered;
struct rq_thread *rq_register_self(void);
struct rq_thread *rq_thread_at(uint32_t slot);
/* Does the locked byte name @t's acquisitions (a slot below
 * RQ_NR_OWNER_IDS)? Decided by the record's address, for any thread's
 * record, without reading it. */
bool rq_thread_has_owner_id(const struct rq_thread *t);
uint32_t rq_slot_bound(void);
bool rq_slotless_threads(void);
void rq_yield(void);
void rq_nap(void);

static inline struct rq_thread *rq_self_get(void)
{
	struct rq_thread *t = rq_self;

	if (unlikely(t == &rq_unregistered))
		t = rq_register_self();
	return t;
}

/* This thread's record, or NULL when it has none yet (registers nothing). */
static inline struct rq_thread *rq_self_peek(void)
{
	struct rq_thread *t = rq_self;

	return t == &rq_unregistered ? NULL : t;
}

/* Is registry record @t taken by a live thread? Relaxed: scanners act on
 * other evidence read from the record, and a slot taken meanwhile holds
 * nothing yet. */
static inline bool rq_thread_in_use(const struct rq_thread *t)
{
	return atomic_load_explicit(&t->wr.in_use, memory_order_relaxed) != 0;
}

/* ---- counters (stats.c reads them) ---- */
/*
 * Only the thread itself and its signal handlers write its counters (others
 * read them, relaxed), so an increment need not be atomic between threads,
 * only between the thread and a handler: one instruction that reads and
 * writes memory, since a handler runs between two instructions, never
 * inside one. On x86-64 that is a plain `incq`: the locked read-modify-write
 * of an atomic fetch-add would stall the hand-over, right after the waiter
 * took the lock, until its lock-word store left the store buffer. Elsewhere
 * a relaxed fetch-add. Readers see whole values: an aligned 8-byte store is
 * single-copy atomic.
 */
void rq_stat_inc_global(enum rq_stat s);
static inline void rq_stat_inc(struct rq_thread *t, enum rq_stat s)
{
	/* No slot: no reader finds the record, so the event is counted where
	 * every reader looks (and nothing is left to move when it exits). */
	if (unlikely(t->slot == RQ_NO_SLOT)) {
		rq_stat_inc_global(s);
		return;
	}
#if defined(__x86_64__)
	__asm__ volatile("incq %0" : "+m"(*(uint64_t *)(void *)&t->stats[s]));
#else
	atomic_fetch_add_explicit(&t->stats[s], 1, memory_order_relaxed);
#endif
}
/* registry.c: the counters of events of threads without a slot,
 * RQ_STAT_NR of them (a slot's counters stay in the slot). */
_Atomic uint64_t *rq_stats_global(void);

/* Block every signal, the mask before going to @old: the library's own
 * start-up and bookkeeping run so, that a handler never finds them half
 * done on its own thread. Restore with pthread_sigmask(SIG_SETMASK, old). */
static inline void rq_block_signals(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

/* ---- once.c: start-up that runs once per process, fork or not ---- */
typedef _Atomic int32_t rq_once_t; /* zero-initialised: not started */
#define RQ_ONCE_DONE (-1)          /* else 0 or the pid of the process running it */
static inline bool rq_once_done(rq_once_t *once)
{
	/* acquire: pairs with rq_once_end()'s release; the start-up's work is visible */
	return atomic_load_explicit(once, memory_order_acquire) == RQ_ONCE_DONE;
}
/* true: the caller runs the start-up now, then calls rq_once_end(); false:
 * it is done. Waits while a thread of this process runs it. Callers block
 * signals, so that a handler never waits for its own thread. */
bool rq_once_begin(rq_once_t *once);
void rq_once_end(rq_once_t *once);

/* ---- env.c: the environment, read and validated in one place ---- */
struct rq_env {
	uint32_t slots;            /* RQSPINLOCK_SLOTS: registry capacity */
	enum rqspinlock_mode mode; /* RQSPINLOCK_MODE: initial slow-path mode */
	bool report;               /* RQSPINLOCK_REPORT: install the stderr reporter */
};
/* Read once, at the first call; invalid values are reported on stderr and
 * replaced by the defaults. */
const struct rq_env *rq_env(void);
/* The parsers behind it, for any string; NULL: the variable is unset. Each
 * returns 0 with the value (the default when unset) or -EINVAL. */
int rq_env_parse_slots(const char *s, uint32_t *slots);
int rq_env_parse_mode(const char *s, enum rqspinlock_mode *mode);
int rq_env_parse_report(const char *s, bool *on);

#endif /* RQ_REGISTRY_H */
