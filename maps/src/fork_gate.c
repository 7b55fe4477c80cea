/* SPDX-License-Identifier: MIT */
/*
 * fork() gate. fork() copies liburcu's internal mutexes (the grace-period
 * and registry locks) in whatever state they are: one held by another
 * thread of the parent (the reclaim thread inside synchronize_rcu(), a
 * writer helping, a thread registering) stays held for ever in the child,
 * whose first grace-period wait then hangs. So the library's calls into
 * urcu's update side count themselves in urcu_in_flight, and an atfork
 * prepare handler closes the gate and waits until every call has left;
 * calls that find the gate closed either skip their grace period (helpers)
 * or wait for it to reopen (reclaim thread, registration, unregistration).
 * Every such call runs with all signals blocked (help_reclaim(),
 * registration, unregistration, the reclaim thread), so the forking thread is
 * never inside one itself, not even when a signal handler forks: a call of
 * its own would go on in the child, inside liburcu, waiting for the parent's
 * other threads (their place in urcu's queue of grace-period waiters, their
 * reader records).
 *
 * The wait is bounded: FORK_DRAIN_TIMEOUTS lock timeouts
 * (res_spin_get_timeout_ns(), so 1 s by default), FORK_DRAIN_SECTION_NS when
 * the forking thread is inside a read-side section (a grace period in flight
 * then waits for it and cannot end). A call still in flight at the bound may
 * hold urcu's mutexes in the child, so that child never uses urcu's update
 * side (rqmap_urcu_unusable): no grace period, no registration, retired
 * elements never recycled (docs/MAPS.md, rule 5).
 */
#include "fork_gate.h"
#include "sys.h"

#include <rqspinlock.h>

#include <pthread.h>
#include <stdatomic.h>

#define FORK_DRAIN_TIMEOUTS   4
#define FORK_DRAIN_SECTION_NS (1000ULL * 1000)
static _Atomic uint32_t fork_gate; /* forks in progress: closed while > 0 */
static _Atomic uint32_t urcu_in_flight;
static _Thread_local bool tls_fork_undrained; /* this fork()'s prepare gave up */
/* Each child bumps it (its only thread, possibly inside a signal handler). */
static _Atomic uint32_t fork_generation;
/* From this thread's prepare handler to its parent or child handler: the
 * gate cannot reopen before this thread goes on, so neither it nor a signal
 * handler that interrupts it, nor another atfork handler run in between,
 * may wait for a grace period or for urcu's update side (they would wait
 * for ever). */
_Thread_local bool rqmap_tls_forking;
bool rqmap_urcu_unusable;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* The floors above, in installation order. */
static _Atomic(const struct rqmap_fork_hooks *) hooks[RQMAP_FORK_HOOKS];

uint32_t rqmap_fork_generation(void)
{
	/* relaxed: only this thread (in a handler's fork()) changes it while
	 * the caller runs; the signal fence keeps the load where it is */
	atomic_signal_fence(memory_order_seq_cst);
	return atomic_load_explicit(&fork_generation, memory_order_relaxed);
}

bool rqmap_urcu_enter_try(void)
{
	/* seq_cst add then seq_cst load of the gate, against fork_prepare()'s
	 * add then load of the count: one of the two sees the other. */
	atomic_fetch_add_explicit(&urcu_in_flight, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&fork_gate, memory_order_seq_cst)) { /* seq_cst: as above */
		/* relaxed: nothing was done under it */
		atomic_fetch_sub_explicit(&urcu_in_flight, 1, memory_order_relaxed);
		return false;
	}
	return true;
}

void rqmap_urcu_enter(void)
{
	while (!rqmap_urcu_enter_try())
		rqmap_nap_us(50);
}

void rqmap_urcu_exit(void)
{
	/* release: the call's effects (urcu's mutexes unlocked, a batch
	 * recycled, the registry list changed) before it stops counting; pairs
	 * with fork_prepare()'s loads */
	atomic_fetch_sub_explicit(&urcu_in_flight, 1, memory_order_release);
}

/* Is the forking thread inside a read-side section (a hook says so)? */
static bool forker_in_section(void)
{
	for (int i = 0; i < RQMAP_FORK_HOOKS; i++) {
		/* acquire: pairs with rqmap_fork_gate_install()'s release */
		const struct rqmap_fork_hooks *h =
		    atomic_load_explicit(&hooks[i], memory_order_acquire);

		if (h && h->in_section && h->in_section())
			return true;
	}
	return false;
}

static void fork_prepare(void)
{
	uint64_t start = rqu_now_ns(), bound = FORK_DRAIN_TIMEOUTS * res_spin_get_timeout_ns();

	rqmap_tls_forking = true;
	atomic_signal_fence(memory_order_seq_cst); /* a handler sees it */
	/* seq_cst: pairs with rqmap_urcu_enter_try()'s add then load */
	atomic_fetch_add_explicit(&fork_gate, 1, memory_order_seq_cst);
	if (forker_in_section())
		bound = FORK_DRAIN_SECTION_NS;
	tls_fork_undrained = false;
	/* A process that cannot use urcu never does (a stray count is one of
	 * help_reclaim()'s, which leaves at once): nothing to drain. */
	if (rqmap_urcu_unusable)
		return;
	/* seq_cst: pairs with rqmap_urcu_enter_try()'s add then load; also
	 * acquire, pairing with rqmap_urcu_exit()'s release. None of the calls
	 * is this thread's: they run with signals blocked. */
	while (atomic_load_explicit(&urcu_in_flight, memory_order_seq_cst)) {
		if (rqu_now_ns() - start > bound) {
			tls_fork_undrained = true;
			break;
		}
		rqmap_nap_us(50);
	}
}

static void fork_parent(void)
{
	/* relaxed: reopening orders nothing (a call that sees it open starts
	 * afresh) */
	atomic_fetch_sub_explicit(&fork_gate, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	rqmap_tls_forking = false;
}

static void fork_child(void)
{
	if (tls_fork_undrained)
		rqmap_urcu_unusable = true;
	/* relaxed: the child has one thread */
	atomic_store_explicit(&urcu_in_flight, 0, memory_order_relaxed);
	for (int i = 0; i < RQMAP_FORK_HOOKS; i++) {
		/* relaxed: the child has one thread, and the parent's
		 * installation was complete or not at the fork */
		const struct rqmap_fork_hooks *h =
		    atomic_load_explicit(&hooks[i], memory_order_relaxed);

		if (h && h->after_fork_child)
			h->after_fork_child();
	}
	/* relaxed: as above */
	atomic_store_explicit(&fork_gate, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	rqmap_tls_forking = false;
}

static void register_atfork(void)
{
	(void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void rqmap_fork_gate_install(const struct rqmap_fork_hooks *h)
{
	pthread_once(&atfork_once, register_atfork);
	for (int i = 0; i < RQMAP_FORK_HOOKS; i++) {
		const struct rqmap_fork_hooks *none = NULL;

		/* acq_rel: release publishes *h to the handlers' loads; acquire
		 * reads an earlier installation of @h, so it is not added twice */
		if (atomic_compare_exchange_strong_explicit(
		        &hooks[i], &none, h, memory_order_acq_rel, memory_order_acquire) ||
		    none == h)
			return;
	}
}
