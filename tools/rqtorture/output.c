/* SPDX-License-Identifier: MIT */
/* Reports: locktorture-style text, JSON (one object), CSV (one row per run). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rqtorture.h"

/* A report that could not be written: the run fails (exit status 1). */
static bool out_failed;

FILE *open_out(const char *path)
{
	if (path == NULL)
		return NULL;
	if (strcmp(path, "-") == 0)
		return stdout;
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "rqtorture: cannot write %s: %s\n", path, strerror(errno));
		out_failed = true;
	}
	return f;
}

bool check_out_path(const char *path)
{
	FILE *f = open_out(path);

	if (path && !f)
		return false;
	if (f != stdout)
		close_out(f);
	return true;
}

void close_out(FILE *f)
{
	if (f == NULL)
		return;
	if (f == stdout ? fflush(f) != 0 || ferror(f) : ferror(f) | fclose(f)) {
		fprintf(stderr, "rqtorture: writing a report failed: %s\n", strerror(errno));
		out_failed = true;
	}
}

int output_status(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "rqtorture: writing to standard output failed: %s\n",
		        strerror(errno));
		out_failed = true;
	}
	return out_failed && rc == 0 ? 1 : rc;
}

/* @p s as a JSON string (quotes and backslashes escaped, controls dropped). */
static void print_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The first "model name" of /proc/cpuinfo into @p buf ("unknown" if none). */
static void cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, size, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(buf, size, "%s", colon + 1 + (colon[1] == ' '));
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
}

/* Opens a JSON report: {"mode":MODE,"meta":{tool, version, commit, host,
 * kernel, machine, cpu_model}, and the caller's fields follow. */
void print_json_open(FILE *f, const char *mode)
{
	struct utsname u;
	char cpu[160];

	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	cpu_model(cpu, sizeof(cpu));
	fprintf(f,
	        "{\"mode\":\"%s\",\"meta\":{\"tool\":\"rqtorture\",\"version\":\"%s\","
	        "\"commit\":",
	        mode, rqspinlock_version());
	print_json_string(f, RQT_COMMIT);
	fputs(",\"host\":", f);
	print_json_string(f, u.nodename);
	fputs(",\"kernel\":", f);
	print_json_string(f, u.release);
	fputs(",\"machine\":", f);
	print_json_string(f, u.machine);
	fputs(",\"cpu_model\":", f);
	print_json_string(f, cpu);
	fputs("},", f);
}

void print_verdict(FILE *f, bool ok, const char *what)
{
	fprintf(f, "--- End of test: %s: %s\n", ok ? "SUCCESS" : "FAILURE", what);
	fflush(f);
}

static void print_lat_text(FILE *f, const char *title, const struct hist *h)
{
	if (h->n == 0) {
		fprintf(f, "  %s: no samples\n", title);
		return;
	}
	fprintf(f,
	        "  %s (ns, %llu samples): p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu  "
	        "mean %.0f\n",
	        title, (unsigned long long)h->n, (unsigned long long)hist_pct(h, 50),
	        (unsigned long long)hist_pct(h, 90), (unsigned long long)hist_pct(h, 99),
	        (unsigned long long)hist_pct(h, 99.9), (unsigned long long)h->max,
	        (double)h->sum / (double)h->n);
}

void print_lat_json(FILE *f, const struct hist *h)
{
	fprintf(f,
	        "{\"n\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"p999\":%llu,\"max\":%llu,"
	        "\"mean\":%.1f}",
	        (unsigned long long)h->n, (unsigned long long)hist_pct(h, 50),
	        (unsigned long long)hist_pct(h, 90), (unsigned long long)hist_pct(h, 99),
	        (unsigned long long)hist_pct(h, 99.9), (unsigned long long)h->max,
	        h->n ? (double)h->sum / (double)h->n : 0.0);
}

/* The library counters worth showing, by name, in report order. */
static const struct {
	const char *name;
	size_t off;
} lib_fields[] = {
    {"slowpath", offsetof(struct rqspinlock_stats, lock_slowpath)},
    {"pending", offsetof(struct rqspinlock_stats, lock_pending)},
    {"tas", offsetof(struct rqspinlock_stats, lock_tas)},
    {"no_node", offsetof(struct rqspinlock_stats, lock_no_node)},
    {"yields", offsetof(struct rqspinlock_stats, yields)},
    {"deadlock_aa", offsetof(struct rqspinlock_stats, deadlock_aa)},
    {"deadlock_abba", offsetof(struct rqspinlock_stats, deadlock_abba)},
    {"deadlock_cycle", offsetof(struct rqspinlock_stats, deadlock_cycle)},
    {"timeout", offsetof(struct rqspinlock_stats, timeout)},
    {"queue_handoff", offsetof(struct rqspinlock_stats, queue_handoff)},
    {"deadline_extensions", offsetof(struct rqspinlock_stats, deadline_extensions)},
    {"timeout_owner_running", offsetof(struct rqspinlock_stats, timeout_owner_running)},
    {"timeout_owner_blocked", offsetof(struct rqspinlock_stats, timeout_owner_blocked)},
    {"timeout_owner_unknown", offsetof(struct rqspinlock_stats, timeout_owner_unknown)},
};
#define NLIB (sizeof(lib_fields) / sizeof(lib_fields[0]))

static unsigned long long lib_field(const struct rqspinlock_stats *s, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)s + lib_fields[i].off, sizeof(v));
	return (unsigned long long)v;
}

static void print_lib_text(FILE *f, const struct rqspinlock_stats *s)
{
	fprintf(f, "  Library:");
	for (size_t i = 0; i < NLIB; i++)
		fprintf(f, " %s %llu", lib_fields[i].name, lib_field(s, i));
	fprintf(f, "\n");
}

static void print_lib_json(FILE *f, const struct rqspinlock_stats *s)
{
	for (size_t i = 0; i < NLIB; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "{", lib_fields[i].name, lib_field(s, i));
	fprintf(f, "}");
}

static void print_config_text(FILE *f, const struct config *cfg, const char *lock, int threads)
{
	char long_hold[64] = "off";

	if (cfg->long_hold_every)
		snprintf(long_hold, sizeof(long_hold), "1/%llu@%lluns",
		         (unsigned long long)cfg->long_hold_every,
		         (unsigned long long)cfg->long_hold_ns);
	fprintf(f,
	        "rqtorture: lock=%s nwriters_stress=%d duration=%.2fs cs=%lluns ncs=%lluns "
	        "long_hold=%s nested=%d stutter=%llums pin=%s seed=%llu overload=%d\n",
	        lock, threads, cfg->duration_s, (unsigned long long)cfg->cs_ns,
	        (unsigned long long)cfg->ncs_ns, long_hold, cfg->nested,
	        (unsigned long long)cfg->stutter_ms, cfg->pin, (unsigned long long)cfg->seed,
	        cfg->overload);
}

void print_run_text(FILE *f, const struct config *cfg, const struct run_result *r)
{
	uint64_t fail =
	    r->err_deadlk + r->err_timedout + r->err_other + r->violations + r->lost_updates;

	print_config_text(f, cfg, r->ops->name, r->threads);
	/* locktorture's line: ??? flags unfairness, !!! flags failures. */
	fprintf(f, "Writes:  Total: %llu  Max/Min: %llu/%llu %s  Fail: %llu %s\n",
	        (unsigned long long)r->total, (unsigned long long)r->max,
	        (unsigned long long)r->min, run_unfair(r) ? "???" : "", (unsigned long long)fail,
	        fail ? "!!!" : "");
	fprintf(f, "  Throughput: %.0f acquisitions/s over %.3f s\n",
	        r->secs > 0 ? (double)r->total / r->secs : 0.0, r->secs);
	fprintf(f, "  Per thread:");
	for (int i = 0; i < r->threads; i++)
		fprintf(f, " %llu", (unsigned long long)r->per_thread[i]);
	/* lockhammer's metrics */
	fprintf(f,
	        "\n  Per lock: %.1f ns wall (window x threads / acquisitions), %.1f ns CPU "
	        "(the threads' CPU time / acquisitions)  Fairness: %.3f (stddev/mean of "
	        "per-thread acquisitions; 0 is even)",
	        run_wall_ns_per_lock(r), run_cpu_ns_per_lock(r), run_fairness(r));
	fprintf(f,
	        "\n  Errors: -EDEADLK %llu  -ETIMEDOUT %llu  other %llu  | mutual exclusion: "
	        "overlaps %llu  lost updates %llu\n",
	        (unsigned long long)r->err_deadlk, (unsigned long long)r->err_timedout,
	        (unsigned long long)r->err_other, (unsigned long long)r->violations,
	        (unsigned long long)r->lost_updates);
	print_lat_text(f, "Acquire latency", &r->lat);
	if (lk_is_rq(r->ops))
		print_lib_text(f, &r->lib);
	char what[160];
	snprintf(what, sizeof(what), "%s%s%s%s", r->ops->name, run_failed(r) ? " (" : "",
	         run_failed(r) ? run_failure(r) : "", run_failed(r) ? ")" : "");
	print_verdict(f, !run_failed(r), what);
}

void print_run_json(FILE *f, const struct config *cfg, const struct run_result *r, bool last)
{
	fprintf(f,
	        "{\"lock\":\"%s\",\"threads\":%d,\"secs\":%.4f,\"total\":%llu,"
	        "\"ops_per_s\":%.0f,\"max\":%llu,\"min\":%llu,\"unfair\":%s,\"per_thread\":[",
	        r->ops->name, r->threads, r->secs, (unsigned long long)r->total,
	        r->secs > 0 ? (double)r->total / r->secs : 0.0, (unsigned long long)r->max,
	        (unsigned long long)r->min, run_unfair(r) ? "true" : "false");
	for (int i = 0; i < r->threads; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)r->per_thread[i]);
	fprintf(f, "],\"wall_ns_per_lock\":%.1f,\"cpu_ns_per_lock\":%.1f,\"fairness\":%.4f",
	        run_wall_ns_per_lock(r), run_cpu_ns_per_lock(r), run_fairness(r));
	fprintf(f,
	        ",\"errors\":{\"EDEADLK\":%llu,\"ETIMEDOUT\":%llu,\"other\":%llu},"
	        "\"violations\":%llu,\"lost_updates\":%llu,\"latency_ns\":",
	        (unsigned long long)r->err_deadlk, (unsigned long long)r->err_timedout,
	        (unsigned long long)r->err_other, (unsigned long long)r->violations,
	        (unsigned long long)r->lost_updates);
	print_lat_json(f, &r->lat);
	fprintf(f, ",\"library\":");
	print_lib_json(f, &r->lib);
	fprintf(f,
	        ",\"cs_ns\":%llu,\"ncs_ns\":%llu,\"nested\":%d,\"verdict\":\"%s\","
	        "\"failure\":\"%s\"}%s\n",
	        (unsigned long long)cfg->cs_ns, (unsigned long long)cfg->ncs_ns, cfg->nested,
	        run_failed(r) ? "FAILURE" : "SUCCESS", run_failed(r) ? run_failure(r) : "",
	        last ? "" : ",");
}

void print_run_csv_header(FILE *f)
{
	fprintf(f, "lock,threads,secs,total,ops_per_s,max,min,unfair,edeadlk,etimedout,other,"
	           "violations,lost_updates,lat_p50_ns,lat_p99_ns,lat_max_ns,verdict\n");
}

void print_run_csv(FILE *f, const struct run_result *r)
{
	fprintf(f, "%s,%d,%.4f,%llu,%.0f,%llu,%llu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%s\n",
	        r->ops->name, r->threads, r->secs, (unsigned long long)r->total,
	        r->secs > 0 ? (double)r->total / r->secs : 0.0, (unsigned long long)r->max,
	        (unsigned long long)r->min, run_unfair(r), (unsigned long long)r->err_deadlk,
	        (unsigned long long)r->err_timedout, (unsigned long long)r->err_other,
	        (unsigned long long)r->violations, (unsigned long long)r->lost_updates,
	        (unsigned long long)hist_pct(&r->lat, 50),
	        (unsigned long long)hist_pct(&r->lat, 99), (unsigned long long)r->lat.max,
	        run_failed(r) ? "FAILURE" : "SUCCESS");
}

static void print_rec_text(FILE *f, const struct rec_hist *h)
{
	char lab[32];

	fprintf(f, "  Recovery-latency histogram (bpf_test_rqspinlock buckets + sub-ms):\n");
	for (size_t i = 0; i < REC_BUCKETS; i++) {
		if (h->b[i] == 0)
			continue;
		rec_label(i, lab, sizeof(lab));
		fprintf(f, "    %-9s %llu\n", lab, (unsigned long long)h->b[i]);
	}
}

void print_inject_text(FILE *f, const struct config *cfg, const struct inject_result *r)
{
	fprintf(f,
	        "rqtorture: inject=%s via=%s lock=%s threads=%d duration=%.2fs hold=%lluns "
	        "timer=%lluns\n",
	        inject_name(r->kind), r->via_signal ? "signal" : "direct", r->ops->name, r->threads,
	        r->secs, (unsigned long long)cfg->hold_ns, (unsigned long long)cfg->timer_ns);
	if (r->via_signal)
		fprintf(
		    f,
		    "  Handler attempts while the thread held or was taking/releasing its lock: "
		    "%llu\n",
		    (unsigned long long)r->injected);
	else
		fprintf(f, "  Deadlocks injected: %llu\n", (unsigned long long)r->injected);
	fprintf(f, "  Recovered: %llu; failing calls: -EDEADLK %llu, -ETIMEDOUT %llu%s\n",
	        (unsigned long long)r->recovered, (unsigned long long)r->by_deadlk,
	        (unsigned long long)r->by_timedout,
	        r->via_signal || r->kind == INJ_AA ? "" : " (a round may have several victims)");
	if (r->via_signal)
		fprintf(f,
		        "  Acquired (no cycle formed): %llu  of which (all attempts) interrupted "
		        "inside lock/unlock: %llu\n",
		        (unsigned long long)r->acquired, (unsigned long long)r->ambiguous);
	fprintf(f,
	        "  Missed (lock granted into a deadlock): %llu  false errors: %llu  "
	        "mutual-exclusion violations: %llu  normal acquisitions: %llu\n",
	        (unsigned long long)r->missed, (unsigned long long)r->false_errors,
	        (unsigned long long)r->violations, (unsigned long long)r->normal_acq);
	print_lat_text(f, "Recovery latency", &r->lat);
	print_rec_text(f, &r->rec);
	print_lib_text(f, &r->lib);
	char what[160];
	const char *why = inject_failure(r);
	snprintf(what, sizeof(what), "inject %s via %s%s%s%s", inject_name(r->kind),
	         r->via_signal ? "signal" : "direct", why ? " (" : "", why ? why : "",
	         why ? ")" : "");
	print_verdict(f, why == NULL, what);
}

void print_inject_json(FILE *f, const struct inject_result *r, bool last)
{
	fprintf(f,
	        "{\"inject\":\"%s\",\"via\":\"%s\",\"lock\":\"%s\",\"threads\":%d,\"secs\":%.3f,"
	        "\"injected\":%llu,\"recovered\":%llu,\"by_EDEADLK\":%llu,\"by_ETIMEDOUT\":%llu,"
	        "\"acquired\":%llu,\"ambiguous\":%llu,\"missed\":%llu,\"false_errors\":%llu,"
	        "\"violations\":%llu,\"normal_acquisitions\":%llu,\"recovery_latency_ns\":",
	        inject_name(r->kind), r->via_signal ? "signal" : "direct", r->ops->name, r->threads,
	        r->secs, (unsigned long long)r->injected, (unsigned long long)r->recovered,
	        (unsigned long long)r->by_deadlk, (unsigned long long)r->by_timedout,
	        (unsigned long long)r->acquired, (unsigned long long)r->ambiguous,
	        (unsigned long long)r->missed, (unsigned long long)r->false_errors,
	        (unsigned long long)r->violations, (unsigned long long)r->normal_acq);
	print_lat_json(f, &r->lat);
	fprintf(f, ",\"histogram\":{");
	for (size_t i = 0; i < REC_BUCKETS; i++) {
		char lab[32];
		rec_label(i, lab, sizeof(lab));
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", lab, (unsigned long long)r->rec.b[i]);
	}
	fprintf(f, "},\"library\":");
	print_lib_json(f, &r->lib);
	fprintf(f, ",\"verdict\":\"%s\",\"failure\":\"%s\"}%s\n",
	        inject_failed(r) ? "FAILURE" : "SUCCESS", inject_failed(r) ? inject_failure(r) : "",
	        last ? "" : ",");
}

/* One row per histogram bucket: easy to plot. */
void print_inject_csv(FILE *f, const struct inject_result *r, bool header)
{
	char lab[32];

	if (header)
		fprintf(f, "inject,via,bucket,upper_ns,count\n");
	for (size_t i = 0; i < REC_BUCKETS; i++) {
		rec_label(i, lab, sizeof(lab));
		fprintf(f, "%s,%s,%s,%llu,%llu\n", inject_name(r->kind),
		        r->via_signal ? "signal" : "direct", lab,
		        (unsigned long long)(rec_bound_ns[i] == UINT64_MAX ? 0 : rec_bound_ns[i]),
		        (unsigned long long)r->rec.b[i]);
	}
}

/* ---- progress ---- */

static uint64_t progress_logged_ns; /* the last log line (the first call's time) */

void progress(const struct config *cfg, const char *fmt, ...)
{
	static int tty = -1;
	char line[160];
	va_list ap;

	if (!cfg->progress)
		return;
	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	if (tty) {
		fprintf(stderr, "\r  %-76s", line);
		return;
	}
	/* The first line 5 s in: a short run's log stays as it was, and no
	 * line describes a run's first instants. */
	if (!progress_logged_ns)
		progress_logged_ns = rqu_now_ns();
	if (rqu_now_ns() - progress_logged_ns < 5000000000ull)
		return;
	progress_logged_ns = rqu_now_ns();
	fprintf(stderr, "rqtorture: progress: %s\n", line);
}

void progress_end(const struct config *cfg)
{
	if (cfg->progress && isatty(STDERR_FILENO))
		fprintf(stderr, "\r%*s\r", 78, "");
}
