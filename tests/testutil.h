/* SPDX-License-Identifier: MIT */
/*
 * testutil.h: the tiny shared harness of the rqspinlock CTest suite.
 *
 * - CHECK*() assertions print file:line and end the process with status 1
 *   (from any thread, and from signal handlers: they only use write(2));
 * - each test binary holds a table of named tests (TU_TEST(), TU_MAIN());
 *   `prog NAME` runs one and prints "ok - NAME" or "not ok - NAME",
 *   `prog --list` lists the names and `prog --ctest` the CTest tests with
 *   their timeouts, labels, environment and variants (TAS mode, inline
 *   build), from which cmake/RqTests.cmake registers them;
 * - a watchdog thread ends the process with status 3 shortly before the
 *   test's CTest timeout, so that a hang fails the test even outside CTest;
 * - monotonic time, RQ_TEST_SCALE parsing, lock-word decoding, small
 *   thread and random-number helpers.
 */
#ifndef RQ_TESTUTIL_H
#define RQ_TESTUTIL_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <rqspinlock.h>

#include "rqu_clock.h" /* rqu_now_ns(): monotonic ns, async-signal-safe */

#define TU_NS_PER_MS 1000000ULL
#define TU_NS_PER_S  1000000000ULL

/*
 * Timeout for tests in which a timeout must never pass for a detection
 * (-EDEADLK) or a non-waiting call; those are asserted to take less than a
 * quarter of it.
 */
#define TU_LONG_TIMEOUT_NS (10 * TU_NS_PER_S)
/*
 * Timeout for pure mutual-exclusion tests. The contract allows -ETIMEDOUT
 * after one or two timeouts of waiting, and with TSan, 16 threads on 2 busy
 * cores and TAS mode's unfairness a 250 ms wait does happen; an error then
 * means a wait of seconds.
 */
#define TU_MUTEX_TIMEOUT_NS (2 * TU_NS_PER_S)
/*
 * Slack for upper time bounds: on the loaded 2-core CI VM a runnable thread
 * was seen to get no CPU for 1.6 s. More under sanitizers (tu_slack_ns()).
 */
#define TU_STALL_NS (2 * TU_NS_PER_S)

/* 1 in ThreadSanitizer builds (signal delivery and thread exit differ). */
#if defined(__SANITIZE_THREAD__)
#define TU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TU_TSAN 1
#endif
#endif
#ifndef TU_TSAN
#define TU_TSAN 0
#endif

/* Lock word fields (see rqspinlock.h). */
#define TU_LOCKED(v)  ((v)&0xffu)
#define TU_PENDING(v) (((v) >> 8) & 0xffu)
#define TU_TAIL(v)    ((v) >> 16)

__attribute__((noreturn, format(printf, 3, 4))) static inline void
tu_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[600];
	int n = snprintf(msg, 100, "not ok - %s:%d: ", file, line);
	va_list ap;

	if (n < 0 || n >= 100)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(msg);
	msg[n++] = '\n';
	/* write(2) and _exit(2) are async-signal-safe; stdio is not. */
	if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
		_exit(2);
	_exit(1);
}

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			tu_fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond);                    \
	} while (0)

/* @sa, @sb: the operands as written (stringified before macro expansion). */
#define TU_CHECK_OP(a, op, b, sa, sb)                                                              \
	do {                                                                                       \
		long long tu_a_ = (long long)(a), tu_b_ = (long long)(b);                          \
		if (!(tu_a_ op tu_b_))                                                             \
			tu_fail(__FILE__, __LINE__, "CHECK(%s %s %s) failed: %lld vs %lld", sa,    \
			        #op, sb, tu_a_, tu_b_);                                            \
	} while (0)

#define CHECK_EQ(a, b) TU_CHECK_OP(a, ==, b, #a, #b)
#define CHECK_NE(a, b) TU_CHECK_OP(a, !=, b, #a, #b)
#define CHECK_LT(a, b) TU_CHECK_OP(a, <, b, #a, #b)
#define CHECK_LE(a, b) TU_CHECK_OP(a, <=, b, #a, #b)
#define CHECK_GT(a, b) TU_CHECK_OP(a, >, b, #a, #b)
#define CHECK_GE(a, b) TU_CHECK_OP(a, >=, b, #a, #b)

/* Monotonic time in seconds. */
static inline double tu_now_s(void)
{
	return (double)rqu_now_ns() / (double)TU_NS_PER_S;
}

static inline void tu_sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / TU_NS_PER_S),
	                      .tv_nsec = (long)(ns % TU_NS_PER_S)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static inline void tu_sleep_ms(unsigned ms)
{
	tu_sleep_ns(ms * TU_NS_PER_MS);
}

/* Busy-wait @p ns: keeps a critical section busy without sleeping. */
static inline void tu_busy_ns(uint64_t ns)
{
	uint64_t end = rqu_now_ns() + ns;

	while (rqu_now_ns() < end)
		;
}

/* RQ_TEST_SCALE: 1 normally, 0.25 under sanitizers; clamped to [0.01, 100]. */
static inline double tu_scale(void)
{
	const char *s = getenv("RQ_TEST_SCALE");
	double v = s ? strtod(s, NULL) : 1.0;

	if (!(v >= 0.01))
		v = s ? 0.01 : 1.0;
	return v > 100 ? 100 : v;
}

/* @p n iterations scaled by RQ_TEST_SCALE, at least 1. */
static inline long tu_scaled(long n)
{
	double v = (double)n * tu_scale();

	return v < 1 ? 1 : (long)v;
}

/*
 * Scheduling slack for upper time bounds: @p ns at scale 1, more under the
 * (slower) sanitizer builds, which run with a scale below 1.
 */
static inline uint64_t tu_slack_ns(uint64_t ns)
{
	double s = tu_scale();

	return s >= 1 ? ns : (uint64_t)((double)ns / s);
}

/* Bound for waits on other threads during a test's set-up (a hang detector). */
#define TU_SETUP_MS 10000

/* Spin (yielding) until @p cond holds; fail after @p ms milliseconds. */
#define TU_WAIT_UNTIL(cond, ms)                                                                    \
	do {                                                                                       \
		uint64_t tu_end_ = rqu_now_ns() + (uint64_t)(ms)*TU_NS_PER_MS;                     \
		while (!(cond)) {                                                                  \
			if (rqu_now_ns() > tu_end_)                                                \
				tu_fail(__FILE__, __LINE__, "timed out waiting for %s", #cond);    \
			sched_yield();                                                             \
		}                                                                                  \
	} while (0)

/*
 * What this thread's acquisitions write into the locked byte: its owner id,
 * 2 + its registry slot for the first 254 slots, else 1, which names
 * nobody (docs/DESIGN.md, "Lock word"). Registers the thread.
 */
static inline uint32_t tu_owner(void)
{
	int slot = res_spin_thread_slot();

	return slot >= 0 && slot < 254 ? (uint32_t)slot + 2 : 1;
}

/* The lock word, for observation only (the tests never synchronize on it). */
static inline uint32_t tu_word(rqspinlock_t *lock)
{
	return atomic_load_explicit(&lock->val, memory_order_relaxed);
}

static inline void tu_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int rc = pthread_create(t, NULL, fn, arg);

	if (rc != 0)
		tu_fail(__FILE__, __LINE__, "pthread_create: %s", strerror(rc));
}

static inline void tu_thread_join(pthread_t t)
{
	int rc = pthread_join(t, NULL);

	if (rc != 0)
		tu_fail(__FILE__, __LINE__, "pthread_join: %s", strerror(rc));
}

/* A thread that takes a lock once (releasing it if it got it), timing the call. */
struct tu_waiter {
	rqspinlock_t *lock;
	pthread_t t;
	uint64_t start, end; /* written by the waiter, read after the join */
	int result;
	atomic_int done; /* 1 once res_spin_lock() returned */
};

static inline void *tu_waiter_fn(void *arg)
{
	struct tu_waiter *w = arg;

	w->start = rqu_now_ns();
	w->result = res_spin_lock(w->lock);
	w->end = rqu_now_ns();
	if (w->result == 0)
		res_spin_unlock(w->lock);
	atomic_store_explicit(&w->done, 1, memory_order_relaxed);
	return NULL;
}

static inline void tu_waiter_start(struct tu_waiter *w, rqspinlock_t *lock)
{
	w->lock = lock;
	w->result = 1;
	atomic_init(&w->done, 0);
	tu_thread_start(&w->t, tu_waiter_fn, w);
}

/* Joins the waiter; returns what res_spin_lock() returned to it. */
static inline int tu_waiter_join(struct tu_waiter *w)
{
	tu_thread_join(w->t);
	return w->result;
}

static inline int tu_waiter_done(struct tu_waiter *w)
{
	return atomic_load_explicit(&w->done, memory_order_relaxed);
}

/* A thread that holds a lock: for hold_ns, or (hold_ns == 0) until released. */
struct tu_holder {
	rqspinlock_t *lock;
	pthread_t t;
	uint64_t hold_ns;
	atomic_int held, release;
};

static inline void *tu_holder_fn(void *arg)
{
	struct tu_holder *h = arg;

	if (res_spin_lock(h->lock) != 0)
		tu_fail(__FILE__, __LINE__, "holder could not take its lock");
	atomic_store_explicit(&h->held, 1, memory_order_relaxed);
	if (h->hold_ns)
		tu_sleep_ns(h->hold_ns);
	while (!h->hold_ns && !atomic_load_explicit(&h->release, memory_order_relaxed))
		tu_sleep_ms(1);
	res_spin_unlock(h->lock);
	return NULL;
}

/* Starts the holder and returns once it holds @p lock. */
static inline void tu_holder_start(struct tu_holder *h, rqspinlock_t *lock, uint64_t hold_ns)
{
	h->lock = lock;
	h->hold_ns = hold_ns;
	atomic_init(&h->held, 0);
	atomic_init(&h->release, 0);
	tu_thread_start(&h->t, tu_holder_fn, h);
	TU_WAIT_UNTIL(atomic_load_explicit(&h->held, memory_order_relaxed), TU_SETUP_MS);
}

/* Tells the holder to release (if it waits for that) and joins it. */
static inline void tu_holder_join(struct tu_holder *h)
{
	atomic_store_explicit(&h->release, 1, memory_order_relaxed);
	tu_thread_join(h->t);
}

/* Installs @p fn as the handler of @p sig (no flags, empty mask). */
static inline void tu_install_handler(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) != 0)
		tu_fail(__FILE__, __LINE__, "sigaction(%d) failed", sig);
}

/* Waits for @p pid at most @p secs seconds; SIGKILL and fail on overrun. */
static inline int tu_wait_child(pid_t pid, unsigned secs)
{
	uint64_t end = rqu_now_ns() + secs * TU_NS_PER_S;
	int status = 0;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0) {
		if (rqu_now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			tu_fail(__FILE__, __LINE__, "forked child still running after %u s", secs);
		}
		tu_sleep_ms(5);
	}
	CHECK_EQ(r, pid);
	return status;
}

/* xorshift64*: per-thread pseudo-random numbers, state must be nonzero. */
static inline uint64_t tu_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ULL;
}

/*
 * Plain (non-atomic) data guarded by a lock under test. All words are equal
 * whenever the lock is free; a thread that finds them unequal on entry ran
 * concurrently with another one inside the critical section (and TSan sees
 * the race). The updates also make the critical section long enough for
 * real contention.
 */
#define TU_CS_WORDS 16
struct tu_cs {
	long w[TU_CS_WORDS];
};

/* Call with the lock held. Returns 0 when mutual exclusion was broken. */
static inline int tu_cs_update(struct tu_cs *cs)
{
	int ok = 1;

	for (int k = 1; k < TU_CS_WORDS; k++)
		ok &= cs->w[k] == cs->w[0];
	for (int k = 0; k < TU_CS_WORDS; k++) {
		cs->w[k]++;
		/* Keep the compiler from merging or reordering the stores. */
		atomic_signal_fence(memory_order_seq_cst);
	}
	return ok;
}

/* With the lock free: every word counted exactly @p n updates. */
static inline void tu_cs_check(const struct tu_cs *cs, long n)
{
	for (int k = 0; k < TU_CS_WORDS; k++)
		if (cs->w[k] != n)
			tu_fail(__FILE__, __LINE__, "protected word %d is %ld, expected %ld", k,
			        cs->w[k], n);
}

/*
 * Runs fn(arg) on @p n threads (at most 64). Lock throughput varies by orders
 * of magnitude on an oversubscribed machine, so tests bound duration, not
 * work: after @p max_ms the workers are told to finish (*stop = 1; they poll
 * it through tu_keep_going()). Returns 1 when they had to be stopped.
 */
static inline int tu_run_threads(int n, void *(*fn)(void *), void *arg, unsigned max_ms,
                                 atomic_int *stop)
{
	uint64_t end = rqu_now_ns() + max_ms * TU_NS_PER_MS;
	struct timespec now, deadline;
	pthread_t t[64];
	int stopped = 0;

	if (n > 64)
		tu_fail(__FILE__, __LINE__, "too many threads: %d", n);
	for (int i = 0; i < n; i++)
		tu_thread_start(&t[i], fn, arg);
	/* pthread_timedjoin_np() takes a CLOCK_REALTIME deadline. */
	clock_gettime(CLOCK_REALTIME, &now);
	deadline.tv_sec = now.tv_sec + (time_t)(max_ms / 1000);
	deadline.tv_nsec = now.tv_nsec + (long)(max_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	for (int i = 0; i < n; i++) {
		if (!stopped && rqu_now_ns() < end &&
		    pthread_timedjoin_np(t[i], NULL, &deadline) == 0)
			continue;
		stopped = 1;
		atomic_store_explicit(stop, 1, memory_order_relaxed);
		tu_thread_join(t[i]);
	}
	return stopped;
}

static inline int tu_stopped(atomic_int *stop)
{
	return atomic_load_explicit(stop, memory_order_relaxed);
}

/*
 * Loop condition of a worker: @p iters in all, but stop early when told, once
 * past a minimum (thread start-up alone can outlast the window under TSan).
 */
static inline int tu_keep_going(long i, long iters, atomic_int *stop)
{
	return i < iters && (i < 100 || !tu_stopped(stop));
}

struct tu_hammer {
	rqspinlock_t *lock;
	struct tu_cs cs; /* protected by lock */
	long iters;
	atomic_long acquired, errors, deadlocks, broken;
	atomic_int stop;
};

static inline void *tu_hammer_fn(void *arg)
{
	struct tu_hammer *h = arg;
	long done = 0;

	for (long i = 0; tu_keep_going(i, h->iters, &h->stop); i++) {
		int r = res_spin_lock(h->lock);

		if (r != 0) {
			atomic_fetch_add_explicit(&h->errors, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&h->deadlocks, r == -EDEADLK,
			                          memory_order_relaxed);
			continue;
		}
		if (!tu_cs_update(&h->cs))
			atomic_fetch_add_explicit(&h->broken, 1, memory_order_relaxed);
		res_spin_unlock(h->lock);
		done++;
	}
	atomic_fetch_add_explicit(&h->acquired, done, memory_order_relaxed);
	return NULL;
}

/*
 * @p nthreads threads lock and unlock @p lock (up to @p iters times each, at
 * most ~500 ms): no errors, exact mutual exclusion, word back to 0.
 */
static inline void tu_check_lock_usable(rqspinlock_t *lock, int nthreads, long iters)
{
	struct tu_hammer *h = calloc(1, sizeof(*h));
	uint64_t old_timeout = res_spin_set_timeout_ns(TU_MUTEX_TIMEOUT_NS);

	CHECK(h != NULL);
	h->lock = lock;
	h->iters = iters;
	tu_run_threads(nthreads, tu_hammer_fn, h, 500, &h->stop);
	res_spin_set_timeout_ns(old_timeout);
	if (atomic_load(&h->errors))
		printf("# %ld acquisitions, %ld errors (%ld -EDEADLK)\n", atomic_load(&h->acquired),
		       atomic_load(&h->errors), atomic_load(&h->deadlocks));
	CHECK_EQ(atomic_load(&h->errors), 0);
	CHECK_EQ(atomic_load(&h->broken), 0);
	CHECK_GT(atomic_load(&h->acquired), 0);
	tu_cs_check(&h->cs, atomic_load(&h->acquired));
	CHECK_EQ(atomic_load_explicit(&lock->val, memory_order_relaxed), 0);
	free(h);
}

static inline void tu_stats(struct rqspinlock_stats *st)
{
	CHECK_EQ(res_spin_get_stats(st), 0);
}

/* ---- test table, watchdog and CTest listing ---- */

/* Variants CTest runs besides the plain test (tu_test.flags). */
#define TU_TAS    0x1u /* NAME_tas: the same test with RQSPINLOCK_MODE=tas */
#define TU_INLINE 0x2u /* NAME_inline(_tas): run by the RQSPINLOCK_INLINE build */
/* Not a variant: exit status TU_EXIT_SKIP means skipped (CTest SKIP_RETURN_CODE). */
#define TU_SKIPPABLE 0x4u
/*
 * No watchdog thread, for a test whose forked children start threads (TSan
 * refuses that after a fork of a multithreaded process); CTest's TIMEOUT
 * still bounds it.
 */
#define TU_NO_WATCHDOG 0x8u
/*
 * The test overloads the first CPU with busy threads pinned to it and
 * assumes that load is all: it gets the label "cpu0-overload", and CTest
 * runs no two tests with that label at the same time (RESOURCE_LOCK, see
 * cmake/RqTestsRegister.cmake).
 */
#define TU_OVERLOAD 0x10u

/* The watchdog ends a test this many seconds before CTest's TIMEOUT would. */
#define TU_WATCHDOG_MARGIN_S 10

/* Exit status of a TU_SKIPPABLE test that could not run here. */
#define TU_EXIT_SKIP 77

/*
 * One test of a binary's table, with everything CTest needs to run it:
 * `prog --ctest` prints one line per CTest test (see tu_print_ctest()), and
 * cmake/RqTests.cmake registers exactly those. Write entries with TU_TEST().
 */
struct tu_test {
	const char *name; /* [a-z0-9_]; the CTest name; its first word is a label */
	void (*fn)(void);
	unsigned timeout_s; /* CTest TIMEOUT, more than TU_WATCHDOG_MARGIN_S */
	unsigned flags;     /* TU_TAS, TU_INLINE, TU_SKIPPABLE, TU_NO_WATCHDOG, TU_OVERLOAD */
	const char *env;    /* "VAR=value ..." the test runs with; NULL: none */
	const char *labels; /* more CTest labels, "a b ..."; NULL: none */
};

/* TU_TEST(name, fn, timeout_s, flags[, .env = "VAR=value", .labels = "a b"]) */
#define TU_TEST(name_, fn_, timeout_s_, flags_, ...)                                               \
	{                                                                                          \
		.name = (name_), .fn = (fn_), .timeout_s = (timeout_s_), .flags = (flags_),        \
		__VA_ARGS__                                                                        \
	}

static unsigned tu_watchdog_secs;
static atomic_int tu_watchdog_quit;
static pthread_t tu_watchdog_thread;
/* What the test is doing now; the watchdog prints it when it fires. */
static char tu_context[160];

__attribute__((format(printf, 1, 2))) static inline void tu_set_context(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tu_context, sizeof(tu_context), fmt, ap);
	va_end(ap);
}

static inline void *tu_watchdog(void *arg)
{
	static const char msg[] = "not ok - watchdog: test still running, ending it\n";
	uint64_t end = rqu_now_ns() + tu_watchdog_secs * TU_NS_PER_S;

	(void)arg;
	while (rqu_now_ns() < end) {
		if (atomic_load_explicit(&tu_watchdog_quit, memory_order_relaxed))
			return NULL;
		tu_sleep_ms(10);
	}
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	/* Racy read of a diagnostic string, at the very end: good enough. */
	if (tu_context[0] && (write(STDOUT_FILENO, "# context: ", 11) < 0 ||
	                      write(STDOUT_FILENO, tu_context, strnlen(tu_context, 159)) < 0 ||
	                      write(STDOUT_FILENO, "\n", 1) < 0))
		_exit(3);
	_exit(3);
}

/* Starts the watchdog with every signal blocked, so no test signal lands there. */
static inline void tu_start_watchdog(unsigned secs)
{
	sigset_t all, old;

	tu_watchdog_secs = secs;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	tu_thread_start(&tu_watchdog_thread, tu_watchdog, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Ends the watchdog: with no thread left, TSan skips its 1 s exit delay. */
static inline void tu_stop_watchdog(void)
{
	atomic_store_explicit(&tu_watchdog_quit, 1, memory_order_relaxed);
	tu_thread_join(tu_watchdog_thread);
}

/* The mode the environment asked for must be the one in effect. */
static inline void tu_check_mode(void)
{
	const char *m = getenv("RQSPINLOCK_MODE");
	int tas = m && strcasecmp(m, "tas") == 0;

	CHECK_EQ(res_spin_get_mode(), tas ? RQSPINLOCK_MODE_TAS : RQSPINLOCK_MODE_QUEUED);
}

static inline int tu_is_tas(void)
{
	return res_spin_get_mode() == RQSPINLOCK_MODE_TAS;
}

/* 1 when every character of @p s is in @p set. */
static inline int tu_only(const char *s, const char *set)
{
	return s[strspn(s, set)] == '\0';
}

#define TU_NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_"

/*
 * The next word of the space-separated list at *@p s: moves *s to its
 * start and returns its length, 0 at the end of the list.
 */
static inline size_t tu_next_word(const char **s)
{
	*s += strspn(*s, " ");
	return strcspn(*s, " ");
}

/* 1 when @p env is space-separated VAR=value words without ',', ';' or tabs. */
static inline int tu_env_ok(const char *env)
{
	for (size_t n; (n = tu_next_word(&env)) != 0; env += n)
		if (env[0] == '=' || !memchr(env, '=', n) || strcspn(env, ",;\t\n") < n)
			return 0;
	return 1;
}

/* NULL when entry @p i of @p tests is complete and well formed, else what is wrong. */
static inline const char *tu_entry_error(const struct tu_test *tests, size_t i)
{
	const struct tu_test *t = &tests[i];

	if (!t->name || !t->name[0] || t->name[0] == '_' || !tu_only(t->name, TU_NAME_CHARS))
		return "name is not [a-z0-9_]+";
	for (size_t j = 0; j < i; j++)
		if (strcmp(tests[j].name, t->name) == 0)
			return "name used twice";
	if (!t->fn)
		return "no function";
	if (t->timeout_s <= TU_WATCHDOG_MARGIN_S)
		return "timeout_s missing or not above TU_WATCHDOG_MARGIN_S";
	if (t->flags & ~(TU_TAS | TU_INLINE | TU_SKIPPABLE | TU_NO_WATCHDOG | TU_OVERLOAD))
		return "unknown flags";
	if (t->labels && !tu_only(t->labels, TU_NAME_CHARS " -"))
		return "labels are not [a-z0-9_-] words";
	if (t->env && !tu_env_ok(t->env))
		return "env is not VAR=value words without ',' or ';'";
	if (t->env && (t->flags & TU_TAS) && strstr(t->env, "RQSPINLOCK_MODE="))
		return "TU_TAS sets RQSPINLOCK_MODE itself";
	return NULL;
}

/*
 * Prints the space-separated @p words (may be NULL) joined by ','; @p sep:
 * a list is already printed on this field, so a ',' goes first.
 */
static inline void tu_print_words(const char *words, int sep)
{
	for (size_t n; words && (n = tu_next_word(&words)) != 0; words += n, sep = 1)
		printf("%s%.*s", sep ? "," : "", (int)n, words);
}

/*
 * One CTest test of entry @p t: "NAME build=plain|inline arg=ARG timeout=S
 * skip=77|none labels=L,... env=VAR=value,...". NAME is the entry's name
 * with _inline and _tas added for those variants, ARG what the binary is run
 * with; the labels are the name's first word, inline, cpu0-overload, the
 * entry's own, and tas.
 */
static inline void tu_print_ctest_line(const struct tu_test *t, int inl, int tas)
{
	printf("%s%s%s build=%s arg=%s timeout=%u skip=%s labels=%.*s", t->name,
	       inl ? "_inline" : "", tas ? "_tas" : "", inl ? "inline" : "plain", t->name,
	       t->timeout_s, (t->flags & TU_SKIPPABLE) ? "77" : "none", (int)strcspn(t->name, "_"),
	       t->name);
	tu_print_words(inl ? "inline" : NULL, 1);
	tu_print_words((t->flags & TU_OVERLOAD) ? "cpu0-overload" : NULL, 1);
	tu_print_words(t->labels, 1);
	tu_print_words(tas ? "tas" : NULL, 1);
	printf(" env=");
	tu_print_words(tas ? "RQSPINLOCK_MODE=tas" : NULL, 0);
	tu_print_words(t->env, tas);
	putchar('\n');
}

/* `prog --ctest`: every CTest test of the table, variants included. */
static inline void tu_print_ctest(const struct tu_test *tests, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int builds = (tests[i].flags & TU_INLINE) ? 2 : 1;
		int modes = (tests[i].flags & TU_TAS) ? 2 : 1;

		for (int inl = 0; inl < builds; inl++)
			for (int tas = 0; tas < modes; tas++)
				tu_print_ctest_line(&tests[i], inl, tas);
	}
}

/*
 * `prog NAME` runs test NAME; `prog --list` prints the names, `prog --ctest`
 * the CTest tests. Exit status: 0 passed, 1 a check failed, 2 usage or a bad
 * table entry, 3 the watchdog fired, TU_EXIT_SKIP skipped (TU_SKIPPABLE).
 */
static inline int tu_main(int argc, char **argv, const struct tu_test *tests, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *err = tu_entry_error(tests, i);

		if (err) {
			fprintf(stderr, "%s: test table entry %zu (%s): %s\n", argv[0], i,
			        tests[i].name ? tests[i].name : "no name", err);
			return 2;
		}
	}
	if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
		for (i = 0; i < n; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--ctest") == 0) {
		tu_print_ctest(tests, n);
		return 0;
	}
	for (i = 0; argc >= 2 && i < n; i++) {
		uint64_t t0;

		if (strcmp(argv[1], tests[i].name) != 0)
			continue;
		setvbuf(stdout, NULL, _IONBF, 0);
		if (!(tests[i].flags & TU_NO_WATCHDOG))
			tu_start_watchdog(tests[i].timeout_s - TU_WATCHDOG_MARGIN_S);
		tu_check_mode();
		printf("# %s: mode %s, RQ_TEST_SCALE %g\n", tests[i].name,
		       tu_is_tas() ? "tas" : "queued", tu_scale());
		t0 = rqu_now_ns();
		tests[i].fn();
		if (!(tests[i].flags & TU_NO_WATCHDOG))
			tu_stop_watchdog();
		printf("ok - %s (%.0f ms)\n", tests[i].name, (double)(rqu_now_ns() - t0) / 1e6);
		return 0;
	}
	fprintf(stderr, "usage: %s TEST | --list | --ctest\n", argv[0]);
	return 2;
}

#define TU_MAIN(table)                                                                             \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		return tu_main(argc, argv, table, sizeof(table) / sizeof(table[0]));               \
	}

#endif /* RQ_TESTUTIL_H */
