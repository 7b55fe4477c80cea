/* SPDX-License-Identifier: MIT */
/*
 * Private declarations shared by the library's files: the per-thread record
 * (registry slot), the held-lock table operations used by the fast path, and
 * the interfaces between the slow path, timeouts, detection and reporting.
 */
#ifndef RQ_INTERNAL_H
#define RQ_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rqspinlock.h"

struct rq_thread;
/* This thread's record (registry.c), exported under its layout-versioned
 * name for <rqspinlock/inline.h>, which reads only its first member, the
 * held table (a pointer to a struct points to its first member). */
extern _Thread_local struct rq_thread *rq_self __asm__("rqspinlock_self_v1");
#define RQSPINLOCK_INLINE_SELF() ((struct rqspinlock_held_v1 *)(void *)rq_self)
#include "rqspinlock/inline.h"
_Static_assert(RQSPINLOCK_INLINE_ABI == 1, "rq_self's symbol name carries the inline ABI version");

#define RQ_EXPORT   __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define RQ_NR_NODES 4
#define RQ_NR_HELD  RQSPINLOCK_NR_HELD
/* Nested contexts (thread + signal handlers) that can wait at once. */
#define RQ_NR_WAIT 4
/*
 * Held-table entries are lock addresses (4-byte aligned) with two tag bits:
 * ACQUIRING while the lock is being acquired (before the fast-path CAS and
 * throughout the slow path), RELEASING from just before the unlock store
 * until the entry is cleared. An untagged entry means "held".
 */
#define RQ_ENTRY_RELEASING ((uintptr_t)1)
#define RQ_ENTRY_ACQUIRING ((uintptr_t)2)
#define RQ_ENTRY_TAGS      (RQ_ENTRY_RELEASING | RQ_ENTRY_ACQUIRING)
#define RQ_NO_SLOT         UINT32_MAX

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
 * One MCS queue node (qhelpers.h has the protocol). Every use of a node is a
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
 * rqspinlock_held_v1 (<rqspinlock/inline.h>), whose layout the opt-in inline
 * fast path bakes in. Written only by the owning thread (and its signal
 * handlers, which always restore what they pushed before returning); read by
 * any thread for deadlock detection. cnt may exceed RQ_NR_HELD: the extra
 * locks are untracked.
 */
#define rq_held rqspinlock_held_v1

/*
 * What deadlock detectors read about a thread besides its table: one cache
 * line, written only when the thread starts or stops waiting (slow path), so
 * that scanning every thread's record stays cheap.
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
	_Atomic uint32_t idx[RQ_NR_WAIT]; /* held-table index of that wait */
	_Atomic uintptr_t lock[RQ_NR_WAIT];
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
	_Atomic uint64_t stats[RQ_STAT_NR] __attribute__((aligned(64)));
} __attribute__((aligned(64)));

/* ---- registry.c ---- */
/*
 * rq_self (declared above) is &rq_unregistered until its first lock call. The
 * sentinel's count (RQ_UNREGISTERED_CNT) fails the fast paths' table bound
 * checks, so they need no separate test for an unregistered thread: their
 * slow entries call rq_self_get(). Nothing ever writes the sentinel.
 */
extern const struct rq_thread rq_unregistered;
#define RQ_UNREGISTERED_CNT UINT32_MAX
struct rq_thread *rq_register_self(void);
struct rq_thread *rq_thread_at(uint32_t slot);
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

/* ---- stats.c ---- */
/*
 * Only the thread itself (and its signal handlers) writes its counters, so a
 * load and a store do, without a locked read-modify-write on the contended
 * path (the kernel's per-CPU lockevent counters are plain increments too).
 * A signal handler that counts the same event between the two loses its
 * count. Relaxed: readers (res_spin_get_stats()) want a value, no order.
 */
static inline void rq_stat_inc(struct rq_thread *t, enum rq_stat s)
{
	atomic_store_explicit(&t->stats[s],
	                      atomic_load_explicit(&t->stats[s], memory_order_relaxed) + 1,
	                      memory_order_relaxed);
}
void rq_stats_retire(struct rq_thread *t);
void rq_stat_inc_global(enum rq_stat s);

/* ---- held-lock table (fast-path parts inline; held.c has the rest) ---- */

/*
 * Take the entry, tagged ACQUIRING, before the fast-path CAS, so that no
 * window hides an AA from a signal handler. Relaxed: remote detectors that
 * miss the entry simply look again 1 ms later.
 */
static inline uint32_t rq_held_push(struct rq_thread *t, const void *lock)
{
	uint32_t n = atomic_load_explicit(&t->held.cnt, memory_order_relaxed);

	/* release: pairs with claim_below()'s acquire, see rq_held_drop() */
	atomic_store_explicit(&t->held.cnt, n + 1, memory_order_release);
	/* A signal handler from here on pushes above index n. */
	atomic_signal_fence(memory_order_seq_cst);
	if (likely(n < RQ_NR_HELD))
		atomic_store_explicit(&t->held.locks[n], (uintptr_t)lock | RQ_ENTRY_ACQUIRING,
		                      memory_order_relaxed);
	return n;
}

/* The acquisition succeeded: entry @n now means "held". */
static inline void rq_held_mark_held(struct rq_thread *t, uint32_t n, const void *lock)
{
	if (likely(n < RQ_NR_HELD))
		atomic_store_explicit(&t->held.locks[n], (uintptr_t)lock, memory_order_relaxed);
}

/* Undo rq_held_push() of a failed acquisition (entry @n is ours, on top). */
void rq_held_drop(struct rq_thread *t, uint32_t n);
/* Unlock with the entry not on top, untracked, or missing. */
void rq_unlock_slow(struct rq_thread *t, rqspinlock_t *lock, uint32_t n);

/* ---- detection (held.c) ---- */
struct rq_cycle {
	enum rqspinlock_event event; /* 0: none */
	uint32_t n;                  /* threads in peers */
	struct rq_thread *peers[RQSPINLOCK_REPORT_MAX_PEERS];
	uintptr_t waits[RQSPINLOCK_REPORT_MAX_PEERS]; /* what each waited for */
	struct rqspinlock_owner_info owner;           /* timeouts: who held the lock */
};
/* The thread that most likely holds @lock (not @self), or NULL (held.c). */
struct rq_thread *rq_find_owner(const void *lock, const struct rq_thread *self);
int rq_check_aa(struct rq_thread *self, const void *lock, uint32_t n);
/* @suspect: kept by the caller between checks of one wait (0 at its start) */
int rq_check_cycle(struct rq_thread *self, rqspinlock_t *lock, struct rq_cycle *out,
                   uint64_t *suspect);
void rq_wait_push(struct rq_thread *t, const void *lock, uint32_t idx);
#define RQ_NOTE_PENDING 0u
#define RQ_NOTE_HEAD    8u
/*
 * The current wait took (@on) or gave up its lock's pending bit
 * (RQ_NOTE_PENDING), or became or stopped being its queue's head
 * (RQ_NOTE_HEAD). Only this thread writes the mask; a signal handler
 * interrupting the load/store pair leaves its own bits as it found them
 * (clear) before returning. Relaxed: it is read by detectors only as
 * evidence they confirm over two checks. Inline: it runs on every
 * contended acquisition, twice.
 */
static inline void rq_wait_note(struct rq_thread *t, uint32_t what, bool on)
{
	uint32_t nw = atomic_load_explicit(&t->wr.nwait, memory_order_relaxed);
	uint32_t bits = atomic_load_explicit(&t->wr.pend, memory_order_relaxed);

	if (nw == 0 || nw > RQ_NR_WAIT)
		return;
	bits = on ? bits | 1u << (nw - 1 + what) : bits & ~(1u << (nw - 1 + what));
	atomic_store_explicit(&t->wr.pend, bits, memory_order_relaxed);
}
static inline void rq_wait_note_pending(struct rq_thread *t, bool held)
{
	rq_wait_note(t, RQ_NOTE_PENDING, held);
}
void rq_wait_pop(struct rq_thread *t);
void rq_snapshot_thread(const struct rq_thread *t, struct rqspinlock_thread_info *out);

/* ---- sched.c: another thread's scheduler accounting ---- */
struct rq_sched {
	uint64_t when;    /* rq_now_ns() of the read */
	uint64_t cpu_ns;  /* on CPU, since the thread started */
	uint64_t runq_ns; /* runnable but waiting for a CPU, since it started */
	int32_t tid;
	char state; /* /proc state letter: R, S, D, T, t, Z, X; '?' unreadable */
};
/* Read thread @tid of this process: 0, or -errno (/proc missing, exited). */
int rq_sched_read(int32_t tid, struct rq_sched *out);

/* ---- timeout.c: one bounded wait ---- */
struct rq_wait {
	rqspinlock_t *lock;
	struct rq_thread *self;
	uint32_t held_idx;   /* our entry in the held table */
	uint32_t mask;       /* lock-word bits whose clearing ends the wait */
	uint32_t timeouts;   /* duration in timeouts (rq_wait_start()) */
	uint64_t duration;   /* ns; set when the clock starts */
	uint64_t start;      /* first poll */
	uint64_t deadline;   /* 0 until the first poll */
	uint64_t last_poll;  /* to discount time spent off CPU */
	uint64_t next_check; /* next deadlock check */
	uint32_t spin;
	uint32_t graces;       /* extensions left after being off CPU */
	uint64_t suspect;      /* cycle awaiting confirmation (rq_check_cycle) */
	bool published;        /* our wait record is pushed (rq_wait_publish) */
	bool queued;           /* a non-head queue waiter: yields, never naps */
	uint64_t hard;         /* wall-clock cap: no extension goes past it */
	uint64_t probe_at;     /* first read of the owner's accounting */
	uint64_t off_cpu;      /* sum of our own poll gaps > RQ_OFF_CPU_GAP_NS */
	uint64_t check_at;     /* time of the last check of the accounting */
	uint64_t check_off;    /* off_cpu then */
	struct rq_sched first; /* owner accounting: first read (tid 0: none) */
	struct rq_sched base;  /* owner accounting: read at the last check */
	uint32_t owner_slot;
	struct rq_cycle cycle; /* filled when detection fires */
};
/*
 * About to wait for @lock: push the wait record first (once per slow path),
 * before taking any bit others would wait for, so that a signal handler
 * interrupting us from here on sees the AA, and detectors see us.
 */
static inline void rq_wait_publish(struct rq_wait *w, struct rq_thread *t, const void *lock,
                                   uint32_t idx)
{
	/* cppcheck-suppress ctuuninitvar ; callers set published, not all of w */
	if (!w->published) {
		rq_wait_push(t, lock, idx);
		w->published = true;
	}
}
void rq_wait_start(struct rq_wait *w, rqspinlock_t *lock, struct rq_thread *self, uint32_t held_idx,
                   uint32_t mask, uint32_t timeouts);
int rq_wait_poll(struct rq_wait *w);
uint64_t rq_now_ns(void);
uint64_t rq_timeout_ns(void);

/* ---- slow paths ---- */
/* Out of line: the fast paths that call it need no stack frame (LTO too). */
__attribute__((noinline)) int rq_lock_slowpath(struct rq_thread *t, rqspinlock_t *lock,
                                               uint32_t held_idx, uint32_t val);
int rq_tas_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx, struct rq_wait *w);
int rq_trylock_fallback(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx,
                        struct rq_wait *w);
extern _Atomic int rq_mode;

/* ---- shared.c: process-shared (marked) locks ---- */
/* In the pending byte, which is otherwise only 0 or 1. */
#define RQ_SHARED_MARK (1u << 15)
bool rq_shared_trylock(_Atomic uint32_t *word);
int rq_shared_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx,
                       struct rq_wait *w);

/* ---- report.c ---- */
/* Undo a failed acquisition, count it, report it; returns @err. */
int rq_fail(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx, int err,
            const struct rq_cycle *cycle, bool was_waiting);
void rq_report_init(void);

#endif /* RQ_INTERNAL_H */
