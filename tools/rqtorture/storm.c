/* SPDX-License-Identifier: MIT */
/*
 * --storm: a sampling profiler's signal storm over lock users. A
 * process-wide ITIMER_PROF fires at each listed rate (SIGPROF lands on a
 * thread that is using CPU, as a profiler's does); every thread takes the
 * lock L in a loop from normal context, holding nothing else, and each
 * handler takes H, then L (the kernel's NMI users: a handler nests inside
 * a context that may hold or wait for L). Cycles form through frozen
 * contexts: a handler waits for L, which its own thread holds (AA), or
 * which a thread holds whose handler waits for H, which this handler's
 * sibling holds. Resilient locks only (rqspinlock itself).
 *
 * Reported per rate and thread count: the handlers' calls and how many
 * ended in -EDEADLK and -ETIMEDOUT, the normal-context calls and their
 * -ETIMEDOUT (a caller that holds nothing is in no cycle: any timeout is
 * a wait that detection should have ended for the cycle's members), and
 * the latency of the handlers' calls. Goals: no normal-context timeout,
 * handler timeouts below 0.1 % of handler calls at 10 kHz.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include <rqspinlock.h>

#include "rqtorture.h"

struct storm_thread {
	pthread_t t;
	const atomic_int *stop;
	uint64_t normal, normal_timedout, normal_other;
	uint64_t handler, handler_deadlk, handler_timedout, handler_other;
	struct hist lat; /* handlers' H-then-L calls, ns */
	long counter;
};

static rqspinlock_t storm_l, storm_h;
static _Thread_local struct storm_thread *storm_self;

/* A result of a handler's call: counted, never a crash or a hang. */
static void count_handler(struct storm_thread *s, int err)
{
	if (err == -EDEADLK)
		s->handler_deadlk++;
	else if (err == -ETIMEDOUT)
		s->handler_timedout++;
	else if (err)
		s->handler_other++;
}

static void storm_handler(int sig)
{
	struct storm_thread *s = storm_self;
	uint64_t t0;
	int err;

	(void)sig;
	if (!s)
		return;
	t0 = rqu_now_ns();
	s->handler++;
	err = res_spin_lock(&storm_h);
	if (err == 0) {
		err = res_spin_lock(&storm_l);
		if (err == 0)
			res_spin_unlock(&storm_l);
		res_spin_unlock(&storm_h);
	}
	count_handler(s, err);
	hist_add(&s->lat, rqu_now_ns() - t0);
}

static void *storm_worker(void *arg)
{
	struct storm_thread *s = arg;

	storm_self = s;
	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		int err = res_spin_lock(&storm_l);

		s->normal++;
		if (err == 0) {
			s->counter++;
			res_spin_unlock(&storm_l);
		} else if (err == -ETIMEDOUT) {
			s->normal_timedout++;
		} else {
			s->normal_other++;
		}
	}
	storm_self = NULL;
	return NULL;
}

static int arm_timer(unsigned hz)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	if (hz) {
		it.it_interval.tv_usec = (suseconds_t)(1000000u / hz);
		it.it_value = it.it_interval;
	}
	return setitimer(ITIMER_PROF, &it, NULL);
}

/* One run at @hz over @n threads; the sums into @out (out->lat merged). */
static int storm_run(const struct config *cfg, unsigned hz, int n, struct storm_thread *out)
{
	static struct storm_thread th[RQT_MAX_THR];
	atomic_int stop;
	int started = 0;

	atomic_init(&stop, 0);
	memset(out, 0, sizeof(*out));
	res_spin_lock_init(&storm_l);
	res_spin_lock_init(&storm_h);
	for (int i = 0; i < n; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].stop = &stop;
		if (pthread_create(&th[i].t, NULL, storm_worker, &th[i]) != 0)
			break;
		started++;
	}
	if (started == n && arm_timer(hz) == 0)
		sleep_ns((uint64_t)(cfg->duration_s * 1e9));
	(void)arm_timer(0);
	atomic_store_explicit(&stop, 1, memory_order_relaxed); /* joined below */
	for (int i = 0; i < started; i++) {
		pthread_join(th[i].t, NULL);
		out->normal += th[i].normal;
		out->normal_timedout += th[i].normal_timedout;
		out->normal_other += th[i].normal_other;
		out->handler += th[i].handler;
		out->handler_deadlk += th[i].handler_deadlk;
		out->handler_timedout += th[i].handler_timedout;
		out->handler_other += th[i].handler_other;
		hist_merge(&out->lat, &th[i].lat);
	}
	return started == n ? 0 : -1;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void storm_print(FILE *f, unsigned hz, int n, const struct storm_thread *r)
{
	fprintf(f, "%6u %4d %9llu %7.3f %9.4f %11llu %8llu %9llu %9llu %10llu\n", hz, n,
	        (unsigned long long)r->handler, pct(r->handler_deadlk, r->handler),
	        pct(r->handler_timedout, r->handler), (unsigned long long)r->normal,
	        (unsigned long long)r->normal_timedout, (unsigned long long)hist_pct(&r->lat, 50),
	        (unsigned long long)hist_pct(&r->lat, 99), (unsigned long long)r->lat.max);
}

int storm_all(const struct config *cfg)
{
	static const int dflt_threads[] = {8, 16};
	struct sigaction sa;
	bool ok = true;
	int nthr = cfg->nthreads ? cfg->nthreads : 2;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = storm_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return 1;
	if (!cfg->quiet)
		fprintf(cfg->text,
		        "rqtorture: storm: ITIMER_PROF, handlers take H then L, threads take L "
		        "(%.1fs per run)\n"
		        "%6s %4s %9s %7s %9s %11s %8s %9s %9s %10s\n",
		        cfg->duration_s, "hz", "thr", "h-calls", "h-EDL%", "h-ETIME%", "n-calls",
		        "n-ETIME", "h-p50ns", "h-p99ns", "h-maxns");
	for (int r = 0; r < cfg->nstorm; r++) {
		for (int t = 0; t < nthr; t++) {
			int n = cfg->nthreads ? cfg->threads[t] : dflt_threads[t];
			struct storm_thread res;

			if (storm_run(cfg, cfg->storm_hz[r], n, &res) != 0) {
				fprintf(stderr, "rqtorture: could not start the storm threads\n");
				return 1;
			}
			/* A caller that holds nothing is in no cycle. */
			ok &= res.normal_timedout == 0 && res.normal_other == 0 &&
			      res.handler_other == 0;
			if (!cfg->quiet)
				storm_print(cfg->text, cfg->storm_hz[r], n, &res);
		}
	}
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPROF, &sa, NULL);
	print_verdict(cfg->text, ok, "storm: no normal-context timeout");
	return ok ? 0 : 1;
}
