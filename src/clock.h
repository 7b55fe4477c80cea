/* SPDX-License-Identifier: MIT */
/*
 * Layer 2, time: the clock and the timeout settings (clock.c), and another
 * thread's scheduler accounting (sched.c), which the deadline path reads to
 * tell a preempted owner from a stuck one. Uses only layer 0.
 */
#ifndef RQ_CLOCK_H
#define RQ_CLOCK_H

#include <stdint.h>

#include "registry.h"

uint64_t rq_now_ns(void);
/* The timeout in force (res_spin_set_timeout_ns()). */
uint64_t rq_timeout_ns(void);

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

#endif /* RQ_CLOCK_H */
