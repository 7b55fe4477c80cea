/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, a failed attempt (report.c): undone, counted and reported
 * through the report hook. Uses layers 0 to 5.
 */
#ifndef RQ_REPORT_H
#define RQ_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "detect.h"
#include "registry.h"

/* Undo a failed acquisition, count it, report it; returns @err. */
int rq_fail(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx, int err,
            const struct rq_cycle *cycle, bool was_waiting);

#endif /* RQ_REPORT_H */
