/* SPDX-License-Identifier: MIT */
/* The few system services the maps' lower floors share: naps, the monotonic
 * clock (util/), blocking every signal. All async-signal-safe. */
#ifndef RQMAP_SYS_H
#define RQMAP_SYS_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "rqu_clock.h" /* rqu_now_ns(): the monotonic clock */

static inline void rqmap_nap_us(long us)
{
	nanosleep(&(struct timespec){0, us * 1000}, NULL);
}

/* Block every signal; returns the mask to restore. */
static inline sigset_t rqmap_block_signals(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	return old;
}

#endif /* RQMAP_SYS_H */
