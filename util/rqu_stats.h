/* SPDX-License-Identifier: MIT */
/*
 * The benchmarks' statistics: sorting repetitions and taking their median
 * (util/: header-only, libc only, never installed; docs/HACKING.md,
 * "util/").
 */
#ifndef RQU_STATS_H
#define RQU_STATS_H

#include <stddef.h>
#include <stdlib.h>

/* qsort() order of doubles, ascending. */
static inline int rqu_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static inline void rqu_sort_doubles(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), rqu_cmp_double);
}

/* The median of n > 0 sorted values: the middle one, or the mean of the
 * two middle ones. */
static inline double rqu_median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The median of n > 0 values, which it sorts. */
static inline double rqu_median(double *v, size_t n)
{
	rqu_sort_doubles(v, n);
	return rqu_median_sorted(v, n);
}

#endif /* RQU_STATS_H */
