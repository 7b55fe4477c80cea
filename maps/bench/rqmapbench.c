/* SPDX-License-Identifier: MIT */
/*
 * rqmapbench: hash map throughput against threads for three bucket-lock
 * designs: one rqspinlock per bucket (rqmaps), one pthread_spinlock_t per
 * bucket, and one global pthread spin lock around every operation (the
 * design of userspace eBPF runtimes such as bpftime).
 *
 * Runs are interleaved (variant order rotates every repetition), repeated,
 * and the table reports medians and ratios against the baselines measured in
 * the same run. Any error result (other than -ENOENT) is counted and printed.
 *
 * usage: rqmapbench [-t max_threads] [-r reps] [-d ms_per_run] [-k keys]
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

#define NKINDS   3
#define MAX_REPS 31

enum op_mix { MIX_UPDATE, MIX_LOOKUP };

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

static void *bench_thread(void *arg)
{
	struct run *r = arg;
	unsigned long long rs = (unsigned long long)(uintptr_t)&rs | 1;
	unsigned long n = 0, errors = 0;
	uint64_t v = 0;

	rqmap_thread_init();
	while (!atomic_load_explicit(&r->go, memory_order_acquire))
		;
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			uint32_t k = (uint32_t)(xorshift(&rs) % r->keys);
			int ret = r->mix == MIX_UPDATE ? rqmap_hash_update(r->m, &k, &v, RQMAP_ANY)
			                               : rqmap_hash_lookup(r->m, &k, &v, 0);

			if (ret && ret != -ENOENT) {
				errors++;
				atomic_store_explicit(&r->last_err, ret, memory_order_relaxed);
			}
		}
		n += 64;
	}
	atomic_fetch_add(&r->ops, n);
	atomic_fetch_add(&r->errors, errors);
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
	struct timespec t0, t1, d = {ms / 1000, (long)(ms % 1000) * 1000000L};
	double secs;

	r.m = make_map(kind, keys);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, bench_thread, &r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store_explicit(&r.go, true, memory_order_release);
	nanosleep(&d, NULL);
	atomic_store(&r.stop, true);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	*errors += atomic_load(&r.errors);
	if (atomic_load(&r.errors))
		fprintf(stderr, "%s, %d threads: %lu errors, last %d\n", kind_name[kind], nthreads,
		        atomic_load(&r.errors), atomic_load(&r.last_err));
	rqmap_hash_destroy(r.m);
	return (double)atomic_load(&r.ops) / secs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void bench_mix(enum op_mix mix, int max_threads, int reps, int ms, uint32_t keys)
{
	printf("\n%s throughput (ops/s, median of %d interleaved runs of %d ms, %u keys)\n",
	       mix == MIX_UPDATE ? "update" : "lookup", reps, ms, keys);
	printf("%7s %14s %14s %14s %10s %10s %7s\n", "threads", kind_name[0], kind_name[1],
	       kind_name[2], "rq/pthr", "rq/global", "errors");
	for (int t = 1; t <= max_threads; t *= 2) {
		double s[NKINDS][MAX_REPS], med[NKINDS];
		unsigned long errors = 0;

		for (int rep = 0; rep < reps; rep++)
			for (int j = 0; j < NKINDS; j++) {
				int k = (j + rep) % NKINDS; /* rotate the order */

				s[k][rep] =
				    run_once((enum rqmap_lock_kind)k, mix, t, keys, ms, &errors);
			}
		for (int k = 0; k < NKINDS; k++)
			med[k] = median(s[k], reps);
		printf("%7d %14.0f %14.0f %14.0f %10.3f %10.3f %7lu\n", t, med[0], med[1], med[2],
		       med[0] / med[1], med[0] / med[2], errors);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), reps = 5, ms = 200, opt;
	int max_threads = 4 * (ncpu > 0 ? ncpu : 1);
	uint32_t keys = 4096;

	while ((opt = getopt(argc, argv, "t:r:d:k:")) != -1) {
		switch (opt) {
		case 't':
			max_threads = atoi(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'd':
			ms = atoi(optarg);
			break;
		case 'k':
			keys = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-t max_threads] [-r reps] [-d ms] [-k keys]\n",
			        argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || max_threads < 1 || max_threads > 256 || ms < 1 ||
	    keys < 1) {
		fprintf(stderr, "rqmapbench: bad arguments\n");
		return 2;
	}
	printf("rqmapbench: %d CPUs, threads 1..%d\n", ncpu, max_threads);
	bench_mix(MIX_UPDATE, max_threads, reps, ms, keys);
	bench_mix(MIX_LOOKUP, max_threads, reps, ms, keys);
	return 0;
}
