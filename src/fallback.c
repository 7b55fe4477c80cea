/* SPDX-License-Identifier: MIT */
/*
 * Test-and-set slow paths.
 *
 * rq_tas_slowpath() is the resilient test-and-set lock (the kernel's
 * resilient_tas_spin_lock, used there under virtualization): spin until the
 * word reads 0, then try 0 -> locked. It serves the whole process in
 * RQSPINLOCK_MODE_TAS and, always, threads without a registry slot (they have
 * no queue nodes). It has no queue, so no FIFO order; it waits at most two
 * timeouts, like a queue head, with the same deadlock checks.
 *
 * rq_trylock_fallback() serves a nested context whose thread already has a
 * queue node in use (and node exhaustion): same loop, one timeout.
 *
 * Both only ever take the lock with the fast path's own 0 -> locked
 * transition, so they mix safely with queued waiters on the same lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qhelpers.h"

_Atomic int rq_mode = RQSPINLOCK_MODE_QUEUED;

static int spin_trylock(rqspinlock_t *lock, struct rq_wait *w)
{
	int err;

	while (!rq_trylock_word(&lock->val)) {
		err = rq_wait_poll(w);
		if (err)
			return err;
	}
	return 0;
}

int rq_tas_slowpath(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx, struct rq_wait *w)
{
	rq_stat_inc(t, RQ_STAT_TAS);
	rq_wait_start(w, lock, t, held_idx, ~0u, 2);
	return spin_trylock(lock, w);
}

int rq_trylock_fallback(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx,
                        struct rq_wait *w)
{
	rq_stat_inc(t, RQ_STAT_NO_NODE);
	rq_wait_start(w, lock, t, held_idx, ~0u, 1);
	return spin_trylock(lock, w);
}

RQ_EXPORT int res_spin_set_mode(enum rqspinlock_mode mode)
{
	if (mode != RQSPINLOCK_MODE_QUEUED && mode != RQSPINLOCK_MODE_TAS)
		return -EINVAL;
	/* relaxed: each slow path reads the mode once; both modes are safe
	 * together on one lock */
	atomic_store_explicit(&rq_mode, (int)mode, memory_order_relaxed);
	return 0;
}

RQ_EXPORT enum rqspinlock_mode res_spin_get_mode(void)
{
	return (enum rqspinlock_mode)atomic_load_explicit(&rq_mode, memory_order_relaxed);
}

__attribute__((constructor)) static void rq_mode_from_env(void)
{
	const char *m = getenv("RQSPINLOCK_MODE");

	if (m && strcmp(m, "tas") == 0)
		res_spin_set_mode(RQSPINLOCK_MODE_TAS);
}
