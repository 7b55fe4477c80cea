/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, failed acquisitions: undo (layer 3), count (layer 0), report
 * (with detection's snapshots, layer 4) to the hook in force; the stock
 * reporter is report_stderr.c.
 *
 * The report hook runs on the failing thread after the attempt has been
 * undone (held entry and wait record gone, queue node released) and before
 * res_spin_lock() returns; the library holds no lock of its own then. The
 * failing call may itself run in a signal handler, so the stock reporter
 * formats with write(2) only, and the stack trace comes from backtrace(),
 * warmed up once at start-up (its first call may load libgcc). The stack
 * starts at the caller's frame: where the library is a shared object of its
 * own (librqspinlock.so, the drop-in), the leading frames in its code,
 * found at warm-up, are left out.
 */
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slowpath.h"
#include "report.h"
#include "symbolize.h"

struct rq_hook {
	rqspinlock_report_fn fn;
	void *arg;
};

/*
 * The hook in force: its function and argument under a sequence count that
 * is odd while a change is being written. A failing thread copies the pair
 * and copies again when a change overlapped its copy, so it never calls one
 * hook's function with another hook's argument, however often the hook
 * changes meanwhile. Changes are serialised by the count and written with
 * signals blocked, so a failing signal handler never waits for a change
 * that its own thread is in the middle of.
 */
static _Atomic uint32_t rq_hook_seq;
static _Atomic(rqspinlock_report_fn) rq_hook_fn;
static _Atomic(void *) rq_hook_arg;
/* Set by the first res_spin_set_report_hook(): from then on its hook (or
 * none) is in force, not the environment's. */
static _Atomic int rq_hook_chosen;
/* RQSPINLOCK_REPORT's hook (env.c), until a hook is chosen. */
static const struct rq_hook rq_env_hook = {res_spin_report_stderr, NULL};
static _Atomic int rq_backtrace_ready;
/* The library's executable segment, when it is a shared object of its own;
 * 0, 0 otherwise (linked into the program: its frames are the program's). */
static _Atomic uintptr_t rq_text_lo, rq_text_hi;

/* dl_iterate_phdr() callback: the segment of the object holding @arg. */
static int find_own_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || me < lo ||
		    me - lo >= ph->p_memsz)
			continue;
		if (info->dlpi_name && info->dlpi_name[0]) { /* "": the program */
			atomic_store_explicit(&rq_text_lo, lo, memory_order_relaxed);
			atomic_store_explicit(&rq_text_hi, lo + ph->p_memsz, memory_order_relaxed);
		}
		return 1;
	}
	return 0;
}

static void warm_backtrace(void)
{
	void *frame;

	if (!atomic_load_explicit(&rq_backtrace_ready, memory_order_relaxed)) {
		backtrace(&frame, 1);
		dl_iterate_phdr(find_own_text, (void *)(uintptr_t)warm_backtrace);
		atomic_store_explicit(&rq_backtrace_ready, 1, memory_order_relaxed);
	}
}

/* Leaves out the leading frames in the library's own code (none when all
 * are: nothing else would be left); returns how many remain. */
static uint32_t drop_own_frames(void **frames, uint32_t n)
{
	uintptr_t lo = atomic_load_explicit(&rq_text_lo, memory_order_relaxed);
	uintptr_t hi = atomic_load_explicit(&rq_text_hi, memory_order_relaxed);
	uint32_t k = 0;

	/* A return address is one past its call: look at the call. */
	while (k < n && (uintptr_t)frames[k] - 1 >= lo && (uintptr_t)frames[k] - 1 < hi)
		k++;
	if (k == 0 || k == n)
		return n;
	memmove(frames, frames + k, (n - k) * sizeof(*frames));
	return n - k;
}

/* Wait for a change that another thread is writing (a few stores, unless
 * that thread was preempted in between). */
static void hook_change_wait(uint32_t *spins)
{
	if (++*spins % 64 == 0)
		sched_yield();
	else
		rq_cpu_relax();
}

RQ_EXPORT void res_spin_set_report_hook(rqspinlock_report_fn fn, void *arg)
{
	sigset_t old;
	uint32_t seq, spins = 0;

	if (fn)
		warm_backtrace();
	rq_block_signals(&old);
	seq = atomic_load_explicit(&rq_hook_seq, memory_order_relaxed);
	/* Make the count odd. Relaxed: the release stores below order it
	 * before the pair. */
	while ((seq & 1) ||
	       !atomic_compare_exchange_weak_explicit(&rq_hook_seq, &seq, seq + 1,
	                                              memory_order_relaxed, memory_order_relaxed)) {
		hook_change_wait(&spins);
		seq = atomic_load_explicit(&rq_hook_seq, memory_order_relaxed);
	}
	/* release: a reader that loads either new value (acquire) then sees
	 * the odd count on its re-check; pairs with current_hook() */
	atomic_store_explicit(&rq_hook_fn, fn, memory_order_release);
	atomic_store_explicit(&rq_hook_arg, arg, memory_order_release);
	/* release: part of the copy, as the pair (current_hook()) */
	atomic_store_explicit(&rq_hook_chosen, 1, memory_order_release);
	/* release: the pair is complete; pairs with current_hook()'s acquire */
	atomic_store_explicit(&rq_hook_seq, seq + 2, memory_order_release);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * In a forked child, a change that another thread of the parent was writing
 * is never finished: drop it, and the hook with it (its two halves may
 * belong to different hooks), so that later changes do not wait for it.
 */
static void hook_after_fork_child(void)
{
	uint32_t seq = atomic_load_explicit(&rq_hook_seq, memory_order_relaxed);

	rq_symbols_after_fork_child();
	/* relaxed: the child has one thread */
	if (seq & 1) {
		atomic_store_explicit(&rq_hook_fn, NULL, memory_order_relaxed);
		atomic_store_explicit(&rq_hook_arg, NULL, memory_order_relaxed);
		atomic_store_explicit(&rq_hook_seq, seq + 1, memory_order_relaxed);
	}
}

/* At start-up: the fork handler above; and the stock reporter may run in a
 * signal handler, so backtrace() is loaded now. */
__attribute__((constructor)) static void rq_report_init(void)
{
	pthread_atfork(NULL, NULL, hook_after_fork_child);
	if (rq_env()->report)
		warm_backtrace();
}

/*
 * Copy the hook in force into @out; returns false when there is none. A
 * change that stays half written for a whole timeout (its thread was
 * stopped, cancelled asynchronously or forked away in the middle) is not
 * waited for: the failure then goes unreported, and the call still returns.
 */
static bool current_hook(struct rq_hook *out)
{
	uint64_t give_up = 0;
	uint32_t spins = 0;
	int chosen = 0;

	for (;;) {
		/* acquire: pairs with the release that completed a change */
		uint32_t seq = atomic_load_explicit(&rq_hook_seq, memory_order_acquire);

		if (!(seq & 1)) {
			/* acquire: pairs with the setter's release stores; the
			 * re-check below cannot be read before the copy */
			out->fn = atomic_load_explicit(&rq_hook_fn, memory_order_acquire);
			out->arg = atomic_load_explicit(&rq_hook_arg, memory_order_acquire);
			chosen = atomic_load_explicit(&rq_hook_chosen, memory_order_acquire);
			if (atomic_load_explicit(&rq_hook_seq, memory_order_relaxed) == seq)
				break;
		}
		hook_change_wait(&spins);
		if (spins % 64 == 0) {
			uint64_t now = rq_now_ns();

			if (!give_up)
				give_up = now + rq_timeout_ns();
			else if (now > give_up)
				return false;
		}
	}
	/* A copy taken before the first choice is the environment's hook: a
	 * failure racing with that choice gets one hook or the other. */
	if (!out->fn && !chosen && rq_env()->report)
		*out = rq_env_hook;
	return out->fn != NULL;
}

static enum rqspinlock_event event_of(int err, const struct rq_cycle *cycle)
{
	if (cycle && cycle->event)
		return cycle->event;
	return err == -ETIMEDOUT ? RQSPINLOCK_EV_TIMEOUT : RQSPINLOCK_EV_AA;
}

/* Why a timeout happened, from what its waiter last read of the owner. */
static enum rq_stat timeout_cause(const struct rq_cycle *cycle)
{
	const struct rqspinlock_owner_info *oi = cycle ? &cycle->owner : NULL;

	if (!oi || !oi->tid || oi->state == '?')
		return RQ_STAT_TIMEOUT_UNKNOWN;
	return oi->state == 'R' ? RQ_STAT_TIMEOUT_RUNNING : RQ_STAT_TIMEOUT_BLOCKED;
}

static void count_failure(struct rq_thread *t, enum rqspinlock_event ev,
                          const struct rq_cycle *cycle)
{
	static const enum rq_stat stat_of[] = {
	    [RQSPINLOCK_EV_AA] = RQ_STAT_AA,
	    [RQSPINLOCK_EV_ABBA] = RQ_STAT_ABBA,
	    [RQSPINLOCK_EV_CYCLE] = RQ_STAT_CYCLE,
	    [RQSPINLOCK_EV_TIMEOUT] = RQ_STAT_TIMEOUT,
	};

	rq_stat_inc(t, stat_of[ev]);
	if (ev == RQSPINLOCK_EV_TIMEOUT)
		rq_stat_inc(t, timeout_cause(cycle));
}

/* Did this call interrupt another lock operation of the same thread? */
static int is_nested(struct rq_thread *t, uint32_t held_idx)
{
	if (atomic_load_explicit(&t->wr.nwait, memory_order_relaxed) ||
	    atomic_load_explicit(&t->node_count, memory_order_relaxed))
		return 1;
	for (uint32_t i = 0; i < held_idx && i < RQ_NR_HELD; i++)
		if (atomic_load_explicit(&t->held.locks[i], memory_order_relaxed) & RQ_ENTRY_TAGS)
			return 1;
	return 0;
}

static void call_hook(const struct rq_hook *h, struct rq_thread *t, rqspinlock_t *lock,
                      uint32_t held_idx, int err, const struct rq_cycle *cycle)
{
	/* The failing call may run in a signal handler whose interrupted code
	 * reads errno: backtrace(), the hook and its writes must not change it. */
	int saved_errno = errno;
	struct rqspinlock_report r;
	int cancel_state;

	memset(&r, 0, sizeof(r));
	r.event = event_of(err, cycle);
	r.error = err;
	r.lock = lock;
	r.nested = is_nested(t, held_idx);
	rq_snapshot_thread(t, &r.self);
	r.self.waits_for = lock;
	if (cycle && r.event == RQSPINLOCK_EV_TIMEOUT)
		r.owner = cycle->owner;
	if (cycle && r.event != RQSPINLOCK_EV_TIMEOUT && r.event != RQSPINLOCK_EV_AA) {
		r.nr_peers = cycle->n;
		for (uint32_t i = 0; i < cycle->n; i++) {
			rq_snapshot_thread(cycle->peers[i], &r.peers[i]);
			/* as the detector saw it; by now the peer may have
			 * given up too */
			r.peers[i].waits_for = cycle->waits[i];
		}
	}
	if (atomic_load_explicit(&rq_backtrace_ready, memory_order_relaxed)) {
		int n = backtrace(r.frames, RQSPINLOCK_REPORT_MAX_FRAMES);

		r.nr_frames = n > 0 ? drop_own_frames(r.frames, (uint32_t)n) : 0;
	}
	/* The hook may call cancellation points (the stock reporter writes):
	 * none may act inside a call of the library. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	h->fn(&r, h->arg);
	pthread_setcancelstate(cancel_state, NULL);
	errno = saved_errno;
}

int rq_fail(struct rq_thread *t, rqspinlock_t *lock, uint32_t held_idx, int err,
            const struct rq_cycle *cycle, bool was_waiting)
{
	struct rq_hook h;
	bool hooked = current_hook(&h);

	/* Table first, then the wait record: in between we look neither
	 * holding nor waiting, never both. */
	rq_held_drop(t, held_idx);
	if (was_waiting)
		rq_wait_pop(t);
	count_failure(t, event_of(err, cycle), cycle);
	if (hooked)
		call_hook(&h, t, lock, held_idx, err, cycle);
	return err;
}
