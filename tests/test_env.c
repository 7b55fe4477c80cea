/* SPDX-License-Identifier: MIT */
/*
 * The environment's parsers (src/env.c), white-box: every string gets a
 * valid value or -EINVAL, never a silently wrapped or truncated number.
 *
 *  - env_parse_slots, env_parse_mode, env_parse_report: fixed cases;
 *  - env_once_fork: the once-only start-up behind the environment and the
 *    registry (src/once.c): a second thread waits for the first, and a child
 *    forked while a thread of its parent runs the start-up runs it itself
 *    instead of waiting for a thread it does not have;
 *  - built with RQ_FUZZ (clang ASan build, CTest env_fuzz): the same
 *    checks as a libFuzzer target, each input against a reference parse.
 */
#include <errno.h>
#include <strings.h>

#include "parsecheck.h"
#include "testutil.h"
#include "registry.h"

static void check_slots(const char *s)
{
	uint32_t slots = 12345;
	uint64_t want = pc_decimal_in_range(s, RQSPINLOCK_MAX_THREADS);
	int rc = rq_env_parse_slots(s, &slots);

	if (want) {
		CHECK_EQ(rc, 0);
		CHECK_EQ(slots, want);
	} else {
		CHECK_EQ(rc, -EINVAL);
		CHECK_EQ(slots, 12345); /* untouched */
	}
}

static void check_mode(const char *s)
{
	enum rqspinlock_mode mode = (enum rqspinlock_mode)7;
	int rc = rq_env_parse_mode(s, &mode);

	if (strcasecmp(s, "queued") == 0) {
		CHECK_EQ(rc, 0);
		CHECK_EQ(mode, RQSPINLOCK_MODE_QUEUED);
	} else if (strcasecmp(s, "tas") == 0) {
		CHECK_EQ(rc, 0);
		CHECK_EQ(mode, RQSPINLOCK_MODE_TAS);
	} else {
		CHECK_EQ(rc, -EINVAL);
		CHECK_EQ(mode, 7);
	}
}

static void check_report(const char *s)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"", "0", "no", "false", "off"};
	int want = -1; /* -1: invalid */
	bool on = true;
	int rc = rq_env_parse_report(s, &on);

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (strcasecmp(s, yes[i]) == 0)
			want = 1;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (strcasecmp(s, no[i]) == 0)
			want = 0;
	CHECK_EQ(rc, want < 0 ? -EINVAL : 0);
	CHECK_EQ(on, want == 1); /* off when invalid */
}

#ifdef RQ_FUZZ
static void check_all(const char *s)
{
	check_slots(s);
	check_mode(s);
	check_report(s);
}

PC_FUZZ_STRINGS(check_all)
#else
static void test_slots(void)
{
	static const char *const cases[] = {
	    "1",
	    "64",
	    "16383",
	    "016383",
	    "00000000000000000000000000001",
	    "0",
	    "16384",
	    "99999999",
	    "",
	    "-1",
	    "+5",
	    " 5",
	    "5 ",
	    "5k",
	    "0x10",
	    "1e3",
	    "4294967297",
	    "18446744073709551617",
	    "\t7",
	    "7\n",
	};
	uint32_t slots = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_slots(cases[i]);
	/* the reference itself, on a few: */
	CHECK_EQ(pc_decimal_in_range("016383", RQSPINLOCK_MAX_THREADS), 16383);
	CHECK_EQ(pc_decimal_in_range("00000000000000000000000000001", 9), 1);
	CHECK_EQ(pc_decimal_in_range("4294967297", UINT32_MAX), 0);
	/* unset: the default */
	CHECK_EQ(rq_env_parse_slots(NULL, &slots), 0);
	CHECK_EQ(slots, RQSPINLOCK_MAX_THREADS);
}

static void test_mode(void)
{
	static const char *const cases[] = {"tas",  "TAS", "Queued", "queued", "",
	                                    "tas ", "q",   "queue",  "tasx",   "0"};
	enum rqspinlock_mode mode = RQSPINLOCK_MODE_TAS;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_mode(cases[i]);
	CHECK_EQ(rq_env_parse_mode(NULL, &mode), 0);
	CHECK_EQ(mode, RQSPINLOCK_MODE_QUEUED);
}

static void test_report(void)
{
	static const char *const cases[] = {"1",   "0",  "",   "yes", "No", "TRUE",
	                                    "off", "00", " 0", "2",   "y",  "onn"};
	bool on = true;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_report(cases[i]);
	CHECK_EQ(rq_env_parse_report(NULL, &on), 0);
	CHECK(!on);
}

static rq_once_t once_under_test;
static atomic_int once_started, once_finish, once_second;

/* Begins the start-up and holds it until told to finish. */
static void *once_starter(void *arg)
{
	(void)arg;
	CHECK(rq_once_begin(&once_under_test));
	atomic_store(&once_started, 1);
	while (!atomic_load(&once_finish))
		tu_sleep_ms(1);
	rq_once_end(&once_under_test);
	return NULL;
}

/* A second caller in the same process: waits, then finds it done. */
static void *once_second_caller(void *arg)
{
	(void)arg;
	atomic_store(&once_second, rq_once_begin(&once_under_test) ? 2 : 1);
	return NULL;
}

static void test_once_fork(void)
{
	pthread_t starter, second;
	pid_t pid;
	int status;

	tu_thread_start(&starter, once_starter, NULL);
	TU_WAIT_UNTIL(atomic_load(&once_started), TU_SETUP_MS);
	tu_thread_start(&second, once_second_caller, NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) /* only this thread exists here: the start-up is ours */
		_exit(rq_once_begin(&once_under_test) ? 0 : 1);
	status = tu_wait_child(pid, 10);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tu_sleep_ms(20);
	CHECK_EQ(atomic_load(&once_second), 0); /* still waiting */
	atomic_store(&once_finish, 1);
	tu_thread_join(starter);
	tu_thread_join(second);
	CHECK_EQ(atomic_load(&once_second), 1); /* waited, did not run it */
	CHECK(!rq_once_begin(&once_under_test));
}

static const struct tu_test tests[] = {
    TU_TEST("env_parse_slots", test_slots, 20, 0),
    TU_TEST("env_parse_mode", test_mode, 20, 0),
    TU_TEST("env_parse_report", test_report, 20, 0),
    TU_TEST("env_once_fork", test_once_fork, 30, 0),
};

TU_MAIN(tests)
#endif
