/* SPDX-License-Identifier: MIT */
/*
 * Another thread's scheduler accounting (src/sched.c), white-box: what the
 * deadline path reads to tell an owner waiting for a CPU from one that runs.
 *
 *  - sched_state: a thread blocked in read() reads 'S' with its tid; tid 0
 *    and a tid that is no thread of this process read as errors.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
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

static const struct tu_test tests[] = {
    TU_TEST("sched_state", test_state, 20, 0),
};

TU_MAIN(tests)
