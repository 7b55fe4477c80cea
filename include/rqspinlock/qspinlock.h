/* SPDX-License-Identifier: MIT */
/**
 * @file rqspinlock/qspinlock.h
 * @brief The baseline: a plain (non-resilient) queued spin lock, "QL".
 *
 * Same lock word, same per-thread queue nodes and the same private helpers as
 * the resilient lock, but no timeouts, no held-lock table and no deadlock
 * detection: it waits forever, like the kernel's qspinlock. It exists so that
 * every benchmark can measure what resilience costs. Do not use it where a
 * deadlock is possible.
 */
#ifndef RQSPINLOCK_QSPINLOCK_H
#define RQSPINLOCK_QSPINLOCK_H

#include <stdint.h>

#include "word.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Baseline queued spin lock; all-zero bytes = unlocked. */
typedef struct ql_spinlock {
	RQSPINLOCK_WORD val; /**< private: the lock word */
} ql_spinlock_t;

RQSPINLOCK_STATIC_ASSERT(sizeof(ql_spinlock_t) == 4 && RQSPINLOCK_ALIGNOF(ql_spinlock_t) == 4,
                         "ql_spinlock_t must be one aligned 32-bit word");

/** Static initializer. */
#define QL_SPINLOCK_INIT                                                                           \
	{                                                                                          \
		0U                                                                                 \
	}

/** @brief Acquire; waits forever. */
void ql_spin_lock(ql_spinlock_t *lock);
/** @brief Acquire if free now. @return 0 or -EBUSY. */
int ql_spin_trylock(ql_spinlock_t *lock);
/** @brief Release. */
void ql_spin_unlock(ql_spinlock_t *lock);

#ifdef __cplusplus
}
#endif

#endif /* RQSPINLOCK_QSPINLOCK_H */
