/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's environment parsers (pthread/env.c): every string gets a
 * valid value or -EINVAL, never a silently wrapped or truncated timeout.
 *
 *  - pthread_env_timeout, pthread_env_on_fail: fixed cases;
 *  - built with RQ_FUZZ (clang ASan build, CTest pthread_env_fuzz): the
 *    same checks as a libFuzzer target, each input against a reference.
 */
#include <errno.h>

#include "env.h"
#include "rqspinlock.h"
#include "parsecheck.h"
#include "testutil.h"

static void check_timeout(const char *s)
{
	uint64_t ns = 12345, want = pc_decimal_in_range(s, RQSPINLOCK_MAX_TIMEOUT_NS / 1000000);
	int rc = rqp_parse_timeout_ms(s, &ns);

	if (*s == '\0') { /* empty: the default */
		CHECK_EQ(rc, 0);
		CHECK_EQ(ns, 0);
	} else if (want) {
		CHECK_EQ(rc, 0);
		CHECK_EQ(ns, want * 1000000);
	} else {
		CHECK_EQ(rc, -EINVAL);
	}
}

static void check_on_fail(const char *s)
{
	enum rqp_on_fail p = RQP_ON_FAIL_UNSET;
	int rc = rqp_parse_on_fail(s, &p);

	/* any case, as the library's words (RQSPINLOCK_MODE) */
	if (strcasecmp(s, "return") == 0 || strcasecmp(s, "abort") == 0 ||
	    strcasecmp(s, "default") == 0) {
		CHECK_EQ(rc, 0);
		CHECK_EQ(p, (s[0] | 0x20) == 'a'   ? RQP_ON_FAIL_ABORT
		            : (s[0] | 0x20) == 'r' ? RQP_ON_FAIL_RETURN
		                                   : RQP_ON_FAIL_DEFAULT);
	} else {
		CHECK_EQ(rc, -EINVAL);
		CHECK_EQ(p, RQP_ON_FAIL_UNSET);
	}
}

#ifdef RQ_FUZZ
static void check_all(const char *s)
{
	check_timeout(s);
	check_on_fail(s);
}

PC_FUZZ_STRINGS(check_all)
#else
static void test_timeout(void)
{
	static const char *const cases[] = {
	    "1",
	    "250",
	    "10000",
	    "3600000",
	    "0003600000",
	    "0",
	    "3600001",
	    "",
	    "-1",
	    "+5",
	    " 5",
	    "5ms",
	    "1.5",
	    "0x10",
	    "18446744073709551617",
	    "18446744073710",
	};
	uint64_t ns = 1;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_timeout(cases[i]);
	/* would wrap to 13 ms (mod 2^64) when multiplied unchecked */
	CHECK_EQ(rqp_parse_timeout_ms("18446744073710", &ns), -EINVAL);
	CHECK_EQ(rqp_parse_timeout_ms(NULL, &ns), 0);
	CHECK_EQ(ns, 0);
}

static void test_on_fail(void)
{
	static const char *const cases[] = {"abort",  "return", "default", "Abort", "abort ",
	                                    "RETURN", "",       "1",       "abrt",  "defaults"};
	enum rqp_on_fail p = RQP_ON_FAIL_UNSET;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_on_fail(cases[i]);
	/* unset: the default, which never returns an error unseen */
	CHECK_EQ(rqp_parse_on_fail(NULL, &p), 0);
	CHECK_EQ(p, RQP_ON_FAIL_DEFAULT);
}

static const struct tu_test tests[] = {
    TU_TEST("pthread_env_timeout", test_timeout, 20, 0),
    TU_TEST("pthread_env_on_fail", test_on_fail, 20, 0),
};

TU_MAIN(tests)
#endif
