/* SPDX-License-Identifier: MIT */
/*
 * rqmapbench: hash map throughput against threads for three bucket-lock
 * designs: one rqspinlock per bucket (rqmaps), one pthread_spinlock_t per
 * bucket, and one global pthread spin lock around every whole operation (the
 * design of userspace eBPF runtimes such as bpftime).
 *
 * Mixes: update (RQMAP_ANY on prefilled keys: every update replaces an
 * element), replace (replace-heavy: 60% replace, 10% delete, 10% insert,
 * 20% lookup, so elements are retired and reused at full speed), lookup.
 *
 * Runs are interleaved (variant order rotates every repetition), repeated,
 * and the table reports medians and ratios against the baselines measured in
 * the same run. Any error result (other than -ENOENT / -EEXIST, which are
 * the mix's expected answers) is counted and printed. The goals are
 * checked and reported, never asserted.
 *
 * usage: rqmapbench [-t max_threads] [-r reps] [-d ms_per_run] [-k keys]
 *                   [-m update,replace,lookup] [-c csv_file]
 */
#include <rqmap.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rqu_clock.h"
#include "rqu_parse.h"
#include "rqu_stats.h"

#define NKINDS   3
#define MAX_REPS 31

enum op_mix { MIX_UPDATE, MIX_REPLACE, MIX_LOOKUP, NMIXES };

static const char *mix_name[NMIXES] = {"update", "replace", "lookup"};

static const char *kind_name[NKINDS] = {"rq-bucket", "pthread-bucket", "global-lock"};

struct run {
	struct rqmap_hash *m;
	enum op_mix mix;
	uint32_t keys;
	atomic_bool go, stop;
	atomic_ulong ops, errors;
	atomic_int last_err;
};

static unsigned long long xorshift(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* One operation of the replace-heavy mix; the result of the map call. */
static int replace_mix_op(struct rqmap_hash *m, uint32_t k, uint64_t *v, unsigned long long r)
{
	unsigned int what = (unsigned int)(r >> 40) % 10;

	if (what < 6)
		return rqmap_hash_update(m, &k, v, RQMAP_ANY);
	if (what == 6)
		return rqmap_hash_delete(m, &k);
	if (what == 7)
		return rqmap_hash_update(m, &k, v, RQMAP_NOEXIST);
	return rqmap_hash_lookup(m, &k, v, 0);
}

static void *bench_thread(void *arg)
{
	struct run *r = arg;
	unsigned long long rs = (unsigned long long)(uintptr_t)&rs | 1;
	unsigned long n = 0, errors = 0;
	uint64_t v = 0;

	rqmap_thread_init();
	/* acquire: pairs with run_once()'s release of go (the map is built) */
	while (!atomic_load_explicit(&r->go, memory_order_acquire))
		;
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			unsigned long long x = xorshift(&rs);
			uint32_t k = (uint32_t)(x % r->keys);
			int ret;

			if (r->mix == MIX_UPDATE)
				ret = rqmap_hash_update(r->m, &k, &v, RQMAP_ANY);
			else if (r->mix == MIX_REPLACE)
				ret = replace_mix_op(r->m, k, &v, x);
			else
				ret = rqmap_hash_lookup(r->m, &k, &v, 0);
			if (ret && ret != -ENOENT && ret != -EEXIST) {
				errors++;
				atomic_store_explicit(&r->last_err, ret, memory_order_relaxed);
			}
		}
		n += 64;
	}
	/* relaxed: run_once() reads the sums after pthread_join() */
	atomic_fetch_add_explicit(&r->ops, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->errors, errors, memory_order_relaxed);
	return NULL;
}

static struct rqmap_hash *make_map(enum rqmap_lock_kind kind, uint32_t keys)
{
	struct rqmap_hash_attr a = {.key_size = 4,
	                            .value_size = 8,
	                            .max_entries = keys,
	                            .spare = 64 * keys,
	                            .lock_kind = kind};
	struct rqmap_hash *m = NULL;
	uint64_t v = 1;
	int ret = rqmap_hash_create(&a, &m);

	if (ret) {
		fprintf(stderr, "rqmap_hash_create: %s\n", strerror(-ret));
		exit(1);
	}
	for (uint32_t k = 0; k < keys; k++)
		(void)rqmap_hash_update(m, &k, &v, RQMAP_ANY);
	return m;
}

/* One timed run; returns ops/s. */
static double run_once(enum rqmap_lock_kind kind, enum op_mix mix, int nthreads, uint32_t keys,
                       int ms, unsigned long *errors)
{
	struct run r = {.mix = mix, .keys = keys};
	pthread_t th[256];
	struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
	uint64_t t0, t1;
	double secs;

	r.m = make_map(kind, keys);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, bench_thread, &r);
	t0 = rqu_now_ns();
	/* release: pairs with bench_thread()'s acquire of go */
	atomic_store_explicit(&r.go, true, memory_order_release);
	nanosleep(&d, NULL);
	/* relaxed: a flag; nothing is published with it */
	atomic_store_explicit(&r.stop, true, memory_order_relaxed);
	t1 = rqu_now_ns();
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	secs = (double)(t1 - t0) * 1e-9;
	/* relaxed: after pthread_join(), which orders the threads' adds */
	*errors += atomic_load_explicit(&r.errors, memory_order_relaxed);
	if (atomic_load_explicit(&r.errors, memory_order_relaxed))
		fprintf(stderr, "%s, %d threads: %lu errors, last %d\n", kind_name[kind], nthreads,
		        atomic_load_explicit(&r.errors, memory_order_relaxed),
		        atomic_load_explicit(&r.last_err, memory_order_relaxed));
	rqmap_hash_destroy(r.m);
	return (double)atomic_load_explicit(&r.ops, memory_order_relaxed) / secs;
}

/* Medians of one mix at one thread count, and the errors of all its runs. */
struct point {
	int threads;
	double med[NKINDS];
	unsigned long errors;
};

static void bench_mix(enum op_mix mix, const int *threads, int nt, int reps, int ms, uint32_t keys,
                      struct point *pts, FILE *csv)
{
	printf("\n%s throughput (ops/s, median of %d interleaved runs of %d ms, %u keys)\n",
	       mix_name[mix], reps, ms, keys);
	printf("%7s %14s %14s %14s %10s %10s %7s\n", "threads", kind_name[0], kind_name[1],
	       kind_name[2], "rq/pthr", "rq/global", "errors");
	for (int i = 0; i < nt; i++) {
		double s[NKINDS][MAX_REPS];
		struct point *p = &pts[i];

		p->threads = threads[i];
		p->errors = 0;
		for (int rep = 0; rep < reps; rep++)
			for (int j = 0; j < NKINDS; j++) {
				int k = (j + rep) % NKINDS; /* rotate the order */

				s[k][rep] = run_once((enum rqmap_lock_kind)k, mix, p->threads, keys,
				                     ms, &p->errors);
			}
		for (int k = 0; k < NKINDS; k++)
			p->med[k] = rqu_median(s[k], (size_t)reps);
		printf("%7d %14.0f %14.0f %14.0f %10.3f %10.3f %7lu\n", p->threads, p->med[0],
		       p->med[1], p->med[2], p->med[0] / p->med[1], p->med[0] / p->med[2],
		       p->errors);
		if (csv)
			fprintf(csv, "%s,%d,%.0f,%.0f,%.0f,%.4f,%.4f,%lu\n", mix_name[mix],
			        p->threads, p->med[0], p->med[1], p->med[2], p->med[0] / p->med[1],
			        p->med[0] / p->med[2], p->errors);
		fflush(stdout);
	}
}

static const struct point *at_threads(const struct point *pts, int nt, int threads)
{
	for (int i = 0; i < nt; i++)
		if (pts[i].threads == threads)
			return &pts[i];
	return NULL;
}

static const char *verdict(bool met)
{
	return met ? "met" : "NOT met";
}

/* The goals, on the update mix (errors: every mix that ran). */
static void report_goals(struct point (*pts)[16], const bool *ran, int nt)
{
	const struct point *u = pts[MIX_UPDATE], *p2 = at_threads(u, nt, 2), *p8;
	unsigned long errors = 0;
	double worst = 1e9;

	p8 = at_threads(u, nt, 8);
	for (int m = 0; m < NMIXES; m++)
		for (int i = 0; ran[m] && i < nt; i++)
			errors += pts[m][i].errors;
	printf("\nGoals (update mix; measured, not asserted)\n");
	printf("  zero errors in every run: %lu errors: %s\n", errors, verdict(errors == 0));
	if (!ran[MIX_UPDATE])
		return;
	for (int i = 0; i < nt; i++)
		if (u[i].med[0] / u[i].med[1] < worst)
			worst = u[i].med[0] / u[i].med[1];
	printf("  rq-bucket >= 0.95x pthread-bucket at every thread count: worst %.3f: %s\n", worst,
	       verdict(worst >= 0.95));
	if (p2)
		printf("  rq-bucket >= 1.5x global-lock at 2 threads: %.3f: %s\n",
		       p2->med[0] / p2->med[2], verdict(p2->med[0] / p2->med[2] >= 1.5));
	if (p8)
		printf("  rq-bucket >= 2.5x global-lock at 8 threads: %.3f: %s\n",
		       p8->med[0] / p8->med[2], verdict(p8->med[0] / p8->med[2] >= 2.5));
}

/* Threads 1, 2, 4, ... up to max_threads, with max_threads itself. */
static int thread_counts(int max_threads, int *threads)
{
	int n = 0;

	for (int t = 1; t < max_threads && n < 15; t *= 2)
		threads[n++] = t;
	threads[n++] = max_threads;
	return n;
}

static bool parse_mixes(const char *arg, bool *ran)
{
	char buf[64], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (int m = 0; m < NMIXES; m++)
		ran[m] = false;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m = 0;

		while (m < NMIXES && strcmp(tok, mix_name[m]) != 0)
			m++;
		if (m == NMIXES)
			return false;
		ran[m] = true;
	}
	return true;
}

int main(int argc, char **argv)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), reps = 5, ms = 200, opt, nt;
	int max_threads = 4 * (ncpu > 0 ? ncpu : 1), threads[16];
	static struct point pts[NMIXES][16];
	bool ran[NMIXES] = {true, true, true};
	const char *csv_path = NULL;
	uint32_t keys = 4096;
	uint64_t v;
	FILE *csv = NULL;

	if (max_threads < 8)
		max_threads = 8; /* the goals name 8 threads */
	while ((opt = getopt(argc, argv, "t:r:d:k:m:c:")) != -1) {
		switch (opt) {
		case 't':
		case 'r':
		case 'd':
		case 'k':
			if (rqu_parse_decimal(optarg, opt == 'k' ? UINT32_MAX : INT32_MAX, &v)) {
				fprintf(stderr,
				        "rqmapbench: -%c takes a decimal number, not '%s'\n", opt,
				        optarg);
				return 2;
			}
			if (opt == 't')
				max_threads = (int)v;
			else if (opt == 'r')
				reps = (int)v;
			else if (opt == 'd')
				ms = (int)v;
			else
				keys = (uint32_t)v;
			break;
		case 'm':
			if (!parse_mixes(optarg, ran)) {
				fprintf(stderr, "rqmapbench: mixes are update, replace, lookup\n");
				return 2;
			}
			break;
		case 'c':
			csv_path = optarg;
			break;
		default:
			fprintf(stderr,
			        "usage: %s [-t max_threads] [-r reps] [-d ms] [-k keys] "
			        "[-m update,replace,lookup] [-c csv]\n",
			        argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || max_threads < 1 || max_threads > 256 || ms < 1 ||
	    keys < 1) {
		fprintf(stderr, "rqmapbench: bad arguments\n");
		return 2;
	}
	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			perror(csv_path);
			return 2;
		}
		fprintf(csv, "mix,threads,rq_bucket,pthread_bucket,global_lock,rq_pthr,rq_global,"
		             "errors\n");
	}
	nt = thread_counts(max_threads, threads);
	printf("rqmapbench: %d CPUs, threads 1..%d\n", ncpu, max_threads);
	for (int m = 0; m < NMIXES; m++)
		if (ran[m])
			bench_mix((enum op_mix)m, threads, nt, reps, ms, keys, pts[m], csv);
	report_goals(pts, ran, nt);
	if (csv)
		fclose(csv);
	return 0;
}
