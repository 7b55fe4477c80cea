/* SPDX-License-Identifier: MIT */
/*
 * One timed torture run: writer threads hammer one lock (or, with --nested,
 * an in-order random subset of several), check mutual exclusion on the data
 * each lock protects, and count acquisitions and errors. The main thread
 * measures a window after the warm-up, drives stutter and the progress line,
 * and acts as watchdog: a writer that does not finish in time is a hang,
 * reported as FAILURE, and the process exits instead of hanging.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rqtorture.h"

struct run_ctl {
	_Atomic int go;        /* start line */
	_Atomic int stop;      /* end of run */
	_Atomic int paused;    /* stutter */
	_Atomic int measuring; /* inside the measured window: latencies count */
};

struct worker {
	_Atomic uint64_t acq; /* published after every acquisition; read live by main */
	int idx;
	const struct config *cfg;
	const struct lk_ops *ops;
	struct run_ctl *ctl;
	struct lk_slot *slots;
	int nslots;
	uint64_t incs; /* protected-counter increments made */
	uint64_t err_deadlk, err_timedout, err_other, violations;
	pthread_t th;
	union lk_node nodes[RQT_MAX_NEST];
	struct hist lat;
} __attribute__((aligned(RQT_CACHELINE)));

static void count_error(struct worker *w, int err)
{
	if (err == -EDEADLK)
		w->err_deadlk++;
	else if (err == -ETIMEDOUT)
		w->err_timedout++;
	else
		w->err_other++;
}

void cs_check_enter(struct lk_slot *s, uint64_t *violations)
{
	/* Relaxed: the lock orders these; an overlap shows as a set flag. */
	if (atomic_load_explicit(&s->held, memory_order_relaxed))
		(*violations)++;
	atomic_store_explicit(&s->held, 1, memory_order_relaxed);
	s->protected_n++;
}

void cs_check_exit(struct lk_slot *s)
{
	atomic_store_explicit(&s->held, 0, memory_order_relaxed);
}

/* Which locks this acquisition takes, in increasing order (no deadlock possible). */
static int pick_locks(struct worker *w, uint64_t *rng, int *idx)
{
	if (w->nslots == 1) {
		idx[0] = 0;
		return 1;
	}
	uint64_t mask = rng_next(rng) % ((1ull << w->nslots) - 1) + 1;
	int n = 0;
	for (int i = 0; i < w->nslots; i++)
		if (mask & (1ull << i))
			idx[n++] = i;
	return n;
}

static void release_locks(struct worker *w, const int *idx, int n)
{
	for (int i = n - 1; i >= 0; i--)
		w->ops->unlock(&w->slots[idx[i]].lock, &w->nodes[idx[i]]);
}

/* Take the chosen locks; on an error, undo and return it. */
static int take_locks(struct worker *w, const int *idx, int n)
{
	for (int i = 0; i < n; i++) {
		int err = w->ops->lock(&w->slots[idx[i]].lock, &w->nodes[idx[i]]);
		if (err) {
			count_error(w, err);
			release_locks(w, idx, i);
			return err;
		}
	}
	return 0;
}

static uint64_t hold_time(const struct config *cfg, uint64_t *rng)
{
	if (cfg->long_hold_every && rng_next(rng) % cfg->long_hold_every == 0)
		return cfg->long_hold_ns;
	return cfg->cs_ns;
}

static void wait_start(struct run_ctl *ctl)
{
	/* Relaxed: everything the writers read was written before pthread_create. */
	while (!atomic_load_explicit(&ctl->go, memory_order_relaxed))
		sched_yield();
}

static void *torture_worker(void *arg)
{
	struct worker *w = arg;
	const struct config *cfg = w->cfg;
	uint64_t rng = cfg->seed * 0x100000001b3ull + (uint64_t)w->idx;
	uint64_t acq = 0;
	unsigned sample = cfg->lat_every;
	int idx[RQT_MAX_NEST];

	(void)pin_thread(cfg->pin, w->idx);
	wait_start(w->ctl);
	/* Relaxed: stop/paused are hints polled every iteration. */
	while (!atomic_load_explicit(&w->ctl->stop, memory_order_relaxed)) {
		if (atomic_load_explicit(&w->ctl->paused, memory_order_relaxed)) {
			sleep_ns(1000000);
			continue;
		}
		int n = pick_locks(w, &rng, idx);
		bool due = sample && --sample == 0;
		/* Relaxed: a hint; the warm-up's samples must not count. */
		bool timed = due && atomic_load_explicit(&w->ctl->measuring, memory_order_relaxed);
		uint64_t t0 = timed ? rqu_now_ns() : 0;
		if (take_locks(w, idx, n) == 0) {
			if (timed)
				hist_add(&w->lat, rqu_now_ns() - t0);
			for (int i = 0; i < n; i++)
				cs_check_enter(&w->slots[idx[i]], &w->violations);
			w->incs += (uint64_t)n;
			delay_ns(hold_time(cfg, &rng));
			for (int i = n - 1; i >= 0; i--)
				cs_check_exit(&w->slots[idx[i]]);
			release_locks(w, idx, n);
			/* Relaxed: a counter the main thread samples. */
			atomic_store_explicit(&w->acq, ++acq, memory_order_relaxed);
		}
		if (due)
			sample = cfg->lat_every;
		delay_ns(cfg->ncs_ns);
	}
	return NULL;
}

static uint64_t sum_acq(struct worker *ws, int n, uint64_t *per)
{
	uint64_t s = 0;

	for (int i = 0; i < n; i++) {
		per[i] = atomic_load_explicit(&ws[i].acq, memory_order_relaxed);
		s += per[i];
	}
	return s;
}

/* A writer's CPU time so far (0 where its clock cannot be read). */
static uint64_t thread_cpu_ns(pthread_t th)
{
	struct timespec ts;
	clockid_t cid;

	if (pthread_getcpuclockid(th, &cid) || clock_gettime(cid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t sum_cpu(struct worker *ws, int n)
{
	uint64_t s = 0;

	for (int i = 0; i < n; i++)
		s += thread_cpu_ns(ws[i].th);
	return s;
}

/* The progress line: acquisitions so far and their rate over the window
 * so far, from 0.5 s on (a rate over the window's first instants says
 * nothing). */
static void progress_line(const struct config *cfg, const struct lk_ops *ops, int threads,
                          double el, uint64_t acq)
{
	char rate[32] = "";

	if (el >= 0.5)
		snprintf(rate, sizeof(rate), "  %.3f Mop/s", (double)acq / el / 1e6);
	progress(cfg, "%-14s %4d thr  %6.1f/%.1f s  acq %12llu%s", ops->name, threads, el,
	         cfg->duration_s, (unsigned long long)acq, rate);
}

/* Sleep through the measured window, toggling stutter and drawing progress. */
static void measure_window(const struct config *cfg, const struct lk_ops *ops, struct worker *ws,
                           int threads, struct run_ctl *ctl, uint64_t *c0, uint64_t *c1,
                           double *secs, uint64_t *cpu_ns)
{
	uint64_t s0 = sum_acq(ws, threads, c0), cpu0 = sum_cpu(ws, threads);
	uint64_t t0 = rqu_now_ns(), dur = (uint64_t)(cfg->duration_s * 1e9);

	atomic_store_explicit(&ctl->measuring, 1, memory_order_relaxed);
	uint64_t next_toggle = t0 + cfg->stutter_ms * 1000000ull;

	for (;;) {
		uint64_t t = rqu_now_ns();
		if (t >= t0 + dur)
			break;
		if (cfg->stutter_ms && t >= next_toggle) {
			int p = atomic_load_explicit(&ctl->paused, memory_order_relaxed);
			atomic_store_explicit(&ctl->paused, !p, memory_order_relaxed);
			next_toggle = t + cfg->stutter_ms * 1000000ull;
		}
		if (cfg->progress)
			progress_line(cfg, ops, threads, (double)(t - t0) / 1e9,
			              sum_acq(ws, threads, c1) - s0);
		uint64_t left = t0 + dur - t;
		sleep_ns(left < 100000000ull ? left : 100000000ull);
	}
	atomic_store_explicit(&ctl->measuring, 0, memory_order_relaxed);
	sum_acq(ws, threads, c1);
	*secs = (double)(rqu_now_ns() - t0) / 1e9;
	*cpu_ns = sum_cpu(ws, threads) - cpu0;
	progress_end(cfg);
}

/* Join every writer, or report a hang and exit: nothing may hang. */
void join_or_die(pthread_t *th, int n, size_t stride, uint64_t grace_ns, const char *what)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)(grace_ns / 1000000000ull) + 1;
	for (int i = 0; i < n; i++) {
		pthread_t *t = (pthread_t *)((char *)th + (size_t)i * stride);
		if (pthread_timedjoin_np(*t, NULL, &dl) != 0) {
			printf(
			    "--- End of test: FAILURE: %s: thread %d did not finish within %llu s "
			    "(hang)\n",
			    what, i, (unsigned long long)(grace_ns / 1000000000ull) + 1);
			fflush(stdout);
			_exit(3);
		}
	}
}

/*
 * How long writers may take to stop before it counts as a hang. A resilient
 * lock bounds every wait by its timeouts. A plain FIFO spin lock (ticket,
 * MCS, CLH) with more threads than CPUs hands the lock to waiters that are
 * not running, one scheduler slice each: allow for that convoy to drain.
 */
uint64_t grace_ns(const struct config *cfg, const struct lk_ops *ops, int threads)
{
	uint64_t to = cfg->timeout_ns ? cfg->timeout_ns : res_spin_get_timeout_ns();
	uint64_t cap = cfg->cap_ns ? cfg->cap_ns : RQSPINLOCK_DEFAULT_CAP_FACTOR * to;
	/* two wait phases, each extended up to the cap at most, and the
	 * critical and non-critical sections a thread may be in when told to
	 * stop */
	uint64_t g =
	    4 * to + 2 * cap + cfg->long_hold_ns + cfg->cs_ns + cfg->ncs_ns + 10ull * 1000000000ull;

	if (!lk_is_rq(ops))
		g += (uint64_t)threads * 2ull * 1000000000ull;
	return g;
}

static struct lk_slot *slots_new(const struct lk_ops *ops, int n)
{
	struct lk_slot *s = NULL;

	if (posix_memalign((void **)&s, RQT_CACHELINE, sizeof(*s) * (size_t)n) != 0)
		return NULL;
	memset(s, 0, sizeof(*s) * (size_t)n);
	for (int i = 0; i < n; i++)
		ops->init(&s[i].lock);
	return s;
}

static struct worker *workers_new(const struct config *cfg, const struct lk_ops *ops,
                                  struct run_ctl *ctl, struct lk_slot *slots, int nslots, int n)
{
	struct worker *ws = NULL;

	if (posix_memalign((void **)&ws, RQT_CACHELINE, sizeof(*ws) * (size_t)n) != 0)
		return NULL;
	memset(ws, 0, sizeof(*ws) * (size_t)n);
	for (int i = 0; i < n; i++) {
		ws[i].idx = i;
		ws[i].cfg = cfg;
		ws[i].ops = ops;
		ws[i].ctl = ctl;
		ws[i].slots = slots;
		ws[i].nslots = nslots;
		for (int k = 0; k < nslots && ops->node_init; k++)
			ops->node_init(&ws[i].nodes[k]);
	}
	return ws;
}

static void collect(struct run_result *r, struct worker *ws, int threads, const uint64_t *c0,
                    const uint64_t *c1, struct lk_slot *slots, int nslots)
{
	uint64_t incs = 0, prot = 0;

	r->min = UINT64_MAX;
	for (int i = 0; i < threads; i++) {
		uint64_t d = c1[i] - c0[i];
		r->per_thread[i] = d;
		r->total += d;
		r->max = d > r->max ? d : r->max;
		r->min = d < r->min ? d : r->min;
		r->err_deadlk += ws[i].err_deadlk;
		r->err_timedout += ws[i].err_timedout;
		r->err_other += ws[i].err_other;
		r->violations += ws[i].violations;
		incs += ws[i].incs;
		hist_merge(&r->lat, &ws[i].lat);
	}
	for (int i = 0; i < nslots; i++)
		prot += slots[i].protected_n;
	r->lost_updates = incs > prot ? incs - prot : prot - incs;
}

static void apply_lock_setup(const struct config *cfg, const struct lk_ops *ops)
{
	if (ops->prepare)
		ops->prepare();
	if (cfg->timeout_ns)
		(void)res_spin_set_timeout_ns(cfg->timeout_ns);
	if (cfg->cap_ns)
		(void)res_spin_set_timeout_cap_ns(cfg->cap_ns);
}

int torture_run(const struct config *cfg, const struct lk_ops *ops, int threads,
                struct run_result *r)
{
	struct run_ctl ctl = {0};
	int nslots = cfg->nested > 1 ? cfg->nested : 1;
	uint64_t *c0 = xcalloc((size_t)threads, sizeof(*c0));
	uint64_t *c1 = xcalloc((size_t)threads, sizeof(*c1));
	struct rqspinlock_stats before;
	struct overload *busy = NULL;
	int started = 0, rc = 0;

	memset(r, 0, sizeof(*r));
	r->ops = ops;
	r->threads = threads;
	r->per_thread = xcalloc((size_t)threads, sizeof(*r->per_thread));
	apply_lock_setup(cfg, ops);
	struct lk_slot *slots = slots_new(ops, nslots);
	struct worker *ws = workers_new(cfg, ops, &ctl, slots, nslots, threads);
	if (!slots || !ws) {
		rc = -ENOMEM;
		goto out;
	}
	if (cfg->overload)
		busy = overload_start(cfg->overload);
	(void)res_spin_get_stats(&before);
	for (; started < threads; started++) {
		rc = -pthread_create(&ws[started].th, NULL, torture_worker, &ws[started]);
		if (rc)
			break;
	}
	atomic_store_explicit(&ctl.go, 1, memory_order_relaxed);
	if (rc == 0) {
		sleep_ns((uint64_t)(cfg->warmup_s * 1e9));
		measure_window(cfg, ops, ws, threads, &ctl, c0, c1, &r->secs, &r->cpu_ns);
	}
	atomic_store_explicit(&ctl.paused, 0, memory_order_relaxed);
	atomic_store_explicit(&ctl.stop, 1, memory_order_relaxed);
	join_or_die(&ws[0].th, started, sizeof(*ws), grace_ns(cfg, ops, threads), ops->name);
	overload_stop(busy);
	if (rc == 0) {
		collect(r, ws, threads, c0, c1, slots, nslots);
		r->lib = before;
		lib_stats_delta(&r->lib, &before);
	}
out:
	free(ws);
	free(slots);
	free(c0);
	free(c1);
	return rc;
}

void run_result_free(struct run_result *r)
{
	free(r->per_thread);
	r->per_thread = NULL;
}

/* locktorture's unfairness flag: the busiest writer did over twice the least busy one's work. */
bool run_unfair(const struct run_result *r)
{
	return r->threads > 1 && r->max / 2 > r->min;
}

double run_wall_ns_per_lock(const struct run_result *r)
{
	return r->total ? r->secs * 1e9 * r->threads / (double)r->total : 0.0;
}

double run_cpu_ns_per_lock(const struct run_result *r)
{
	return r->total ? (double)r->cpu_ns / (double)r->total : 0.0;
}

double run_fairness(const struct run_result *r)
{
	double mean = r->threads ? (double)r->total / r->threads : 0.0, var = 0.0;

	if (mean <= 0)
		return 0.0;
	for (int i = 0; i < r->threads; i++) {
		double d = (double)r->per_thread[i] - mean;

		var += d * d;
	}
	return sqrt(var / r->threads) / mean;
}

/* Why the run failed, or NULL: the first reason found, for the verdict line. */
const char *run_failure(const struct run_result *r)
{
	if (r->hang)
		return "hang";
	if (r->violations || r->lost_updates)
		return "mutual exclusion violated";
	if (r->err_deadlk)
		return "-EDEADLK without a deadlock";
	if (r->err_timedout)
		return "-ETIMEDOUT (an owner held the lock longer than the timeout)";
	if (r->err_other)
		return "lock returned an error";
	return NULL;
}

bool run_failed(const struct run_result *r)
{
	return run_failure(r) != NULL;
}

void lib_stats_delta(struct rqspinlock_stats *out, const struct rqspinlock_stats *before)
{
	struct rqspinlock_stats now;
	uint64_t a[sizeof(now) / sizeof(uint64_t)], b[sizeof(now) / sizeof(uint64_t)];

	(void)res_spin_get_stats(&now);
	memcpy(a, &now, sizeof(a));
	memcpy(b, before, sizeof(b));
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		a[i] -= b[i];
	memcpy(out, a, sizeof(a));
}
