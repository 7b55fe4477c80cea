/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, the test-and-set slow paths and the slow-path mode (tas.c).
 * Uses layers 0 to 5.
 */
#ifndef RQ_TAS_H
#define RQ_TAS_H

#include <stdatomic.h>

#include "timeout.h"

/* The resilient test-and-set lock: the whole process in
 * RQSPINLOCK_MODE_TAS, and threads without a registry slot. */
int rq_tas_slowpath(struct rq_attempt *w);
/* A nested context whose thread has a queue node in use (or none left):
 * the same loop, one timeout. */
int rq_trylock_fallback(struct rq_attempt *w);
/* RQSPINLOCK_MODE_QUEUED or RQSPINLOCK_MODE_TAS (res_spin_set_mode()). */
extern _Atomic int rq_mode;

#endif /* RQ_TAS_H */
