/* SPDX-License-Identifier: MIT */
/* RCU glue: per-thread registration with liburcu-memb, barrier, word copies. */
#include "internal.h"
#include "freelist.h"

/* struct urcu_reader, for forgetting the parent's readers after fork() */
#include <urcu/static/urcu-memb.h>

#include <rqmap.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Thread_local bool rqmap_tls_registered;
_Thread_local unsigned rqmap_tls_depth;
#ifdef RQ_SANITIZE_THREAD
char rqmap_tsan_gp;
#endif

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

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
 * side (urcu_unusable): no grace period, no registration, retired elements
 * never recycled (docs/MAPS.md, rule 5).
 */
#define FORK_DRAIN_TIMEOUTS   4
#define FORK_DRAIN_SECTION_NS (1000ULL * 1000)
static _Atomic uint32_t fork_gate; /* forks in progress: closed while > 0 */
static _Atomic uint32_t urcu_in_flight;
static _Thread_local bool tls_fork_undrained; /* this fork()'s prepare gave up */
/* How many fork()s this process descends from: each child bumps it (its only
 * thread, possibly inside a signal handler), so that a call that a handler's
 * fork() interrupted sees, when it goes on, that it now runs in a child
 * (rqmap_quiesce()). */
static _Atomic uint32_t fork_generation;
/* This thread is inside fork() with the gate closed (from its prepare handler
 * to its parent or child handler): the gate cannot reopen before this thread
 * goes on, so neither it nor a signal handler that interrupts it, nor another
 * atfork handler run in between, may wait for a grace period or for urcu's
 * update side (they would wait for ever). */
static _Thread_local bool tls_forking;
/* Set in a child whose fork() gave up, before it has other threads. */
static bool urcu_unusable;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static uint32_t fork_generation_now(void)
{
	/* relaxed: only this thread (in a handler's fork()) changes it while
	 * the caller runs; the signal fence keeps the load where it is */
	atomic_signal_fence(memory_order_seq_cst);
	return atomic_load_explicit(&fork_generation, memory_order_relaxed);
}

static void nap_us(long us)
{
	nanosleep(&(struct timespec){0, us * 1000}, NULL);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	return (uint64_t)ts.tv_sec * 1000000000U + (uint64_t)ts.tv_nsec;
}

/* Block every signal; returns the mask to restore. */
static sigset_t block_all_signals(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	return old;
}

/* Counts a call into urcu's update side; only with every signal blocked
 * (see the fork gate above). */
static bool urcu_enter_try(void)
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

/* Waits only while a fork() is in progress (bounded by its prepare). */
static void urcu_enter(void)
{
	while (!urcu_enter_try())
		nap_us(50);
}

static void urcu_exit(void)
{
	/* release: the call's effects (urcu's mutexes unlocked, a batch
	 * recycled, the registry list changed) before it stops counting; pairs
	 * with fork_prepare()'s loads */
	atomic_fetch_sub_explicit(&urcu_in_flight, 1, memory_order_release);
}

static void fork_prepare(void)
{
	uint64_t start = mono_ns(), bound = FORK_DRAIN_TIMEOUTS * res_spin_get_timeout_ns();

	tls_forking = true;
	atomic_signal_fence(memory_order_seq_cst); /* a handler sees it */
	/* seq_cst: pairs with urcu_enter_try()'s add then load */
	atomic_fetch_add_explicit(&fork_gate, 1, memory_order_seq_cst);
	if (rqmap_tls_registered && urcu_memb_read_ongoing())
		bound = FORK_DRAIN_SECTION_NS;
	tls_fork_undrained = false;
	/* A process that cannot use urcu never does (a stray count is one of
	 * help_reclaim()'s, which leaves at once): nothing to drain. */
	if (urcu_unusable)
		return;
	/* seq_cst: pairs with urcu_enter_try()'s add then load; also acquire,
	 * pairing with urcu_exit()'s release. None of the calls is this
	 * thread's: they run with signals blocked. */
	while (atomic_load_explicit(&urcu_in_flight, memory_order_seq_cst)) {
		if (mono_ns() - start > bound) {
			tls_fork_undrained = true;
			break;
		}
		nap_us(50);
	}
}

static void fork_parent(void)
{
	/* relaxed: reopening orders nothing (a call that sees it open starts
	 * afresh) */
	atomic_fetch_sub_explicit(&fork_gate, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	tls_forking = false;
}

/*
 * Every thread registered by the library, for the child of a fork(): the
 * other threads of the parent are gone there, but their urcu reader records
 * stay in urcu's registry, and one that was inside a read-side section at
 * the fork would hold up every grace period of the child for ever. Left in
 * the registry, a record would also be added a second time when a thread of
 * the child reuses the dead thread's stack and TLS (glibc caches them),
 * corrupting the list. Changed only inside urcu_enter() (registration,
 * unregistration), so never in the middle of a change at a drained fork().
 */
struct reg_node {
	struct cds_list_head node; /* in reg_list while the thread is registered */
	struct urcu_reader *reader;
};
static CDS_LIST_HEAD(reg_list);
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local struct reg_node tls_reg;

static void reg_add(void)
{
	tls_reg.reader = &URCU_TLS(urcu_memb_reader);
	pthread_mutex_lock(&reg_lock);
	cds_list_add(&tls_reg.node, &reg_list);
	pthread_mutex_unlock(&reg_lock);
}

static void reg_del(void)
{
	pthread_mutex_lock(&reg_lock);
	cds_list_del(&tls_reg.node);
	pthread_mutex_unlock(&reg_lock);
}

/*
 * In the child: the parent's other threads are gone, and their records leave
 * urcu's registry (no update-side call is in flight, this thread's neither:
 * see the fork gate). After an undrained fork() the list may be mid-change
 * and nothing waits for grace periods: it is not read.
 */
static void reg_after_fork_child(void)
{
	struct cds_list_head *pos;

	for (pos = reg_list.next; !urcu_unusable && pos != &reg_list; pos = pos->next) {
		if (pos != &tls_reg.node)
			cds_list_del(&cds_list_entry(pos, struct reg_node, node)->reader->node);
	}
	CDS_INIT_LIST_HEAD(&reg_list);
	if (rqmap_tls_registered)
		cds_list_add(&tls_reg.node, &reg_list);
	pthread_mutex_init(&reg_lock, NULL);
}

static void reclaim_after_fork_child(void);

static void fork_child(void)
{
	if (tls_fork_undrained)
		urcu_unusable = true;
	/* relaxed: the child has one thread */
	atomic_store_explicit(&urcu_in_flight, 0, memory_order_relaxed);
	reg_after_fork_child();
	reclaim_after_fork_child();
	/* relaxed: as above */
	atomic_store_explicit(&fork_gate, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	tls_forking = false;
}

static void register_atfork(void)
{
	(void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* liburcu requires unregistration before a registered thread exits. It
 * runs with every signal blocked, as registration does: a handler in
 * between would read maps unregistered, unseen by grace periods. */
static void unregister_at_exit(void *arg)
{
	sigset_t old = block_all_signals();

	(void)arg;
	if (rqmap_tls_registered) {
		if (!urcu_unusable) { /* else urcu's registry lock may be held */
			urcu_enter();
			reg_del();
			urcu_memb_unregister_thread();
			urcu_exit();
		}
		rqmap_tls_registered = false;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void make_exit_key(void)
{
	(void)pthread_key_create(&exit_key, unregister_at_exit);
}

/*
 * Registration runs with every signal blocked: a handler that used a map
 * inside it would register the thread a second time (liburcu asserts and
 * aborts) or wait for the registry mutex the interrupted registration
 * holds. A signal that arrives meanwhile runs its handler once the thread
 * is registered. A handler that ran before the mask may have registered
 * the thread already. (pthread_once() too: a handler inside it would wait
 * for itself.)
 */
int rqmap_thread_register_slow(void)
{
	sigset_t old = block_all_signals();
	int ret = 0;

	pthread_once(&exit_key_once, make_exit_key);
	pthread_once(&atfork_once, register_atfork);
	if (!rqmap_tls_registered) {
		/* urcu's registry lock may be held for ever, or this thread's
		 * own fork() holds the gate closed (fork gate) */
		if (urcu_unusable || tls_forking || pthread_setspecific(exit_key, (void *)1)) {
			ret = -ENOMEM;
		} else {
			urcu_enter();
			urcu_memb_register_thread();
			reg_add();
			urcu_exit();
			rqmap_tls_registered = true;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int rqmap_thread_init(void)
{
	/* Also take a lock-registry slot now, in normal context. */
	(void)res_spin_thread_slot();
	return rqmap_thread_ensure();
}

int rqmap_read_lock(void)
{
	int ret = rqmap_thread_ensure();

	if (!ret)
		rqmap_rcu_lock();
	return ret;
}

void rqmap_read_unlock(void)
{
	rqmap_rcu_unlock();
}

/* ---- reclaim thread */

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
		urcu_enter();
		r = collect(&n);
		if (!r) {
			urcu_exit();
			reclaimer_sleep();
			continue;
		}
		urcu_memb_synchronize_rcu();
		RQMAP_TSAN_ACQUIRE();
		recycle_all(r, true);
		urcu_exit();
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
	return rqmap_tls_depth <= 1 && !tls_forking && !urcu_memb_read_ongoing();
}

/* help_reclaim() with every signal blocked. */
static bool help_reclaim_blocked(void)
{
	uint64_t n;
	struct rqmap_retire *r;

	/* A fork() under way: skip this one. None can use urcu: skip. */
	if (urcu_unusable || !urcu_enter_try())
		return false;
	r = collect(&n);
	if (r) {
		urcu_memb_synchronize_rcu();
		RQMAP_TSAN_ACQUIRE();
		recycle_all(r, false);
	}
	urcu_exit();
	return r != NULL;
}

/* Take every retired element, wait for a grace period, recycle them. False
 * when there was nothing to take (other threads hold the pending batches).
 * Signals stay blocked meanwhile (the fork gate; so a handler never waits
 * for urcu's mutexes or a batch that its own thread holds). */
static bool help_reclaim(void)
{
	sigset_t old = block_all_signals();
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
	if (urcu_unusable) /* nothing will be recycled */
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
				deadline = mono_ns() + POP_WAIT_NS;
			else if (mono_ns() > deadline)
				return NULL;
			if (i < 100)
				sched_yield();
			else
				nap_us(50);
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
	if (urcu_unusable)
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

int rqmap_reclaim_start(void)
{
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t old;
	int ret = 0;

	pthread_once(&atfork_once, register_atfork);
	if (urcu_unusable) /* no grace period: nothing to reclaim */
		return 0;
	/* The thread must not run the application's signal handlers; nor may a
	 * handler's fork() fall in between (the child would count the parent's
	 * thread as its own). */
	old = block_all_signals();
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
	uint32_t generation = fork_generation_now();
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
	if (fork_generation_now() != generation)
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
	sigset_t old = block_all_signals();
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
		if (fork_generation_now() != generation)
			return false;
		if (!threaded && recycle_here())
			continue;
		/* seq_cst: as in rqmap_retire() (no lost wake-up) */
		if (threaded && atomic_exchange(&reclaimer_idle, 0))
			syscall(SYS_futex, &reclaimer_idle, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		nap_us(100);
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
		uint32_t generation = fork_generation_now();
		uint64_t target = atomic_load_explicit(&nr_retired, memory_order_relaxed);
		bool threaded;

		if (urcu_unusable)
			return; /* nothing is recycled here (docs/MAPS.md, rule 5) */
		threaded = rqmap_reclaim_start() == 0;
		if (quiesce_until(target, threaded, generation))
			return;
	}
}

void rqmap_words_store(rqmap_word_t *dst, const void *src, uint32_t bytes)
{
	const unsigned char *s = src;
	uint32_t i, full = bytes / 4;

	for (i = 0; i < full; i++) {
		uint32_t w;

		memcpy(&w, s + 4 * (size_t)i, 4);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
	if (bytes % 4) {
		uint32_t w = 0;

		memcpy(&w, s + 4 * (size_t)i, bytes % 4);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
}

void rqmap_words_store_skip(rqmap_word_t *dst, const void *src, uint32_t bytes, uint32_t skip_word)
{
	const unsigned char *s = src;
	uint32_t n = rqmap_words(bytes);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = 0;

		if (i == skip_word)
			continue;
		memcpy(&w, s + 4 * (size_t)i, i * 4 + 4 <= bytes ? 4 : bytes % 4);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
}

void rqmap_words_load(void *dst, const rqmap_word_t *src, uint32_t bytes)
{
	unsigned char *d = dst;
	uint32_t i, full = bytes / 4;

	for (i = 0; i < full; i++) {
		uint32_t w = atomic_load_explicit(&src[i], memory_order_relaxed);

		memcpy(d + 4 * (size_t)i, &w, 4);
	}
	if (bytes % 4) {
		uint32_t w = atomic_load_explicit(&src[i], memory_order_relaxed);

		memcpy(d + 4 * (size_t)i, &w, bytes % 4);
	}
}

bool rqmap_words_equal(const rqmap_word_t *a, const uint32_t *b, uint32_t nwords)
{
	for (uint32_t i = 0; i < nwords; i++)
		if (atomic_load_explicit(&a[i], memory_order_relaxed) != b[i])
			return false;
	return true;
}

void rqmap_words_zero(rqmap_word_t *dst, uint32_t nwords)
{
	for (uint32_t i = 0; i < nwords; i++)
		atomic_store_explicit(&dst[i], 0, memory_order_relaxed);
}
