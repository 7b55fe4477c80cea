/* SPDX-License-Identifier: MIT */
/*
 * Shared by the re-entrancy tests: a SIGPROF handler that updates the hash map
 * while the interrupted thread may be inside one of its bucket locks, and the
 * per-thread bookkeeping that lets each thread check its own keys exactly.
 *
 * Keys: thread t writes main keys t*MAIN_KEYS + i from normal context only;
 * its handler writes handler keys HKEY_BASE + t*HKEYS + j only, choosing one
 * in the bucket of the main key the thread is updating right now, so the
 * handler lands on the lock its own thread may hold.
 */
#ifndef REENTRY_COMMON_H
#define REENTRY_COMMON_H

#include "hash_internal.h"
#include "testutil.h"
#include "sigtimer.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8
#define MAIN_KEYS   32
#define HKEYS       256
#define HKEY_BASE   100000U
#define NO_VALUE    UINT64_MAX
/* The tests raise the lock timeout to LOCK_TIMEOUT_NS. A handler's update
 * slower than HANDLER_SLOW_NS is counted and printed (a stall of the VM, or a
 * wait ended by somebody's timeout); what must never happen is checked
 * exactly by the report hook: a timeout on a lock the timing-out thread
 * itself holds, i.e. a handler that waited for its own interrupted context
 * instead of failing at once. */
#define LOCK_TIMEOUT_NS (2000ULL * 1000 * 1000)
#define HANDLER_SLOW_NS (1000L * 1000 * 1000)

struct reentry_thread {
	uint32_t hkey_for[MAIN_KEYS]; /* a handler key in the same bucket */
	uint64_t main_val[MAIN_KEYS]; /* expected values (NO_VALUE: absent) */
	uint64_t hval[HKEYS];         /* handler's expected values */
	_Atomic int cur;              /* main key being written, -1 none */
	long n_ok, n_deadlk, n_nomem, n_timedout, n_other, n_slow, n_bad_lookup;
	int main_err;
	int last_other;
};

static struct rqmap_hash *re_map;
/* Set by a handler that got a result it must never get: stop early. */
static atomic_bool re_abort;
static _Thread_local struct reentry_thread *re_self;
/* Library timeouts seen by the report hook; of those, on a lock the failing
 * thread holds itself (a missed AA: must stay 0). */
static atomic_long re_timeouts, re_own_timeouts;
static _Thread_local uint32_t re_tid;

static inline uint32_t main_key(uint32_t t, uint32_t i)
{
	return t * MAIN_KEYS + i;
}

static inline uint32_t handler_key(uint32_t t, uint32_t j)
{
	return HKEY_BASE + t * HKEYS + j;
}

/* Pair every main key with a handler key that falls in the same bucket. */
static inline void reentry_thread_setup(struct reentry_thread *rt, uint32_t t)
{
	memset(rt, 0, sizeof(*rt));
	for (uint32_t i = 0; i < MAIN_KEYS; i++) {
		uint32_t mk = main_key(t, i);

		rt->main_val[i] = NO_VALUE;
		rt->hkey_for[i] = handler_key(t, i % HKEYS);
		for (uint32_t j = 0; j < HKEYS; j++) {
			uint32_t hk = handler_key(t, j);

			if (rqmap_hash_bucket_of(re_map, &hk) ==
			    rqmap_hash_bucket_of(re_map, &mk)) {
				rt->hkey_for[i] = hk;
				break;
			}
		}
	}
	for (uint32_t j = 0; j < HKEYS; j++)
		rt->hval[j] = NO_VALUE;
	atomic_init(&rt->cur, -1);
	re_tid = t;
	atomic_signal_fence(memory_order_seq_cst);
	re_self = rt;
}

static inline void reentry_handler(int sig)
{
	struct reentry_thread *rt = re_self;
	int saved = errno, cur, ret;
	uint32_t hk, j;
	uint64_t v, got, t0;

	(void)sig;
	if (!rt || atomic_load_explicit(&re_abort, memory_order_relaxed))
		goto out; /* after a failure, let the thread finish quickly */
	t0 = rqu_now_ns();
	cur = atomic_load_explicit(&rt->cur, memory_order_relaxed);
	hk = rt->hkey_for[cur >= 0 ? cur : 0];
	j = hk - handler_key(re_tid, 0);
	v = rt->hval[j] == NO_VALUE ? 1 : rt->hval[j] + 1;
	ret = rqmap_hash_update(re_map, &hk, &v, RQMAP_ANY);
	if (rqu_now_ns() - t0 > HANDLER_SLOW_NS)
		rt->n_slow++; /* see HANDLER_SLOW_NS */
	if (ret == 0) {
		rt->hval[j] = v;
		rt->n_ok++;
	} else if (ret == -EDEADLK || ret == -ENOMEM) {
		/* -EDEADLK: the bucket lock is held by the context we interrupted.
		 * -ENOMEM: that context holds the only freelist lock with free
		 * elements behind it (the kernel's NMI path fails the same way). */
		if (ret == -EDEADLK)
			rt->n_deadlk++;
		else
			rt->n_nomem++;
		/* the failed update left the map as it was (lookups take no lock) */
		ret = rqmap_hash_lookup(re_map, &hk, &got, 0);
		if (rt->hval[j] == NO_VALUE ? ret != -ENOENT : (ret != 0 || got != rt->hval[j]))
			rt->n_bad_lookup++;
	} else if (ret == -ETIMEDOUT) {
		/* A cycle through other threads that detection missed (see
		 * docs/DESIGN.md, "Frozen claimants"): allowed, and checked
		 * by reentry_report() not to be a wait for our own lock. */
		rt->n_timedout++;
	} else {
		rt->n_other++; /* no other error is possible */
		rt->last_other = ret;
		atomic_store_explicit(&re_abort, true, memory_order_relaxed);
	}
out:
	errno = saved;
}

/* One normal-context operation on a main key; returns false on a wrong result. */
static inline bool reentry_main_op(struct reentry_thread *rt, uint32_t t, uint64_t r)
{
	uint32_t i = (uint32_t)(r % MAIN_KEYS), k = main_key(t, i);
	uint64_t v, got;
	int ret;

	atomic_store_explicit(&rt->cur, (int)i, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst); /* handler sees cur before the update */
	if ((r >> 20) % 16 == 0) {
		ret = rqmap_hash_delete(re_map, &k);
		if (ret != (rt->main_val[i] == NO_VALUE ? -ENOENT : 0))
			return false;
		rt->main_val[i] = NO_VALUE;
		return true;
	}
	if ((r >> 20) % 4 == 1) {
		ret = rqmap_hash_lookup(re_map, &k, &got, 0);
		return rt->main_val[i] == NO_VALUE ? ret == -ENOENT
		                                   : (ret == 0 && got == rt->main_val[i]);
	}
	v = rt->main_val[i] == NO_VALUE ? 1 : rt->main_val[i] + 1;
	ret = rqmap_hash_update(re_map, &k, &v, RQMAP_ANY);
	if (ret) { /* -ENOMEM too: normal context helps the grace period instead */
		rt->main_err = ret;
		return false;
	}
	rt->main_val[i] = v;
	return true;
}

/* Report hook (async-signal-safe: atomics only). The report is made after
 * the failed attempt was undone, so self.held lists only the locks the thread
 * (any of its contexts) really holds. */
static inline void reentry_report(const struct rqspinlock_report *r, void *arg)
{
	(void)arg;
	if (r->event != RQSPINLOCK_EV_TIMEOUT)
		return;
	atomic_fetch_add_explicit(&re_timeouts, 1, memory_order_relaxed);
	for (uint32_t i = 0; i < r->self.nr_held; i++)
		if (r->self.held[i] == (const void *)r->lock)
			atomic_fetch_add_explicit(&re_own_timeouts, 1, memory_order_relaxed);
}

static inline void install_handler(void)
{
	struct sigaction sa;

	res_spin_set_report_hook(reentry_report, NULL);
	(void)res_spin_set_timeout_ns(LOCK_TIMEOUT_NS);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = reentry_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGPROF, &sa, NULL), 0);
}

static inline void set_prof_timer(long usec)
{
	struct itimerval it = {{0, usec}, {0, usec}};

	CHECK_EQ(setitimer(ITIMER_PROF, &it, NULL), 0);
}

static inline struct rqmap_hash *reentry_make_map(enum rqmap_lock_kind kind, uint32_t n_buckets)
{
	struct rqmap_hash_attr a = {.key_size = 4,
	                            .value_size = 8,
	                            .max_entries = 4096,
	                            .n_buckets = n_buckets,
	                            .lock_kind = kind};
	struct rqmap_hash *m = NULL;

	CHECK_EQ(rqmap_hash_create(&a, &m), 0);
	return m;
}

#endif /* REENTRY_COMMON_H */
