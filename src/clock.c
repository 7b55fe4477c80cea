/* SPDX-License-Identifier: MIT */
/*
 * Layer 2, time: the monotonic clock and the timeout settings (the timeout
 * and the wall-clock cap of a wait). sched.c, the same layer, reads another
 * thread's scheduler accounting. Uses only layer 0; the bounded wait that
 * uses them is timeout.c (layer 5).
 */
#include "clock.h"
#include "rqu_clock.h"

static _Atomic uint64_t rq_timeout = RQSPINLOCK_DEFAULT_TIMEOUT_NS;
/* 0: RQSPINLOCK_DEFAULT_CAP_FACTOR timeouts */
static _Atomic uint64_t rq_cap;

uint64_t rq_now_ns(void)
{
	return rqu_now_ns();
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

RQ_EXPORT uint64_t res_spin_set_timeout_cap_ns(uint64_t ns)
{
	if (ns && ns < RQSPINLOCK_MIN_TIMEOUT_NS)
		ns = RQSPINLOCK_MIN_TIMEOUT_NS;
	else if (ns > RQSPINLOCK_MAX_TIMEOUT_NS)
		ns = RQSPINLOCK_MAX_TIMEOUT_NS;
	/* relaxed: a plain configuration value; no data hangs off it */
	return atomic_exchange_explicit(&rq_cap, ns, memory_order_relaxed);
}

RQ_EXPORT uint64_t res_spin_get_timeout_cap_ns(void)
{
	uint64_t cap = atomic_load_explicit(&rq_cap, memory_order_relaxed);

	return cap ? cap : RQSPINLOCK_DEFAULT_CAP_FACTOR * rq_timeout_ns();
}
