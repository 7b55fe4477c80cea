/* SPDX-License-Identifier: MIT */
/*
 * Readers (readers.c): read-side sections, the registration of threads
 * with liburcu-memb, and the depth of this thread's map operations. Above
 * the fork gate; below the freelists and the reclaim machinery.
 */
#ifndef RQMAP_READERS_H
#define RQMAP_READERS_H

/* Inline urcu read-side primitives, except under TSan: inlined, their plain
 * accesses to liburcu's shared futex word would be instrumented against the
 * library's own uninstrumented atomics and reported as races. */
#ifndef RQ_SANITIZE_THREAD
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>

#include <stdatomic.h>
#include <stdbool.h>

#include "words.h"

/*
 * Read-side sections. TSan cannot see the grace period (membarrier inside
 * liburcu), so sanitizer builds tell it: every reader "releases" a shared
 * token when it leaves, and callbacks "acquire" it before reusing memory.
 */
#ifdef RQ_SANITIZE_THREAD
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char rqmap_tsan_gp;
#define RQMAP_TSAN_RELEASE() __tsan_release(&rqmap_tsan_gp)
#define RQMAP_TSAN_ACQUIRE() __tsan_acquire(&rqmap_tsan_gp)
#else
#define RQMAP_TSAN_RELEASE() ((void)0)
#define RQMAP_TSAN_ACQUIRE() ((void)0)
#endif

static inline void rqmap_rcu_lock(void)
{
	urcu_memb_read_lock();
}

static inline void rqmap_rcu_unlock(void)
{
	RQMAP_TSAN_RELEASE();
	urcu_memb_read_unlock();
}

/*
 * Writer operations in progress on this thread, counting the contexts a
 * signal handler interrupted. An update waits for recycled elements only at
 * depth 1: a nested one could be holding up, by sleeping, a lock that its
 * interrupted context holds and every other thread needs.
 */
extern _Thread_local unsigned rqmap_tls_depth;

static inline void rqmap_enter(void)
{
	rqmap_tls_depth++;
	atomic_signal_fence(memory_order_seq_cst); /* a handler sees it */
}

static inline void rqmap_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	rqmap_tls_depth--;
}

/* Registered thread fast check; registers lazily (normal context only). */
extern _Thread_local bool rqmap_tls_registered;
int rqmap_thread_register_slow(void);

static inline int rqmap_thread_ensure(void)
{
	if (RQMAP_LIKELY(rqmap_tls_registered))
		return 0;
	return rqmap_thread_register_slow();
}

#endif /* RQMAP_READERS_H */
