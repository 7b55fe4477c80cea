/* SPDX-License-Identifier: MIT */
/*
 * Layer 2: another thread's scheduler accounting, for the deadline path
 * only (timeout.c). Uses only layer 0 and the clock. How long the lock's
 * owner ran on a CPU and how long it waited in the run queue, from
 * /proc/self/task/TID/schedstat, and its state letter from
 * /proc/self/task/TID/stat.
 *
 * Async-signal-safe and no cancellation point (a waiter may run in a signal
 * handler, and nothing the library calls while waiting may be one): raw
 * openat/read/close system calls into stack buffers, hand-rolled parsing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"

/* "/proc/self/task/<tid>/<file>" into @buf. */
static void task_path(char *buf, size_t size, int32_t tid, const char *file)
{
	static const char prefix[] = "/proc/self/task/";
	char digits[12];
	size_t n = 0, d = 0;
	uint32_t v = (uint32_t)tid;

	do {
		digits[d++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && d < sizeof(digits));
	for (const char *p = prefix; *p && n + 1 < size; p++)
		buf[n++] = *p;
	while (d && n + 1 < size)
		buf[n++] = digits[--d];
	if (n + 1 < size)
		buf[n++] = '/';
	for (const char *p = file; *p && n + 1 < size; p++)
		buf[n++] = *p;
	buf[n] = '\0';
}

/*
 * Read the start of a /proc file of thread @tid; returns its length or
 * -errno. errno itself is left as it was: this runs inside lock calls,
 * which may run in a signal handler that interrupted code reading errno.
 */
static long read_task_file(int32_t tid, const char *file, char *buf, size_t size)
{
	char path[64];
	int saved = errno;
	long fd, n;

	buf[0] = '\0';
	task_path(path, sizeof(path), tid, file);
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		n = -errno;
		errno = saved;
		return n;
	}
	do
		n = syscall(SYS_read, (int)fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	syscall(SYS_close, (int)fd);
	if (n >= 0)
		buf[n] = '\0';
	errno = saved;
	return n;
}

static const char *parse_u64(const char *p, uint64_t *out)
{
	uint64_t v = 0;

	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	*out = v;
	return p;
}

/* The state letter follows the last ')' (the name may contain one). */
static char parse_state(const char *stat)
{
	const char *close = NULL;

	for (const char *p = stat; *p; p++)
		if (*p == ')')
			close = p;
	if (!close || close[1] != ' ' || !close[2])
		return '?';
	return close[2];
}

int rq_sched_read(int32_t tid, struct rq_sched *out)
{
	char buf[256];
	const char *p;
	long n;

	if (tid <= 0)
		return -ESRCH;
	n = read_task_file(tid, "schedstat", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = parse_u64(buf, &out->cpu_ns);
	if (!p || !parse_u64(p, &out->runq_ns))
		return -EIO;
	out->tid = tid;
	out->when = rq_now_ns();
	n = read_task_file(tid, "stat", buf, sizeof(buf));
	out->state = '?';
	if (n > 0)
		out->state = parse_state(buf);
	return 0;
}
