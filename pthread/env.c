/* SPDX-License-Identifier: MIT */
/* The drop-in's environment variables: see env.h. */
#include "env.h"

#include <errno.h>
#include <string.h>

#include <rqspinlock.h>

#define NS_PER_MS 1000000ull

int rqp_parse_on_fail(const char *s, enum rqp_on_fail *policy)
{
	if (!s || strcmp(s, "default") == 0)
		*policy = RQP_ON_FAIL_DEFAULT;
	else if (strcmp(s, "return") == 0)
		*policy = RQP_ON_FAIL_RETURN;
	else if (strcmp(s, "abort") == 0)
		*policy = RQP_ON_FAIL_ABORT;
	else
		return -EINVAL;
	return 0;
}

int rqp_parse_timeout_ms(const char *s, uint64_t *ns)
{
	const uint64_t max_ms = RQSPINLOCK_MAX_TIMEOUT_NS / NS_PER_MS;
	uint64_t ms = 0;

	*ns = 0;
	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		ms = ms * 10 + (uint64_t)(*s - '0');
		if (ms > max_ms) /* also stops any overflow */
			return -EINVAL;
	}
	if (ms == 0)
		return -EINVAL;
	*ns = ms * NS_PER_MS;
	return 0;
}
