/* SPDX-License-Identifier: MIT */
/* Tiny assertion and scaling helpers for the maps tests. */
#ifndef MTEST_H
#define MTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_) {                                                                    \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__,      \
			        __LINE__, #a, a_, #b, b_);                                         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* RQ_TEST_SCALE (default 1) times @n, at least 1. */
static inline long scaled(long n)
{
	const char *s = getenv("RQ_TEST_SCALE");
	double f = s ? atof(s) : 1.0;
	long v = (long)((double)n * (f > 0 ? f : 1.0));

	return v > 0 ? v : 1;
}

static inline double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift64*: a per-thread PRNG without libc state. */
static inline unsigned long long rnd_next(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

#endif /* MTEST_H */
