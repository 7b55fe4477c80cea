/* SPDX-License-Identifier: MIT */
/*
 * --hammer: the short-critical-section hammer. A few threads (default 2)
 * each take one lock --iters times (default 500000); the critical section is
 * one increment of a shared counter and nothing runs between acquisitions,
 * so nearly every acquisition is a hand-over between running threads. Each
 * repetition runs every lock once, in a rotated order (interleaved, so that
 * drift on a loaded machine hits all locks alike). Per lock: ns per
 * acquisition (wall time from the start line, once every thread runs, to
 * the last thread's finish, over all threads' acquisitions), median of the
 * repetitions, and paired ratios (median of per-repetition ratios) to QL,
 * pthread_spin and pthread_mutex. A run where a thread waited for a CPU for
 * over a tenth of it is counted and noted: on a busy machine the others ran
 * alone, uncontended. A lost increment or an error from a lock is a FAILURE.
 *
 * --gaps N scans the loop's shape instead: the same runs with g = 0..N-1
 * nop instructions after each unlock (in a counted loop, so each nop comes
 * with a decrement and a branch), every thread counting the runs of
 * consecutive increments it made (a run ends when another thread took the
 * lock in between: a hand-over). With two threads and no work between
 * acquisitions, a thread usually re-takes the lock it just released, so the
 * figure depends on how its unlock-to-lock window lines up with the other
 * thread's attempts; the scan shows how much.
 */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "rqtorture.h"

struct hammer_run {
	_Atomic int ready; /* threads at the start line */
	_Atomic int go;
	_Atomic int running; /* threads past it (the clock starts when all are) */
	int threads;
	const struct lk_ops *ops;
	struct lk_slot *slot;
	uint64_t iters;
	const char *pin;
	int gap; /* nops after each unlock; -1: the plain loop, no run count */
};

struct hammer_thread {
	pthread_t th;
	int idx;
	struct hammer_run *run;
	uint64_t errors;
	uint64_t runs; /* with a gap: runs of consecutive increments */
	uint64_t start_ns, end_ns;
	uint64_t wait_ns; /* from start_ns to end_ns: runnable, waiting for a CPU */
	union lk_node node;
} __attribute__((aligned(RQT_CACHELINE)));

/* The hammer as published: the critical section and nothing else. */
static void hammer_plain(struct hammer_thread *h, const struct lk_ops *ops, union lk_lock *lock)
{
	struct hammer_run *run = h->run;

	for (uint64_t i = 0; i < run->iters; i++) {
		if (ops->lock(lock, &h->node) != 0) {
			h->errors++;
			continue;
		}
		run->slot->protected_n++;
		ops->unlock(lock, &h->node);
	}
}

/* The scan's loop: a run starts whenever the counter moved since our last
 * increment; then @gap nops (each its own instruction, which the compiler
 * may not merge or drop). */
static void hammer_gap(struct hammer_thread *h, const struct lk_ops *ops, union lk_lock *lock)
{
	struct hammer_run *run = h->run;
	uint64_t last = UINT64_MAX - 1, runs = 0;

	for (uint64_t i = 0; i < run->iters; i++) {
		uint64_t v;

		if (ops->lock(lock, &h->node) != 0) {
			h->errors++;
			continue;
		}
		v = run->slot->protected_n++;
		ops->unlock(lock, &h->node);
		runs += v != last + 1;
		last = v;
		for (int g = run->gap; g > 0; g--)
			__asm__ volatile("nop");
	}
	h->runs = runs;
}

/* The calling thread's time waiting on a run queue so far, in ns (Linux
 * schedstat's run_delay; 0 where unavailable): preemption, not sleep. */
static uint64_t thread_wait_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

static void *hammer_worker(void *arg)
{
	struct hammer_thread *h = arg;
	struct hammer_run *run = h->run;
	const struct lk_ops *ops = run->ops;
	union lk_lock *lock = &run->slot->lock;

	(void)pin_thread(run->pin, h->idx);
	if (ops->node_init)
		ops->node_init(&h->node);
	/* Relaxed: a count the main thread polls. */
	atomic_fetch_add_explicit(&run->ready, 1, memory_order_relaxed);
	/* Acquire: pairs with the release store of go; the slot is set up. */
	while (!atomic_load_explicit(&run->go, memory_order_acquire))
		cpu_relax();
	/* A thread that was off CPU when go was set would leave the others to
	 * run alone, uncontended: start only when every thread runs. Relaxed:
	 * a count, ordering nothing. */
	atomic_fetch_add_explicit(&run->running, 1, memory_order_relaxed);
	while (atomic_load_explicit(&run->running, memory_order_relaxed) < run->threads)
		cpu_relax();
	uint64_t wait0 = thread_wait_ns();
	h->start_ns = rqu_now_ns();
	if (run->gap < 0)
		hammer_plain(h, ops, lock);
	else
		hammer_gap(h, ops, lock);
	h->end_ns = rqu_now_ns();
	h->wait_ns = thread_wait_ns() - wait0;
	return NULL;
}

/*
 * One run of one lock: ns per acquisition, from the moment every thread runs
 * to the last one's finish; errors and lost updates added to *bad, and 1 to
 * *preempted where a thread waited for a CPU for over a tenth of that time
 * (a busy machine: the others ran alone, uncontended). @gap as in struct
 * hammer_run; with one, *per_handover is set to the acquisitions per run of
 * one thread's consecutive increments.
 */
static double hammer_once(const struct config *cfg, const struct lk_ops *ops, int threads, int gap,
                          uint64_t *bad, uint64_t *preempted, double *per_handover)
{
	struct hammer_run run = {
	    .ops = ops, .iters = cfg->iters, .pin = cfg->pin, .gap = gap, .threads = threads};
	uint64_t runs = 0;
	struct hammer_thread *hs = NULL;
	int started = 0;
	uint64_t t0 = UINT64_MAX, end = 0, off = 0;

	if (posix_memalign((void **)&run.slot, RQT_CACHELINE, sizeof(*run.slot)) != 0 ||
	    posix_memalign((void **)&hs, RQT_CACHELINE, sizeof(*hs) * (size_t)threads) != 0) {
		fputs("rqtorture: out of memory\n", stderr);
		exit(2);
	}
	memset(run.slot, 0, sizeof(*run.slot));
	memset(hs, 0, sizeof(*hs) * (size_t)threads);
	if (ops->prepare)
		ops->prepare();
	ops->init(&run.slot->lock);
	for (; started < threads; started++) {
		hs[started].idx = started;
		hs[started].run = &run;
		if (pthread_create(&hs[started].th, NULL, hammer_worker, &hs[started]) != 0)
			break;
	}
	if (started < threads) {
		fprintf(stderr, "rqtorture: could not start %d threads\n", threads);
		exit(2);
	}
	while (atomic_load_explicit(&run.ready, memory_order_relaxed) < threads)
		sched_yield();
	/* Release: pairs with the workers' acquire load of go. */
	atomic_store_explicit(&run.go, 1, memory_order_release);
	join_or_die(&hs[0].th, threads, sizeof(*hs), grace_ns(cfg, ops, threads), ops->name);
	for (int i = 0; i < threads; i++) {
		*bad += hs[i].errors;
		runs += hs[i].runs;
		end = hs[i].end_ns > end ? hs[i].end_ns : end;
		t0 = hs[i].start_ns < t0 ? hs[i].start_ns : t0;
	}
	for (int i = 0; i < threads; i++) {
		uint64_t o = hs[i].start_ns - t0 + hs[i].wait_ns;
		off = o > off ? o : off;
	}
	*preempted += off * 10 > end - t0;
	uint64_t done = (uint64_t)threads * cfg->iters;
	if (per_handover)
		*per_handover = runs ? (double)done / (double)runs : 0;
	uint64_t got = run.slot->protected_n;
	*bad += done > got ? done - got : got - done;
	free(hs);
	free(run.slot);
	return (double)(end - t0) / (double)done;
}

static const char *const ref_names[] = {"ql", "pthread-spin", "pthread-mutex"};

/* The repetitions of lock @l: ns is [lock][rep]. */
static const double *reps_of(const double *ns, int reps, int l)
{
	return &ns[(size_t)l * (size_t)reps];
}

/* Median of the per-repetition ratios ns[num] / ns[den] (0 where ns[den]
 * is not positive); 0 without both locks. */
static double paired_ratio(const double *ns, int reps, int num, int den)
{
	double r[256];
	int n = reps < 256 ? reps : 256;

	if (num < 0 || den < 0)
		return 0;
	for (int i = 0; i < n; i++)
		r[i] = reps_of(ns, reps, den)[i] > 0
		           ? reps_of(ns, reps, num)[i] / reps_of(ns, reps, den)[i]
		           : 0;
	return bench_median(r, n, NULL, NULL);
}

/* ns ratio lock/ref (lower is faster); 0 without ref. */
static double ns_ratio(const double *ns, int reps, int l, int ref)
{
	return paired_ratio(ns, reps, l, ref);
}

/* The named-only types in the run (the experiments of
 * held_table_experiments.c and the inline fast path) against QL and, where
 * ql-notable ran, against that control (QL's CAS and store inline, as in all
 * of them): what a held-lock table alone costs on QL's own lock. */
static void print_table_share(FILE *f, const struct config *cfg, const double *ns, int ql)
{
	int ctl = bench_find_lock(cfg, "ql-notable");
	bool head = false;

	for (int l = 0; ql >= 0 && l < cfg->nlocks; l++) {
		unsigned flags = cfg->locks[l]->flags;
		if (!(flags & LK_NAMED_ONLY) || (flags & LK_UNLOCK_EXP))
			continue;
		if (!head)
			fprintf(
			    f,
			    "\nThe held table's share (throughput ratios = reference ns / lock ns; "
			    "reported)\n  %-18s %6s %12s\n",
			    "lock", "vs QL", "vs control");
		head = true;
		fprintf(f, "  %-18s %6.2f", cfg->locks[l]->name,
		        1.0 / ns_ratio(ns, cfg->reps, l, ql));
		if (ctl >= 0 && l != ctl)
			fprintf(f, " %12.2f\n", 1.0 / ns_ratio(ns, cfg->reps, l, ctl));
		else
			fprintf(f, " %12s\n", "-");
	}
}

/* A paired speed ratio column, reference ns / lock ns (> 1: the lock is
 * faster), as the goals below; "-" where the reference lock did not run. */
static void print_ratio_cell(FILE *f, const double *ns, int reps, int l, int ref)
{
	double r = ref < 0 ? 0 : ns_ratio(ns, reps, l, ref);

	if (r <= 0)
		fprintf(f, " %8s", "-");
	else
		fprintf(f, " %8.2f", 1.0 / r);
}

static void print_hammer_text(FILE *f, const struct config *cfg, const double *ns, int threads,
                              const int *ref)
{
	int reps = cfg->reps, rq = bench_find_lock(cfg, "rqspinlock");

	fprintf(f,
	        "\nHammer: %d threads x %llu acquisitions, critical section one shared increment;\n"
	        "ns per acquisition (median of %d interleaved runs); vs: paired speed ratios,\n"
	        "reference ns / lock ns (above 1 the lock is faster)\n"
	        "%-20s %7s %8s %8s %8s %8s %8s\n",
	        threads, (unsigned long long)cfg->iters, reps, "lock", "median", "min", "max",
	        "vs ql", "vs pspin", "vs mutex");
	for (int l = 0; l < cfg->nlocks; l++) {
		double mn, mx, m = bench_median(reps_of(ns, reps, l), reps, &mn, &mx);
		fprintf(f, "%-20s %7.2f %8.2f %8.2f", cfg->locks[l]->name, m, mn, mx);
		for (int r = 0; r < 3; r++)
			print_ratio_cell(f, ns, reps, l, ref[r]);
		fputc('\n', f);
	}
	print_table_share(f, cfg, ns, ref[0]);
	if (rq < 0)
		return;
	fprintf(f, "\nGoals (hammer, throughput ratios = reference ns / RQL ns)\n");
	if (ref[0] >= 0) {
		double r = 1.0 / ns_ratio(ns, reps, rq, ref[0]);
		bench_goal(f, r >= 0.95, "RQL/QL", r, ">= 0.95");
	}
	if (ref[2] >= 0) {
		double r = 1.0 / ns_ratio(ns, reps, rq, ref[2]);
		bench_goal(f, r >= 1.0, "RQL/pthread_mutex", r, ">= 1.00");
	}
	if (ref[1] >= 0)
		fprintf(
		    f,
		    "  info RQL/pthread_spin = %.2f (reported: docs/BENCHMARKS.md, \"Core speed "
		    "against glibc\")\n",
		    1.0 / ns_ratio(ns, reps, rq, ref[1]));
}

/* Runs where a thread waited for a CPU for over a tenth of the run, per
 * lock: their figure is partly one thread alone, not hand-overs. */
static void print_preempted(FILE *f, const struct config *cfg, const uint64_t *pre, int runs)
{
	bool any = false;

	for (int l = 0; l < cfg->nlocks; l++)
		any |= pre[l] != 0;
	if (!any)
		return;
	fprintf(f, "\nNOTE: runs where a thread waited for a CPU for over 10%% of the run (a busy "
	           "machine;\nthe other threads then ran alone, uncontended):");
	for (int l = 0; l < cfg->nlocks; l++)
		fprintf(f, " %s %llu/%d", cfg->locks[l]->name, (unsigned long long)pre[l], runs);
	fputc('\n', f);
}

static void write_hammer_data(const struct config *cfg, const double *ns, int threads,
                              const int *ref, const uint64_t *bad, const uint64_t *pre, bool ok)
{
	FILE *csv = open_out(cfg->csv_path), *json = open_out(cfg->json_path);
	int reps = cfg->reps;

	if (csv) {
		fprintf(csv, "threads,lock,median_ns,min_ns,max_ns,ratio_vs_ql,"
		             "ratio_vs_pthread_spin,ratio_vs_pthread_mutex,errors");
		for (int i = 0; i < reps; i++)
			fprintf(csv, ",rep%d", i + 1);
		fprintf(csv, "\n");
	}
	if (json) {
		print_json_open(json, "hammer");
		fprintf(json, "\"threads\":%d,\"iters\":%llu,\"reps\":%d,\"locks\":[", threads,
		        (unsigned long long)cfg->iters, reps);
	}
	for (int l = 0; l < cfg->nlocks; l++) {
		double mn, mx, m = bench_median(reps_of(ns, reps, l), reps, &mn, &mx);
		double q = ns_ratio(ns, reps, l, ref[0]), p = ns_ratio(ns, reps, l, ref[1]);
		double x = ns_ratio(ns, reps, l, ref[2]);
		const char *name = cfg->locks[l]->name;
		if (csv) {
			fprintf(csv, "%d,%s,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%llu", threads, name, m,
			        mn, mx, q, p, x, (unsigned long long)bad[l]);
			for (int i = 0; i < reps; i++)
				fprintf(csv, ",%.3f", reps_of(ns, reps, l)[i]);
			fprintf(csv, "\n");
		}
		if (json)
			fprintf(
			    json,
			    "%s{\"lock\":\"%s\",\"median_ns\":%.3f,\"min_ns\":%.3f,"
			    "\"max_ns\":%.3f,\"ratio_vs_ql\":%.4f,\"ratio_vs_pthread_spin\":%.4f,"
			    "\"ratio_vs_pthread_mutex\":%.4f,\"errors\":%llu,"
			    "\"preempted_runs\":%llu}",
			    l ? "," : "", name, m, mn, mx, q, p, x, (unsigned long long)bad[l],
			    (unsigned long long)pre[l]);
	}
	if (json)
		fprintf(json, "],\"verdict\":\"%s\"}\n", ok ? "SUCCESS" : "FAILURE");
	close_out(csv);
	close_out(json);
}

/* ---- --gaps: the scan ---- */

/* Cell [gap][lock][rep] of a scan's arrays. */
static size_t cell(const struct config *cfg, int gap, int l, int rep)
{
	return ((size_t)gap * (size_t)cfg->nlocks + (size_t)l) * (size_t)cfg->reps + (size_t)rep;
}

/* One gap's slice of a scan's array: laid out as the plain hammer's
 * [lock][rep]. */
static const double *gap_slice(const struct config *cfg, const double *v, int gap)
{
	return &v[cell(cfg, gap, 0, 0)];
}

/* Throughput ratio of lock @l to lock @ref at @gap: the median of the
 * per-repetition ratios ref ns / l ns; 0 without both. */
static double gap_ratio(const struct config *cfg, const double *ns, int gap, int l, int ref)
{
	return paired_ratio(gap_slice(cfg, ns, gap), cfg->reps, ref, l);
}

/* Geometric mean over the gaps of gap_ratio(), with its extremes. */
static double gaps_geomean(const struct config *cfg, const double *ns, int l, int ref, double *mn,
                           double *mx)
{
	double sum = 0;

	*mn = 1e300;
	*mx = 0;
	for (int g = 0; g < cfg->gaps; g++) {
		double r = gap_ratio(cfg, ns, g, l, ref);
		if (r <= 0)
			return 0;
		sum += log(r);
		*mn = r < *mn ? r : *mn;
		*mx = r > *mx ? r : *mx;
	}
	return exp(sum / cfg->gaps);
}

static double gap_median(const struct config *cfg, const double *v, int gap, int l)
{
	return bench_median(reps_of(gap_slice(cfg, v, gap), cfg->reps, l), cfg->reps, NULL, NULL);
}

static void print_gaps_text(FILE *f, const struct config *cfg, const double *ns,
                            const double *per_ho, int threads, int rq, int ql, int mutex)
{
	fprintf(f,
	        "\nHammer gap scan: %d threads x %llu acquisitions, critical section one shared "
	        "increment,\nthen g nop instructions; per gap: ns per acquisition and "
	        "acquisitions per hand-over\n(medians of %d interleaved runs), RQL/QL "
	        "throughput (median of paired ratios)\n%-4s",
	        threads, (unsigned long long)cfg->iters, cfg->reps, "gap");
	for (int l = 0; l < cfg->nlocks; l++)
		fprintf(f, " %17s %7s", cfg->locks[l]->name, "acq/ho");
	fprintf(f, " %7s\n", "RQL/QL");
	for (int g = 0; g < cfg->gaps; g++) {
		fprintf(f, "%-4d", g);
		for (int l = 0; l < cfg->nlocks; l++)
			fprintf(f, " %17.2f %7.1f", gap_median(cfg, ns, g, l),
			        gap_median(cfg, per_ho, g, l));
		if (rq >= 0 && ql >= 0)
			fprintf(f, " %7.2f\n", gap_ratio(cfg, ns, g, rq, ql));
		else
			fprintf(f, " %7s\n", "-");
	}
	if (rq < 0)
		return;
	fprintf(f, "\nOver the %d gaps (geometric mean of the per-gap ratios, min-max)\n",
	        cfg->gaps);
	const int refs[2] = {ql, mutex};
	const char *const names[2] = {"QL", "pthread_mutex"};
	for (int i = 0; i < 2; i++) {
		double mn, mx, gm = gaps_geomean(cfg, ns, rq, refs[i], &mn, &mx);
		if (gm > 0)
			fprintf(f, "  RQL/%s = %.2f (%.2f-%.2f)\n", names[i], gm, mn, mx);
	}
}

/* ,"@key":G with G the geometric mean of gap_ratio(@l, @ref), or null
 * without either lock. */
static void json_geomean(FILE *json, const struct config *cfg, const double *ns, const char *key,
                         int l, int ref)
{
	double mn, mx, gm = l >= 0 && ref >= 0 ? gaps_geomean(cfg, ns, l, ref, &mn, &mx) : 0;

	if (gm > 0)
		fprintf(json, ",\"%s\":%.4f", key, gm);
	else
		fprintf(json, ",\"%s\":null", key);
}

static void write_gaps_data(const struct config *cfg, const double *ns, const double *per_ho,
                            int threads, int rq, int ql, int mutex, const uint64_t *bad,
                            const uint64_t *pre, bool ok)
{
	FILE *csv = open_out(cfg->csv_path), *json = open_out(cfg->json_path);

	if (csv)
		fprintf(csv, "threads,gap,lock,median_ns,acq_per_handover,throughput_vs_ql,"
		             "throughput_vs_pthread_mutex,errors_all_gaps\n");
	if (json) {
		print_json_open(json, "hammer-gaps");
		fprintf(json, "\"threads\":%d,\"iters\":%llu,\"reps\":%d,\"gaps\":%d,\"locks\":[",
		        threads, (unsigned long long)cfg->iters, cfg->reps, cfg->gaps);
	}
	for (int l = 0; l < cfg->nlocks; l++) {
		const char *name = cfg->locks[l]->name;
		if (json)
			fprintf(json,
			        "%s{\"lock\":\"%s\",\"errors\":%llu,\"preempted_runs\":%llu,"
			        "\"per_gap\":[",
			        l ? "," : "", name, (unsigned long long)bad[l],
			        (unsigned long long)pre[l]);
		for (int g = 0; g < cfg->gaps; g++) {
			double m = gap_median(cfg, ns, g, l), h = gap_median(cfg, per_ho, g, l);
			double q = gap_ratio(cfg, ns, g, l, ql),
			       x = gap_ratio(cfg, ns, g, l, mutex);
			if (csv)
				fprintf(csv, "%d,%d,%s,%.3f,%.2f,%.4f,%.4f,%llu\n", threads, g,
				        name, m, h, q, x, (unsigned long long)bad[l]);
			if (json)
				fprintf(
				    json,
				    "%s{\"gap\":%d,\"median_ns\":%.3f,\"acq_per_handover\":%.2f,"
				    "\"throughput_vs_ql\":%.4f,\"throughput_vs_pthread_mutex\":%."
				    "4f}",
				    g ? "," : "", g, m, h, q, x);
		}
		if (json)
			fprintf(json, "]}");
	}
	if (json) {
		fprintf(json, "]");
		json_geomean(json, cfg, ns, "geomean_throughput_rql_vs_ql", rq, ql);
		json_geomean(json, cfg, ns, "geomean_throughput_rql_vs_pthread_mutex", rq, mutex);
		fprintf(json, ",\"verdict\":\"%s\"}\n", ok ? "SUCCESS" : "FAILURE");
	}
	close_out(csv);
	close_out(json);
}

static int bench_hammer_gaps(const struct config *cfg)
{
	int nl = cfg->nlocks, reps = cfg->reps, threads = cfg->threads[0];
	size_t cells = (size_t)cfg->gaps * (size_t)nl * (size_t)reps;
	double *ns = xcalloc(cells, sizeof(double)), *per_ho = xcalloc(cells, sizeof(double));
	uint64_t *bad = xcalloc((size_t)nl, sizeof(uint64_t));
	uint64_t *pre = xcalloc((size_t)nl, sizeof(uint64_t));
	int rq = bench_find_lock(cfg, "rqspinlock"), ql = bench_find_lock(cfg, "ql");
	int mutex = bench_find_lock(cfg, "pthread-mutex");
	bool ok = true;

	/* Every lock at one gap before the next gap, rotated per repetition. */
	for (int rep = 0; rep < reps; rep++)
		for (int g = 0; g < cfg->gaps; g++)
			for (int j = 0; j < nl; j++) {
				int l = (j + rep + g) % nl;
				progress(cfg, "hammer rep %d/%d gap %d  %-14s", rep + 1, reps, g,
				         cfg->locks[l]->name);
				size_t c = cell(cfg, g, l, rep);

				ns[c] = hammer_once(cfg, cfg->locks[l], threads, g, &bad[l],
				                    &pre[l], &per_ho[c]);
			}
	progress_end(cfg);
	for (int l = 0; l < nl; l++)
		ok &= bad[l] == 0;
	if (!cfg->quiet) {
		print_gaps_text(cfg->text, cfg, ns, per_ho, threads, rq, ql, mutex);
		print_preempted(cfg->text, cfg, pre, reps * cfg->gaps);
	}
	write_gaps_data(cfg, ns, per_ho, threads, rq, ql, mutex, bad, pre, ok);
	print_verdict(cfg->text, ok, "hammer");
	free(ns);
	free(per_ho);
	free(bad);
	free(pre);
	return ok ? 0 : 1;
}

int bench_hammer(const struct config *cfg)
{
	int nl = cfg->nlocks, reps = cfg->reps, threads = cfg->threads[0];
	double *ns;
	uint64_t *bad, *pre;
	int ref[3];
	bool ok = true;

	if (cfg->gaps)
		return bench_hammer_gaps(cfg);
	ns = xcalloc((size_t)nl * (size_t)reps, sizeof(double));
	bad = xcalloc((size_t)nl, sizeof(uint64_t));
	pre = xcalloc((size_t)nl, sizeof(uint64_t));
	for (int i = 0; i < 3; i++)
		ref[i] = bench_find_lock(cfg, ref_names[i]);
	for (int rep = 0; rep < reps; rep++)
		for (int j = 0; j < nl; j++) {
			int l = (j + rep) % nl;
			progress(cfg, "hammer rep %d/%d  %-14s", rep + 1, reps,
			         cfg->locks[l]->name);
			ns[(size_t)l * (size_t)reps + (size_t)rep] =
			    hammer_once(cfg, cfg->locks[l], threads, -1, &bad[l], &pre[l], NULL);
		}
	progress_end(cfg);
	for (int l = 0; l < nl; l++)
		ok &= bad[l] == 0;
	if (!cfg->quiet) {
		print_hammer_text(cfg->text, cfg, ns, threads, ref);
		print_preempted(cfg->text, cfg, pre, reps);
	}
	write_hammer_data(cfg, ns, threads, ref, bad, pre, ok);
	print_verdict(cfg->text, ok, "hammer");
	free(ns);
	free(bad);
	free(pre);
	return ok ? 0 : 1;
}
