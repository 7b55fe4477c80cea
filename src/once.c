/* SPDX-License-Identifier: MIT */
/*
 * Layer 0: once-only start-up that a fork cannot leave half done. The
 * library starts itself on first use (the environment, the registry), from
 * whichever thread comes first; the others wait for it. If another thread
 * forks meanwhile, the child has no copy of the thread that was starting
 * up, and a plain "running" flag would keep every caller in the child
 * waiting forever. So the flag names the process whose thread is running
 * the start-up: a caller in another process (a forked child) runs it again
 * itself.
 */
#include <sched.h>
#include <unistd.h>

#include "registry.h"

bool rq_once_begin(rq_once_t *once)
{
	int32_t pid, cur;

	if (likely(rq_once_done(once)))
		return false;
	pid = (int32_t)getpid();
	for (;;) {
		/* acquire: as above */
		cur = atomic_load_explicit(once, memory_order_acquire);
		if (cur == RQ_ONCE_DONE)
			return false;
		/* Not started, or started by a thread of another process (we
		 * are its forked child): ours to run. Relaxed: the caller's
		 * work is published by rq_once_end(). */
		if (cur != pid && atomic_compare_exchange_weak_explicit(
		                      once, &cur, pid, memory_order_relaxed, memory_order_relaxed))
			return true;
		if (cur == pid)
			sched_yield();
	}
}

void rq_once_end(rq_once_t *once)
{
	/* release: pairs with the acquire loads in rq_once_begin() */
	atomic_store_explicit(once, RQ_ONCE_DONE, memory_order_release);
}
