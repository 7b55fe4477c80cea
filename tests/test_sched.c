/* SPDX-License-Identifier: MIT */
/*
 * What the deadline path reads to tell an owner waiting for a CPU from one
 * that runs, white-box: the thread to measure (rq_find_owner(), src/detect.c)
 * and its scheduler accounting (src/sched.c).
 *
 *  - sched_state: a thread blocked in read() reads 'S' with its tid; tid 0
 *    and a tid that is no thread of this process read as errors;
 *  - sched_owner_next: with no owner in the lock word, the thread to
 *    measure is the one that takes the lock next: the pending waiter, or
 *    with only a tail the queue's head (found by their wait records); a
 *    free lock has none.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "detect.h"
#include "held.h"
#include "lockword.h"
#include "testutil.h"

struct reader {
	int fd[2];
	atomic_int tid;
};

static void *blocked_reader(void *arg)
{
	struct reader *r = arg;
	char c;

	atomic_store(&r->tid, (int)syscall(SYS_gettid));
	CHECK_EQ(read(r->fd[0], &c, 1), 1);
	return NULL;
}

static void test_state(void)
{
	struct reader r = {.tid = 0};
	pthread_t th;
	struct rq_sched s = {0};

	CHECK_EQ(pipe(r.fd), 0);
	tu_thread_start(&th, blocked_reader, &r);
	TU_WAIT_UNTIL(atomic_load(&r.tid) != 0, TU_SETUP_MS);
	/* Blocked in read() soon; until then it may still read 'R'. */
	TU_WAIT_UNTIL(rq_sched_read(atomic_load(&r.tid), &s) == 0 && s.state == 'S', TU_SETUP_MS);
	CHECK_EQ(s.tid, atomic_load(&r.tid));
	CHECK_EQ(write(r.fd[1], "x", 1), 1);
	tu_thread_join(th);
	close(r.fd[0]);
	close(r.fd[1]);
	CHECK(rq_sched_read(0, &s) < 0);
	CHECK(rq_sched_read(INT32_MAX, &s) < 0);
}

/* A thread that looks, to the detectors, like the waiter of @lock that
 * takes it next: its wait record for the lock noted @what. */
struct next_waiter {
	rqspinlock_t *lock;
	uint32_t what;
	struct rq_thread *t; /* set before ready */
	atomic_int ready, done;
};

static void *next_waiter_main(void *arg)
{
	struct next_waiter *n = arg;
	struct rq_thread *t = rq_self_get();
	uint32_t idx = rq_held_push(t, n->lock);

	rq_wait_push(t, n->lock, idx);
	rq_wait_note(t, n->what, true);
	n->t = t;
	atomic_store(&n->ready, 1);
	while (!atomic_load(&n->done))
		tu_sleep_ms(1);
	rq_wait_note(t, n->what, false);
	rq_wait_pop(t);
	rq_held_drop(t, idx);
	return NULL;
}

/* Who rq_find_owner() names for a word @val, with a waiter noted @what. */
static void check_next(uint32_t val, uint32_t what, bool found)
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	struct next_waiter n = {.lock = &lock, .what = what};
	pthread_t th;

	tu_thread_start(&th, next_waiter_main, &n);
	TU_WAIT_UNTIL(atomic_load(&n.ready), TU_SETUP_MS);
	atomic_store_explicit(&lock.val, val, memory_order_relaxed);
	CHECK(rq_find_owner(&lock, rq_self_get()) == (found ? n.t : NULL));
	atomic_store_explicit(&lock.val, 0, memory_order_relaxed);
	atomic_store(&n.done, 1);
	tu_thread_join(th);
}

static void test_owner_next(void)
{
	const uint32_t tail = 1u << 16; /* any queue tail; the head is found by its record */

	check_next(RQ_PENDING_VAL, RQ_NOTE_PENDING, true);
	check_next(tail, RQ_NOTE_HEAD, true);
	check_next(tail | RQ_PENDING_VAL, RQ_NOTE_PENDING, true);
	/* the wrong note: nobody to measure */
	check_next(tail, RQ_NOTE_PENDING, false);
	check_next(0, RQ_NOTE_HEAD, false);
}

static const struct tu_test tests[] = {
    TU_TEST("sched_state", test_state, 20, 0),
    TU_TEST("sched_owner_next", test_owner_next, 20, 0),
};

TU_MAIN(tests)
