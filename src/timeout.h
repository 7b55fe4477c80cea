/* SPDX-License-Identifier: MIT */
/*
 * Layer 5, one slow-path acquisition's context and its bounded waits
 * (timeout.c): the timeout, the periodic deadlock checks, the views for
 * other threads' detection, yielding. Uses layers 0 to 4.
 */
#ifndef RQ_TIMEOUT_H
#define RQ_TIMEOUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "detect.h"
#include "held.h"
#include "registry.h"

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
		uint64_t deadline;   /* 0 until the first poll, or to restart (pshared.c) */
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
		uint32_t base_wait;    /* the owner's wait generation then */
		bool base_stuck;       /* the owner was stuck in that wait then */
	};
	struct {                            /* detection */
		uint64_t suspect;           /* cycle awaiting confirmation (rq_check_cycle) */
		uint32_t rechecks;          /* spins left to wait for a fresh view */
		struct rq_stale_view stale; /* check again once it changes (rq_check_cycle) */
		/* the owner our view names, and its generation in the view:
		 * the view is refreshed when that generation moves */
		const struct rq_thread *watch;
		uint32_t watch_gen;
		struct rq_cycle cycle; /* filled when detection fires */
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
	w->stale.t = NULL; /* kept across the attempt's wait phases */
	w->watch = NULL;
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
 * How long each wait phase may last, in timeouts (rq_timeout_ns(), the
 * kernel's RES_DEF_TIMEOUT): the argument of rq_wait_start().
 */
/* A pending waiter waits for one owner's critical section. */
#define RQ_PHASE_PENDING 1u
/* The queue head waits for a pending waiter that came before the queue to
 * finish, then for the owner: two critical sections (the kernel's
 * RES_DEF_TIMEOUT * 2 for its head). */
#define RQ_PHASE_HEAD 2u
/* A waiter behind the head: longer than the head's two, so that normally
 * the head fails first and tears the queue down in order. */
#define RQ_PHASE_QUEUED 3u
/* The checks before queueing: the phase ends at its first poll. */
#define RQ_PHASE_CHECK 1u
/* The test-and-set path has no queue: like a queue head, the owner and a
 * pending claimant ahead of it. */
#define RQ_PHASE_TAS 2u
/* A nested context's trylock fallback: like a pending waiter, one owner;
 * it must not keep the context it interrupted frozen for long. */
#define RQ_PHASE_TRYLOCK 1u
/* A process-shared lock: its deadline restarts whenever the waiter sees the
 * lock change hands (pshared.c), so the phase bounds one owner that never
 * releases (a process that died holding it); two timeouts, as the TAS path,
 * since owners in other processes are invisible to the owner accounting. */
#define RQ_PHASE_SHARED 2u

#endif /* RQ_TIMEOUT_H */
