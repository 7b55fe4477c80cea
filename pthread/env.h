/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's environment variables (rqspinlock-pthread(7), ENVIRONMENT),
 * parsed from any string: pthread/tests/test_env.c fuzzes these. NULL: the
 * variable is unset.
 */
#ifndef RQP_ENV_H
#define RQP_ENV_H

#include <stdint.h>

/* What a failed pthread_spin_lock() does (rqspinlock-pthread(7)):
 * DEFAULT  report; abort on a deadlock (EDEADLK), report and keep waiting
 *          after a timeout (ETIMEDOUT: the owner may only be slow);
 * RETURN   return the error, for programs that check it;
 * ABORT    report and abort on either. */
enum rqp_on_fail {
	RQP_ON_FAIL_UNSET,
	RQP_ON_FAIL_DEFAULT,
	RQP_ON_FAIL_RETURN,
	RQP_ON_FAIL_ABORT,
};

/* RQSPINLOCK_PTHREAD_ON_FAIL: unset or "default", "return" or "abort", in
 * any case (util/rqu_parse.h, the library's rule); 0 with the policy,
 * -EINVAL for anything else. */
int rqp_parse_on_fail(const char *s, enum rqp_on_fail *policy);

/* RQSPINLOCK_PTHREAD_TIMEOUT_MS: decimal digits only, a number of
 * milliseconds in [1, RQSPINLOCK_MAX_TIMEOUT_NS / 1 ms]; 0 with *ns the
 * timeout (0, the library's default, when unset or empty), -EINVAL for
 * anything else. */
int rqp_parse_timeout_ms(const char *s, uint64_t *ns);

#endif /* RQP_ENV_H */
