/* SPDX-License-Identifier: MIT */
/*
 * The stock reporter (src/report_stderr.c), as a person reads it on
 * stderr: a one-line summary first (event, lock with its name, thread,
 * where), then what each thread holds and waits for, then the stack with
 * file:line and without the library's own frames; the locks named by their
 * symbols, static ones included. In a signal handler it prints addresses
 * (libdw is not async-signal-safe). Each test runs with RQSPINLOCK_REPORT=1
 * and reads its own stderr through a pipe.
 */
#include "testutil.h"

#include <dlfcn.h>
#include <fcntl.h>

/* Static: only the symbol table (libdw), not dladdr(), can name them. */
static rqspinlock_t report_aa_lock = RQSPINLOCK_INIT;
static rqspinlock_t report_lock_a = RQSPINLOCK_INIT;
static rqspinlock_t report_lock_b = RQSPINLOCK_INIT;

static char report[65536];

/* Runs @fn with stderr going to a pipe; its text into report[]. */
static void capture_stderr(void (*fn)(void))
{
	int p[2], saved;
	ssize_t n;

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, (int)sizeof(report)), (int)sizeof(report));
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0);
	CHECK_EQ(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	fn();
	CHECK_EQ(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], report, sizeof(report) - 1);
	close(p[0]);
	CHECK_GT(n, 0);
	report[n] = '\0';
	printf("# stderr report (%zd bytes):\n%s\n", n, report);
}

/* Whether reports can have symbols here: built with libdw's headers and
 * libdw.so.1 present. */
static int have_symbols(void)
{
#ifdef RQ_HAVE_LIBDW
	void *lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);

	if (lib) {
		dlclose(lib);
		return 1;
	}
#endif
	printf("# no libdw: reports print addresses\n");
	return 0;
}

/* The first line at or after @from that starts with @prefix, or NULL. */
static const char *line_after(const char *from, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *l = from; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, prefix, n) == 0)
			return l;
	return NULL;
}

/* The report's line that starts with @prefix, or NULL. */
static const char *line_starting(const char *prefix)
{
	return line_after(report, prefix);
}

/* The report's line @l up to its end, as a string. */
static const char *line_text(const char *l)
{
	static char buf[1024];
	size_t n = strcspn(l, "\n");

	snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), l);
	return buf;
}

static void relock(void)
{
	CHECK_EQ(res_spin_lock(&report_aa_lock), 0);
	CHECK_EQ(res_spin_lock(&report_aa_lock), -EDEADLK); /* the line the report names */
	res_spin_unlock(&report_aa_lock);
}

/* An AA: the summary first, with the lock's static name and this file's
 * line; the details; the stack starts in this file (the library's frames,
 * linked into this program, left out). */
static void test_report_aa(void)
{
	char want[160];
	const char *l;

	capture_stderr(relock);
	snprintf(want, sizeof(want), "rqspinlock: AA deadlock (-EDEADLK) on lock %p",
	         (void *)&report_aa_lock);
	CHECK(strncmp(report, want, strlen(want)) == 0);
	CHECK(line_starting("  this thread: tid ") != NULL);
	CHECK(line_starting("  stack:") != NULL);
	if (!have_symbols())
		return;
	l = line_text(report);
	snprintf(want, sizeof(want),
	         " (report_aa_lock), tid %d, in relock at test_report.c:", (int)gettid());
	CHECK(strstr(l, want) != NULL);
	l = line_starting("  this thread: tid ");
	CHECK(strstr(line_text(l), "(report_aa_lock)], waits for ") != NULL);
	/* The stack's first frame is relock() here, not the library's. */
	l = line_starting("    #0 ");
	CHECK(l != NULL);
	CHECK(strncmp(l, "    #0 relock at ", 17) == 0);
	CHECK(strstr(line_text(l), "test_report.c:") != NULL);
	CHECK(line_starting("    #1 test_report_aa at ") != NULL ||
	      line_starting("    #1 capture_stderr at ") != NULL);
}

static pthread_barrier_t both_hold;

/* Takes @p first, then, once the other side holds its own, @p then. */
static intptr_t take_in_order(rqspinlock_t *first, rqspinlock_t *then)
{
	int ret;

	CHECK_EQ(res_spin_lock(first), 0);
	pthread_barrier_wait(&both_hold);
	ret = res_spin_lock(then);
	if (ret == 0)
		res_spin_unlock(then);
	res_spin_unlock(first);
	return ret;
}

static void *take_a_then_b(void *arg)
{
	(void)arg;
	return (void *)take_in_order(&report_lock_a, &report_lock_b);
}

static void *take_b_then_a(void *arg)
{
	(void)arg;
	return (void *)take_in_order(&report_lock_b, &report_lock_a);
}

/* Two threads, A then B and B then A. Neither is the main thread, whose
 * stack the reporter may not walk to its end (it then keeps to addresses,
 * as in a signal handler: see test_report_in_signal_handler). */
static void abba(void)
{
	pthread_t ab, ba;
	void *r1, *r2;

	/* The other side waits while the first reports: no timeout meanwhile. */
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	pthread_barrier_init(&both_hold, NULL, 2);
	tu_thread_start(&ab, take_a_then_b, NULL);
	tu_thread_start(&ba, take_b_then_a, NULL);
	CHECK_EQ(pthread_join(ab, &r1), 0);
	CHECK_EQ(pthread_join(ba, &r2), 0);
	pthread_barrier_destroy(&both_hold);
	res_spin_set_timeout_ns(0);
	/* at least one of the two gave up */
	CHECK((intptr_t)r1 == -EDEADLK || (intptr_t)r2 == -EDEADLK);
}

/* An ABBA: the summary says how many other threads; each side's line says
 * what it holds and waits for, by name. */
static void test_report_abba(void)
{
	const char *first, *self, *member;

	capture_stderr(abba);
	/* (the first line of its report: another thread's report may come
	 * before it, if that thread timed out) */
	first = line_starting("rqspinlock: ABBA deadlock (-EDEADLK) on lock 0x");
	CHECK(first != NULL);
	CHECK(strstr(line_text(first), ", with 1 other thread") != NULL);
	self = line_after(first, "  this thread: tid ");
	member = line_after(first, "  cycle member: tid ");
	CHECK(self != NULL && member != NULL);
	if (!have_symbols())
		return;
	/* Both sides may report at once; the one that finds the symbolizer
	 * busy keeps to addresses (symbolize.c): check a report with names. */
	while (first && !strstr(line_text(self), "(report_lock_")) {
		first = line_after(first + 1, "rqspinlock: ABBA deadlock (-EDEADLK) on lock 0x");
		self = first ? line_after(first, "  this thread: tid ") : NULL;
		member = first ? line_after(first, "  cycle member: tid ") : NULL;
	}
	CHECK(first != NULL && self != NULL && member != NULL);
	/* One side holds A and waits for B, the other the reverse. */
	if (strstr(line_text(self), "holds [") && strstr(line_text(self), "(report_lock_a)]")) {
		CHECK(strstr(line_text(self), "waits for ") &&
		      strstr(line_text(self), "(report_lock_b)") != NULL);
		CHECK(strstr(line_text(member), "(report_lock_b)], waits for ") != NULL);
	} else {
		CHECK(strstr(line_text(self), "(report_lock_b)], waits for ") != NULL);
		CHECK(strstr(line_text(member), "(report_lock_a)") != NULL);
	}
}

static void relock_in_handler(int sig)
{
	(void)sig;
	CHECK_EQ(res_spin_lock(&report_aa_lock), -EDEADLK);
}

/* The AA from a signal handler over the holder: the stock reporter sees
 * the signal frame and prints addresses (backtrace_symbols_fd()'s lines),
 * not libdw's. */
static void aa_in_signal_handler(void)
{
	struct sigaction sa = {.sa_handler = relock_in_handler}, old;

	CHECK_EQ(sigaction(SIGUSR1, &sa, &old), 0);
	CHECK_EQ(res_spin_lock(&report_aa_lock), 0);
	raise(SIGUSR1);
	res_spin_unlock(&report_aa_lock);
	CHECK_EQ(sigaction(SIGUSR1, &old, NULL), 0);
}

static void test_report_in_signal_handler(void)
{
	const char *stack;

	capture_stderr(aa_in_signal_handler);
	CHECK(strncmp(report, "rqspinlock: AA deadlock (-EDEADLK) on lock 0x", 45) == 0);
	stack = line_starting("  stack:");
	CHECK(stack != NULL);
	CHECK(line_starting("    #0 ") == NULL);
	CHECK(strstr(stack, ")[0x") != NULL); /* module(+off)[addr] */
}

static const struct tu_test tests[] = {
    TU_TEST("report_aa", test_report_aa, 30, 0, .env = "RQSPINLOCK_REPORT=1"),
    TU_TEST("report_abba", test_report_abba, 30, 0, .env = "RQSPINLOCK_REPORT=1"),
    TU_TEST("report_in_signal_handler", test_report_in_signal_handler, 30, 0,
            .env = "RQSPINLOCK_REPORT=1"),
};

TU_MAIN(tests)
