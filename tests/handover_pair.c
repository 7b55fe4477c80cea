/* SPDX-License-Identifier: MIT */
/*
 * The contended path's hand-over, without a second thread: the fast path's
 * CAS "saw" the lock taken (val 1) but the owner has left by the time the
 * slow path runs, so every acquisition goes through the pending bit without
 * spinning (publish the wait, take pending, turn it into the lock, pop the
 * wait). The out-of-line wrappers are what callgrind's
 * --toggle-collect='lkop_*' counts (docs/BENCHMARKS.md, "Contended path"):
 * the slow path's fixed cost per hand-over, spinning excluded.
 * As a test: every acquisition succeeds as a pending waiter (lock_pending
 * moves by one per pair, lock_slowpath not at all) and leaves the word free
 * and the held table empty.
 *
 * "steal": the oversubscribed case instead. A queue exists (a tail in the
 * word) whose head has not claimed the pending bit (it is not running), so
 * the fast path's CAS fails on a free lock and the slow path takes it with
 * a CAS that leaves the tail alone. As a test: every acquisition succeeds
 * without the pending bit or the queue (neither counter moves), the word
 * keeps its tail throughout, and the held table is empty afterwards.
 * "ql-steal": the same steal on the baseline QL, for comparison.
 *
 * Usage: handover_pair [PAIRS [steal|ql-steal]] (default 100000 pending
 * hand-overs); exit status 0 on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rqspinlock.h>
#include <rqspinlock/inline.h>
#include <rqspinlock/qspinlock.h>

/* res_spin_inline_lock() up to its CAS, then the slow path as if the CAS had
 * failed on a locked word. */
static __attribute__((noinline)) int lkop_handover_lock(rqspinlock_t *lock)
{
	struct rqspinlock_held_abi *t = res_spin_inline_self();
	uint32_t n = RQSPINLOCK_LOAD_RELAXED(&t->cnt);

	if (n >= RQSPINLOCK_NR_HELD)
		return res_spin_lock_slow_abi(lock, UINT32_MAX, 0);
	/* release: as in res_spin_inline_lock() */
	RQSPINLOCK_STORE_RELEASE(&t->cnt, n + 1);
	RQSPINLOCK_SIGNAL_FENCE();
	RQSPINLOCK_STORE_RELAXED(&t->locks[n], (uintptr_t)lock + 2);
	return res_spin_lock_slow_abi(lock, n, 1);
}

static __attribute__((noinline)) void lkop_handover_unlock(rqspinlock_t *lock)
{
	res_spin_unlock(lock);
}

/* The whole exported pair; the fast path's CAS fails on the tail. */
static __attribute__((noinline)) int lkop_steal_lock(rqspinlock_t *lock)
{
	return res_spin_lock(lock);
}

static __attribute__((noinline)) void lkop_ql_lock(ql_spinlock_t *lock)
{
	ql_spin_lock(lock);
}

static __attribute__((noinline)) void lkop_ql_unlock(ql_spinlock_t *lock)
{
	ql_spin_unlock(lock);
}

/* A queue tail (registry slot 0, node 0) that nobody links behind. */
#define STEAL_TAIL (1u << 18)

enum mode { HANDOVER, STEAL, QL_STEAL };

static rqspinlock_t the_lock = RQSPINLOCK_INIT;
static ql_spinlock_t the_ql = QL_SPINLOCK_INIT;
/* volatile: the wrappers get the lock as an unknown argument */
static rqspinlock_t *volatile lockp = &the_lock;
static ql_spinlock_t *volatile qlp = &the_ql;

static uint32_t word(enum mode m)
{
	return m == QL_STEAL ? RQSPINLOCK_LOAD_RELAXED(&qlp->val)
	                     : RQSPINLOCK_LOAD_RELAXED(&lockp->val);
}

/* One pair; 0 when it went as the mode says. */
static int one_pair(enum mode m)
{
	switch (m) {
	case HANDOVER:
		if (lkop_handover_lock(lockp) != 0)
			return 1;
		lkop_handover_unlock(lockp);
		return 0;
	case STEAL:
		if (lkop_steal_lock(lockp) != 0 ||
		    word(m) != (STEAL_TAIL | res_spin_inline_self()->owner))
			return 1;
		lkop_handover_unlock(lockp);
		break;
	case QL_STEAL:
		lkop_ql_lock(qlp);
		if (word(m) != (STEAL_TAIL | 1u))
			return 1;
		lkop_ql_unlock(qlp);
		break;
	}
	return word(m) != STEAL_TAIL;
}

static int parse_mode(const char *arg, enum mode *m)
{
	static const char *const names[] = {"handover", "steal", "ql-steal"};

	for (int i = 0; i < 3; i++)
		if (strcmp(arg, names[i]) == 0) {
			*m = (enum mode)i;
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 100000;
	enum mode m = HANDOVER;
	uint64_t want_pending;
	struct rqspinlock_stats before, after;

	if (pairs <= 0 || (argc > 2 && parse_mode(argv[2], &m)) || res_spin_lock(lockp) != 0)
		return 2; /* (the lock call registers this thread) */
	res_spin_unlock(lockp);
	want_pending = m == HANDOVER ? (uint64_t)pairs : 0;
	if (m == STEAL)
		RQSPINLOCK_STORE_RELAXED(&lockp->val, STEAL_TAIL);
	if (m == QL_STEAL) {
		ql_spin_lock(qlp); /* the library's QL setup, if any, outside the count */
		ql_spin_unlock(qlp);
		RQSPINLOCK_STORE_RELAXED(&qlp->val, STEAL_TAIL);
	}
	res_spin_get_stats(&before);
	for (long i = 0; i < pairs; i++) {
		if (one_pair(m)) {
			fprintf(stderr, "handover_pair: pair %ld failed (word %#x)\n", i, word(m));
			return 1;
		}
	}
	res_spin_get_stats(&after);
	if (after.lock_pending - before.lock_pending != want_pending ||
	    after.lock_slowpath != before.lock_slowpath) {
		fprintf(stderr,
		        "handover_pair: %llu pending acquisitions, %llu queued; want %llu, 0\n",
		        (unsigned long long)(after.lock_pending - before.lock_pending),
		        (unsigned long long)(after.lock_slowpath - before.lock_slowpath),
		        (unsigned long long)want_pending);
		return 1;
	}
	res_spin_lock_init(lockp);
	if (RQSPINLOCK_LOAD_RELAXED(&res_spin_inline_self()->cnt) != 0 || res_spin_lock(lockp)) {
		fprintf(stderr, "handover_pair: table not empty or lock not free afterwards\n");
		return 1;
	}
	res_spin_unlock(lockp);
	printf("handover_pair: %ld %s\n", pairs, m == HANDOVER ? "pending hand-overs" : "steals");
	return 0;
}
