/* SPDX-License-Identifier: MIT */
/* The drop-in's environment variables: see env.h. */
#include "env.h"

#include <errno.h>
#include <string.h>

#include <rqspinlock.h>

#include "rqu_parse.h"

#define NS_PER_MS 1000000ull

int rqp_parse_on_fail(const char *s, enum rqp_on_fail *policy)
{
	if (!s || rqu_word_is(s, "default"))
		*policy = RQP_ON_FAIL_DEFAULT;
	else if (rqu_word_is(s, "return"))
		*policy = RQP_ON_FAIL_RETURN;
	else if (rqu_word_is(s, "abort"))
		*policy = RQP_ON_FAIL_ABORT;
	else
		return -EINVAL;
	return 0;
}

int rqp_parse_timeout_ms(const char *s, uint64_t *ns)
{
	const uint64_t max_ms = RQSPINLOCK_MAX_TIMEOUT_NS / NS_PER_MS;
	uint64_t ms;

	*ns = 0;
	if (!s || !*s)
		return 0;
	if (rqu_parse_decimal(s, max_ms, &ms) || ms == 0)
		return -EINVAL;
	*ns = ms * NS_PER_MS;
	return 0;
}
