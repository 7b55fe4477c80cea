/* SPDX-License-Identifier: MIT */
/*
 * rqtorture: locktorture + lockhammer for rqspinlock. Shared declarations.
 *
 * Map of the tool:
 *   options.c  command line, --help
 *   locks.c    lock-type table (uniform vtable), own ticket/TAS peers
 *   locks_ck.c Concurrency Kit peers (MCS, CLH, ticket) from libck-dev
 *   util.c     calibrated delays, PRNG, pinning (the clock: util/rqu_clock.h)
 *   hist.c     log-scale latency histograms, recovery buckets
 *   torture.c  writer threads, one timed run, stutter, progress, watchdog
 *   inject.c   AA / ABBA / ABBCCA deadlock injection, direct and from signals
 *   bench.c    interleaved sweep and uncontended cost
 *   hammer.c   two-thread short-critical-section hammer, ns per acquisition
 *   output.c   text, JSON and CSV reports
 */
#ifndef RQTORTURE_H
#define RQTORTURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rqspinlock.h>
#include <rqspinlock/qspinlock.h>

#include "rqu_clock.h" /* rqu_now_ns() */
#include "rqu_stats.h"

#ifdef RQT_HAVE_CK
#include <ck_spinlock.h>
#endif

#define RQT_CACHELINE 64
#define RQT_MAX_NEST  8  /* most locks one acquisition may take (--nested) */
#define RQT_MAX_LIST  32 /* most entries in --lock / --threads lists */
#define RQT_MAX_GAPS  64 /* most gaps in a --hammer --gaps scan */
#define RQT_MAX_THR   1024

/* ---- lock types ---------------------------------------------------- */

/* Storage for one lock of any type; each lock sits in its own cache line. */
union lk_lock {
	rqspinlock_t rq;
	ql_spinlock_t ql;
	_Atomic uint32_t word;
	struct {
		_Atomic uint32_t next;
		_Atomic uint32_t owner;
	} ticket;
	pthread_spinlock_t pspin;
	pthread_mutex_t mutex;
#ifdef RQT_HAVE_CK
	ck_spinlock_mcs_t mcs;
	struct {
		ck_spinlock_clh_t *tail;
		ck_spinlock_clh_t unowned;
	} clh;
	ck_spinlock_ticket_t ckticket;
#endif
};

/* Per-thread, per-lock queue node for the queue locks that need one. */
union lk_node {
	int unused;
#ifdef RQT_HAVE_CK
	ck_spinlock_mcs_context_t mcs;
	struct {
		ck_spinlock_clh_t *cur; /* CLH nodes migrate: this is the one to use next */
		ck_spinlock_clh_t own;
	} clh;
#endif
};

enum lk_flags {
	LK_RESILIENT = 1u << 0,  /* can return -EDEADLK / -ETIMEDOUT */
	LK_SPIN = 1u << 1,       /* a spin-lock peer (not the baseline, not a mutex) */
	LK_CK = 1u << 2,         /* Concurrency Kit */
	LK_BASELINE = 1u << 3,   /* QL */
	LK_NAMED_ONLY = 1u << 4, /* not part of "all": only when named in -l */
	LK_UNLOCK_EXP = 1u << 5, /* an unlock experiment (locks_unlock.c) */
};

/* Lock wrappers are named lkop_* and kept out of line, so that callgrind's
 * --toggle-collect='lkop_*' counts exactly one lock+unlock pair. */
#define LKOP __attribute__((noinline))

/* The uniform vtable: every lock type is driven through this. */
struct lk_ops {
	const char *name; /* command-line name */
	const char *desc;
	unsigned flags;
	bool available;          /* false: built without its library */
	const char *unavailable; /* why, when !available */
	void (*prepare)(void);   /* process-wide set-up before a run (may be NULL) */
	void (*init)(union lk_lock *l);
	void (*node_init)(union lk_node *n); /* may be NULL */
	int (*lock)(union lk_lock *l, union lk_node *n);
	void (*unlock)(union lk_lock *l, union lk_node *n);
};

const struct lk_ops *lk_find(const char *name);
const struct lk_ops *lk_table(size_t *n);
void lk_ck_register(const struct lk_ops **out, size_t *n);
const struct lk_ops *lk_inline_ops(void);      /* locks_inline.c */
const struct lk_ops *lk_table_ops(size_t *n);  /* held_table_experiments.c */
const struct lk_ops *lk_unlock_ops(size_t *n); /* locks_unlock.c */

/*
 * --tight: a type's uncontended loop with its lock and unlock called
 * directly (or inline, where the type's code is), without the lk_ops
 * indirect calls and lkop_* wrappers: @n pairs on @l; returns how many
 * locks failed. Kept out of line, named tight_*, so that callgrind's
 * --toggle-collect='tight_*' counts a pair and the loop's own 3
 * instructions. A few lines per type (LK_TIGHT_LOOP), as Concurrency
 * Kit's benchmarks adapt their locks.
 */
typedef uint64_t (*lk_tight_fn)(union lk_lock *l, uint64_t n);
#define LK_TIGHT_LOOP(fn, lock_expr, unlock_stmt)                                                  \
	static __attribute__((noinline)) uint64_t fn(union lk_lock *l, uint64_t n)                 \
	{                                                                                          \
		uint64_t failed = 0;                                                               \
		for (uint64_t i = 0; i < n; i++) {                                                 \
			if ((lock_expr) != 0) {                                                    \
				failed++;                                                          \
				continue;                                                          \
			}                                                                          \
			unlock_stmt;                                                               \
		}                                                                                  \
		return failed;                                                                     \
	}
struct lk_tight_entry {
	const char *name;
	lk_tight_fn fn;
};
lk_tight_fn lk_tight_find(const struct lk_tight_entry *e, size_t n, const char *name);
lk_tight_fn lk_tight(const struct lk_ops *ops); /* tight.c: NULL if none */
lk_tight_fn lk_inline_tight(void);              /* locks_inline.c */
lk_tight_fn lk_unlock_tight(const char *name);  /* locks_unlock.c */
/* rqspinlock's set-up, shared by its exported and inline types (locks.c). */
void rq_prepare_queued(void);
void rq_init(union lk_lock *l);
/* QL's set-up, shared by its type and the experiments on it (locks.c). */
void ql_init(union lk_lock *l);
bool lk_is_rq(const struct lk_ops *ops);

/* A lock plus the data it protects, checked for mutual exclusion. */
struct lk_slot {
	union lk_lock lock;
	_Atomic int held;     /* set inside the critical section: overlap = violation */
	uint64_t protected_n; /* plain increments under the lock: lost update = violation */
} __attribute__((aligned(RQT_CACHELINE)));

/* ---- utilities ----------------------------------------------------- */

void delay_calibrate(void);
void delay_ns(uint64_t ns);
void sleep_ns(uint64_t ns);
uint64_t rng_next(uint64_t *state);
int ncpus(void);
int pin_thread(const char *policy, int idx);

/* overload.c: busy threads on one CPU for the length of a run */
#define RQT_MAX_OVERLOAD 4096
struct overload;
struct overload *overload_start(int n);
void overload_stop(struct overload *o);
void cpu_relax(void);
void *xcalloc(size_t n, size_t size);

/* ---- histograms ---------------------------------------------------- */

/* Log-linear: exact below 32 ns, then 8 sub-buckets per power of two. */
#define HIST_SUB     8
#define HIST_BUCKETS (32 + (64 - 5) * HIST_SUB)

struct hist {
	uint64_t n;
	uint64_t max;
	uint64_t sum;
	uint64_t b[HIST_BUCKETS];
};

void hist_add(struct hist *h, uint64_t v);
void hist_merge(struct hist *dst, const struct hist *src);
uint64_t hist_pct(const struct hist *h, double pct);

/* Recovery-latency buckets: sub-ms, the kernel module's 1..10 ms by 1 ms, 12..250 ms, 1000 ms. */
#define REC_BUCKETS 35
struct rec_hist {
	uint64_t b[REC_BUCKETS];
};
extern const uint64_t rec_bound_ns[REC_BUCKETS]; /* upper bounds; last is UINT64_MAX */
void rec_add(struct rec_hist *h, uint64_t ns);
void rec_merge(struct rec_hist *dst, const struct rec_hist *src);
void rec_label(size_t i, char *buf, size_t len);

/* ---- configuration ------------------------------------------------- */

enum mode {
	MODE_TORTURE,
	MODE_SWEEP,
	MODE_UNCONTENDED,
	MODE_HAMMER,
	MODE_INJECT,
	MODE_STORM,
	MODE_LIST
};
enum inject_kind { INJ_AA = 1, INJ_ABBA = 2, INJ_ABBCCA = 3 };

struct config {
	enum mode mode;
	const struct lk_ops *locks[RQT_MAX_LIST];
	int nlocks;
	int threads[RQT_MAX_LIST];
	int nthreads;
	double duration_s;
	double warmup_s;
	uint64_t cs_ns;
	uint64_t ncs_ns;
	uint64_t long_hold_every;
	uint64_t long_hold_ns;
	uint64_t stutter_ms;
	int nested;
	const char *pin;
	uint64_t seed;
	unsigned lat_every;
	uint64_t timeout_ns; /* 0: library default */
	uint64_t cap_ns;     /* 0: library default */
	int overload;        /* busy threads pinned to the first CPU during runs */
	int reps;
	uint64_t iters;
	int gaps;   /* hammer: 0, or scan gaps 0..gaps-1 */
	bool tight; /* uncontended: the types' tight loops (lk_tight()) */
	enum inject_kind inject;
	bool via_signal;
	uint64_t hold_ns;
	uint64_t timer_ns;
	unsigned storm_hz[RQT_MAX_LIST]; /* --storm: SIGPROF rates */
	int nstorm;
	const char *json_path;
	const char *csv_path;
	bool quiet;
	bool progress;
	FILE *text; /* human-readable report: stdout, or stderr when data goes to stdout */
};

int parse_options(int argc, char **argv, struct config *cfg);

/* ---- results ------------------------------------------------------- */

struct run_result {
	const struct lk_ops *ops;
	int threads;
	double secs;
	uint64_t total;
	uint64_t max, min;
	uint64_t *per_thread; /* threads entries */
	uint64_t cpu_ns;      /* the writers' CPU time in the window, all together */
	uint64_t err_deadlk, err_timedout, err_other;
	uint64_t violations;         /* critical sections that overlapped */
	uint64_t lost_updates;       /* protected counter != acquisitions */
	struct hist lat;             /* acquisition latency (sampled) */
	struct rqspinlock_stats lib; /* library counters during the run */
	bool hang;
};

bool run_unfair(const struct run_result *r);
/* lockhammer's metrics: ns per acquisition in each thread's wall time and
 * in the threads' CPU time; fairness as stddev/mean of the per-thread
 * acquisitions (0: even). */
double run_wall_ns_per_lock(const struct run_result *r);
double run_cpu_ns_per_lock(const struct run_result *r);
double run_fairness(const struct run_result *r);
bool run_failed(const struct run_result *r);
const char *run_failure(const struct run_result *r);
int torture_run(const struct config *cfg, const struct lk_ops *ops, int threads,
                struct run_result *out);
void run_result_free(struct run_result *r);
void join_or_die(pthread_t *th, int n, size_t stride, uint64_t grace_ns, const char *what);
uint64_t grace_ns(const struct config *cfg, const struct lk_ops *ops, int threads);
void cs_check_enter(struct lk_slot *s, uint64_t *violations);
void cs_check_exit(struct lk_slot *s);

struct inject_result {
	enum inject_kind kind;
	bool via_signal;
	const struct lk_ops *ops;
	int threads;
	double secs;
	uint64_t injected; /* deadlocks set up (direct) / handler attempts while holding (signal) */
	uint64_t recovered; /* of those, ended by an error return */
	uint64_t acquired;  /* signal mode: attempts that got the lock (no cycle formed) */
	uint64_t by_deadlk, by_timedout;
	uint64_t false_errors; /* errors where no deadlock existed */
	uint64_t missed;       /* deadlocks that returned 0: a mutual-exclusion failure */
	uint64_t violations;
	uint64_t normal_acq; /* normal-context acquisitions */
	uint64_t ambiguous;  /* signal mode: handler ran while acquiring/releasing */
	struct hist lat;     /* recovery latency (failing calls) */
	struct rec_hist rec;
	struct rqspinlock_stats lib;
	bool hang;
};

bool inject_failed(const struct inject_result *r);
const char *inject_failure(const struct inject_result *r);
int inject_run(const struct config *cfg, const struct lk_ops *ops, struct inject_result *out);
const char *inject_name(enum inject_kind k);

int bench_sweep(const struct config *cfg);
int bench_uncontended(const struct config *cfg);
int bench_hammer(const struct config *cfg);
/* bench.c: median of @n values (and min, max; either may be NULL) */
double bench_median(const double *v, int n, double *mn, double *mx);
/* bench.c: index of lock type @name in cfg->locks, or -1 */
int bench_find_lock(const struct config *cfg, const char *name);
/* bench.c: one goal line, "  PASS label = 0.97 (goal >= 0.95)", with more
 * decimals where two would show a failing figure as meeting its target */
void bench_goal(FILE *f, bool ok, const char *label, double measured, const char *target);

void lib_stats_delta(struct rqspinlock_stats *out, const struct rqspinlock_stats *before);

/* output.c: report files ('-': stdout). A report that cannot be opened or
 * written makes the run fail: output_status() turns a 0 exit status into 1
 * then. check_out_path() tries a path before the run. */
FILE *open_out(const char *path);
void close_out(FILE *f);
bool check_out_path(const char *path);
int output_status(int rc);
void print_run_text(FILE *f, const struct config *cfg, const struct run_result *r);
/* Progress on stderr (not with -q): on a terminal one line redrawn in
 * place; in a log, a line "rqtorture: progress: ..." every 5 s (the first
 * 5 s after the first call). */
void progress(const struct config *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_end(const struct config *cfg);
void print_run_json(FILE *f, const struct config *cfg, const struct run_result *r, bool last);
void print_run_csv_header(FILE *f);
void print_run_csv(FILE *f, const struct run_result *r);
void print_inject_text(FILE *f, const struct config *cfg, const struct inject_result *r);
void print_inject_json(FILE *f, const struct inject_result *r, bool last);
void print_inject_csv(FILE *f, const struct inject_result *r, bool header);
void print_verdict(FILE *f, bool ok, const char *what);
void print_json_open(FILE *f, const char *mode);
void print_lat_json(FILE *f, const struct hist *h);

/* ---- storm.c: a profiler's SIGPROF storm over lock users ---- */
int storm_all(const struct config *cfg);

#endif /* RQTORTURE_H */
