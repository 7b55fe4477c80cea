/* SPDX-License-Identifier: MIT */
/*
 * Layer 6, the stock reporter, res_spin_report_stderr(): a one-line summary
 * first (what failed, on which lock, where, which thread), then the details
 * (what this thread and each cycle member hold and wait for; for a
 * timeout, the owner), then the stack, the library's own frames left out.
 *
 * The failing call may run in a signal handler, where only async-signal-safe
 * work may be done: the report is formatted here with no allocation and
 * written with write(2). Where the stack shows that the call did not come
 * from a signal handler (no frame returns to the kernel's sigreturn
 * trampoline), names come from libdwfl (symbolize.c): each frame's
 * function and file:line, a lock's symbol, a static one included. In a
 * signal handler, or without libdw, frames are printed as glibc's
 * backtrace_symbols_fd() prints them (module+offset, for eu-addr2line) and
 * locks by the names dladdr() finds (exported symbols only).
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"
#include "symbolize.h"

/* The report, written out whenever the buffer fills: with symbols, a
 * report may be longer than one buffer. One buffer is PIPE_BUF, so that a
 * report that fits reaches a pipe in one piece, not interleaved with
 * another thread's. */
struct rq_buf {
	char s[4096];
	size_t n;
	bool failed; /* a write failed: the rest is dropped */
	bool epipe;
};

/* All @n bytes of @s to @fd; false when the descriptor fails. */
static bool write_all(int fd, const char *s, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, s + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		off += (size_t)w;
	}
	return true;
}

static void flush(struct rq_buf *b)
{
	if (!b->failed && b->n && !write_all(STDERR_FILENO, b->s, b->n)) {
		b->failed = true;
		b->epipe = errno == EPIPE;
	}
	b->n = 0;
}

static void put_str(struct rq_buf *b, const char *s)
{
	for (; s && *s; s++) {
		if (b->n == sizeof(b->s))
			flush(b);
		b->s[b->n++] = *s;
	}
}

static void put_num(struct rq_buf *b, uint64_t v, unsigned base)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (base == 16)
		put_str(b, "0x");
	while (i > 0) {
		char c[2] = {tmp[--i], 0};

		put_str(b, c);
	}
}

/* ---- where the report may use libdw ---- */

/* Does the code at @pc return to the kernel's sigreturn trampoline (the
 * bytes GDB and libgcc's unwinder recognise)? Read with process_vm_readv(),
 * which fails instead of faulting where @pc is at the end of a mapping. */
static bool is_sigreturn(const void *pc)
{
#if defined(__x86_64__)
	static const unsigned char tramp[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
#elif defined(__aarch64__)
	static const unsigned char tramp[] = {0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4};
#else
	static const unsigned char tramp[1];
	(void)pc;
	return true;
#endif
	unsigned char code[sizeof(tramp)];
	struct iovec local = {code, sizeof(code)}, remote = {(void *)(uintptr_t)pc, sizeof(code)};

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(code))
		return true; /* cannot tell: as if it did */
	return memcmp(code, tramp, sizeof(tramp)) == 0;
}

/* True only where this call is known not to run in a signal handler: its
 * whole stack was walked and no frame returns to the sigreturn trampoline. */
static bool outside_signal_handler(void)
{
	void *frames[128];
	int n = backtrace(frames, 128);

	if (n <= 0 || n == 128)
		return false;
	for (int i = 0; i < n; i++)
		if (is_sigreturn(frames[i]))
			return false;
	return true;
}

/* ---- names ---- */

/* " (name+0xoff)" for a lock's address: its symbol, from libdw when
 * @syms, else from dladdr() (exported symbols only); nothing when none. */
static void put_lock_name(struct rq_buf *b, const void *lock, bool syms)
{
	struct rq_symbol s;
	Dl_info info;
	const char *name = NULL;
	uintptr_t off = 0;

	if (syms && rq_symbol_of(lock, false, &s) && s.name) {
		name = s.name;
		off = s.offset;
	} else if (!syms && dladdr(lock, &info) && info.dli_sname && info.dli_saddr) {
		name = info.dli_sname;
		off = (uintptr_t)lock - (uintptr_t)info.dli_saddr;
	}
	if (!name)
		return;
	put_str(b, " (");
	put_str(b, name);
	if (off) {
		put_str(b, "+");
		put_num(b, off, 16);
	}
	put_str(b, ")");
}

static void put_lock(struct rq_buf *b, const void *lock, bool syms)
{
	put_num(b, (uintptr_t)lock, 16);
	put_lock_name(b, lock, syms);
}

/* Is the frame the library's own, linked into the program (so not found
 * by its address range, report.c)? Its source file is under this file's
 * src/ or beside it in include/ or pthread/ (the inline fast path, the
 * drop-in), as its debug info names it; without debug info, its function's
 * name says so (res_spin_*, rq_*). */
static bool own_frame(const struct rq_symbol *s)
{
	static const char *const dirs[] = {"src/", "include/", "pthread/"};
	const char *me = __FILE__;
	size_t root = strlen(me) - strlen("src/report_stderr.c");

	if (s->file && strncmp(s->file, me, root) == 0)
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
			if (strncmp(s->file + root, dirs[i], strlen(dirs[i])) == 0)
				return true;
	/* ... and a sanitizer's backtrace() interceptor, where it has one */
	return s->name &&
	       (strncmp(s->name, "res_spin_", 9) == 0 || strncmp(s->name, "rq_", 3) == 0 ||
	        strncmp(s->name, "__interceptor_", 14) == 0);
}

/* The first frame that is not the library's own. */
static uint32_t first_caller_frame(const struct rqspinlock_report *r, bool syms)
{
	struct rq_symbol s;
	uint32_t k = 0;

	while (syms && k + 1 < r->nr_frames && rq_symbol_of(r->frames[k], true, &s) &&
	       own_frame(&s))
		k++;
	return k;
}

/* "FUNC at FILE:LINE" (FILE's last component with @short_file), each
 * part where known. */
static void put_where(struct rq_buf *b, const struct rq_symbol *s, bool short_file)
{
	const char *file = s->file, *slash = file ? strrchr(file, '/') : NULL;

	put_str(b, s->name ? s->name : "??");
	if (!file)
		return;
	put_str(b, " at ");
	put_str(b, short_file && slash ? slash + 1 : file);
	put_str(b, ":");
	put_num(b, (uint64_t)s->line, 10);
}

static void put_frames(struct rq_buf *b, const struct rqspinlock_report *r, uint32_t first,
                       bool syms)
{
	put_str(b, "  stack:\n");
	if (!syms) {
		flush(b);
		if (b->failed)
			return;
		errno = 0;
		/* Symbolizes without malloc, straight to the descriptor. */
		backtrace_symbols_fd((void *const *)r->frames, (int)r->nr_frames, STDERR_FILENO);
		b->epipe = errno == EPIPE;
		return;
	}
	for (uint32_t i = first; i < r->nr_frames; i++) {
		struct rq_symbol s;

		put_str(b, "    #");
		put_num(b, i - first, 10);
		put_str(b, " ");
		if (rq_symbol_of(r->frames[i], true, &s)) {
			put_where(b, &s, false);
			put_str(b, " (");
			put_str(b, s.module);
			put_str(b, "+");
			put_num(b, s.module_offset, 16);
			put_str(b, ")");
		} else {
			put_num(b, (uintptr_t)r->frames[i], 16);
		}
		put_str(b, "\n");
	}
}

/* ---- the report ---- */

static const char *event_name(enum rqspinlock_event ev)
{
	switch (ev) {
	case RQSPINLOCK_EV_AA:
		return "AA deadlock";
	case RQSPINLOCK_EV_ABBA:
		return "ABBA deadlock";
	case RQSPINLOCK_EV_CYCLE:
		return "waits-for cycle";
	case RQSPINLOCK_EV_TIMEOUT:
		return "timeout";
	}
	return "failure";
}

/* "rqspinlock: AA deadlock (-EDEADLK) on lock 0x... (foo_lock), tid T,
 * in FUNCTION at FILE:LINE" and, for a cycle, how many other members. */
static void put_summary(struct rq_buf *b, const struct rqspinlock_report *r, uint32_t first,
                        bool syms)
{
	struct rq_symbol s;

	put_str(b, "rqspinlock: ");
	put_str(b, event_name(r->event));
	put_str(b, r->error == -EDEADLK ? " (-EDEADLK)" : " (-ETIMEDOUT)");
	put_str(b, " on lock ");
	put_lock(b, r->lock, syms);
	put_str(b, ", tid ");
	put_num(b, (uint64_t)(uint32_t)r->self.tid, 10);
	if (syms && first < r->nr_frames && rq_symbol_of(r->frames[first], true, &s)) {
		put_str(b, ", in ");
		put_where(b, &s, true);
	}
	if (r->nr_peers) {
		put_str(b, ", with ");
		put_num(b, r->nr_peers, 10);
		put_str(b, r->nr_peers == 1 ? " other thread" : " other threads");
	}
	put_str(b, r->nested ? " (in a nested context)\n" : "\n");
}

/* "ROLE tid T holds [A (name), ...], waits for L (name)" */
static void put_thread(struct rq_buf *b, const char *role, const struct rqspinlock_thread_info *ti,
                       bool syms)
{
	put_str(b, role);
	put_str(b, " tid ");
	put_num(b, (uint64_t)(uint32_t)ti->tid, 10);
	put_str(b, " holds [");
	for (uint32_t i = 0; i < ti->nr_held; i++) {
		if (i)
			put_str(b, ", ");
		put_lock(b, ti->held[i], syms);
	}
	put_str(b, "], waits for ");
	if (ti->waits_for)
		put_lock(b, ti->waits_for, syms);
	else
		put_str(b, "nothing");
	put_str(b, "\n");
}

static const char *state_name(char state)
{
	switch (state) {
	case 'R':
		return "running or runnable";
	case 'S':
	case 'D':
		return "sleeping";
	case 'T':
	case 't':
		return "stopped";
	case 'Z':
	case 'X':
		return "exiting";
	}
	return "state unreadable";
}

static void put_ms(struct rq_buf *b, uint64_t ns)
{
	put_num(b, ns / 1000000, 10);
	put_str(b, ".");
	put_num(b, ns / 100000 % 10, 10);
	put_str(b, " ms");
}

static void put_owner(struct rq_buf *b, const struct rqspinlock_owner_info *o)
{
	if (!o->tid) {
		put_str(b, "  owner: not identified (no held-table entry names it)\n");
		return;
	}
	put_str(b, "  owner: slot ");
	put_num(b, o->slot, 10);
	put_str(b, " tid ");
	put_num(b, (uint64_t)(uint32_t)o->tid, 10);
	put_str(b, ", ");
	put_str(b, state_name(o->state));
	if (o->window_ns) {
		put_str(b, "; in the last ");
		put_ms(b, o->window_ns);
		put_str(b, " of the wait: on CPU ");
		put_ms(b, o->on_cpu_ns);
		put_str(b, ", waiting for a CPU ");
		put_ms(b, o->run_queue_ns);
	}
	put_str(b, "\n");
}

/*
 * SIGPIPE held off for the stock reporter's writes: a stderr whose reader
 * has gone must cost the report, not the process (SIGPIPE's default action
 * ends it). The signal is blocked around the writes; when one failed with
 * EPIPE and no SIGPIPE was pending before, the one it raised is taken back
 * before the mask is restored (sigtimedwait() with a zero timeout: not on
 * POSIX's async-signal-safe list, but on Linux one system call, like the
 * mask changes around it; cancellation is off during the hook).
 */
struct rq_sigpipe {
	sigset_t set, old;
	bool was_pending, raised;
};

static bool sigpipe_pending(void)
{
	sigset_t pending;

	return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

static void sigpipe_hold(struct rq_sigpipe *p)
{
	sigemptyset(&p->set);
	sigaddset(&p->set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &p->set, &p->old);
	p->was_pending = sigpipe_pending();
}

static void sigpipe_release(struct rq_sigpipe *p)
{
	static const struct timespec now = {0, 0};

	if (p->raised && !p->was_pending && sigpipe_pending())
		sigtimedwait(&p->set, NULL, &now);
	pthread_sigmask(SIG_SETMASK, &p->old, NULL);
}

RQ_EXPORT void res_spin_report_stderr(const struct rqspinlock_report *r, void *arg)
{
	struct rq_buf b = {.n = 0};
	struct rq_sigpipe guard;
	bool syms = outside_signal_handler() && rq_symbols_begin();
	uint32_t first = first_caller_frame(r, syms);

	(void)arg;
	sigpipe_hold(&guard);
	put_summary(&b, r, first, syms);
	put_thread(&b, "  this thread:", &r->self, syms);
	for (uint32_t i = 0; i < r->nr_peers; i++)
		put_thread(&b, "  cycle member:", &r->peers[i], syms);
	if (r->event == RQSPINLOCK_EV_TIMEOUT)
		put_owner(&b, &r->owner);
	if (r->nr_frames)
		put_frames(&b, r, first, syms);
	flush(&b);
	if (syms)
		rq_symbols_end();
	guard.raised = b.epipe;
	sigpipe_release(&guard);
}
