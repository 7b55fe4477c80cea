/* SPDX-License-Identifier: MIT */
/*
 * Bounded waiting: the timeout, the periodic deadlock checks and yielding.
 *
 * Every waiting loop that owns a deadline (pending waiter, queue head,
 * trylock and TAS fallbacks) calls rq_wait_poll() once per spin. The clock is
 * read only every RQ_POLL_SPINS spins. The first poll runs the deadlock
 * checks at once (no clock read: short waits never read the clock), the
 * first clock read starts the deadline, and later checks run every
 * RQ_CHECK_INTERVAL_NS, so a deadlock costs at most about a millisecond of
 * spinning, and the timeout is the final line of defence.
 *
 * Userspace threads get preempted. After RQ_YIELD_AFTER_NS of waiting, each
 * poll also yields the CPU, so that an owner preempted by its own waiters can
 * run when there are more threads than cores.
 *
 * A waiter that was itself off CPU across its deadline (a gap between polls
 * longer than RQ_OFF_CPU_GAP_NS: preempted, or the VM descheduled) did not
 * watch the owner; the lock may have changed hands several times meanwhile.
 * Instead of failing the moment it runs again, it gets a short grace period
 * (an eighth of its duration, RQ_GRACES times) to see the lock move.
 * The kernel needs no such rule: its waiters cannot be preempted. Bound: a
 * waiter fails at most duration * (1 + RQ_GRACES / 8) after it started,
 * plus the time it spent off CPU.
 */
#include <errno.h>
#include <time.h>

#include "internal.h"
#include "qhelpers.h"

#define RQ_POLL_SPINS        64u
#define RQ_CHECK_INTERVAL_NS 1000000ull
#define RQ_YIELD_AFTER_NS    5000ull
/* Polls come every few microseconds; a longer gap means we were off CPU. */
#define RQ_OFF_CPU_GAP_NS 1000000ull
#define RQ_GRACES         1u
#define RQ_SLEEP_AFTER_NS 2000000ull

static _Atomic uint64_t rq_timeout = RQSPINLOCK_DEFAULT_TIMEOUT_NS;

uint64_t rq_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t rq_timeout_ns(void)
{
	return atomic_load_explicit(&rq_timeout, memory_order_relaxed);
}

RQ_EXPORT uint64_t res_spin_set_timeout_ns(uint64_t ns)
{
	if (ns == 0)
		ns = RQSPINLOCK_DEFAULT_TIMEOUT_NS;
	else if (ns < RQSPINLOCK_MIN_TIMEOUT_NS)
		ns = RQSPINLOCK_MIN_TIMEOUT_NS;
	else if (ns > RQSPINLOCK_MAX_TIMEOUT_NS)
		ns = RQSPINLOCK_MAX_TIMEOUT_NS;
	/* relaxed: a plain configuration value; no data hangs off it */
	return atomic_exchange_explicit(&rq_timeout, ns, memory_order_relaxed);
}

RQ_EXPORT uint64_t res_spin_get_timeout_ns(void)
{
	return rq_timeout_ns();
}

void rq_wait_start(struct rq_wait *w, rqspinlock_t *lock, struct rq_thread *self, uint32_t held_idx,
                   uint32_t mask, uint32_t timeouts)
{
	w->lock = lock;
	w->self = self;
	w->held_idx = held_idx;
	w->mask = mask;
	w->duration = rq_timeout_ns() * timeouts;
	w->deadline = 0;
	w->spin = 0;
	w->graces = RQ_GRACES;
	w->suspect = 0;
	w->queued = false;
	w->cycle.event = 0;
	w->cycle.n = 0;
}

static int run_checks(struct rq_wait *w)
{
	int err;

	/* Freed meanwhile? Then there is nothing to detect. */
	if (!(rq_word_load_relaxed(&w->lock->val) & w->mask))
		return 0;
	err = rq_check_aa(w->self, w->lock, w->held_idx);
	if (err) {
		w->cycle.event = RQSPINLOCK_EV_AA;
		return err;
	}
	/* Holding nothing, or invisible to others: cannot be in a cycle. */
	if (w->held_idx == 0 || w->self->slot == RQ_NO_SLOT)
		return 0;
	return rq_check_cycle(w->self, w->lock, &w->cycle, &w->suspect);
}

static __attribute__((noinline)) int poll_clock(struct rq_wait *w)
{
	uint64_t now = rq_now_ns();

	if (!w->deadline) {
		/* Second poll: start the clock. Waits shorter than one poll
		 * interval never read it. */
		w->start = now;
		w->deadline = now + w->duration;
		w->next_check = now + RQ_CHECK_INTERVAL_NS;
		w->last_poll = now;
		return 0;
	}
	if (now > w->deadline && now - w->last_poll > RQ_OFF_CPU_GAP_NS && w->graces) {
		w->graces--;
		w->deadline = now + w->duration / 8;
	}
	w->last_poll = now;
	if (now > w->deadline) {
		w->cycle.event = RQSPINLOCK_EV_TIMEOUT;
		return -ETIMEDOUT;
	}
	if (now >= w->next_check) {
		int err;

		w->next_check = now + RQ_CHECK_INTERVAL_NS;
		err = run_checks(w);
		if (err)
			return err;
	}
	if (now - w->start > RQ_SLEEP_AFTER_NS && !w->queued)
		rq_nap();
	else if (now - w->start > RQ_YIELD_AFTER_NS)
		rq_yield();
	return 0;
}

int rq_wait_poll(struct rq_wait *w)
{
	uint32_t spin = w->spin++;

	if (likely(spin % RQ_POLL_SPINS)) {
		rq_cpu_relax();
		return 0;
	}
	/* First poll: the checks at once, before any spinning. */
	return spin ? poll_clock(w) : run_checks(w);
}
