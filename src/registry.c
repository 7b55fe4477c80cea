/* SPDX-License-Identifier: MIT */
/*
 * Layer 0, the thread registry: the userspace stand-in for the kernel's
 * per-CPU data. Uses only registry.h (the counters, the environment).
 *
 * Each thread that touches a lock gets a slot (its struct rq_thread: held
 * table, queue nodes, wait stack, counters) in a static array, so any 14-bit
 * tail decodes to memory the library owns, and other threads may read any
 * slot at any time. Slots are taken lazily with one CAS (async-signal-safe:
 * a thread's first lock may happen inside a signal handler) and given back
 * by a thread-specific-data destructor when the thread exits.
 *
 * A thread that finds every slot taken gets a thread-local record instead
 * (slot RQ_NO_SLOT): its locks work through the TAS slow path, invisible to
 * other threads' deadlock detection.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "registry.h"

static struct rq_thread rq_threads[RQSPINLOCK_MAX_THREADS];
/* Slots in use are below this; detection scans [0, bound). */
static _Atomic uint32_t rq_bound;
/* Capacity: RQSPINLOCK_MAX_THREADS, or less via RQSPINLOCK_SLOTS (tests). */
static uint32_t rq_capacity = RQSPINLOCK_MAX_THREADS;
static pthread_key_t rq_exit_key;
static _Thread_local struct rq_thread rq_overflow;
/* Live threads without a slot: their tables are invisible to detectors. */
static _Atomic uint32_t rq_slotless;

/* Read-only, in .rodata (see registry.h); its slot is neither a registry index nor
 * RQ_NO_SLOT, so nothing counts it as a thread. */
const struct rq_thread rq_unregistered = {.held = {.cnt = RQ_HELD_OVERFLOW,
                                                   .none_below = RQSPINLOCK_HELD_NONE,
                                                   .none_above = RQSPINLOCK_HELD_NONE},
                                          .slot = RQ_NO_SLOT - 1};
/* The casts drop const only in type: the fast paths never write the
 * sentinel (its count fails the lock's bound check, and none of its
 * entries matches an unlock), and a stray write faults. The initialiser
 * is rq_fast_table(&rq_unregistered), spelt as a constant expression. */
_Thread_local struct rq_thread *rq_self = (struct rq_thread *)&rq_unregistered;
RQ_EXPORT _Thread_local _Atomic uintptr_t *rq_fast =
    (_Atomic uintptr_t *)&rq_unregistered.held.none_below;

/* Events of threads without a slot (or without a record yet). A slot's own
 * counters stay with the slot when its thread leaves: the next thread to
 * take it counts on from there, so no count ever moves and a reader's sum
 * of the slots and these never misses or doubles one. */
static _Atomic uint64_t rq_global_stats[RQ_STAT_NR];

_Atomic uint64_t *rq_stats_global(void)
{
	return rq_global_stats;
}

void rq_stat_inc_global(enum rq_stat s)
{
	atomic_fetch_add_explicit(&rq_global_stats[s], 1, memory_order_relaxed);
}

struct rq_thread *rq_thread_at(uint32_t slot)
{
	return &rq_threads[slot];
}

bool rq_thread_has_owner_id(const struct rq_thread *t)
{
	/* As integers: @t may be a slot-less thread's record, outside the array. */
	uintptr_t off = (uintptr_t)t - (uintptr_t)rq_threads;

	return off < RQ_NR_OWNER_IDS * sizeof(*t);
}

bool rq_slotless_threads(void)
{
	/* relaxed: a hint for detect.c (the frozen-owner rule, the orphaned
	 * pending bit), which a thread that registers meanwhile cannot affect
	 * (it holds nothing yet) */
	return atomic_load_explicit(&rq_slotless, memory_order_relaxed) != 0;
}

uint32_t rq_slot_bound(void)
{
	/* acquire: pairs with raise_bound()'s release (a slot's first claim
	 * is seen reset; see there) */
	return atomic_load_explicit(&rq_bound, memory_order_acquire);
}

void rq_yield(void)
{
	struct rq_thread *t = rq_self_peek();

	if (t)
		rq_stat_inc(t, RQ_STAT_YIELD);
	sched_yield();
}

/*
 * A waiter that has waited long gives its CPU away for real: sched_yield()
 * can hand the CPU straight back to the yielder when the scheduler deems the
 * preempted owner to have had its share, whereas a short sleep takes the
 * waiter off the run queue.
 *
 * The raw system call, not nanosleep(): that one is a cancellation point,
 * and a waiter cancelled there would vanish from the queue or leave its
 * pending bit set. Nothing the library calls while waiting is one.
 */
void rq_nap(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 20000};
	struct rq_thread *t = rq_self_peek();
	int saved = errno; /* a handler's interrupted code may read it */

	if (t)
		rq_stat_inc(t, RQ_STAT_YIELD);
	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	errno = saved;
}

static void clear_thread(struct rq_thread *t)
{
	/* every slot the fast unlock may read: the table and its two guards */
	for (uint32_t i = 0; i <= RQ_HELD_OVERFLOW; i++)
		atomic_store_explicit(res_spin_inline_entry(rq_fast_table(t), i),
		                      RQSPINLOCK_HELD_NONE, memory_order_relaxed);
	atomic_store_explicit(&t->held.cnt, 0, memory_order_relaxed);
	atomic_store_explicit(&t->node_count, 0, memory_order_relaxed);
	atomic_store_explicit(&t->wr.nwait, 0, memory_order_relaxed);
}

static void raise_bound(uint32_t slot)
{
	uint32_t b = atomic_load_explicit(&rq_bound, memory_order_relaxed);

	/* release: a slot claimed for the first time is seen reset by
	 * scanners that see the new bound; pairs with rq_slot_bound(). A
	 * reused slot, below the bound already, is not covered: a scanner may
	 * read the previous thread's entries there, which only makes it miss
	 * a link (rq_thread_in_use() and the checks it gates act on other
	 * evidence) */
	while (b <= slot &&
	       !atomic_compare_exchange_weak_explicit(&rq_bound, &b, slot + 1, memory_order_release,
	                                              memory_order_relaxed))
		;
}

static struct rq_thread *claim_slot(void)
{
	for (uint32_t s = 0; s < rq_capacity; s++) {
		struct rq_thread *t = &rq_threads[s];
		uint32_t expected = 0;

		if (atomic_load_explicit(&t->wr.in_use, memory_order_relaxed))
			continue;
		/* acquire: pairs with the release in release_slot(), so the
		 * previous owner's last writes are behind us */
		if (!atomic_compare_exchange_strong_explicit(
		        &t->wr.in_use, &expected, 1, memory_order_acquire, memory_order_relaxed))
			continue;
		clear_thread(t);
		t->slot = s;
		t->held.owner = rq_owner_of_slot(s);
		atomic_store_explicit(&t->tid, (int32_t)syscall(SYS_gettid), memory_order_relaxed);
		raise_bound(s);
		return t;
	}
	return NULL;
}

static void release_slot(struct rq_thread *t)
{
	clear_thread(t);
	/* release: pairs with the acquire CAS in claim_slot() */
	atomic_store_explicit(&t->wr.in_use, 0, memory_order_release);
}

/*
 * Locks taken after the exit destructor ran (in other thread-specific-data
 * destructors, possibly in glibc's last round, after which nothing would
 * give a new slot back) use this record: no slot, the TAS slow path, and
 * invisible to other threads' detection, like a slot-less thread's, but
 * not counted in rq_slotless, which nothing could decrement again.
 */
static _Thread_local struct rq_thread rq_exiting = {.held.owner = RQ_OWNER_ANON,
                                                    .slot = RQ_NO_SLOT};

/* Signals stay blocked throughout: a handler that locks must find either
 * the record and its table or rq_exiting and the sentinel's, never one of
 * each, and not a record being cleared. */
static void thread_exit(void *arg)
{
	struct rq_thread *t = arg;
	sigset_t old;

	rq_block_signals(&old);
	if (rq_self == t) {
		rq_fast = rq_fast_table(&rq_unregistered);
		rq_self = &rq_exiting;
	}
	if (t->slot == RQ_NO_SLOT)
		atomic_fetch_sub_explicit(&rq_slotless, 1, memory_order_relaxed);
	else
		release_slot(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void registry_init_once(void);

struct rq_thread *rq_register_self(void)
{
	sigset_t old;
	struct rq_thread *t;

	/* One registration per thread, even if a signal handler locks too. */
	rq_block_signals(&old);
	t = rq_self_peek();
	if (!t) {
		registry_init_once();
		t = claim_slot();
		if (!t) {
			t = &rq_overflow;
			clear_thread(t);
			t->slot = RQ_NO_SLOT;
			t->held.owner = RQ_OWNER_ANON;
			atomic_store_explicit(&t->tid, (int32_t)syscall(SYS_gettid),
			                      memory_order_relaxed);
			rq_stat_inc_global(RQ_STAT_NO_SLOT);
			atomic_fetch_add_explicit(&rq_slotless, 1, memory_order_relaxed);
		}
		/* glibc stores small keys in the thread descriptor: no malloc. */
		pthread_setspecific(rq_exit_key, t);
		rq_self = t;
		/* The fast path's untagged entries need an owner id (held.h). */
		if (rq_thread_has_owner_id(t))
			rq_fast = rq_fast_table(t);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return t;
}

/*
 * In a forked child only the forking thread exists: free the other slots,
 * and forget their queue nodes. A lock word copied from the parent may name
 * one of those nodes in its tail; once a child thread reuses the slot, a
 * node still naming the lock would pass rq_node_plausible(), and a waiter
 * would link behind it and wait for a signal no thread sends (-ETIMEDOUT on
 * a free lock). With the lock field cleared, the tail reads as garbage and
 * the waiter heads a fresh queue. No late successor can link here (the
 * parent's waiters are not in the child), so marks are dropped too.
 */
static void after_fork_child(void)
{
	uint32_t bound = rq_slot_bound();
	struct rq_thread *self = rq_self_peek();

	for (uint32_t s = 0; s < bound; s++) {
		struct rq_thread *t = &rq_threads[s];

		if (t == self)
			continue;
		/* relaxed: the child has one thread */
		for (uint32_t i = 0; i < RQ_NR_NODES; i++) {
			atomic_store_explicit(&t->nodes[i].next, 0, memory_order_relaxed);
			atomic_store_explicit(&t->nodes[i].lock, 0, memory_order_relaxed);
		}
		if (atomic_load_explicit(&t->wr.in_use, memory_order_relaxed))
			release_slot(t);
	}
	/* relaxed: the child has one thread */
	atomic_store_explicit(&rq_slotless, self && self->slot == RQ_NO_SLOT, memory_order_relaxed);
	if (self)
		atomic_store_explicit(&self->tid, (int32_t)syscall(SYS_gettid),
		                      memory_order_relaxed);
}

/*
 * Once per process, from the constructor or from the first registration,
 * whichever comes first: another library's constructor may lock before ours
 * ran. Callers block signals, so a handler cannot wait for its own thread.
 * A child forked while another thread ran it runs it again (once.c): a
 * second fork handler then runs twice, which does no harm.
 */
static void registry_init_once(void)
{
	static rq_once_t once;

	if (!rq_once_begin(&once))
		return;
	rq_capacity = rq_env()->slots;
	pthread_key_create(&rq_exit_key, thread_exit);
	pthread_atfork(NULL, NULL, after_fork_child);
	rq_once_end(&once);
}

__attribute__((constructor)) static void rq_registry_init(void)
{
	sigset_t old;

	rq_block_signals(&old);
	registry_init_once();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

RQ_EXPORT int res_spin_thread_slot(void)
{
	struct rq_thread *t = rq_self_get();

	return t->slot == RQ_NO_SLOT ? -ENOSPC : (int)t->slot;
}

RQ_EXPORT int res_spin_thread_slot_bound(void)
{
	return (int)rq_slot_bound();
}
