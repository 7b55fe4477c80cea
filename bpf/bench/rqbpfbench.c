/* SPDX-License-Identifier: MIT */
/*
 * rqbpfbench: the BPF section of `make bench`. The programs of
 * bpf/tests/progs/counter.bpf.c (look up a value, take its lock, increment
 * a counter, unlock: count with a bpf_res_spin_lock, spin_count with a
 * bpf_spin_lock) on 1..4x the CPUs:
 *  - rqbpf, rqbpf-spin: the interpreter running count, spin_count;
 *  - C: count's logic in plain C on rqspinlock (the limit);
 *  - kernel, kernel-spin: BPF_PROG_TEST_RUN with repeat, where the machine
 *    allows it (root, a kernel with the res-lock kfuncs); "-" elsewhere.
 * Interleaved (each rep runs every variant at every thread count), repeated,
 * medians of runs/s. Then the interpreter's ns per instruction on alu_loop.
 *
 *   rqbpfbench OBJ [--threads 1,2,4,8] [--reps 5] [--duration 0.3] [--csv FILE]
 *   rqbpfbench OBJ --callgrind rqbpf|rqbpf-spin|C [--iters N]
 *       N runs on one thread inside cg_region(), for
 *       valgrind --tool=callgrind --toggle-collect=cg_region (instructions per run)
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <rqspinlock.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rqbpf.h"
#include "rqu_clock.h"
#include "rqu_stats.h"

#define MAX_T    64
#define MAX_REPS 51
#define BATCH    256

enum variant { V_RQBPF, V_RQBPF_SPIN, V_C, V_KERNEL, V_KERNEL_SPIN, NV };
static const char *const vname[NV] = {"rqbpf", "rqbpf-spin", "C", "kernel", "kernel-spin"};
/* The program each variant runs (C: none). */
static const char *const vprog[NV] = {"count", "spin_count", NULL, "count", "spin_count"};

struct counter {
	rqspinlock_t lock;
	uint32_t pad;
	uint64_t hits;
};

static struct counter c_values[1];
static struct rqbpf_object *obj;
static struct rqbpf_prog *prog[NV];
static int kernel_fd[NV] = {-1, -1, -1, -1, -1};
static atomic_int stop;
static atomic_long errors;

/* The errors counted so far: read by the main thread once the workers are
 * joined (relaxed: pthread_join() orders their adds). */
static long error_count(void)
{
	return atomic_load_explicit(&errors, memory_order_relaxed);
}

/* The program's logic in C: look up element 0, lock, increment, unlock. */
static __attribute__((noinline)) int c_count(uint32_t key)
{
	struct counter *c = key < 1 ? &c_values[key] : NULL;
	int err;

	if (!c)
		return 1;
	err = res_spin_lock(&c->lock);
	if (err)
		return err;
	c->hits++;
	res_spin_unlock(&c->lock);
	return 0;
}

static long batch(enum variant v, struct __sk_buff *ctx)
{
	struct rqbpf_run_result res;
	uint8_t pkt[64] = {0};
	struct bpf_test_run_opts opts = {
	    .sz = sizeof(opts), .data_in = pkt, .data_size_in = sizeof(pkt), .repeat = BATCH};

	switch (v) {
	case V_RQBPF:
	case V_RQBPF_SPIN:
		for (int i = 0; i < BATCH; i++)
			if (rqbpf_prog_run(prog[v], ctx, sizeof(*ctx), &res) || res.retval)
				atomic_fetch_add_explicit(&errors, 1, memory_order_relaxed);
		return BATCH;
	case V_C:
		for (int i = 0; i < BATCH; i++)
			if (c_count(0))
				atomic_fetch_add_explicit(&errors, 1, memory_order_relaxed);
		return BATCH;
	default:
		if (bpf_prog_test_run_opts(kernel_fd[v], &opts) || opts.retval)
			atomic_fetch_add_explicit(&errors, 1, memory_order_relaxed);
		return BATCH;
	}
}

struct worker {
	pthread_t tid;
	enum variant v;
	long runs;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct __sk_buff ctx;

	memset(&ctx, 0, sizeof(ctx));
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		w->runs += batch(w->v, &ctx);
	return NULL;
}

static double measure(enum variant v, int nthreads, double secs)
{
	struct worker w[MAX_T];
	long total = 0;
	uint64_t t0;

	/* relaxed: pthread_create() orders it before the workers' loads */
	atomic_store_explicit(&stop, 0, memory_order_relaxed);
	t0 = rqu_now_ns();
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){.v = v};
		if (pthread_create(&w[i].tid, NULL, work, &w[i]))
			exit(1);
	}
	usleep((useconds_t)(secs * 1e6));
	/* relaxed: a flag; the results come back through pthread_join() */
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].tid, NULL);
		total += w[i].runs;
	}
	return (double)total / ((double)(rqu_now_ns() - t0) / 1e9);
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The kernel's copies of the programs, or a reason why not. */
static const char *open_kernel(const char *path, struct bpf_object **ko)
{

	if (geteuid() != 0)
		return "not root";
	libbpf_set_print(silent);
	*ko = bpf_object__open_file(path, NULL);
	if (!*ko)
		return "libbpf cannot open the object";
	if (bpf_object__load(*ko))
		return "the kernel did not load it (no res-lock kfuncs?)";
	for (int v = V_KERNEL; v < NV; v++) {
		struct bpf_program *p = bpf_object__find_program_by_name(*ko, vprog[v]);

		kernel_fd[v] = p ? bpf_program__fd(p) : -1;
		if (kernel_fd[v] < 0)
			return "a program is missing";
	}
	return NULL;
}

/* Interpreter cost per instruction: alu_loop, one thread, median of 11. */
static void per_insn(void)
{
	const struct rqbpf_prog *alu = rqbpf_object_find_prog(obj, "alu_loop");
	struct rqbpf_run_result res;
	struct __sk_buff ctx;
	double ns[11];

	memset(&ctx, 0, sizeof(ctx));
	for (int k = 0; k < 11; k++) {
		uint64_t t0 = rqu_now_ns();

		for (int i = 0; i < 200; i++)
			rqbpf_prog_run(alu, &ctx, sizeof(ctx), &res);
		ns[k] = (double)(rqu_now_ns() - t0) / 200 / (double)res.insns;
	}
	printf("\nInterpreter cost: alu_loop, %llu instructions per run: %.2f ns per instruction "
	       "(median of 11)\n",
	       (unsigned long long)res.insns, rqu_median(ns, 11));
}

/* What callgrind counts: @p iters runs of one variant. */
static __attribute__((noinline)) void cg_region(enum variant v, long iters)
{
	struct __sk_buff ctx;

	memset(&ctx, 0, sizeof(ctx));
	for (long i = 0; i < iters; i += BATCH)
		batch(v, &ctx);
}

/* Medians of @p reps runs/s per variant and thread count, then the
 * ratios: C/rqbpf (the limit), and the kernel's rate over rqbpf's for
 * each lock kind (above 1: the kernel is faster). */
static void print_table(const int *threads, int nt, double res[][NV][MAX_REPS], int reps,
                        double secs, bool no_kernel)
{
	printf("BPF programs lock+increment+unlock (counter.bpf.c): runs/s, median of %d "
	       "interleaved runs of %.2fs\n",
	       reps, secs);
	printf("%7s %11s %11s %11s %11s %11s %7s %7s %7s\n", "threads", "rqbpf", "rqbpf-spin", "C",
	       "kernel", "kernel-spin", "C/rqbpf", "k/rqbpf", "ks/rqs");
	for (int t = 0; t < nt; t++) {
		double m[NV];

		for (int v = 0; v < NV; v++)
			m[v] = rqu_median(res[t][v], (size_t)reps);
		printf("%7d %11.0f %11.0f %11.0f ", threads[t], m[V_RQBPF], m[V_RQBPF_SPIN],
		       m[V_C]);
		if (no_kernel)
			printf("%11s %11s %7.2f %7s %7s\n", "-", "-", m[V_C] / m[V_RQBPF], "-",
			       "-");
		else
			printf("%11.0f %11.0f %7.2f %7.2f %7.2f\n", m[V_KERNEL], m[V_KERNEL_SPIN],
			       m[V_C] / m[V_RQBPF], m[V_KERNEL] / m[V_RQBPF],
			       m[V_KERNEL_SPIN] / m[V_RQBPF_SPIN]);
	}
	printf("ns per run on one thread (1e9 / runs/s at the first thread count):");
	for (int v = 0; v < NV; v++) {
		double m = rqu_median(res[0][v], (size_t)reps);

		if (m > 0)
			printf(" %s %.1f", vname[v], 1e9 / m);
	}
	printf("\n");
}

/* --csv FILE: every run, "threads,variant,rep,runs_per_s" (before the
 * medians sort them), for the report's spreads and error bars. */
static int write_csv(const char *path, const int *threads, int nt, double res[][NV][MAX_REPS],
                     int reps)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "rqbpfbench: %s: cannot write\n", path);
		return -1;
	}
	fprintf(f, "threads,variant,rep,runs_per_s\n");
	for (int t = 0; t < nt; t++)
		for (int v = 0; v < NV; v++)
			for (int r = 0; r < reps; r++)
				if (res[t][v][r] > 0)
					fprintf(f, "%d,%s,%d,%.0f\n", threads[t], vname[v], r + 1,
					        res[t][v][r]);
	return fclose(f) ? -1 : 0;
}

static int parse_threads(const char *s, int *t)
{
	int n = 0;

	for (char *end; *s && n < 16; s = *end ? end + 1 : end) {
		long v = strtol(s, &end, 10);

		if (v < 1 || v > MAX_T || (*end && *end != ','))
			return -1;
		t[n++] = (int)v;
	}
	return n;
}

int main(int argc, char **argv)
{
	int threads[16] = {1, 2, 4, 8}, nt = 4, reps = 5;
	double secs = 0.3, res[16][NV][MAX_REPS];
	const char *cg = NULL, *csv = NULL;
	long iters = 100000;
	struct rqbpf_error err;
	struct bpf_object *ko = NULL;
	const char *why;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			nt = parse_threads(argv[i + 1], threads);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--duration"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--callgrind"))
			cg = argv[i + 1];
		else if (!strcmp(argv[i], "--iters"))
			iters = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--csv"))
			csv = argv[i + 1];
	}
	if (argc < 2 || nt < 1 || reps < 1 || reps > MAX_REPS || secs <= 0) {
		fprintf(stderr,
		        "usage: rqbpfbench OBJ [--threads 1,2,4] [--reps 5] [--duration 0.3] "
		        "[--csv FILE]\n");
		return 2;
	}
	if (rqbpf_object_open_file(argv[1], &obj, &err) || rqbpf_object_load(obj, 0, &err)) {
		fprintf(stderr, "rqbpfbench: %s\n", err.msg);
		return 1;
	}
	for (int v = 0; v < NV; v++)
		prog[v] = vprog[v] ? rqbpf_object_find_prog(obj, vprog[v]) : NULL;
	if (cg) {
		cg_region(!strcmp(cg, "C")            ? V_C
		          : !strcmp(cg, "rqbpf-spin") ? V_RQBPF_SPIN
		                                      : V_RQBPF,
		          iters);
		rqbpf_object_close(obj);
		return error_count() ? 1 : 0;
	}
	why = open_kernel(argv[1], &ko);
	for (int r = 0; r < reps; r++)
		for (int t = 0; t < nt; t++)
			for (int v = 0; v < NV; v++)
				res[t][v][r] =
				    v >= V_KERNEL && why ? 0 : measure(v, threads[t], secs);
	if (csv && write_csv(csv, threads, nt, res, reps))
		return 1;
	print_table(threads, nt, res, reps, secs, why != NULL);
	if (why)
		printf("kernel BPF_PROG_TEST_RUN: skipped (%s)\n", why);
	per_insn();
	printf("Goals: rqbpf within 4x of plain C (C/rqbpf <= 4): %s; errors: %ld (goal 0)\n",
	       "see the C/rqbpf column", error_count());
	bpf_object__close(ko);
	rqbpf_object_close(obj);
	return error_count() ? 1 : 0;
}
