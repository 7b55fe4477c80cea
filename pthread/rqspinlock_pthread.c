/* SPDX-License-Identifier: MIT */
/*
 * librqspinlock-pthread: pthread_spin_init/destroy/lock/trylock/unlock on
 * rqspinlock, for LD_PRELOAD on an unmodified binary or for linking.
 *
 * pthread_spinlock_t is a 4-byte int, exactly the lock word. The library
 * carries a private copy of librqspinlock (its sources compiled in, only the
 * five pthread functions exported: pthread/exports.map), so one file is all a
 * preload needs, and a program that also uses librqspinlock keeps its own,
 * separate registry.
 *
 * Results: 0; EDEADLK (AA, ABBA, longer cycles: POSIX's "the calling thread
 * already holds the lock", widened to cycles); ETIMEDOUT (the owner did not
 * release in time: a stalled thread, or one that exited or a process that
 * died holding the lock; POSIX has no code for this, see the man page);
 * EBUSY from trylock. Init and destroy return 0, as glibc's do; a NULL lock
 * is undefined, as in glibc (whose header declares it nonnull).
 *
 * Those errors reach the program only with RQSPINLOCK_PTHREAD_ON_FAIL=return:
 * an unmodified program never checks pthread_spin_lock() (glibc's cannot
 * fail), and would run on without the lock. By default a deadlock is
 * reported and aborts (the program would hang forever on glibc), and a
 * timeout is reported and the call waits on, as glibc's would (the owner may
 * only be slow: a correct program is never killed); =abort aborts on both.
 *
 * Only calls that go through the PLT reach these functions; glibc's own
 * internal spin locks keep glibc's implementation, on their own words, so the
 * two never share a lock. Nothing here needs glibc's originals (no dlsym).
 * Calls that come before the constructors ran (from another library's
 * constructor) work: the core starts itself on first use, and the failure
 * policy is read on the first failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "rqspinlock.h"

#define EXPORT      __attribute__((visibility("default")))
#define unlikely(x) __builtin_expect(!!(x), 0)

_Static_assert(sizeof(pthread_spinlock_t) == sizeof(rqspinlock_t),
               "pthread_spinlock_t must be the lock word's size");
_Static_assert(alignof(pthread_spinlock_t) >= alignof(rqspinlock_t),
               "pthread_spinlock_t must be aligned like the lock word");

/* The program only ever touches its pthread_spinlock_t through these
 * functions (or zeroes it), so the word is accessed as the lock's atomic
 * word alone. */
static rqspinlock_t *word_of(pthread_spinlock_t *lock)
{
	return (rqspinlock_t *)(void *)lock;
}

static _Atomic int on_fail_policy; /* enum rqp_on_fail */

/* Nonzero while this thread's pthread_spin_lock() waits on after a reported
 * timeout (the default policy): its further timeouts are not reported. */
static _Thread_local unsigned waiting_on;

/* The report hook for RQSPINLOCK_PTHREAD_ON_FAIL=abort: print, then abort
 * on the failing thread, whose stack then shows where it deadlocked. */
static void report_and_abort(const struct rqspinlock_report *report, void *arg)
{
	res_spin_report_stderr(report, arg);
	abort();
}

/* The default policy's hook: a deadlock is reported and aborts; a timeout is
 * reported once per pthread_spin_lock() call, which then waits on (failed()).
 * Async-signal-safe, as the stock reporter. */
static void report_default(const struct rqspinlock_report *report, void *arg)
{
	static const char more[] =
	    "rqspinlock-pthread: still waiting for the lock, as glibc would "
	    "(RQSPINLOCK_PTHREAD_ON_FAIL=return returns ETIMEDOUT instead, =abort aborts)\n";

	if (report->event != RQSPINLOCK_EV_TIMEOUT)
		report_and_abort(report, arg);
	if (waiting_on)
		return;
	res_spin_report_stderr(report, arg);
	(void)!write(STDERR_FILENO, more, sizeof(more) - 1);
}

/* The failure policy; an invalid value is the default (install_policy() says so). */
static enum rqp_on_fail read_policy(void)
{
	enum rqp_on_fail p;

	return rqp_parse_on_fail(secure_getenv("RQSPINLOCK_PTHREAD_ON_FAIL"), &p)
	           ? RQP_ON_FAIL_DEFAULT
	           : p;
}

/* Reads the environment; invalid values are reported and the defaults stay. */
static void install_policy(void)
{
	const char *ms = secure_getenv("RQSPINLOCK_PTHREAD_TIMEOUT_MS");
	const char *on_fail = secure_getenv("RQSPINLOCK_PTHREAD_ON_FAIL");
	enum rqp_on_fail p;
	uint64_t ns;

	if (rqp_parse_timeout_ms(ms, &ns))
		fprintf(stderr,
		        "rqspinlock-pthread: ignoring RQSPINLOCK_PTHREAD_TIMEOUT_MS=\"%s\": not a "
		        "number of milliseconds in [1, %llu]; using %llu\n",
		        ms, RQSPINLOCK_MAX_TIMEOUT_NS / 1000000ull,
		        RQSPINLOCK_DEFAULT_TIMEOUT_NS / 1000000ull);
	else if (ns)
		res_spin_set_timeout_ns(ns);
	if (rqp_parse_on_fail(on_fail, &p)) {
		fprintf(stderr,
		        "rqspinlock-pthread: ignoring RQSPINLOCK_PTHREAD_ON_FAIL=\"%s\": not "
		        "\"default\", \"return\" or \"abort\"; using default\n",
		        on_fail);
		p = RQP_ON_FAIL_DEFAULT;
	}
	if (p == RQP_ON_FAIL_ABORT)
		res_spin_set_report_hook(report_and_abort, NULL);
	else if (p == RQP_ON_FAIL_DEFAULT)
		res_spin_set_report_hook(report_default, NULL);
	/* relaxed: a configuration value, read once per failure */
	atomic_store_explicit(&on_fail_policy, p, memory_order_relaxed);
}

__attribute__((constructor)) static void rqspinlock_pthread_init(void)
{
	/* Registering this thread runs the core's start-up first, whose
	 * RQSPINLOCK_REPORT hook the policy's hook must replace, not follow. */
	(void)res_spin_thread_slot();
	install_policy();
}

/* A failure before the constructor ran (another library's constructor
 * locked first) had no hook to report it: say so, and abort. */
__attribute__((noreturn)) static void abort_unreported(void)
{
	static const char msg[] = "rqspinlock-pthread: pthread_spin_lock failed before "
	                          "initialization; no report available\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	abort();
}

/* Applies the policy to a failed lock call (the hook has reported it, and
 * under "abort", or the default's deadlock, not returned): the default waits
 * on after a timeout; an error to return otherwise. Out of line and cold, so
 * that pthread_spin_lock()'s success path keeps no stack frame for it. */
__attribute__((noinline, cold)) static int failed(rqspinlock_t *lock, int err)
{
	enum rqp_on_fail p = atomic_load_explicit(&on_fail_policy, memory_order_relaxed);

	if (p == RQP_ON_FAIL_UNSET) {
		p = read_policy();
		if (p == RQP_ON_FAIL_ABORT || (p == RQP_ON_FAIL_DEFAULT && err == EDEADLK))
			abort_unreported();
	}
	if (p != RQP_ON_FAIL_DEFAULT || err != ETIMEDOUT)
		return err;
	waiting_on++;
	do
		err = -res_spin_lock(lock);
	while (err == ETIMEDOUT);
	waiting_on--;
	if (err) /* a deadlock the hook did not see: it was not installed yet */
		abort_unreported();
	return 0;
}

EXPORT int pthread_spin_init(pthread_spinlock_t *lock, int pshared)
{
	if (pshared == PTHREAD_PROCESS_SHARED)
		res_spin_lock_init_shared(word_of(lock));
	else
		res_spin_lock_init(word_of(lock));
	return 0;
}

EXPORT int pthread_spin_destroy(pthread_spinlock_t *lock)
{
	(void)lock;
	return 0;
}

EXPORT int pthread_spin_lock(pthread_spinlock_t *lock)
{
	int err = res_spin_lock(word_of(lock));

	if (unlikely(err))
		return failed(word_of(lock), -err);
	return 0;
}

EXPORT int pthread_spin_trylock(pthread_spinlock_t *lock)
{
	return -res_spin_trylock(word_of(lock));
}

EXPORT int pthread_spin_unlock(pthread_spinlock_t *lock)
{
	res_spin_unlock(word_of(lock));
	return 0;
}
