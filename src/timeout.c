/* SPDX-License-Identifier: MIT */
/*
 * Layer 5 (timeout.h), one attempt's bounded wait: the timeout, the periodic deadlock
 * checks and yielding. Uses layers 0 to 4: the clock and the scheduler
 * accounting (2) and detection (4) for the checks and the owner.
 *
 * Every waiting loop that owns a deadline (pending waiter, queue head,
 * non-head queue waiter, trylock and TAS fallbacks, process-shared locks)
 * calls rq_wait_poll() once per spin. The clock is read only every
 * RQ_POLL_SPINS spins. The first poll runs the deadlock checks at once (no
 * clock read: short waits never read the clock), the first clock read
 * starts the deadline, and later checks run every
 * RQ_CHECK_INTERVAL_NS, so a deadlock costs at most about a millisecond of
 * spinning, and the timeout is the final line of defence.
 *
 * Userspace threads get preempted. After RQ_YIELD_AFTER_NS of waiting, each
 * poll also yields the CPU, so that an owner preempted by its own waiters can
 * run when there are more threads than cores.
 *
 * A waiter that was itself off CPU across its deadline (a gap between polls
 * longer than RQ_OFF_CPU_GAP_NS: preempted, or the VM descheduled) did not
 * watch the owner; the lock may have changed hands several times meanwhile.
 * Instead of failing the moment it runs again, it gets a short grace period
 * (an eighth of its duration, RQ_GRACES times) to see the lock move.
 * The kernel needs no such rule: its waiters cannot be preempted. Bound: a
 * waiter fails at most duration * (1 + RQ_GRACES / 8) after it started,
 * plus the time it spent off CPU.
 *
 * The owner's run-queue time does not count: a userspace owner can be
 * preempted for longer than the timeout under CPU overload, and would
 * release the lock once it runs. At half its duration a wait reads the
 * owner's scheduler accounting (sched.c; the owner as rq_find_owner() finds
 * it: the thread the locked byte names, else from the held tables); when
 * the deadline passes it reads it again, and if the owner spent more than
 * half of that stretch runnable but off CPU, the deadline moves by that
 * run-queue time (a deadline extension).
 * The waiter's own time off CPU (poll gaps over RQ_OFF_CPU_GAP_NS) moves
 * the deadline the same way, without reading /proc.
 * An owner that ran, slept or stopped for most of it, or one that cannot
 * be identified or read, fails the wait at the deadline. A free private
 * lock that only a pending bit no wait record notes keeps from us has no
 * owner to wait for: the bit's holder is gone (a parent's waiter, in a
 * forked child; a call abandoned by siglongjmp()), so the deadline clears
 * the bit (rq_clear_orphaned_pending(); never while slot-less threads,
 * which no scan sees, are alive) and moves by an eighth of the duration,
 * in which the lock can be taken (a clear at the cap gets one more look at
 * the lock, one poll interval, before the wait fails). No extension goes
 * past the wall-clock cap (res_spin_set_timeout_cap_ns(), default 8
 * timeouts) from the start of the wait, plus the waiter's own time off
 * CPU, up to one more cap (a waiter preempted among many busy threads did
 * not watch the lock meanwhile; on an idle CPU that time is zero and the
 * cap is plain wall-clock). A wait never outlasts two caps (its duration
 * and one cap, when the cap is the shorter). All of it runs only once a
 * wait is half over: short waits and the fast path never read /proc.
 */
#include <errno.h>

#include "clock.h"
#include "detect.h"
#include "lockword.h"
#include "timeout.h"

#define RQ_POLL_SPINS        64u
#define RQ_CHECK_INTERVAL_NS 1000000ull
#define RQ_YIELD_AFTER_NS    5000ull
/* Polls come every few microseconds; a longer gap means we were off CPU. */
#define RQ_OFF_CPU_GAP_NS 1000000ull
#define RQ_GRACES         1u
#define RQ_SLEEP_AFTER_NS 2000000ull
/*
 * A cycle check that stopped at a view older than its owner's wait checks
 * again as soon as that view changes (await_answer()), instead of a
 * millisecond later: an ABBA's second waiter finds its peer's view of the
 * lock it holds made before it began to wait, and the peer looks again
 * when it sees that wait begin (view_outdated()). After RQ_ASK_AFTER spins
 * without a change it asks the waiter (rq_wait_ask(); answered at its next
 * spin). At most RQ_ASK_SPINS spins per wait phase are spent waiting for
 * views (a preempted peer answers nothing).
 */
#define RQ_ASK_SPINS 4096u
#define RQ_ASK_AFTER 16u

void rq_wait_start(struct rq_attempt *w, uint32_t mask, uint32_t timeouts)
{
	w->mask = mask;
	w->timeouts = timeouts;
	w->deadline = 0;
	w->start = 0;
	w->spin = 0;
	w->suspect = 0;
	w->rechecks = RQ_ASK_SPINS;
	w->queued = false;
	w->cycle.event = 0;
	w->cycle.n = 0;
	w->cycle.owner = (struct rqspinlock_owner_info){0};
	/* The rest (duration, graces, owner accounting) is set when the
	 * clock starts (poll_clock()): short waits never need it. */
}

/* The lock's owner and its accounting into @cur; NULL if either is missing. */
static struct rq_thread *read_owner(struct rq_attempt *w, struct rq_sched *cur)
{
	struct rq_thread *o = rq_find_owner(w->lock, w->self);
	struct rqspinlock_owner_info *oi = &w->cycle.owner;

	*oi = (struct rqspinlock_owner_info){0};
	if (!o)
		return NULL;
	oi->tid = atomic_load_explicit(&o->tid, memory_order_relaxed);
	oi->slot = (uint32_t)(o - rq_thread_at(0));
	oi->state = '?';
	if (rq_sched_read(oi->tid, cur))
		return NULL;
	oi->state = cur->state;
	return o;
}

/* A new owner (or the first read): accounting restarts from @cur, and
 * from @o's wait, if it is stuck in one. */
static void rebase(struct rq_attempt *w, const struct rq_sched *cur, struct rq_thread *o)
{
	if (w->first.tid != cur->tid)
		w->first = *cur;
	w->base = *cur;
	w->base_stuck = rq_stuck_waiting(o, &w->base_wait);
}

/* Was @o stuck in one and the same wait from the last read until now? */
static bool stuck_since_base(const struct rq_attempt *w, struct rq_thread *o)
{
	uint32_t gen;

	return w->base_stuck && rq_stuck_waiting(o, &gen) && gen == w->base_wait;
}

/*
 * How long the owner was runnable but off CPU between @a and @b. The kernel
 * adds a run-queue wait to schedstat only when the wait ends (the thread
 * gets a CPU), so an owner still waiting shows no progress at all: when it
 * is runnable at @b, its whole time off CPU counts (it may have slept part
 * of it and been woken; it will run, and release the lock, when it gets a
 * CPU).
 */
static uint64_t runnable_ns(const struct rq_sched *a, const struct rq_sched *b)
{
	uint64_t window = b->when - a->when, cpu = b->cpu_ns - a->cpu_ns;
	uint64_t runq = b->runq_ns - a->runq_ns;

	if (b->state == 'R' && cpu < window && window - cpu > runq)
		runq = window - cpu;
	return runq < window ? runq : window;
}

/* The report's times: the owner's since our first read of it, if @cur is
 * the same thread. */
static void owner_times(struct rq_attempt *w, const struct rq_sched *cur)
{
	struct rqspinlock_owner_info *oi = &w->cycle.owner;

	if (w->first.tid != cur->tid)
		return;
	oi->window_ns = cur->when - w->first.when;
	oi->on_cpu_ns = cur->cpu_ns - w->first.cpu_ns;
	oi->run_queue_ns = runnable_ns(&w->first, cur);
}

/*
 * The deadline passed: move it if the owner spent most of the time since
 * the last read waiting for a CPU (or is a new owner, not yet measured),
 * within the cap. Returns true to fail the wait; w->cycle.owner says why.
 */
static bool deadline_final(struct rq_attempt *w, uint64_t now)
{
	struct rq_sched cur;
	struct rq_thread *o = NULL;
	uint64_t step = 0, self_off = w->off_cpu - w->check_off, hard;
	bool owner = false, cleared = false;

	if (rq_clear_orphaned_pending(w->lock, w->self)) {
		cleared = true;
		/* A pending bit that no live thread holds kept the free lock
		 * from us (whatever rq_find_owner() would guess): go on. Before
		 * the test of our own time off CPU: a waiter starved of CPU
		 * would otherwise extend on its own account up to the cap and
		 * fail, every call, while nobody could ever take the lock. */
		step = w->duration / 8;
	} else if (2 * self_off > now - w->check_at) {
		/* We were off CPU most of the time ourselves: we did not watch. */
		step = self_off;
	} else if (!(o = read_owner(w, &cur))) {
		return true;
	} else {
		owner = true;
		if (w->base.tid != cur.tid) {
			/* Not measured yet: watch it for an eighth of the duration. */
			step = w->duration / 8;
			w->first.tid = 0;
		} else if (stuck_since_base(w, o)) {
			/* The owner waited for another lock all along: blocked,
			 * not faulty. Its own wait is bounded, and detection
			 * ends a cycle through it; it holds our lock only as
			 * long as that wait lasts. */
			step = cur.when - w->base.when;
		} else if (2 * runnable_ns(&w->base, &cur) > cur.when - w->base.when) {
			step = runnable_ns(&w->base, &cur);
		}
		owner_times(w, &cur);
	}
	/* The cap counts the time we watched: our own time off CPU (we
	 * cannot fail a lock we did not see) moves it too, by at most one
	 * more cap, so that a wait still ends within two caps (within its
	 * duration and one cap, when the cap is the shorter). */
	hard = w->hard + (w->off_cpu < w->cap ? w->off_cpu : w->cap);
	if (!step || now >= hard) {
		if (cleared && w->last_look) {
			/* At the cap (one at or below the phase's duration
			 * allows no extension at all), the free lock that the
			 * bit kept from us can be taken now: the caller's loop
			 * looks at the word again before its next poll of the
			 * clock, at most RQ_POLL_SPINS spins away, which then
			 * fails the wait. Once per phase. */
			w->last_look = false;
			w->deadline = now;
			return false;
		}
		/* Failing at the cap after we were off CPU: the report gets
		 * the owner as it is now, not as the probe saw it. */
		if (!owner && read_owner(w, &cur))
			owner_times(w, &cur);
		return true;
	}
	rq_stat_inc(w->self, RQ_STAT_EXTEND);
	if (owner)
		rebase(w, &cur, o);
	w->check_at = now;
	w->check_off = w->off_cpu;
	w->deadline = now + step < hard ? now + step : hard;
	return false;
}

/* Half the duration passed: the owner's accounting so far (once). */
static void deadline_probe(struct rq_attempt *w)
{
	struct rq_sched cur;
	struct rq_thread *o;

	w->probe_at = UINT64_MAX;
	w->check_at = w->last_poll;
	w->check_off = w->off_cpu;
	o = read_owner(w, &cur);
	if (o)
		rebase(w, &cur, o);
}

static int run_checks(struct rq_attempt *w)
{
	int err;

	w->stale.t = NULL;
	/* Freed meanwhile? Then there is nothing to detect. */
	if (!(rq_word_load_relaxed(&w->lock->val) & w->mask))
		return 0;
	if (!rq_can_deadlock(w->held_idx))
		return 0;
	err = rq_check_aa(w->self, w->lock, w->held_idx);
	if (err) {
		w->cycle.event = RQSPINLOCK_EV_AA;
		return err;
	}
	/* Invisible to others: cannot be in a cycle. */
	if (w->self->slot == RQ_NO_SLOT)
		return 0;
	return rq_check_cycle(w->self, w->lock, &w->cycle, &w->suspect, &w->stale);
}

/*
 * A wait phase's clock starts (at its second poll: waits shorter than one
 * poll interval never read it), or starts over when its loop cleared the
 * deadline (a process-shared lock changed hands, pshared.c): the deadline
 * and the cap run from now; the yield and nap schedule and the deadlock
 * checks keep the pace they took from the phase's start.
 */
static void start_clock(struct rq_attempt *w, uint64_t now)
{
	uint64_t cap = res_spin_get_timeout_cap_ns();

	w->duration = rq_timeout_ns() * w->timeouts;
	w->graces = RQ_GRACES;
	w->last_look = true;
	w->first.tid = 0;
	w->base.tid = 0;
	if (!w->start) {
		w->start = now;
		w->next_check = now + RQ_CHECK_INTERVAL_NS;
	}
	w->deadline = now + w->duration;
	w->hard = now + (cap > w->duration ? cap : w->duration);
	w->cap = cap;
	w->probe_at = now + w->duration / 2;
	w->check_at = now;
	w->off_cpu = w->check_off = 0;
	w->last_poll = now;
}

/* A long wait gives its CPU away: yields, then naps. */
static void pace(const struct rq_attempt *w, uint64_t now)
{
	if (now - w->start > RQ_SLEEP_AFTER_NS && !w->queued)
		rq_nap();
	else if (now - w->start > RQ_YIELD_AFTER_NS)
		rq_yield();
}

static __attribute__((noinline)) int poll_clock(struct rq_attempt *w)
{
	uint64_t now = rq_now_ns();

	if (!w->deadline) {
		bool again = w->start != 0;

		start_clock(w, now);
		if (again)
			pace(w, now);
		return 0;
	}
	if (now - w->last_poll > RQ_OFF_CPU_GAP_NS)
		w->off_cpu += now - w->last_poll;
	if (now > w->deadline && now - w->last_poll > RQ_OFF_CPU_GAP_NS && w->graces) {
		w->graces--;
		w->deadline = now + w->duration / 8;
	}
	w->last_poll = now;
	if (now > w->deadline && deadline_final(w, now)) {
		w->cycle.event = RQSPINLOCK_EV_TIMEOUT;
		return -ETIMEDOUT;
	}
	if (now >= w->probe_at)
		deadline_probe(w);
	if (now >= w->next_check) {
		int err;

		w->next_check = now + RQ_CHECK_INTERVAL_NS;
		err = run_checks(w);
		if (err)
			return err;
	}
	pace(w, now);
	return 0;
}

/*
 * Our view of our lock, for detectors that reach us (they may not read it).
 * Only a wait that holds locks can link a cycle (rq_can_deadlock()): a
 * detector follows no other wait's view.
 */
static void publish_view(struct rq_attempt *w)
{
	if (w->published && rq_can_deadlock(w->held_idx))
		w->watch = rq_wait_observe(w->self, w->lock, &w->watch_gen);
}

/*
 * Has the owner our view names entered another state since we looked (a
 * new wait: the view no longer certifies it)? The detector that closes a
 * cycle through us is usually that owner, just after it began to wait:
 * a fresh view before its first check spares it asking us (rq_wait_ask()).
 */
static inline bool view_outdated(const struct rq_attempt *w)
{
	/* relaxed: rq_wait_observe() reads the generation again, with acquire */
	return w->watch &&
	       atomic_load_explicit(&w->watch->wr.gen, memory_order_relaxed) != w->watch_gen;
}

/* A detector asked for our view (rq_wait_ask()): refresh it now. */
static __attribute__((noinline)) void answer_ask(struct rq_attempt *w)
{
	atomic_store_explicit(&w->self->view.ask, 0, memory_order_relaxed);
	publish_view(w);
}

/*
 * Our check stopped at a stale view: check again once it changes. Its
 * waiter refreshes it by itself when the owner it names begins a new wait
 * (view_outdated()), the usual case: the owner is us, and we just began.
 * Otherwise (its word names no owner, or it has not looked yet) we ask
 * for a fresh one after RQ_ASK_AFTER spins.
 */
static __attribute__((noinline)) int await_answer(struct rq_attempt *w)
{
	if (!w->rechecks--) {
		w->stale.t = NULL; /* out of patience: the checks of every 1 ms */
		return 0;
	}
	if (rq_view_changed(&w->stale))
		return run_checks(w);
	if (RQ_ASK_SPINS - w->rechecks == RQ_ASK_AFTER)
		rq_wait_ask(w->stale.t);
	/* The peer may be waiting for our CPU. */
	if (w->rechecks % RQ_POLL_SPINS == 0)
		rq_yield();
	return 0;
}

int rq_wait_poll(struct rq_attempt *w)
{
	uint32_t spin = w->spin++;

	if (unlikely(atomic_load_explicit(&w->self->view.ask, memory_order_relaxed)))
		answer_ask(w);
	else if (unlikely(view_outdated(w)))
		publish_view(w);
	if (unlikely(w->stale.t != NULL)) {
		rq_cpu_relax();
		return await_answer(w);
	}
	if (likely(spin % RQ_POLL_SPINS)) {
		rq_cpu_relax();
		return 0;
	}
	/* Then the first poll's checks at once, before any spinning. */
	publish_view(w);
	return spin ? poll_clock(w) : run_checks(w);
}
