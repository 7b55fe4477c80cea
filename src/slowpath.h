/* SPDX-License-Identifier: MIT */
/*
 * Layer 5, the slow paths: one attempt's bounded wait with its deadlock
 * checks (timeout.c), the resilient queued slow path (slowpath.c), the
 * test-and-set paths (fallback.c), process-shared locks (shared.c), and the
 * undoing and reporting of a failed attempt (report.c). Uses layers 0 to 4.
 */
#ifndef RQ_SLOWPATH_H
#define RQ_SLOWPATH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "detect.h"
#include "held.h"
#include "lockword.h"
#include "thread.h"

/* ---- one acquisition's slow path: its context and its bounded waits ---- */
/*
 * The context of one slow-path acquisition, on rq_lock_slowpath()'s stack.
 * Four parts, each with one writer:
 *  - the attempt (lock, thread, held-table entry): rq_attempt_init();
 *  - publication of the wait record: rq_wait_publish();
 *  - the timer of the current wait phase: rq_wait_start(), then
 *    rq_wait_poll() (timeout.c);
 *  - detection's state and result: rq_attempt_init() and every
 *    rq_wait_start() reset them, the checks in rq_wait_poll() fill them.
 * rq_attempt_init() and rq_wait_start() write every field that is read
 * before it is written: the context is not zeroed as a whole, 376 bytes on
 * every slow path, most of them (the cycle's members) read only after
 * detection wrote them.
 */
struct rq_attempt {
	struct { /* the attempt */
		rqspinlock_t *lock;
		struct rq_thread *self;
		uint32_t held_idx; /* our entry in the held table */
		bool published;    /* our wait record is pushed (rq_wait_publish) */
	};
	struct {                     /* the timer of the current wait phase */
		uint32_t mask;       /* lock-word bits whose clearing ends the wait */
		uint32_t timeouts;   /* length in timeouts (rq_wait_start()) */
		uint64_t duration;   /* ns; set when the clock starts */
		uint64_t start;      /* first clock poll (0 before; kept by a restart) */
		uint64_t deadline;   /* 0 until the first poll, or to restart (shared.c) */
		uint64_t last_poll;  /* to discount time spent off CPU */
		uint64_t next_check; /* next deadlock check */
		uint32_t spin;
		uint32_t graces;       /* extensions left after being off CPU */
		bool last_look;        /* not yet looked again after an orphan's clear at the cap */
		bool queued;           /* a non-head queue waiter: yields, never naps */
		uint64_t hard;         /* wall-clock cap: no extension goes past it */
		uint64_t cap;          /* the cap in force when the phase started */
		uint64_t probe_at;     /* first read of the owner's accounting */
		uint64_t off_cpu;      /* sum of our own poll gaps > RQ_OFF_CPU_GAP_NS */
		uint64_t check_at;     /* time of the last check of the accounting */
		uint64_t check_off;    /* off_cpu then */
		struct rq_sched first; /* owner accounting: first read (tid 0: none) */
		struct rq_sched base;  /* owner accounting: read at the last check */
	};
	struct {                         /* detection */
		uint64_t suspect;        /* cycle awaiting confirmation (rq_check_cycle) */
		uint32_t rechecks;       /* spins left to wait for an asked view */
		struct rq_thread *asked; /* check again once it answered (rq_check_cycle) */
		struct rq_cycle cycle;   /* filled when detection fires */
	};
};

/* The one constructor of an attempt's context. */
static inline void rq_attempt_init(struct rq_attempt *w, struct rq_thread *t, rqspinlock_t *lock,
                                   uint32_t held_idx)
{
	w->lock = lock;
	w->self = t;
	w->held_idx = held_idx;
	w->published = false;
	w->asked = NULL; /* kept across the attempt's wait phases */
	w->cycle.event = 0;
	w->cycle.n = 0;
	w->cycle.owner = (struct rqspinlock_owner_info){0};
}

/*
 * About to wait: push the wait record first (once per slow path), before
 * taking any bit others would wait for, so that a signal handler
 * interrupting us from here on sees the AA, and detectors see us.
 */
static inline void rq_wait_publish(struct rq_attempt *w)
{
	if (!w->published) {
		rq_wait_push(w->self, w->lock, w->held_idx);
		w->published = true;
	}
}
/* A wait phase of @w begins: it ends when the lock-word bits @mask clear,
 * or fails after @timeouts timeouts (or on a deadlock). */
void rq_wait_start(struct rq_attempt *w, uint32_t mask, uint32_t timeouts);
int rq_wait_poll(struct rq_attempt *w);

/*
 * Pending-bit transitions of the lock word (layer 1) that also keep this
 * thread's wait record (layer 3) right.
 */
/*
 * Resilient lock only: detectors must know which waiter holds a pending bit
 * (wr.pend, frozen_culprit() in detect.c). The note goes up before every
 * attempt to take the bit: a signal handler arriving between a successful
 * attempt and a later note would freeze a holder nobody knows about. It
 * comes down when the attempt fails and once the bit is given up.
 */
typedef int (*rq_take_pending_fn)(_Atomic uint32_t *word, uint32_t *val);

static inline int rq_take_pending_noted(struct rq_thread *t, _Atomic uint32_t *word, uint32_t *val,
                                        rq_take_pending_fn take)
{
	if (*val & RQ_PENDING_MASK)
		return 0; /* someone holds it: no attempt, nothing to note */
	rq_wait_note_pending(t, true);
	/* The note before the attempt, as the compiler emits them too (an
	 * acquire RMW lets an earlier relaxed store sink below it): a bit
	 * nobody notes is taken for an orphan (rq_clear_orphaned_pending()). */
	atomic_signal_fence(memory_order_seq_cst);
	if (take(word, val))
		return 1;
	rq_wait_note_pending(t, false);
	return 0;
}

/* Give the pending bit up without the lock. */
static inline void rq_drop_pending_noted(struct rq_thread *t, _Atomic uint32_t *word)
{
	rq_clear_pending(word);
	rq_wait_note_pending(t, false);
}

/*
 * The owner left (@val, our last view of the word): turn our pending bit
 * into the lock. Returns 0 if the word was reset under us and an owner came
 * first (rq_take_unlocked()); the bit is not ours any more either way.
 */
static inline int rq_pending_to_locked_noted(struct rq_thread *t, _Atomic uint32_t *word,
                                             uint32_t val)
{
	int taken = rq_take_unlocked(word, val, t->held.owner);

	rq_wait_note_pending(t, false);
	return taken;
}

/* ---- slow paths ---- */
/* Out of line: the fast paths that call it need no stack frame (LTO too). */
RQ_NOINLINE int rq_lock_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx,
                                 uint32_t val);
int rq_tas_slowpath(struct rq_attempt *w);
int rq_trylock_fallback(struct rq_attempt *w);
extern _Atomic int rq_mode;

/* ---- shared.c: process-shared (marked) locks ---- */
bool rq_shared_trylock(_Atomic uint32_t *word);
int rq_shared_slowpath(struct rq_attempt *w);

/* ---- report.c ---- */
/* Undo a failed acquisition, count it, report it; returns @err. */
int rq_fail(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx, int err,
            const struct rq_cycle *cycle, bool was_waiting);

#endif /* RQ_SLOWPATH_H */
