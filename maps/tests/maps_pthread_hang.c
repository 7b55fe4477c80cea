/* SPDX-License-Identifier: MIT */
/*
 * The difference re-entrancy makes: the same SIGPROF storm against the same
 * map, once with rqspinlock buckets and once with pthread spin lock buckets,
 * each in a forked child watched through a pipe. The child reports progress
 * every 16 operations; no progress for a second means it is hung.
 * Expected: the rqspinlock child finishes (its handlers get -EDEADLK), the
 * pthread child hangs (its handler spins on the lock its own thread holds)
 * and is killed by the watchdog.
 */
#include "reentry_common.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

enum outcome { FINISHED, HUNG, FAILED };

static void child_run(enum rqmap_lock_kind kind, int fd, double secs)
{
	static struct reentry_thread rt;
	uint64_t rs = 42;
	double end = tu_now_s() + secs;
	char c = 'p';

	rqmap_thread_init();
	re_map = reentry_make_map(kind, 1); /* one bucket: every handler hits it */
	reentry_thread_setup(&rt, 0);
	install_handler();
	(void)thread_prof_timer(100);
	while (tu_now_s() < end && !atomic_load_explicit(&re_abort, memory_order_relaxed)) {
		for (int i = 0; i < 16; i++) /* small: sanitizer builds are slow */
			if (!reentry_main_op(&rt, 0, tu_rand(&rs)))
				_exit(3);
		if (write(fd, &c, 1) != 1)
			_exit(4);
	}
	block_sigprof();
	close(fd); /* EOF now: TSan's exit path sleeps a second before _exit */
	_exit(rt.n_other || atomic_load(&re_own_timeouts) || rt.n_bad_lookup ? 5 : 0);
}

/* Fork a child running @kind; watch its progress pipe. */
static enum outcome watch(enum rqmap_lock_kind kind, double secs)
{
	int p[2], status;
	pid_t pid;
	char buf[256];
	enum outcome out = FINISHED;

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child_run(kind, p[1], secs);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pfd = {.fd = p[0], .events = POLLIN};
		int n = poll(&pfd, 1, 1000);

		if (n == 0) { /* a second without progress */
			out = HUNG;
			kill(pid, SIGKILL);
			break;
		}
		if (n < 0 || read(p[0], buf, sizeof(buf)) <= 0)
			break; /* EOF: the child exited */
	}
	close(p[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (out == FINISHED && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "child (lock kind %d) status 0x%x\n", kind, status);
		out = FAILED;
	}
	return out;
}

static void test_maps_pthread_hang(void)
{
	double secs = 0.5 + (double)tu_scaled(100) / 100.0;
	enum outcome rq = watch(RQMAP_LOCK_RQSPIN, secs);
	enum outcome ps = watch(RQMAP_LOCK_PTHREAD_SPIN, 3 * secs);

	printf("rqspinlock buckets: %s; pthread spin buckets: %s\n",
	       rq == FINISHED ? "finished"
	       : rq == HUNG   ? "HUNG"
	                      : "FAILED",
	       ps == HUNG       ? "hung (expected, killed)"
	       : ps == FINISHED ? "finished"
	                        : "FAILED");
	CHECK_EQ(rq, FINISHED);
	CHECK_EQ(ps, HUNG);
}

static const struct tu_test tests[] = {
    TU_TEST("maps_pthread_hang", test_maps_pthread_hang, 60, TU_NO_WATCHDOG),
};

TU_MAIN(tests)
