/* SPDX-License-Identifier: MIT */
/*
 * The one monotonic clock of the project's tools, tests, benchmarks and
 * libraries (util/: header-only, libc only, never installed; docs/HACKING.md,
 * "util/").
 */
#ifndef RQU_CLOCK_H
#define RQU_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (the vDSO: no system call);
 * async-signal-safe. */
static inline uint64_t rqu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* RQU_CLOCK_H */
