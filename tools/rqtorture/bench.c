/* SPDX-License-Identifier: MIT */
/*
 * Benchmarks. --sweep: every lock type at every thread count, interleaved
 * (each repetition visits every cell once, in a rotated lock order), so
 * that drift on a noisy machine hits all locks alike; medians and spread
 * per cell, and the RQL/QL ratio as the median of per-repetition pairs.
 * --uncontended: one thread, lock+unlock pairs, ns per pair, interleaved.
 * (--hammer is in hammer.c.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rqtorture.h"

/* Median of n values (sorted copy), plus min and max. */
double bench_median(const double *v, int n, double *mn, double *mx)
{
	double s[256];

	if (n > 256)
		n = 256;
	memcpy(s, v, sizeof(double) * (size_t)n);
	rqu_sort_doubles(s, (size_t)n);
	if (mn)
		*mn = s[0];
	if (mx)
		*mx = s[n - 1];
	return rqu_median_sorted(s, (size_t)n);
}

struct sweep {
	int nt, nl, reps;
	double *ops;      /* [t][l][rep] acquisitions per second */
	uint64_t *errors; /* [t][l] */
	uint64_t *violations;
};

static double *cell(const struct sweep *s, int t, int l)
{
	return &s->ops[((size_t)t * (size_t)s->nl + (size_t)l) * (size_t)s->reps];
}

int bench_find_lock(const struct config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nlocks; i++)
		if (strcmp(cfg->locks[i]->name, name) == 0)
			return i;
	return -1;
}

static double cell_median(const struct sweep *s, int t, int l, double *mn, double *mx)
{
	return bench_median(cell(s, t, l), s->reps, mn, mx);
}

/* RQL/QL as the median of the per-repetition ratios (runs of a pair are adjacent). */
static double paired_ratio(const struct sweep *s, int t, int a, int b, double *mn, double *mx)
{
	double r[256];
	int n = s->reps < 256 ? s->reps : 256;

	for (int i = 0; i < n; i++)
		r[i] = cell(s, t, b)[i] > 0 ? cell(s, t, a)[i] / cell(s, t, b)[i] : 0;
	return bench_median(r, n, mn, mx);
}

static void run_cells(const struct config *cfg, struct sweep *s)
{
	struct config c = *cfg;

	c.progress = false;
	for (int rep = 0; rep < s->reps; rep++)
		for (int t = 0; t < s->nt; t++)
			for (int j = 0; j < s->nl; j++) {
				int l = (j + rep + t) % s->nl;
				struct run_result r;
				progress(cfg, "sweep rep %d/%d  threads %3d  %-14s", rep + 1,
				         s->reps, cfg->threads[t], cfg->locks[l]->name);
				if (torture_run(&c, cfg->locks[l], cfg->threads[t], &r) != 0) {
					fprintf(stderr, "rqtorture: run failed to start\n");
					exit(1);
				}
				cell(s, t, l)[rep] = r.secs > 0 ? (double)r.total / r.secs : 0;
				s->errors[t * s->nl + l] +=
				    r.err_deadlk + r.err_timedout + r.err_other;
				s->violations[t * s->nl + l] += r.violations + r.lost_updates;
				run_result_free(&r);
			}
	progress_end(cfg);
}

static void print_tput_table(FILE *f, const struct config *cfg, const struct sweep *s)
{
	fprintf(f,
	        "\nThroughput, million acquisitions/s (median of %d interleaved runs of %.2f s; "
	        "+-: half the min-max spread, %% of median)\n",
	        s->reps, cfg->duration_s);
	fprintf(f, "%-8s", "Threads");
	for (int l = 0; l < s->nl; l++)
		fprintf(f, " %16s", cfg->locks[l]->name);
	fprintf(f, "\n");
	for (int t = 0; t < s->nt; t++) {
		fprintf(f, "%-8d", cfg->threads[t]);
		for (int l = 0; l < s->nl; l++) {
			double mn, mx, m = cell_median(s, t, l, &mn, &mx);
			double spread = m > 0 ? 50.0 * (mx - mn) / m : 0.0;
			if (spread > 999)
				fprintf(f, " %9.3f+>999%%", m / 1e6);
			else
				fprintf(f, " %9.3f+-%3.0f%%", m / 1e6, spread);
		}
		fprintf(f, "\n");
	}
}

/* The cover letter's table: Threads QL RQL Speedup (or another reference than QL). */
static void print_ratio_table(FILE *f, const struct config *cfg, const struct sweep *s, int rq,
                              int ql, const char *title, const char *ref)
{
	fprintf(f, "\nrqspinlock (RQL) vs %s, acquisitions/s, medians\n", title);
	fprintf(f, "%-8s%-14s%-14s%-9s%-22s\n", "Threads", ref, "RQL", "Speedup",
	        "paired ratio [min-max]");
	fprintf(f, "---------------------------------------------------------------------\n");
	for (int t = 0; t < s->nt; t++) {
		double q = cell_median(s, t, ql, NULL, NULL), r = cell_median(s, t, rq, NULL, NULL);
		double mn, mx, p = paired_ratio(s, t, rq, ql, &mn, &mx);
		fprintf(f, "%-8d%-14.0f%-14.0f%-9.2f%.2f [%.2f-%.2f]\n", cfg->threads[t], q, r,
		        q > 0 ? r / q : 0, p, mn, mx);
	}
}

static double best_of(const struct config *cfg, const struct sweep *s, int t, unsigned flag,
                      const char **who)
{
	double best = 0;

	*who = "-";
	for (int l = 0; l < s->nl; l++) {
		if (!(cfg->locks[l]->flags & flag))
			continue;
		double m = cell_median(s, t, l, NULL, NULL);
		if (m > best) {
			best = m;
			*who = cfg->locks[l]->name;
		}
	}
	return best;
}

/* Decimals for @measured beside its verdict: 2, or more where 2 would
 * print a failing figure as meeting its ">= X" @target ("0.95 FAIL"). */
static int goal_decimals(bool ok, double measured, const char *target)
{
	char shown[64];
	double want;
	int prec = 2;

	if (ok || sscanf(target, ">= %lf", &want) != 1)
		return prec;
	for (; prec < 6; prec++) {
		snprintf(shown, sizeof(shown), "%.*f", prec, measured);
		if (strtod(shown, NULL) < want)
			break;
	}
	return prec;
}

void bench_goal(FILE *f, bool ok, const char *label, double measured, const char *target)
{
	fprintf(f, "  %-4s %s = %.*f (goal %s)\n", ok ? "PASS" : "FAIL", label,
	        goal_decimals(ok, measured, target), measured, target);
}

/* RQL against pthread_mutex: a goal at 1 and 2 threads; reported (no goal) beyond the CPUs. */
static void mutex_goal(FILE *f, const struct sweep *s, int t, int th, int rq, int mutex)
{
	char label[160];
	double p;

	if (mutex < 0 || (th > 2 && th <= ncpus()))
		return;
	p = paired_ratio(s, t, rq, mutex, NULL, NULL);
	if (th <= 2) {
		snprintf(label, sizeof(label), "%3d threads: RQL/pthread_mutex", th);
		bench_goal(f, p >= 1.0, label, p, ">= 1.00");
	} else {
		fprintf(f, "  INFO %3d threads (oversubscribed): RQL/pthread_mutex = %.2f\n", th,
		        p);
	}
}

static void print_goals(FILE *f, const struct config *cfg, const struct sweep *s, int rq, int ql,
                        int mutex)
{
	int cpus = ncpus();
	char label[160];

	fprintf(f, "\nGoals (%d online CPUs)\n", cpus);
	for (int t = 0; t < s->nt; t++) {
		int th = cfg->threads[t];
		double r = cell_median(s, t, rq, NULL, NULL);
		if (ql >= 0) {
			double p = paired_ratio(s, t, rq, ql, NULL, NULL);
			snprintf(label, sizeof(label), "%3d threads: RQL/QL", th);
			bench_goal(f, p >= 0.95, label, p, ">= 0.95");
		}
		mutex_goal(f, s, t, th, rq, mutex);
		const char *who;
		double ck = best_of(cfg, s, t, LK_CK, &who);
		if (th <= 2 && ck > 0) {
			snprintf(label, sizeof(label), "%3d threads: RQL/best ck lock (%s)", th,
			         who);
			bench_goal(f, r >= ck, label, r / ck, ">= 1.00");
		}
		double peer = best_of(cfg, s, t, LK_SPIN, &who);
		if (th > cpus && peer > 0) {
			snprintf(label, sizeof(label),
			         "%3d threads (oversubscribed): RQL/best spin peer (%s)", th, who);
			bench_goal(f, r >= 0.9 * peer, label, r / peer, ">= 0.90");
		}
	}
	for (int l = 0; l < s->nl; l++) {
		uint64_t errs = 0;
		if (!(cfg->locks[l]->flags & LK_RESILIENT))
			continue;
		for (int t = 0; t < s->nt; t++)
			errs += s->errors[t * s->nl + l];
		snprintf(label, sizeof(label), "false errors from %s, all runs",
		         cfg->locks[l]->name);
		bench_goal(f, errs == 0, label, (double)errs, "0");
	}
}

static void write_sweep_csv(const struct config *cfg, const struct sweep *s, int rq, int ql)
{
	FILE *f = open_out(cfg->csv_path);

	if (!f)
		return;
	fprintf(f, "threads,lock,median_ops_per_s,min_ops_per_s,max_ops_per_s,ratio_vs_ql,errors,"
	           "violations");
	for (int i = 0; i < s->reps; i++)
		fprintf(f, ",rep%d", i + 1);
	fprintf(f, "\n");
	for (int t = 0; t < s->nt; t++)
		for (int l = 0; l < s->nl; l++) {
			double mn, mx, m = cell_median(s, t, l, &mn, &mx);
			double ratio = ql >= 0 ? paired_ratio(s, t, l, ql, NULL, NULL) : 0;
			fprintf(f, "%d,%s,%.0f,%.0f,%.0f,%.4f,%llu,%llu", cfg->threads[t],
			        cfg->locks[l]->name, m, mn, mx, ratio,
			        (unsigned long long)s->errors[t * s->nl + l],
			        (unsigned long long)s->violations[t * s->nl + l]);
			for (int i = 0; i < s->reps; i++)
				fprintf(f, ",%.0f", cell(s, t, l)[i]);
			fprintf(f, "\n");
		}
	close_out(f);
	(void)rq;
}

static void write_sweep_json(const struct config *cfg, const struct sweep *s, int ql, bool ok)
{
	FILE *f = open_out(cfg->json_path);

	if (!f)
		return;
	print_json_open(f, "sweep");
	fprintf(f, "\"ncpus\":%d,\"reps\":%d,\"duration_s\":%.3f,\"cells\":[", ncpus(), s->reps,
	        cfg->duration_s);
	for (int t = 0; t < s->nt; t++)
		for (int l = 0; l < s->nl; l++) {
			double mn, mx, m = cell_median(s, t, l, &mn, &mx);
			fprintf(f,
			        "%s{\"threads\":%d,\"lock\":\"%s\",\"median\":%.0f,\"min\":%.0f,"
			        "\"max\":%.0f,\"ratio_vs_ql\":%.4f,\"errors\":%llu,\"runs\":[",
			        t + l ? "," : "", cfg->threads[t], cfg->locks[l]->name, m, mn, mx,
			        ql >= 0 ? paired_ratio(s, t, l, ql, NULL, NULL) : 0.0,
			        (unsigned long long)s->errors[t * s->nl + l]);
			for (int i = 0; i < s->reps; i++)
				fprintf(f, "%s%.0f", i ? "," : "", cell(s, t, l)[i]);
			fprintf(f, "]}");
		}
	fprintf(f, "],\"verdict\":\"%s\"}\n", ok ? "SUCCESS" : "FAILURE");
	close_out(f);
}

int bench_sweep(const struct config *cfg)
{
	struct sweep s = {cfg->nthreads, cfg->nlocks, cfg->reps, NULL, NULL, NULL};
	int rq = bench_find_lock(cfg, "rqspinlock"), ql = bench_find_lock(cfg, "ql");
	int mutex = bench_find_lock(cfg, "pthread-mutex");
	bool ok = true;

	s.ops = xcalloc((size_t)s.nt * (size_t)s.nl * (size_t)s.reps, sizeof(double));
	s.errors = xcalloc((size_t)s.nt * (size_t)s.nl, sizeof(uint64_t));
	s.violations = xcalloc((size_t)s.nt * (size_t)s.nl, sizeof(uint64_t));
	run_cells(cfg, &s);
	if (!cfg->quiet) {
		print_tput_table(cfg->text, cfg, &s);
		if (rq >= 0 && ql >= 0)
			print_ratio_table(cfg->text, cfg, &s, rq, ql, "qspinlock baseline (QL)",
			                  "QL");
		if (rq >= 0 && mutex >= 0)
			print_ratio_table(cfg->text, cfg, &s, rq, mutex, "glibc pthread_mutex",
			                  "mutex");
		if (rq >= 0)
			print_goals(cfg->text, cfg, &s, rq, ql, mutex);
	}
	for (int i = 0; i < s.nt * s.nl; i++)
		if (s.violations[i] ||
		    ((cfg->locks[i % s.nl]->flags & LK_RESILIENT) && s.errors[i]))
			ok = false;
	write_sweep_csv(cfg, &s, rq, ql);
	write_sweep_json(cfg, &s, ql, ok);
	print_verdict(cfg->text, ok, "sweep");
	free(s.ops);
	free(s.errors);
	free(s.violations);
	return ok ? 0 : 1;
}

/* ---- uncontended ---------------------------------------------------- */

/* @iters pairs of @ops, through its lk_ops, or its tight loop (--tight);
 * ns per pair. */
static double time_pairs(const struct config *cfg, const struct lk_ops *ops, uint64_t *errors)
{
	struct lk_slot *s = NULL;
	union lk_node n;
	lk_tight_fn tight = cfg->tight ? lk_tight(ops) : NULL;
	uint64_t iters = cfg->iters;

	if (posix_memalign((void **)&s, RQT_CACHELINE, sizeof(*s)) != 0)
		return 0;
	memset(s, 0, sizeof(*s));
	memset(&n, 0, sizeof(n));
	if (ops->prepare)
		ops->prepare();
	ops->init(&s->lock);
	if (ops->node_init)
		ops->node_init(&n);
	uint64_t t0 = rqu_now_ns();
	if (tight) {
		*errors += tight(&s->lock, iters);
	} else {
		for (uint64_t i = 0; i < iters; i++) {
			if (ops->lock(&s->lock, &n) != 0) {
				(*errors)++;
				continue;
			}
			ops->unlock(&s->lock, &n);
		}
	}
	uint64_t dt = rqu_now_ns() - t0;
	free(s);
	return iters ? (double)dt / (double)iters : 0;
}

static double *row_of(double *v, int row, int width)
{
	return &v[(size_t)row * (size_t)width];
}

/* Median, min and max of the per-repetition ratios ns[a] / ns[b]. */
static double pair_ratio(double *ns, int reps, int a, int b, double *mn, double *mx)
{
	double r[256] = {0};
	int n = reps < 256 ? reps : 256;

	for (int i = 0; i < n; i++) {
		double d = row_of(ns, b, reps)[i];
		r[i] = d > 0 ? row_of(ns, a, reps)[i] / d : 0;
	}
	return bench_median(r, n, mn, mx);
}

/* The goal of issue 39 (docs/BENCHMARKS.md, "Core speed against glibc"):
 * the uncontended pair at most 1.10 x pthread_spin's, as paired ratios;
 * rqspinlock-inline reported beside it. */
static void print_uncontended_goals(FILE *f, const struct config *cfg, double *ns)
{
	int ps = bench_find_lock(cfg, "pthread-spin");
	const char *const names[] = {"rqspinlock", "rqspinlock-inline"};

	if (ps < 0)
		return;
	fprintf(f, "\nGoals (uncontended%s, paired ns ratios: median [min-max] of %d runs)\n",
	        cfg->tight ? ", tight loop" : "", cfg->reps);
	for (int i = 0; i < 2; i++) {
		int l = bench_find_lock(cfg, names[i]);
		double mn, mx, r;
		char label[96];

		if (l < 0)
			continue;
		r = pair_ratio(ns, cfg->reps, l, ps, &mn, &mx);
		(void)snprintf(label, sizeof(label), "%s/pthread_spin [%.2f-%.2f]",
		               i ? "RQL-inline" : "RQL", mn, mx);
		bench_goal(f, r <= 1.10, label, r, "<= 1.10");
	}
}

int bench_uncontended(const struct config *cfg)
{
	int nl = cfg->nlocks, reps = cfg->reps;
	double *ns = xcalloc((size_t)nl * (size_t)reps, sizeof(double));
	uint64_t errors = 0;
	int ql = bench_find_lock(cfg, "ql"), ps = bench_find_lock(cfg, "pthread-spin");
	FILE *csv = open_out(cfg->csv_path), *json = open_out(cfg->json_path);

	(void)pin_thread(cfg->pin, 0);
	for (int rep = 0; rep < reps; rep++)
		for (int j = 0; j < nl; j++) {
			int l = (j + rep) % nl;
			row_of(ns, l, reps)[rep] = time_pairs(cfg, cfg->locks[l], &errors);
		}
	if (!cfg->quiet)
		fprintf(
		    cfg->text,
		    "\nUncontended lock+unlock pair%s, ns (median of %d interleaved runs of "
		    "%llu pairs, one thread);\nvs: medians of the paired per-run time ratios, lock "
		    "ns / reference ns (below 1 the lock is faster)\n"
		    "%-20s %7s %8s %8s %8s %8s\n",
		    cfg->tight ? ", tight loop (direct calls)" : "", reps,
		    (unsigned long long)cfg->iters, "lock", "median", "min", "max", "vs ql",
		    "vs pspin");
	if (csv)
		fprintf(csv, "lock,median_ns,min_ns,max_ns,ratio_vs_ql,ratio_vs_pthread_spin\n");
	if (json) {
		print_json_open(json, cfg->tight ? "uncontended-tight" : "uncontended");
		fprintf(json, "\"reps\":%d,\"iters\":%llu,\"locks\":[", reps,
		        (unsigned long long)cfg->iters);
	}
	for (int l = 0; l < nl; l++) {
		double mn, mx, m = bench_median(row_of(ns, l, reps), reps, &mn, &mx);
		double q = ql >= 0 ? pair_ratio(ns, reps, l, ql, NULL, NULL) : 0;
		double p = ps >= 0 ? pair_ratio(ns, reps, l, ps, NULL, NULL) : 0;
		if (!cfg->quiet)
			fprintf(cfg->text, "%-20s %7.2f %8.2f %8.2f %8.2f %8.2f\n",
			        cfg->locks[l]->name, m, mn, mx, q, p);
		if (csv)
			fprintf(csv, "%s,%.3f,%.3f,%.3f,%.4f,%.4f\n", cfg->locks[l]->name, m, mn,
			        mx, q, p);
		if (json)
			fprintf(
			    json,
			    "%s{\"lock\":\"%s\",\"median_ns\":%.3f,\"min_ns\":%.3f,"
			    "\"max_ns\":%.3f,\"ratio_vs_ql\":%.4f,\"ratio_vs_pthread_spin\":%.4f}",
			    l ? "," : "", cfg->locks[l]->name, m, mn, mx, q, p);
	}
	if (!cfg->quiet)
		print_uncontended_goals(cfg->text, cfg, ns);
	if (json)
		fprintf(json, "],\"errors\":%llu,\"verdict\":\"%s\"}\n", (unsigned long long)errors,
		        errors == 0 ? "SUCCESS" : "FAILURE");
	close_out(csv);
	close_out(json);
	free(ns);
	print_verdict(cfg->text, errors == 0, "uncontended");
	return errors == 0 ? 0 : 1;
}
