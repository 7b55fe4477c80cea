/* SPDX-License-Identifier: MIT */
/* Signal timers aimed at one thread, for the maps' signal-handler tests. */
#ifndef SIGTIMER_H
#define SIGTIMER_H

#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A SIGPROF timer every @usec microseconds aimed at the calling thread, on
 * the high-resolution monotonic clock (ITIMER_PROF only fires once per
 * scheduler tick). */
static inline timer_t thread_prof_timer(long usec)
{
	struct sigevent sev;
	struct itimerspec its = {{usec / 1000000, usec % 1000000 * 1000},
	                         {usec / 1000000, usec % 1000000 * 1000}};
	timer_t tm;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
#ifndef sigev_notify_thread_id /* glibc < 2.35 spells it this way */
#define sigev_notify_thread_id _sigev_un._tid
#endif
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &tm), 0);
	CHECK_EQ(timer_settime(tm, 0, &its, NULL), 0);
	return tm;
}

static inline void block_sigprof(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

#endif /* SIGTIMER_H */
