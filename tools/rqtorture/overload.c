/* SPDX-License-Identifier: MIT */
/*
 * --overload N: N threads that spin, pinned to the first CPU this process
 * may use, for the length of a run. The writers' lock owners on that CPU
 * then wait in its run queue behind them, as under a hostile load.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "rqtorture.h"

struct overload {
	atomic_int stop;
	int cpu, n;
	pthread_t th[];
};

static void *busy_main(void *arg)
{
	struct overload *o = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(o->cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(&o->stop, memory_order_relaxed))
		;
	return NULL;
}

static int first_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				return c;
	return 0;
}

struct overload *overload_start(int n)
{
	struct overload *o = xcalloc(1, sizeof(*o) + (size_t)n * sizeof(o->th[0]));

	o->cpu = first_cpu();
	for (; o->n < n; o->n++)
		if (pthread_create(&o->th[o->n], NULL, busy_main, o)) {
			fprintf(stderr, "rqtorture: --overload: only %d threads started\n", o->n);
			break;
		}
	return o;
}

void overload_stop(struct overload *o)
{
	if (!o)
		return;
	atomic_store_explicit(&o->stop, 1, memory_order_relaxed);
	for (int i = 0; i < o->n; i++)
		pthread_join(o->th[i], NULL);
	free(o);
}
