/* SPDX-License-Identifier: MIT */
/* Calibrated busy delays, PRNG, CPU pinning, allocation. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rqtorture.h"

void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Loop iterations per microsecond, measured once; written before any worker starts. */
static double loops_per_us = 100.0;

static void spin_loops(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

void delay_calibrate(void)
{
	uint64_t best = UINT64_MAX;
	const uint64_t n = 2000000;

	/* Best of three: a preempted sample only makes a run slower. */
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = rqu_now_ns();
		spin_loops(n);
		uint64_t dt = rqu_now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	if (best > 0)
		loops_per_us = (double)n * 1000.0 / (double)best;
}

/* Short delays by calibrated loop (the clock costs ~20 ns), long ones by clock. */
void delay_ns(uint64_t ns)
{
	if (ns == 0)
		return;
	if (ns < 2000) {
		spin_loops((uint64_t)((double)ns * loops_per_us / 1000.0));
		return;
	}
	uint64_t end = rqu_now_ns() + ns;
	while (rqu_now_ns() < end)
		cpu_relax();
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* splitmix64: small, fast, and reproducible from --seed. */
uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* Pinning policies: none, spread (thread i on CPU i mod ncpus), single (all on CPU 0). */
int pin_thread(const char *policy, int idx)
{
	cpu_set_t set;

	if (policy == NULL || strcmp(policy, "none") == 0)
		return 0;
	CPU_ZERO(&set);
	if (strcmp(policy, "single") == 0)
		CPU_SET(0, &set);
	else
		CPU_SET(idx % ncpus(), &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL) {
		fputs("rqtorture: out of memory\n", stderr);
		exit(2);
	}
	return p;
}
