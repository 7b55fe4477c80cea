/* SPDX-License-Identifier: MIT */
/*
 * Deferred reuse (reclaim.h): the retire stacks, the reclaim thread, writers
 * that help a grace period, and quiescence. Above the readers and the
 * freelists, below the map kinds.
 */
#include "reclaim.h"
#include "fork_gate.h"
#include "freelist.h"
#include "readers.h"
#include "sys.h"

#include <rqmap.h>
#include <rqspinlock.h>

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Batches below this size make the reclaim thread nap for RECLAIM_NAP_NS:
 * at 10 M retirements/s that strands about 1000 elements, within the default
 * spare of a map. */
#define RECLAIM_BATCH  256
#define RECLAIM_NAP_NS (100L * 1000)
/* Retire stacks, one per group of registry slots: one global stack would be a
 * cache line every updater writes, a global lock in all but name. */
#define RETIRE_STRIPES 64

struct retire_stripe {
	_Atomic(struct rqmap_retire *) head;
} __attribute__((aligned(64)));

static struct retire_stripe stripes[RETIRE_STRIPES];
static _Atomic uint32_t reclaimer_idle; /* futex word: 1 while it sleeps */
static _Atomic uint64_t nr_retired, nr_collected, nr_reclaimed;
static pthread_mutex_t reclaim_start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool reclaimer_running;

static bool stripes_empty(void)
{
	for (int i = 0; i < RETIRE_STRIPES; i++)
		if (atomic_load(&stripes[i].head)) /* seq_cst: see reclaimer_sleep() */
			return false;
	return true;
}

static void reclaimer_sleep(void)
{
	struct timespec ts = {0, 10L * 1000 * 1000}; /* safety net only */

	/* seq_cst store then loads, against rqmap_retire()'s seq_cst push then
	 * load: one of the two sees the other, so no wake-up is lost. */
	atomic_store(&reclaimer_idle, 1);
	if (stripes_empty())
		syscall(SYS_futex, &reclaimer_idle, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
	atomic_store_explicit(&reclaimer_idle, 0, memory_order_relaxed);
}

/* Take every stripe's stack; chain them into one list of *n elements. */
static struct rqmap_retire *collect(uint64_t *n)
{
	struct rqmap_retire *all = NULL;

	*n = 0;
	for (int i = 0; i < RETIRE_STRIPES; i++) {
		struct rqmap_retire *r, *tail;

		if (!atomic_load_explicit(&stripes[i].head, memory_order_relaxed))
			continue;
		/* acquire: pairs with the release CAS in rqmap_retire() */
		r = atomic_exchange_explicit(&stripes[i].head, NULL, memory_order_acquire);
		if (!r)
			continue;
		for (tail = r, ++*n; tail->next; tail = tail->next, ++*n)
			;
		tail->next = all;
		all = r;
	}
	atomic_fetch_add_explicit(&nr_collected, *n, memory_order_relaxed);
	return all;
}

/* Return a run of elements bound for the same list with one lock. */
static struct rqmap_retire *recycle_run(struct rqmap_retire *r, uint64_t *n)
{
	struct rqfl *fl = r->fl;
	uint32_t home = r->home, len = 1;
	struct rqfl_node *first = (struct rqfl_node *)(void *)r, *last = first;
	struct rqmap_retire *next = r->next;

	while (next && next->fl == fl && next->home == home && len < 4096) {
		struct rqfl_node *node = (struct rqfl_node *)(void *)next;

		next = next->next; /* read before the link overwrites it */
		atomic_store_explicit(&last->next, node, memory_order_relaxed);
		last = node;
		len++;
	}
	rqfl_push_chain(fl, first, last, len, home);
	*n += len;
	return next;
}

/* Elements of no-prealloc maps that a helper took past a grace period:
 * free() is not async-signal-safe, so the reclaim thread frees them. */
static _Atomic(struct rqmap_retire *) deferred_free;

static void defer_free(struct rqmap_retire *r)
{
	struct rqmap_retire *old = atomic_load_explicit(&deferred_free, memory_order_relaxed);

	do
		r->next = old;
	/* release: publishes r->next; pairs with free_deferred()'s acquire */
	while (!atomic_compare_exchange_weak_explicit(&deferred_free, &old, r, memory_order_release,
	                                              memory_order_relaxed));
}

/* The parent's deferred elements, in a child: freed uncounted by its first
 * rqmap_reclaim_start() (normal context; fork_child() may run in a signal
 * handler that interrupted malloc() or free(), where free() is not safe). */
static struct rqmap_retire *fork_orphans;

static uint64_t free_list(struct rqmap_retire *r)
{
	uint64_t n = 0;

	while (r) {
		struct rqmap_retire *next = r->next;

		free(r);
		r = next;
		n++;
	}
	return n;
}

static uint64_t free_deferred(void)
{
	/* acquire: pairs with defer_free() */
	return free_list(atomic_exchange_explicit(&deferred_free, NULL, memory_order_acquire));
}

/* In a child (one thread): the deferred elements join fork_orphans. */
static void orphan_deferred(void)
{
	/* relaxed: the child has one thread */
	struct rqmap_retire *r =
	    atomic_exchange_explicit(&deferred_free, NULL, memory_order_relaxed);
	struct rqmap_retire *tail = r;

	if (!r)
		return;
	while (tail->next)
		tail = tail->next;
	tail->next = fork_orphans;
	fork_orphans = r;
}

/* After a grace period: every element of @r back to its freelist; no-prealloc
 * elements freed (@can_free) or handed to the reclaim thread. */
static void recycle_all(struct rqmap_retire *r, bool can_free)
{
	uint64_t n = 0;

	while (r) {
		struct rqmap_retire *next = r->next;

		if (r->fl) {
			r = recycle_run(r, &n);
			continue;
		}
		if (can_free) {
			free(r);
			n++;
		} else {
			defer_free(r);
		}
		r = next;
	}
	/* release: pairs with rqmap_quiesce(); the reuse is done */
	atomic_fetch_add_explicit(&nr_reclaimed, n, memory_order_release);
}

static void *reclaimer_main(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t n, freed = free_deferred();
		struct rqmap_retire *r;

		if (freed) /* release: pairs with rqmap_quiesce() */
			atomic_fetch_add_explicit(&nr_reclaimed, freed, memory_order_release);
		/* From taking a batch to its last push: no fork() in between, so a
		 * child finds every retired element on the retire stacks. */
		rqmap_urcu_enter();
		r = collect(&n);
		if (!r) {
			rqmap_urcu_exit();
			reclaimer_sleep();
			continue;
		}
		urcu_memb_synchronize_rcu();
		RQMAP_TSAN_ACQUIRE();
		recycle_all(r, true);
		rqmap_urcu_exit();
		/* A small batch: let the next one build up before another grace
		 * period, without going idle (retirers wake only an idle thread, and
		 * a wake-up per handful of elements would cost a syscall each). */
		if (n < RECLAIM_BATCH)
			nanosleep(&(struct timespec){0, RECLAIM_NAP_NS}, NULL);
	}
	return NULL;
}

/* ---- writers help the grace period */

/* Whether this context may wait for a grace period: not inside a read-side
 * section (it would wait for itself), not nested in another map operation of
 * its thread (which may hold a lock others need while it waits), and not
 * while this thread's own fork() holds the gate closed (a handler or atfork
 * handler then: the grace period would wait for the gate, the gate for this
 * thread). A handler never interrupts a grace-period wait or a batch of its
 * own thread: those run with signals blocked. */
static bool may_wait_for_gp(void)
{
	return rqmap_tls_depth <= 1 && !rqmap_tls_forking && !urcu_memb_read_ongoing();
}

/* help_reclaim() with every signal blocked. */
static bool help_reclaim_blocked(void)
{
	uint64_t n;
	struct rqmap_retire *r;

	/* A fork() under way: skip this one. None can use urcu: skip. */
	if (rqmap_urcu_unusable || !rqmap_urcu_enter_try())
		return false;
	r = collect(&n);
	if (r) {
		urcu_memb_synchronize_rcu();
		RQMAP_TSAN_ACQUIRE();
		recycle_all(r, false);
	}
	rqmap_urcu_exit();
	return r != NULL;
}

/* Take every retired element, wait for a grace period, recycle them. False
 * when there was nothing to take (other threads hold the pending batches).
 * Signals stay blocked meanwhile (the fork gate; so a handler never waits
 * for urcu's mutexes or a batch that its own thread holds). */
static bool help_reclaim(void)
{
	sigset_t old = rqmap_block_signals();
	bool helped = help_reclaim_blocked();

	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return helped;
}

/* Retired elements nobody has taken yet. */
static int64_t uncollected(void)
{
	return (int64_t)(atomic_load_explicit(&nr_retired, memory_order_relaxed) -
	                 atomic_load_explicit(&nr_collected, memory_order_relaxed));
}

/* Retired elements not yet recycled (some other thread may hold them). */
static bool any_pending(void)
{
	if (rqmap_urcu_unusable) /* nothing will be recycled */
		return false;
	/* acquire: pairs with recycle_all()'s release add */
	return atomic_load_explicit(&nr_reclaimed, memory_order_acquire) <
	       atomic_load_explicit(&nr_retired, memory_order_relaxed);
}

/* With nothing retired anywhere, how long an update waits for elements that
 * other operations hold in flight before -ENOMEM (the pool is then smaller
 * than the number of concurrent operations needs). */
#define POP_WAIT_NS (50ULL * 1000 * 1000)

struct rqfl_node *rqmap_pop(struct rqfl *fl)
{
	/* Keep the elements waiting for a grace period few, so that contexts
	 * that cannot wait (signal handlers over a map operation or a read-side
	 * section) find the rest of the spare pool free. */
	if (uncollected() > (int64_t)fl->help_above && may_wait_for_gp())
		help_reclaim();
	return rqfl_pop(fl);
}

struct rqfl_node *rqmap_pop_or_wait(struct rqfl *fl)
{
	struct rqfl_node *n = rqmap_pop(fl);
	uint64_t deadline = 0;

	if (n || !may_wait_for_gp())
		return n;
	/* Empty: recycle what we can take ourselves; wait for batches other
	 * threads hold (they finish a grace period and push them back). */
	for (int i = 0; !n; i++) {
		if (!help_reclaim()) {
			if (any_pending())
				deadline = 0;
			else if (!deadline)
				deadline = rqu_now_ns() + POP_WAIT_NS;
			else if (rqu_now_ns() > deadline)
				return NULL;
			if (i < 100)
				sched_yield();
			else
				rqmap_nap_us(50);
		}
		n = rqfl_pop(fl);
	}
	return n;
}

/* Elements on the retire stacks; only in a child that has one thread. */
static uint64_t count_on_stripes(void)
{
	uint64_t n = 0;

	for (int i = 0; i < RETIRE_STRIPES; i++)
		for (struct rqmap_retire *r =
		         atomic_load_explicit(&stripes[i].head, memory_order_relaxed);
		     r; r = r->next)
			n++;
	return n;
}

/* A forked child has no reclaim thread: let it start its own. */
static void reclaim_after_fork_child(void)
{
	reclaimer_running = false;
	pthread_mutex_init(&reclaim_start_lock, NULL);
	/* Nothing is ever recycled in a child that cannot use urcu: and its
	 * retire stacks may hold elements of maps it destroyed since (quiesce
	 * returns at once there), freed memory that must not be read when that
	 * child forks again. */
	if (rqmap_urcu_unusable)
		return;
	/* The fork gate kept every batch on the retire stacks: the child's
	 * grace periods recycle them (its helpers, or its reclaim thread). The
	 * elements waiting to be freed (no-prealloc maps, past their grace
	 * period) stop counting: counted as pending until the child has a
	 * reclaim thread, an update finding no free element would wait for
	 * them instead of failing. */
	orphan_deferred();
	atomic_store_explicit(&nr_retired, count_on_stripes(), memory_order_relaxed);
	atomic_store_explicit(&nr_collected, 0, memory_order_relaxed);
	atomic_store_explicit(&nr_reclaimed, 0, memory_order_relaxed);
}

static const struct rqmap_fork_hooks reclaim_fork_hooks = {
    .after_fork_child = reclaim_after_fork_child,
};

int rqmap_reclaim_start(void)
{
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t old;
	int ret = 0;

	rqmap_fork_gate_install(&reclaim_fork_hooks);
	if (rqmap_urcu_unusable) /* no grace period: nothing to reclaim */
		return 0;
	/* The thread must not run the application's signal handlers; nor may a
	 * handler's fork() fall in between (the child would count the parent's
	 * thread as its own). */
	old = rqmap_block_signals();
	pthread_mutex_lock(&reclaim_start_lock);
	(void)free_list(fork_orphans);
	fork_orphans = NULL;
	if (!reclaimer_running) {
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ret = -pthread_create(&tid, &attr, reclaimer_main, NULL);
		pthread_attr_destroy(&attr);
		reclaimer_running = ret == 0;
	}
	pthread_mutex_unlock(&reclaim_start_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/*
 * A signal handler of this thread forked while rqmap_retire() ran, so this
 * is its child, which has this one thread and no batch in flight: the child
 * counted the elements on the retire stacks at the fork, and the call's own
 * count, after its push, came on top of that count when the push was before
 * the fork (a child that counts one element too many waits for it for ever).
 * Count again.
 */
static void recount_retired_after_fork(void)
{
	/* relaxed: the child has one thread */
	atomic_store_explicit(&nr_retired,
	                      atomic_load_explicit(&nr_collected, memory_order_relaxed) +
	                          count_on_stripes(),
	                      memory_order_relaxed);
}

void rqmap_retire(struct rqmap_retire *r, struct rqfl *fl, uint32_t home)
{
	uint32_t generation = rqmap_fork_generation();
	int slot = res_spin_thread_slot();
	struct retire_stripe *st = &stripes[slot < 0 ? 0 : slot % RETIRE_STRIPES];
	struct rqmap_retire *old = atomic_load_explicit(&st->head, memory_order_relaxed);

	r->fl = fl;
	r->home = home;
	/* A CAS loop, not a plain push: a signal handler may retire onto the same
	 * stripe between our load and our store. */
	do
		r->next = old;
	/* seq_cst (release at least: publishes r->next/fl/home to the reclaimer's
	 * acquire exchange); seq_cst for the lost-wake-up argument above */
	while (!atomic_compare_exchange_weak_explicit(&st->head, &old, r, memory_order_seq_cst,
	                                              memory_order_relaxed));
	atomic_fetch_add_explicit(&nr_retired, 1, memory_order_relaxed);
	if (rqmap_fork_generation() != generation)
		recount_retired_after_fork();
	/* seq_cst: the load after the seq_cst push pairs with
	 * reclaimer_sleep()'s store then loads (no lost wake-up) */
	if (atomic_load(&reclaimer_idle) && atomic_exchange(&reclaimer_idle, 0))
		syscall(SYS_futex, &reclaimer_idle, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* rqmap_quiesce() without a reclaim thread: a batch recycled after a grace
 * period and the deferred elements freed, here; false when there was
 * nothing to do. Signals blocked: a handler's fork() in between would leave
 * the child counting elements it never retired as recycled. */
static bool recycle_here(void)
{
	sigset_t old = rqmap_block_signals();
	bool helped = help_reclaim_blocked();
	uint64_t freed = free_deferred();

	if (freed) /* release: as the reclaim thread's add */
		atomic_fetch_add_explicit(&nr_reclaimed, freed, memory_order_release);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return helped || freed;
}

/* Waits until @target elements were recycled in all; false when a signal
 * handler forked meanwhile and this is its child (start over there). */
static bool quiesce_until(uint64_t target, bool threaded, uint32_t generation)
{
	/* acquire: pairs with the reclaimer's and recycle_all()'s release adds */
	while (atomic_load_explicit(&nr_reclaimed, memory_order_acquire) < target) {
		if (rqmap_fork_generation() != generation)
			return false;
		if (!threaded && recycle_here())
			continue;
		/* seq_cst: as in rqmap_retire() (no lost wake-up) */
		if (threaded && atomic_exchange(&reclaimer_idle, 0))
			syscall(SYS_futex, &reclaimer_idle, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		rqmap_nap_us(100);
	}
	return true;
}

/*
 * A forked child has no reclaim thread until it needs one. Where none can be
 * started, this thread recycles, and frees what no-prealloc maps retired,
 * itself: returning early would let a destroy free a pool that retired
 * elements still point into. A signal handler that forks while this waits
 * leaves the child here with the parent's counts and reclaim thread: the
 * child starts over with its own.
 */
void rqmap_quiesce(void)
{
	for (;;) {
		uint32_t generation = rqmap_fork_generation();
		uint64_t target = atomic_load_explicit(&nr_retired, memory_order_relaxed);
		bool threaded;

		if (rqmap_urcu_unusable)
			return; /* nothing is recycled here (docs/MAPS.md, rule 5) */
		threaded = rqmap_reclaim_start() == 0;
		if (quiesce_until(target, threaded, generation))
			return;
	}
}
