/* SPDX-License-Identifier: MIT */
/*
 * Layer 0: the environment, read and validated in one place, once.
 *
 *   RQSPINLOCK_SLOTS   registry capacity: decimal digits only (no sign,
 *                      space or suffix), a number in [1, RQSPINLOCK_MAX_THREADS]
 *   RQSPINLOCK_MODE    "tas" or "queued", in any case
 *   RQSPINLOCK_REPORT  1, yes, true or on (any case): print failures on stderr;
 *                      0, no, false, off or empty: do not
 *
 * Numbers and words follow the project's one rule (util/rqu_parse.h, below
 * layer 0: libc only). A value that is not valid is reported on stderr
 * and the default stays. The parsers take any string (tests/test_env.c fuzzes them: fuzz_env).
 * Each layer applies its own setting: the registry its capacity
 * (registry.c), the slow paths their mode (tas.c), the reporter its
 * hook (report.c). Uses nothing of the library.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "rqu_parse.h"

static struct rq_env rq_env_values;

int rq_env_parse_slots(const char *s, uint32_t *slots)
{
	uint64_t v;

	if (!s) {
		*slots = RQSPINLOCK_MAX_THREADS;
		return 0;
	}
	if (rqu_parse_decimal(s, RQSPINLOCK_MAX_THREADS, &v) || v < 1)
		return -EINVAL;
	*slots = (uint32_t)v;
	return 0;
}

int rq_env_parse_mode(const char *s, enum rqspinlock_mode *mode)
{
	if (!s || rqu_word_is(s, "queued"))
		*mode = RQSPINLOCK_MODE_QUEUED;
	else if (rqu_word_is(s, "tas"))
		*mode = RQSPINLOCK_MODE_TAS;
	else
		return -EINVAL;
	return 0;
}

int rq_env_parse_report(const char *s, bool *on)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"", "0", "no", "false", "off"};

	*on = false;
	if (!s)
		return 0;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (rqu_word_is(s, yes[i])) {
			*on = true;
			return 0;
		}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (rqu_word_is(s, no[i]))
			return 0;
	return -EINVAL;
}

static uint32_t env_slots(void)
{
	const char *s = secure_getenv("RQSPINLOCK_SLOTS");
	uint32_t slots;

	if (rq_env_parse_slots(s, &slots) == 0)
		return slots;
	fprintf(stderr,
	        "rqspinlock: ignoring RQSPINLOCK_SLOTS=\"%s\": not a number in [1, %d]; using %d\n",
	        s, RQSPINLOCK_MAX_THREADS, RQSPINLOCK_MAX_THREADS);
	return RQSPINLOCK_MAX_THREADS;
}

static enum rqspinlock_mode env_mode(void)
{
	const char *s = secure_getenv("RQSPINLOCK_MODE");
	enum rqspinlock_mode mode;

	if (rq_env_parse_mode(s, &mode) == 0)
		return mode;
	fprintf(stderr,
	        "rqspinlock: ignoring RQSPINLOCK_MODE=\"%s\": not \"tas\" or \"queued\"; using "
	        "queued\n",
	        s);
	return RQSPINLOCK_MODE_QUEUED;
}

static bool env_report(void)
{
	const char *s = secure_getenv("RQSPINLOCK_REPORT");
	bool on;

	if (rq_env_parse_report(s, &on) == 0)
		return on;
	fprintf(stderr,
	        "rqspinlock: ignoring RQSPINLOCK_REPORT=\"%s\": not 1/yes/true/on or "
	        "0/no/false/off; reports stay off\n",
	        s);
	return false;
}

/*
 * The first caller reads; callers that come meanwhile wait for it (once.c:
 * a forked child whose parent was reading reads itself). Signals are
 * blocked while reading, so that a handler cannot wait for its own thread
 * (a lock failing in a handler reads the environment too).
 */
const struct rq_env *rq_env(void)
{
	static rq_once_t once;
	sigset_t old;

	if (likely(rq_once_done(&once)))
		return &rq_env_values;
	rq_block_signals(&old);
	if (rq_once_begin(&once)) {
		rq_env_values.slots = env_slots();
		rq_env_values.mode = env_mode();
		rq_env_values.report = env_report();
		rq_once_end(&once);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return &rq_env_values;
}
