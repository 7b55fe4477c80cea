/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, process-shared (marked) locks (pshared.c): a bounded
 * test-and-set loop, never a queue. Uses layers 0 to 5.
 */
#ifndef RQ_PSHARED_H
#define RQ_PSHARED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "timeout.h"

/* One attempt on a marked word: true if taken. */
bool rq_shared_trylock(_Atomic uint32_t *word);
int rq_shared_slowpath(struct rq_attempt *w);

#endif /* RQ_PSHARED_H */
