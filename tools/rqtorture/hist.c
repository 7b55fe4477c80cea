/* SPDX-License-Identifier: MIT */
/*
 * Histograms with fixed storage (no malloc: they are filled from signal
 * handlers). struct hist is log-linear, exact below 32 ns and 8 sub-buckets
 * per power of two above (12.5 % resolution); percentiles report the upper
 * bound of the bucket. struct rec_hist uses the recovery buckets of the
 * kernel's bpf_test_rqspinlock module plus sub-millisecond ones.
 */
#include <stdio.h>

#include "rqtorture.h"

static unsigned ilog2_u64(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

static size_t hist_index(uint64_t v)
{
	if (v < 32)
		return (size_t)v;
	unsigned e = ilog2_u64(v);
	size_t sub = (size_t)((v >> (e - 3)) & (HIST_SUB - 1));
	return 32 + (size_t)(e - 5) * HIST_SUB + sub;
}

static uint64_t hist_upper(size_t i)
{
	if (i < 32)
		return i;
	unsigned e = (unsigned)((i - 32) / HIST_SUB) + 5;
	uint64_t sub = (i - 32) % HIST_SUB;
	uint64_t lo = (HIST_SUB + sub) << (e - 3);
	return lo + (1ull << (e - 3)) - 1;
}

void hist_add(struct hist *h, uint64_t v)
{
	h->b[hist_index(v)]++;
	h->n++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (size_t i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->n += src->n;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
}

/* Smallest bucket bound below which pct percent of the samples fall. */
uint64_t hist_pct(const struct hist *h, double pct)
{
	if (h->n == 0)
		return 0;
	uint64_t want = (uint64_t)((double)h->n * pct / 100.0 + 0.5);
	uint64_t seen = 0;

	if (want == 0)
		want = 1;
	for (size_t i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t up = hist_upper(i);
			return up < h->max ? up : h->max;
		}
	}
	return h->max;
}

#define US 1000ull
#define MS 1000000ull

const uint64_t rec_bound_ns[REC_BUCKETS] = {
    1 * US,  2 * US,  5 * US,   10 * US,  20 * US,  50 * US,  100 * US,  200 * US,   500 * US,
    1 * MS,  2 * MS,  3 * MS,   4 * MS,   5 * MS,   6 * MS,   7 * MS,    8 * MS,     9 * MS,
    10 * MS, 12 * MS, 14 * MS,  16 * MS,  18 * MS,  20 * MS,  25 * MS,   30 * MS,    40 * MS,
    50 * MS, 75 * MS, 100 * MS, 150 * MS, 200 * MS, 250 * MS, 1000 * MS, UINT64_MAX,
};

void rec_add(struct rec_hist *h, uint64_t ns)
{
	size_t i = 0;

	while (i < REC_BUCKETS - 1 && ns > rec_bound_ns[i])
		i++;
	h->b[i]++;
}

void rec_merge(struct rec_hist *dst, const struct rec_hist *src)
{
	for (size_t i = 0; i < REC_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

/* "<=5us", "<=12ms", ">1000ms" */
void rec_label(size_t i, char *buf, size_t len)
{
	uint64_t b = rec_bound_ns[i];

	if (b == UINT64_MAX)
		snprintf(buf, len, ">%llums", (unsigned long long)(rec_bound_ns[i - 1] / MS));
	else if (b < MS)
		snprintf(buf, len, "<=%lluus", (unsigned long long)(b / US));
	else
		snprintf(buf, len, "<=%llums", (unsigned long long)(b / MS));
}
