/* SPDX-License-Identifier: MIT */
/*
 * Deadlock injection, the userspace analogue of the kernel's
 * bpf_test_rqspinlock module. Threads form groups of k (AA: 1, ABBA: 2,
 * ABBCCA: 3); member m of a group owns lock m and reaches for lock m+1 mod k.
 *
 * direct: every round, each member takes its own lock, all meet at a
 *   barrier, then each takes the next lock: a guaranteed AA / ABBA / 3-cycle.
 *   At least one member must get an error; everyone finishes the round.
 * signal: each thread holds its own lock for --hold-us at a time (the group's
 *   holds aligned to overlap) while a per-thread timer (timer_create,
 *   SIGALRM) fires; the handler, like the
 *   kernel module's NMI callback, takes the next lock from the interrupted
 *   context. A handler that interrupts the holder of the lock it wants is an
 *   AA; handlers of several holders waiting on each other form a cycle.
 *
 * Latency of every failing call (start of res_spin_lock to its return) goes
 * into per-thread histograms with fixed storage: no malloc in handlers.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rqtorture.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum inj_state { ST_IDLE, ST_ACQ, ST_HOLD, ST_REL };

struct inj_group {
	pthread_barrier_t bar;
	int cont;                 /* written by member 0 between barriers */
	_Atomic int round_errors; /* members whose second lock failed this round */
	_Atomic int holding;      /* signal mode: members holding their own lock */
	struct lk_slot *locks;    /* k locks */
};

struct inj_thread {
	pthread_t th;
	int idx, member;
	const struct config *cfg;
	const struct lk_ops *ops;
	_Atomic int *stop;
	struct inj_group *g;
	struct lk_slot *mine, *other;
	union lk_node node_mine, node_other;
	_Atomic int state; /* enum inj_state, read by this thread's signal handler */
	timer_t timer;
	/* written by the normal context only */
	uint64_t normal_acq, normal_err, normal_viol;
	/* written by the handler (signal mode) or the normal context (direct mode) */
	uint64_t injected, recovered, acquired, by_deadlk, by_timedout, false_errors, missed;
	uint64_t violations, ambiguous;
	struct hist lat;
	struct rec_hist rec;
} __attribute__((aligned(RQT_CACHELINE)));

static _Thread_local struct inj_thread *tls_self;

const char *inject_name(enum inject_kind k)
{
	return k == INJ_AA ? "AA" : k == INJ_ABBA ? "ABBA" : "ABBCCA";
}

static void record_failure(struct inj_thread *t, int err, uint64_t ns)
{
	if (err == -EDEADLK)
		t->by_deadlk++;
	else if (err == -ETIMEDOUT)
		t->by_timedout++;
	hist_add(&t->lat, ns);
	rec_add(&t->rec, ns);
}

/* Take a lock, timing the call. */
static int timed_lock(struct inj_thread *t, struct lk_slot *s, union lk_node *n, uint64_t *ns)
{
	uint64_t t0 = rqu_now_ns();
	int err = t->ops->lock(&s->lock, n);

	*ns = rqu_now_ns() - t0;
	return err;
}

/* A lock taken where it should not have been: check and give it back. */
static void touch_and_release(struct inj_thread *t, struct lk_slot *s, union lk_node *n,
                              uint64_t *viol)
{
	cs_check_enter(s, viol);
	cs_check_exit(s);
	t->ops->unlock(&s->lock, n);
}

/* ---- direct mode ---------------------------------------------------- */

static void direct_aa_once(struct inj_thread *t)
{
	uint64_t ns;

	if (t->ops->lock(&t->mine->lock, &t->node_mine) != 0) {
		t->normal_err++;
		return;
	}
	cs_check_enter(t->mine, &t->violations);
	int err = timed_lock(t, t->mine, &t->node_other, &ns);
	t->injected++;
	if (err == 0) {
		t->missed++; /* granted a lock this thread holds */
		t->ops->unlock(&t->mine->lock, &t->node_other);
	} else {
		t->recovered++;
		record_failure(t, err, ns);
	}
	cs_check_exit(t->mine);
	t->ops->unlock(&t->mine->lock, &t->node_mine);
	t->normal_acq++;
}

static bool group_continues(struct inj_thread *t)
{
	if (t->member == 0)
		t->g->cont = !atomic_load_explicit(t->stop, memory_order_relaxed);
	/* The barrier orders cont and round_errors between members. */
	pthread_barrier_wait(&t->g->bar);
	return t->g->cont;
}

/* One ABBA / ABBCCA round: all hold their own lock, then all reach for the next. */
static void direct_cycle_round(struct inj_thread *t)
{
	uint64_t ns;
	int first = t->ops->lock(&t->mine->lock, &t->node_mine);

	if (first == 0)
		cs_check_enter(t->mine, &t->normal_viol);
	else
		t->normal_err++;
	pthread_barrier_wait(&t->g->bar);
	int err = timed_lock(t, t->other, &t->node_other, &ns);
	if (err == 0)
		touch_and_release(t, t->other, &t->node_other, &t->violations);
	else {
		record_failure(t, err, ns);
		/* Relaxed: read by member 0 after the barrier below. */
		atomic_fetch_add_explicit(&t->g->round_errors, 1, memory_order_relaxed);
	}
	if (first == 0) {
		cs_check_exit(t->mine);
		t->ops->unlock(&t->mine->lock, &t->node_mine);
		t->normal_acq++;
	}
	pthread_barrier_wait(&t->g->bar);
	if (t->member == 0) {
		int e = atomic_exchange_explicit(&t->g->round_errors, 0, memory_order_relaxed);
		t->injected++;
		if (e == 0)
			t->missed++; /* every member got its second lock: impossible if exclusive */
		else
			t->recovered++;
	}
}

static void *direct_worker(void *arg)
{
	struct inj_thread *t = arg;
	int k = t->cfg->inject;

	(void)pin_thread(t->cfg->pin, t->idx);
	if (k == INJ_AA) {
		while (!atomic_load_explicit(t->stop, memory_order_relaxed))
			direct_aa_once(t);
		return NULL;
	}
	while (group_continues(t))
		direct_cycle_round(t);
	return NULL;
}

/* ---- signal mode ---------------------------------------------------- */

static void classify_handler(struct inj_thread *t, int st, int err, uint64_t ns)
{
	if (st == ST_IDLE) {
		/* The thread holds nothing: no cycle can run through it. */
		if (err != 0)
			t->false_errors++;
		return;
	}
	t->injected++;
	if (st != ST_HOLD)
		t->ambiguous++; /* interrupted inside its own lock/unlock */
	if (err != 0) {
		t->recovered++;
		record_failure(t, err, ns);
	} else if (st == ST_HOLD && t->cfg->inject == INJ_AA) {
		t->missed++; /* granted the lock its own interrupted context holds */
	} else {
		t->acquired++; /* the other holder released first: no cycle formed */
	}
}

/* One-shot timer, re-armed when the handler ends: however long a handler
 * waits, the interrupted context always gets timer_ns to run before the next
 * one (a periodic timer would starve it, an interrupt storm). */
static void arm_timer(struct inj_thread *t)
{
	struct itimerspec its;
	uint64_t p = t->cfg->timer_ns;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(p / 1000000000ull);
	its.it_value.tv_nsec = (long)(p % 1000000000ull);
	timer_settime(t->timer, 0, &its, NULL);
}

static void inject_handler(int sig)
{
	int saved = errno;
	struct inj_thread *t = tls_self;

	(void)sig;
	if (t != NULL) {
		uint64_t ns;
		int st = atomic_load_explicit(&t->state, memory_order_relaxed);
		int err = timed_lock(t, t->other, &t->node_other, &ns);
		if (err == 0)
			touch_and_release(t, t->other, &t->node_other, &t->violations);
		classify_handler(t, st, err, ns);
		arm_timer(t);
	}
	errno = saved;
}

static void set_state(struct inj_thread *t, int st)
{
	/* Relaxed + signal fence: only this thread's handler reads it. */
	atomic_store_explicit(&t->state, st, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

static int start_timer(struct inj_thread *t)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &t->timer) != 0)
		return -errno;
	arm_timer(t);
	return 0;
}

/* Make the group's holds overlap, so that their handlers can close the cycle:
 * wait (bounded: a peer may be preempted) until every member holds its lock. */
static void align_holds(struct inj_thread *t)
{
	int k = t->cfg->inject;
	uint64_t give_up = rqu_now_ns() + 4 * t->cfg->hold_ns + 100000;

	/* Relaxed: a hint; the locks themselves order the data. */
	atomic_fetch_add_explicit(&t->g->holding, 1, memory_order_relaxed);
	/* Yield, not spin: with more members than CPUs the last one must get to run. */
	while (k > 1 && atomic_load_explicit(&t->g->holding, memory_order_relaxed) < k &&
	       rqu_now_ns() < give_up)
		sched_yield();
}

static void signal_hold_once(struct inj_thread *t)
{
	set_state(t, ST_ACQ);
	if (t->ops->lock(&t->mine->lock, &t->node_mine) != 0) {
		set_state(t, ST_IDLE);
		t->normal_err++;
		return;
	}
	set_state(t, ST_HOLD);
	cs_check_enter(t->mine, &t->normal_viol);
	align_holds(t);
	delay_ns(t->cfg->hold_ns);
	/* Relaxed: a hint for align_holds(), orders nothing. */
	atomic_fetch_sub_explicit(&t->g->holding, 1, memory_order_relaxed);
	cs_check_exit(t->mine);
	set_state(t, ST_REL);
	t->ops->unlock(&t->mine->lock, &t->node_mine);
	set_state(t, ST_IDLE);
	t->normal_acq++;
}

static void *signal_worker(void *arg)
{
	struct inj_thread *t = arg;
	sigset_t set;

	(void)pin_thread(t->cfg->pin, t->idx);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	tls_self = t;
	atomic_signal_fence(memory_order_seq_cst);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (start_timer(t) != 0) {
		t->normal_err++;
		return NULL;
	}
	while (!atomic_load_explicit(t->stop, memory_order_relaxed)) {
		signal_hold_once(t);
		delay_ns(t->cfg->ncs_ns);
	}
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	timer_delete(t->timer);
	tls_self = NULL;
	return NULL;
}

/* ---- driver --------------------------------------------------------- */

static void sum_thread(struct inject_result *r, const struct inj_thread *t)
{
	r->injected += t->injected;
	r->recovered += t->recovered;
	r->acquired += t->acquired;
	r->by_deadlk += t->by_deadlk;
	r->by_timedout += t->by_timedout;
	r->false_errors += t->false_errors + t->normal_err;
	r->missed += t->missed;
	r->violations += t->violations + t->normal_viol;
	r->ambiguous += t->ambiguous;
	r->normal_acq += t->normal_acq;
	hist_merge(&r->lat, &t->lat);
	rec_merge(&r->rec, &t->rec);
}

static void install_handler(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = inject_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	/* Only the writers take the signal; they unblock it themselves. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int group_threads(const struct config *cfg, int k)
{
	int n = cfg->nthreads ? cfg->threads[0] : (k == 1 ? ncpus() : k);

	if (n < k)
		n = k;
	return (n + k - 1) / k * k;
}

static void wait_duration(const struct config *cfg)
{
	uint64_t t0 = rqu_now_ns(), dur = (uint64_t)(cfg->duration_s * 1e9);

	for (uint64_t el = 0; el < dur; el = rqu_now_ns() - t0) {
		progress(cfg, "inject %-6s %6.1f/%.1f s", inject_name(cfg->inject),
		         (double)el / 1e9, cfg->duration_s);
		uint64_t left = dur - el;
		sleep_ns(left < 100000000ull ? left : 100000000ull);
	}
	progress_end(cfg);
}

int inject_run(const struct config *cfg, const struct lk_ops *ops, struct inject_result *r)
{
	int k = cfg->inject, n = group_threads(cfg, k), ngroups = n / k, started = 0, rc = 0;
	_Atomic int stop = 0;
	struct rqspinlock_stats before;
	struct inj_group *gs = xcalloc((size_t)ngroups, sizeof(*gs));
	struct inj_thread *ts = NULL;
	struct lk_slot *locks = NULL;

	memset(r, 0, sizeof(*r));
	r->kind = cfg->inject;
	r->via_signal = cfg->via_signal;
	r->ops = ops;
	r->threads = n;
	if (posix_memalign((void **)&ts, RQT_CACHELINE, sizeof(*ts) * (size_t)n) ||
	    posix_memalign((void **)&locks, RQT_CACHELINE, sizeof(*locks) * (size_t)n)) {
		free(gs);
		free(ts);
		return -ENOMEM;
	}
	memset(ts, 0, sizeof(*ts) * (size_t)n);
	memset(locks, 0, sizeof(*locks) * (size_t)n);
	if (ops->prepare)
		ops->prepare();
	if (cfg->timeout_ns)
		(void)res_spin_set_timeout_ns(cfg->timeout_ns);
	if (cfg->cap_ns)
		(void)res_spin_set_timeout_cap_ns(cfg->cap_ns);
	for (int i = 0; i < n; i++)
		ops->init(&locks[i].lock);
	for (int g = 0; g < ngroups; g++) {
		pthread_barrier_init(&gs[g].bar, NULL, (unsigned)k);
		gs[g].locks = &locks[(size_t)g * (size_t)k];
	}
	if (cfg->via_signal)
		install_handler();
	(void)res_spin_get_stats(&before);
	uint64_t t0 = rqu_now_ns();
	for (int i = 0; i < n; i++) {
		struct inj_thread *t = &ts[i];
		t->idx = i;
		t->member = i % k;
		t->cfg = cfg;
		t->ops = ops;
		t->stop = &stop;
		t->g = &gs[i / k];
		t->mine = &t->g->locks[t->member];
		t->other = &t->g->locks[(t->member + 1) % k];
	}
	for (; started < n; started++) {
		rc = -pthread_create(&ts[started].th, NULL,
		                     cfg->via_signal ? signal_worker : direct_worker, &ts[started]);
		if (rc)
			break;
	}
	if (rc == 0)
		wait_duration(cfg);
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	if (rc != 0 && k > 1) {
		/* Barrier groups cannot finish short-handed: give up loudly. */
		printf("--- End of test: FAILURE: could not start %d threads (%s)\n", n,
		       strerror(-rc));
		fflush(stdout);
		_exit(3);
	}
	join_or_die(&ts[0].th, started, sizeof(*ts), grace_ns(cfg, ops, n), "inject");
	r->secs = (double)(rqu_now_ns() - t0) / 1e9;
	for (int i = 0; i < started; i++)
		sum_thread(r, &ts[i]);
	r->lib = before;
	lib_stats_delta(&r->lib, &before);
	for (int g = 0; g < ngroups; g++)
		pthread_barrier_destroy(&gs[g].bar);
	free(ts);
	free(locks);
	free(gs);
	return rc;
}

/* Why the run failed, or NULL: the first reason found, for the verdict line. */
const char *inject_failure(const struct inject_result *r)
{
	if (r->hang)
		return "hang";
	if (r->missed)
		return "a deadlock was granted the lock";
	if (r->violations)
		return "mutual exclusion violated";
	if (r->false_errors)
		return "errors where no deadlock existed";
	if (r->injected == 0)
		return "nothing was injected";
	if (!r->via_signal && r->recovered != r->injected)
		return "a round was not recovered";
	return NULL;
}

bool inject_failed(const struct inject_result *r)
{
	return inject_failure(r) != NULL;
}
