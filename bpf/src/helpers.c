/* SPDX-License-Identifier: MIT */
/* helpers.c: the BPF helpers rqbpf binds (map lookup/update/delete,
 * ktime_get_ns, get_prandom_u32, get_smp_processor_id, trace_printk,
 * get_current_pid_tgid, get_current_uid_gid, get_current_comm,
 * copy_from_user, copy_from_user_str,
 * spin_lock/unlock), the four res_spin kfuncs, both lock kinds on
 * rqspinlock (bpf_spin_lock without a system call: no signals blocked),
 * bpf_local_irq_save/restore as blocked signals, and the per-run
 * record of held locks and irq regions that lets a run that ends or faults
 * while holding them release them. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "rqu_clock.h"

/* The per-run path's pieces (argument checks, the held-lock record),
 * inlined into each helper so that its constant arguments fold away. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE struct rqbpf_map *map_arg(struct rqbpf_run *r, uint64_t v)
{
	const struct rqbpf_object *obj = r->prog->obj;
	size_t i = ((uintptr_t)v - (uintptr_t)obj->maps) / sizeof(*obj->maps);

	return i < obj->map_cnt && (uintptr_t)&obj->maps[i] == v ? &obj->maps[i] : NULL;
}

/* The value's address; the accesses that follow find the memory it
 * reaches (maps.h) as the run's last region. A kind whose values stay valid
 * only inside a read-side section gets one, open until the run ends. */
ALWAYS_INLINE int map_lookup(struct rqbpf_run *r, struct rqbpf_map *m, const void *key,
                             uint64_t *reg)
{
	void *p;

	if (m->ops->rcu && !r->rcu) {
		if (rqmap_read_lock())
			return rqbpf_fault(r, "map_lookup_elem: cannot open a read-side section");
		r->rcu = true;
	}
	p = m->ops->lookup_value(m, key);
	if (m->all_values.size)
		r->last = m->all_values;
	else if (p && !m->desc.inner_map) /* a map of maps gives a map, no memory */
		r->last =
		    (struct rqbpf_region){(uintptr_t)p, m->desc.value_size, !m->desc.read_only};
	reg[BPF_REG_0] = (uintptr_t)p;
	return 0;
}

ALWAYS_INLINE int map_helper(struct rqbpf_run *r, int32_t id, uint64_t *reg)
{
	struct rqbpf_map *m = map_arg(r, reg[BPF_REG_1]);
	const void *key, *value = NULL;

	if (!m)
		return rqbpf_fault(r, "helper %d: R1 is not a map", id);
	key = rqbpf_mem(r, reg[BPF_REG_2], m->desc.key_size, false);
	if (!key)
		return rqbpf_fault(r, "helper %d: key outside the program's memory", id);
	if (id == BPF_FUNC_map_update_elem) {
		value = rqbpf_mem(r, reg[BPF_REG_3], m->desc.value_size, false);
		if (!value)
			return rqbpf_fault(r, "helper %d: value outside the program's memory", id);
	}
	switch (id) {
	case BPF_FUNC_map_lookup_elem:
		return map_lookup(r, m, key, reg);
	case BPF_FUNC_map_update_elem:
		reg[BPF_REG_0] =
		    (uint64_t)(int64_t)rqbpf_map_update_helper(m, key, value, reg[BPF_REG_4]);
		break;
	default:
		reg[BPF_REG_0] = (uint64_t)(int64_t)rqbpf_map_delete(m, key);
	}
	return 0;
}

/* xorshift64*, one state per thread. */
static uint32_t prandom(void)
{
	static _Thread_local uint64_t state;

	if (!state)
		state = (rqu_now_ns() << 20) ^ (uintptr_t)&state ^ 0x9e3779b97f4a7c15ull;
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return (uint32_t)((state * 0x2545f4914f6cdd1dull) >> 32);
}

/*
 * trace_printk's formats, as the kernel's bpf_bprintf_prepare() accepts
 * them: printable ASCII and white space only; at most three conversions,
 * each "%" [flags "0+- "] [width] then one of: [l|ll] d i u x X, c, s,
 * pks and pus (as s), p (followed by nothing, white space or punctuation)
 * and pK (16 hex digits, the length of the kernel's hashed pointer; the
 * value is not hashed), px (16 hex digits), pB (0x and hex: no symbols
 * here), pI4 pi4 pI6 pi6 (an address read from the program's memory). A
 * string is read up to its NUL within the program's memory; one it cannot
 * read prints empty, as in the kernel. Anything else (precision, '#', h,
 * z, %pS ...) makes the call return -EINVAL.
 */
struct printk_out {
	char buf[1024];
	size_t len;
};

/* Appends to @o what snprintf() made of the rest, cut to fit. */
#define out_add(o, ...)                                                                            \
	out_grew((o), snprintf((o)->buf + (o)->len, sizeof((o)->buf) - (o)->len, __VA_ARGS__))

/* @o grew by @n bytes, as far as they fit. */
static void out_grew(struct printk_out *o, int n)
{
	size_t room = sizeof(o->buf) - o->len;

	if (n > 0)
		o->len += (size_t)n < room ? (size_t)n : room - 1;
}

static bool ends_string_conv(char c)
{
	return !c || isspace((unsigned char)c) || ispunct((unsigned char)c);
}

/* The string at @addr in the program's memory, as far as it reads. */
static void add_string(struct printk_out *o, struct rqbpf_run *r, const char *spec, uint64_t addr)
{
	char s[sizeof(o->buf)];
	size_t n = 0;

	for (const char *c; n < sizeof(s) - 1 && (c = rqbpf_mem(r, addr + n, 1, false)) && *c; n++)
		s[n] = *c;
	s[n] = 0;
	out_add(o, spec, s);
}

/* The flags and width of a conversion, as a printf spec up to the
 * conversion letter, which the caller appends. */
struct conv_spec {
	char s[16];
	size_t n;
	bool width; /* one was given */
};

/* Prints as a string: %c, %s, and the kernel's symbols (%pB, %pS, %ps) and
 * strings (%pks, %pus), which take no zero padding (undefined in C,
 * spaces in the kernel). */
static bool prints_as_string(const char *conv)
{
	return conv[0] == 'c' || conv[0] == 's' ||
	       (conv[0] == 'p' && conv[1] && strchr("BSsku", conv[1]));
}

/* Parses "[0+- ]*[1-9][0-9]*" at *f (moving it past, to the conversion).
 * Widths wider than the output are cut to it. */
static void parse_flags_width(const char **f, struct conv_spec *c)
{
	bool minus = false, plus = false, space = false, zero = false;
	unsigned long width = 0;

	for (;; (*f)++) {
		if (**f == '-')
			minus = true;
		else if (**f == '+')
			plus = true;
		else if (**f == ' ')
			space = true;
		else if (**f == '0')
			zero = true;
		else
			break;
	}
	if (**f >= '1' && **f <= '9')
		for (; isdigit((unsigned char)**f); (*f)++)
			width = width < 1024 ? width * 10 + (unsigned long)(**f - '0') : width;
	c->n = (size_t)snprintf(c->s, sizeof(c->s), "%%%s%s%s%s", minus ? "-" : "", plus ? "+" : "",
	                        space ? " " : "", zero && !prints_as_string(*f) ? "0" : "");
	c->width = width != 0;
	if (width)
		c->n += (size_t)snprintf(c->s + c->n, sizeof(c->s) - c->n, "%lu",
		                         width < 1023 ? width : 1023);
}

/* An address @arg points to (IPv4: 4 bytes, IPv6: 16), zeros where the
 * program's memory does not hold it, as the kernel prints a failed read. */
static void format_ip(struct printk_out *o, struct rqbpf_run *r, uint64_t arg, char how, char v)
{
	unsigned char a[16] = {0};
	size_t n = v == '4' ? 4 : 16;
	const unsigned char *src = rqbpf_mem(r, arg, n, false);

	if (src)
		memcpy(a, src, n);
	for (size_t i = 0; i < n; i++) {
		if (v == '4')
			out_add(o, how == 'I' ? "%s%u" : "%s%03u", i ? "." : "", a[i]);
		else
			out_add(o, "%s%02x", how == 'I' && i && !(i % 2) ? ":" : "", a[i]);
	}
}

/* Appends @c's conversion letter @conv to its spec. */
static const char *spec_with(struct conv_spec *c, const char *conv)
{
	snprintf(c->s + c->n, sizeof(c->s) - c->n, "%s", conv);
	return c->s;
}

/* %p and its kinds at @f ('p'); moves *fmt to the last character used.
 * The kernel's printf takes the letters and digits after p's kind as
 * part of it (so "%pKx" prints no x). */
static int format_pointer(struct printk_out *o, struct rqbpf_run *r, const char **fmt,
                          const char *f, struct conv_spec *c, uint64_t arg)
{
	char sym[24];

	if ((f[1] == 'i' || f[1] == 'I') && (f[2] == '4' || f[2] == '6'))
		format_ip(o, r, arg, f[1], f[2]);
	else if (f[1] && strchr("BSs", f[1])) { /* a symbol in the kernel: none here */
		snprintf(sym, sizeof(sym), "0x%llx", (unsigned long long)arg);
		out_add(o, spec_with(c, "s"), sym);
	} else if (f[1] == 'K' || f[1] == 'x' || ends_string_conv(f[1])) {
		/* 16 hex digits, the length of the kernel's hashed %p and %pK
		 * (the value is not hashed), unless a width is given */
		if (c->width)
			out_add(o, spec_with(c, "llx"), (unsigned long long)arg);
		else
			out_add(o, "%016llx", (unsigned long long)arg);
	} else {
		return -EINVAL;
	}
	if (!ends_string_conv(f[1]))
		for (f++; isalnum((unsigned char)f[1]);)
			f++;
	*fmt = f;
	return 0;
}

/* One conversion at *fmt (its '%'); moves *fmt to its last character. */
static int format_one(struct printk_out *o, struct rqbpf_run *r, const char **fmt, uint64_t arg)
{
	const char *f = *fmt + 1;
	struct conv_spec c;
	int longs = 0;

	parse_flags_width(&f, &c);
	if (*f == 'p' && (f[1] == 'k' || f[1] == 'u') && f[2] == 's')
		f += 2; /* %pks, %pus: a string */
	else if (*f == 'p')
		return format_pointer(o, r, fmt, f, &c, arg);
	if (*f == 's' || *f == 'c') {
		if (*f == 's' && !ends_string_conv(f[1]))
			return -EINVAL;
		*fmt = f;
		if (*f == 's')
			add_string(o, r, spec_with(&c, "s"), arg);
		else
			out_add(o, spec_with(&c, "c"), (int)(unsigned char)arg);
		return 0;
	}
	while (*f == 'l' && longs < 2) {
		longs++;
		f++;
	}
	if (!*f || !strchr("diuxX", *f))
		return -EINVAL;
	char conv[4] = {'l', 'l', *f, 0};

	*fmt = f;
	if (*f == 'd' || *f == 'i')
		out_add(o, spec_with(&c, conv),
		        longs ? (long long)arg : (long long)(int32_t)(uint32_t)arg);
	else
		out_add(o, spec_with(&c, conv),
		        longs ? (unsigned long long)arg : (unsigned long long)(uint32_t)arg);
	return 0;
}

/* -EINVAL when a character of @fmt is neither printable ASCII nor white space. */
static int check_printable(const char *fmt)
{
	for (const unsigned char *c = (const unsigned char *)fmt; *c; c++)
		if (*c > 0x7f || (!isprint(*c) && !isspace(*c)))
			return -EINVAL;
	return 0;
}

/* Out of line: its buffer would cost every helper call a stack-protector check. */
__attribute__((noinline)) int rqbpf_call_trace_printk(struct rqbpf_run *r, uint64_t *reg)
{
	uint64_t size = reg[BPF_REG_2];
	const char *fmt = size && size <= 1024 ? rqbpf_mem(r, reg[BPF_REG_1], size, false) : NULL;
	struct printk_out o;
	int nargs = 0;

	if (!fmt)
		return rqbpf_fault(r, "trace_printk: format outside the program's memory");
	reg[BPF_REG_0] = (uint64_t)(int64_t)-EINVAL;
	if (!memchr(fmt, 0, size) || check_printable(fmt))
		return 0;
	o.len = 0;
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			out_add(&o, "%c", *f);
			continue;
		}
		if (f[1] == '%') {
			out_add(&o, "%%");
			f++;
			continue;
		}
		if (nargs == 3 || format_one(&o, r, &f, reg[BPF_REG_3 + nargs]))
			return 0;
		nargs++;
	}
	o.buf[o.len] = 0;
	fprintf(stderr, "%s", o.buf);
	reg[BPF_REG_0] = o.len;
	return 0;
}

struct rqbpf_map *rqbpf_helper_map(struct rqbpf_run *r, uint64_t v)
{
	return map_arg(r, v);
}

int rqbpf_helper_lookup(struct rqbpf_run *r, struct rqbpf_map *m, const void *key, void **value)
{
	uint64_t reg[1] = {0};
	int ret = map_lookup(r, m, key, reg);

	*value = (void *)(uintptr_t)reg[0];
	return ret;
}

int rqbpf_call_map_lookup_elem(struct rqbpf_run *r, uint64_t *reg)
{
	return map_helper(r, BPF_FUNC_map_lookup_elem, reg);
}

int rqbpf_call_map_update_elem(struct rqbpf_run *r, uint64_t *reg)
{
	return map_helper(r, BPF_FUNC_map_update_elem, reg);
}

int rqbpf_call_map_delete_elem(struct rqbpf_run *r, uint64_t *reg)
{
	return map_helper(r, BPF_FUNC_map_delete_elem, reg);
}

/* bpf_map_push_elem(map, value, flags), bpf_map_pop_elem(map, value),
 * bpf_map_peek_elem(map, value) on a queue or a stack: the map's result. */
static int queue_helper(struct rqbpf_run *r, uint64_t *reg, int32_t id, const char *who)
{
	struct rqbpf_map *m = map_arg(r, reg[BPF_REG_1]);
	void *value;

	if (!m || !m->kind || !m->ops->push)
		return rqbpf_fault(r, "%s: R1 is not a queue or stack map", who);
	value = rqbpf_mem(r, reg[BPF_REG_2], m->desc.value_size, id != BPF_FUNC_map_push_elem);
	if (!value)
		return rqbpf_fault(r, "%s: value outside the program's memory", who);
	if (id == BPF_FUNC_map_push_elem)
		reg[BPF_REG_0] = (uint64_t)(int64_t)m->ops->push(m, value, reg[BPF_REG_3]);
	else if (id == BPF_FUNC_map_pop_elem)
		reg[BPF_REG_0] = (uint64_t)(int64_t)m->ops->pop(m, value);
	else
		reg[BPF_REG_0] = (uint64_t)(int64_t)m->ops->peek(m, value);
	return 0;
}

int rqbpf_call_map_push_elem(struct rqbpf_run *r, uint64_t *reg)
{
	return queue_helper(r, reg, BPF_FUNC_map_push_elem, "map_push_elem");
}

int rqbpf_call_map_pop_elem(struct rqbpf_run *r, uint64_t *reg)
{
	return queue_helper(r, reg, BPF_FUNC_map_pop_elem, "map_pop_elem");
}

int rqbpf_call_map_peek_elem(struct rqbpf_run *r, uint64_t *reg)
{
	return queue_helper(r, reg, BPF_FUNC_map_peek_elem, "map_peek_elem");
}

/* The ring buffer map in R1, or NULL (a fault). */
static struct rqbpf_map *ringbuf_arg(struct rqbpf_run *r, uint64_t *reg, const char *who)
{
	struct rqbpf_map *m = map_arg(r, reg[BPF_REG_1]);

	if (m && m->kind && m->ops->reserve)
		return m;
	rqbpf_fault(r, "%s: R1 is not a ring buffer map", who);
	return NULL;
}

/* bpf_ringbuf_reserve(map, size, flags): NULL for flags other than 0 (the
 * kernel's), for a full ring, a failed lock, or a run that already holds
 * RQBPF_MAX_HELD records (rqbpf's limit). */
int rqbpf_call_ringbuf_reserve(struct rqbpf_run *r, uint64_t *reg)
{
	struct rqbpf_map *m = ringbuf_arg(r, reg, "ringbuf_reserve");
	uint8_t *p;

	if (!m)
		return -EFAULT;
	reg[BPF_REG_0] = 0;
	if (reg[BPF_REG_3] || r->nrec == RQBPF_MAX_HELD)
		return 0;
	p = m->ops->reserve(m, reg[BPF_REG_2]);
	if (!p)
		return 0;
	r->rec[r->nrec++] = (struct rqbpf_record){m, p, (uint32_t)reg[BPF_REG_2]};
	r->last = (struct rqbpf_region){(uintptr_t)p, (size_t)reg[BPF_REG_2], true};
	reg[BPF_REG_0] = (uintptr_t)p;
	return 0;
}

/* Submit or discard the record in R1, which this run reserved: no longer
 * the run's memory. */
static int ringbuf_commit(struct rqbpf_run *r, uint64_t *reg, bool discard, const char *who)
{
	struct rqbpf_record rec;
	int i;

	for (i = r->nrec - 1; i >= 0 && (uintptr_t)r->rec[i].data != reg[BPF_REG_1]; i--)
		;
	if (i < 0)
		return rqbpf_fault(r, "%s: R1 is not a record this run reserved", who);
	rec = r->rec[i];
	for (r->nrec--; i < r->nrec; i++)
		r->rec[i] = r->rec[i + 1];
	if (r->last.base == (uintptr_t)rec.data)
		r->last = (struct rqbpf_region){0, 0, false};
	rec.map->ops->commit(rec.map, rec.data, reg[BPF_REG_2], discard);
	return 0;
}

int rqbpf_call_ringbuf_submit(struct rqbpf_run *r, uint64_t *reg)
{
	return ringbuf_commit(r, reg, false, "ringbuf_submit");
}

int rqbpf_call_ringbuf_discard(struct rqbpf_run *r, uint64_t *reg)
{
	return ringbuf_commit(r, reg, true, "ringbuf_discard");
}

/* bpf_ringbuf_output(map, data, size, flags): 0, -EINVAL (flags), or
 * -EAGAIN (no room), as the kernel's. */
int rqbpf_call_ringbuf_output(struct rqbpf_run *r, uint64_t *reg)
{
	struct rqbpf_map *m = ringbuf_arg(r, reg, "ringbuf_output");
	uint64_t size = reg[BPF_REG_3], flags = reg[BPF_REG_4];
	const void *data = NULL;
	void *rec;

	if (!m)
		return -EFAULT;
	if (size && !(data = rqbpf_mem(r, reg[BPF_REG_2], size, false)))
		return rqbpf_fault(r, "ringbuf_output: data outside the program's memory");
	reg[BPF_REG_0] = (uint64_t)(int64_t)-EINVAL;
	if (flags & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return 0;
	reg[BPF_REG_0] = (uint64_t)(int64_t)-EAGAIN;
	rec = m->ops->reserve(m, size);
	if (!rec)
		return 0;
	if (size)
		memcpy(rec, data, size);
	m->ops->commit(m, rec, flags, false);
	reg[BPF_REG_0] = 0;
	return 0;
}

int rqbpf_call_ringbuf_query(struct rqbpf_run *r, uint64_t *reg)
{
	struct rqbpf_map *m = ringbuf_arg(r, reg, "ringbuf_query");

	if (!m)
		return -EFAULT;
	reg[BPF_REG_0] = m->ops->query(m, reg[BPF_REG_2]);
	return 0;
}

int rqbpf_call_ktime_get_ns(struct rqbpf_run *r, uint64_t *reg)
{
	(void)r;
	reg[BPF_REG_0] = rqu_now_ns();
	return 0;
}

int rqbpf_call_get_prandom_u32(struct rqbpf_run *r, uint64_t *reg)
{
	(void)r;
	reg[BPF_REG_0] = prandom();
	return 0;
}

int rqbpf_call_get_smp_processor_id(struct rqbpf_run *r, uint64_t *reg)
{
	(void)r;
	reg[BPF_REG_0] = (uint32_t)res_spin_thread_slot();
	return 0;
}

/*
 * The current task's ids, as the kernel's helpers give them (its tgid and
 * pid are this process's id and this thread's id; uid and gid are the
 * real ones), in the process's own PID and user namespaces where the
 * kernel's are the initial ones'. The ids are system calls: each thread
 * keeps its own, and a child of fork() clears the forking thread's copy
 * (the only thread it has).
 */
static _Thread_local uint64_t pid_tgid_cache;
static pthread_once_t pid_tgid_once = PTHREAD_ONCE_INIT;

static void pid_tgid_forget(void)
{
	pid_tgid_cache = 0;
}

static void pid_tgid_register(void)
{
	pthread_atfork(NULL, NULL, pid_tgid_forget);
}

int rqbpf_call_get_current_pid_tgid(struct rqbpf_run *r, uint64_t *reg)
{
	(void)r;
	if (!pid_tgid_cache) {
		pthread_once(&pid_tgid_once, pid_tgid_register);
		pid_tgid_cache = (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)gettid();
	}
	reg[BPF_REG_0] = pid_tgid_cache;
	return 0;
}

/* gid << 32 | uid, the real ids (the kernel's current_uid_gid()). */
int rqbpf_call_get_current_uid_gid(struct rqbpf_run *r, uint64_t *reg)
{
	(void)r;
	reg[BPF_REG_0] = (uint64_t)getgid() << 32 | getuid();
	return 0;
}

/* The thread's name (PR_GET_NAME: the kernel's task comm, 16 bytes with
 * its NUL) into R1's R2 bytes, cut and NUL-terminated, zeros after: the
 * kernel's strscpy_pad(); returns 0. */
int rqbpf_call_get_current_comm(struct rqbpf_run *r, uint64_t *reg)
{
	uint64_t size = reg[BPF_REG_2];
	char *buf = size ? rqbpf_mem(r, reg[BPF_REG_1], size, true) : NULL;
	char comm[17] = {0};

	if (!buf)
		return rqbpf_fault(r, "get_current_comm: R1 is not %llu writable bytes",
		                   (unsigned long long)size);
	prctl(PR_GET_NAME, comm);
	memset(buf, 0, size);
	memcpy(buf, comm, strnlen(comm, size - 1));
	reg[BPF_REG_0] = 0;
	return 0;
}

/*
 * bpf_copy_from_user(dst, size, user_ptr): R2 bytes of the host process's
 * memory at R3 into R1, read with process_vm_readv() on this process, which
 * fails (EFAULT) where a load would fault: the helper returns -EFAULT with
 * dst zeroed, as the kernel's does, and never faults. Also when the system
 * call itself is refused (seccomp, ENOSYS).
 */
int rqbpf_call_copy_from_user(struct rqbpf_run *r, uint64_t *reg)
{
	uint64_t size = reg[BPF_REG_2];
	void *dst = size ? rqbpf_mem(r, reg[BPF_REG_1], size, true) : NULL;
	struct iovec local, remote;

	if (size && !dst)
		return rqbpf_fault(r, "copy_from_user: R1 is not %llu writable bytes",
		                   (unsigned long long)size);
	reg[BPF_REG_0] = 0;
	if (!size)
		return 0;
	local = (struct iovec){dst, size};
	remote = (struct iovec){(void *)(uintptr_t)reg[BPF_REG_3], size};
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)size) {
		memset(dst, 0, size);
		reg[BPF_REG_0] = (uint64_t)(int64_t)-EFAULT;
	}
	return 0;
}

#ifndef BPF_F_PAD_ZEROS
#define BPF_F_PAD_ZEROS 1 /* <linux/bpf.h> of 6.12 on */
#endif

/* Bytes of this process's memory read ahead (process_vm_readv(): never a
 * fault), for user_strncpy(): [base, base + avail) of the string's offsets. */
struct user_window {
	uint64_t src, count, base, avail;
	uint8_t bytes[512];
};

/* Whether offsets [at, at + n) of the string are readable (refilling the
 * window from @p at when they lie past it). */
static bool user_readable(struct user_window *w, uint64_t at, uint64_t n)
{
	struct iovec local, remote;
	ssize_t got;

	if (at >= w->base && at + n <= w->base + w->avail)
		return true;
	w->base = at;
	local = (struct iovec){w->bytes,
	                       w->count - at < sizeof(w->bytes) ? w->count - at : sizeof(w->bytes)};
	remote = (struct iovec){(void *)(uintptr_t)(w->src + at), local.iov_len};
	got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	w->avail = got > 0 ? (uint64_t)got : 0;
	return n <= w->avail;
}

/*
 * The kernel's strncpy_from_user() (lib/strncpy_from_user.c) on this
 * process, byte for byte in what it writes: 8-byte words while 8 bytes
 * remain (the word holding the NUL written with the bytes after the NUL
 * zeroed), then bytes up to the NUL, falling back to bytes where a word is
 * not readable. Returns the string's length, @p count when no NUL came
 * within it, or -EFAULT where the string stopped being readable.
 */
static int64_t user_strncpy(char *dst, uint64_t src, uint64_t count)
{
	struct user_window w = {.src = src, .count = count};
	uint64_t res = 0;

	for (; count - res >= 8 && user_readable(&w, res, 8); res += 8) {
		const uint8_t *c = &w.bytes[res - w.base];
		const uint8_t *nul = memchr(c, 0, 8);

		if (nul) {
			memcpy(dst + res, c, (size_t)(nul - c));
			memset(dst + res + (nul - c), 0, 8 - (size_t)(nul - c));
			return (int64_t)res + (nul - c);
		}
		memcpy(dst + res, c, 8);
	}
	for (; res < count; res++) {
		if (!user_readable(&w, res, 1))
			return -EFAULT;
		dst[res] = (char)w.bytes[res - w.base];
		if (!dst[res])
			return (int64_t)res;
	}
	return (int64_t)count;
}

/*
 * bpf_copy_from_user_str(dst, size, user_ptr, flags), the kernel's kfunc:
 * at most size - 1 bytes of the NUL-terminated string at user_ptr, then a
 * NUL (the rest of dst zeroed with BPF_F_PAD_ZEROS); returns the bytes
 * written with the NUL, 0 for size 0, -EINVAL for other flags, -EFAULT
 * where the string is not readable (dst zeroed with BPF_F_PAD_ZEROS). Reads
 * with process_vm_readv(): never a fault.
 */
int rqbpf_call_copy_from_user_str(struct rqbpf_run *r, uint64_t *reg)
{
	uint32_t size = (uint32_t)reg[BPF_REG_2];
	uint64_t flags = reg[BPF_REG_4];
	char *dst = size ? rqbpf_mem(r, reg[BPF_REG_1], size, true) : NULL;
	int64_t n;

	if (size && !dst)
		return rqbpf_fault(r, "copy_from_user_str: R1 is not %u writable bytes", size);
	if (flags & ~(uint64_t)BPF_F_PAD_ZEROS) {
		reg[BPF_REG_0] = (uint64_t)(int64_t)-EINVAL;
		return 0;
	}
	reg[BPF_REG_0] = 0;
	if (!size)
		return 0;
	n = user_strncpy(dst, reg[BPF_REG_3], size - 1);
	if (n < 0) {
		if (flags & BPF_F_PAD_ZEROS)
			memset(dst, 0, size);
		reg[BPF_REG_0] = (uint64_t)n;
		return 0;
	}
	if (flags & BPF_F_PAD_ZEROS)
		memset(dst + n, 0, size - (uint64_t)n);
	else
		dst[n] = 0;
	reg[BPF_REG_0] = (uint64_t)(n + 1);
	return 0;
}

/* bpf_per_cpu_ptr and bpf_this_cpu_ptr take per-CPU kernel variables,
 * which no program run in userspace has: the verifier refuses every call;
 * an unverified run faults. */
int rqbpf_call_per_cpu_ptr(struct rqbpf_run *r, uint64_t *reg)
{
	(void)reg;
	return rqbpf_fault(r, "per_cpu_ptr: no per-CPU kernel variables in userspace");
}

int rqbpf_call_this_cpu_ptr(struct rqbpf_run *r, uint64_t *reg)
{
	(void)reg;
	return rqbpf_fault(r, "this_cpu_ptr: no per-CPU kernel variables in userspace");
}

/* Signal masks as the kernel's 64-bit set: bit (sig - 1) for signals 1..64. */
static uint64_t mask_bits(const sigset_t *set)
{
	uint64_t bits = 0;

	for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
		if (sigismember(set, sig) == 1)
			bits |= 1ull << (sig - 1);
	return bits;
}

static void restore_mask(uint64_t bits)
{
	sigset_t set;

	sigemptyset(&set);
	for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
		if (bits & (1ull << (sig - 1)))
			sigaddset(&set, sig);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
}

ALWAYS_INLINE rqspinlock_t *lock_arg(struct rqbpf_run *r, uint64_t v)
{
	if (v % _Alignof(rqspinlock_t))
		return NULL;
	return rqbpf_mem(r, v, sizeof(rqspinlock_t), true);
}

/* Block every signal (local_irq_save()); returns the mask before. */
static uint64_t block_signals(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	return mask_bits(&old);
}

/* Lock with all signals blocked; on success *old_bits is the mask before. */
static __attribute__((noinline)) int lock_irqsave(rqspinlock_t *lock, uint64_t *old_bits)
{
	uint64_t old = block_signals();
	int ret = res_spin_lock(lock);

	if (ret) {
		restore_mask(old);
		return ret;
	}
	*old_bits = old;
	return 0;
}

/* 0 when the run's record has room for one more lock or irq region. */
static __attribute__((noinline, cold)) int held_full(struct rqbpf_run *r)
{
	return rqbpf_fault(r, "more than %d locks and irq regions held", RQBPF_MAX_HELD);
}

ALWAYS_INLINE int held_room(struct rqbpf_run *r)
{
	return r->nheld < RQBPF_MAX_HELD ? 0 : held_full(r);
}

static const char *const kind_name[] = {
    [RQBPF_HELD_RES] = "bpf_res_spin_lock",
    [RQBPF_HELD_RES_IRQ] = "bpf_res_spin_lock_irqsave",
    [RQBPF_HELD_SPIN] = "bpf_spin_lock",
    [RQBPF_HELD_IRQ] = "bpf_local_irq_save",
};

/* The record of lock @p v that this run holds, taken as @p kind; else a
 * fault (-EFAULT): only a lock this run took (checked then) may be
 * released, and only by the unlock that matches how it was taken. */
/* The fault of a held_find() that found @p i (-1: none) for @p kind. */
static __attribute__((noinline, cold)) int held_not_found(struct rqbpf_run *r, int i,
                                                          const char *who)
{
	if (i < 0)
		return rqbpf_fault(r, "%s: R1 is not a lock this run holds", who);
	return rqbpf_fault(r, "%s: R1 was taken by %s", who, kind_name[r->held[i].kind]);
}

ALWAYS_INLINE int held_find(struct rqbpf_run *r, uint64_t v, enum rqbpf_held_kind kind,
                            const char *who)
{
	int i;

	for (i = r->nheld - 1;
	     i >= 0 && (r->held[i].kind == RQBPF_HELD_IRQ || (uintptr_t)r->held[i].lock != v); i--)
		;
	if (i < 0 || r->held[i].kind != kind)
		return held_not_found(r, i, who);
	return i;
}

/* Drop held[@p i] from the record, keeping the others in order. */
ALWAYS_INLINE void held_remove(struct rqbpf_run *r, int i)
{
	for (r->nheld--; i < r->nheld; i++)
		r->held[i] = r->held[i + 1];
}

/* Whether a record of this kind blocked signals (and keeps the mask before). */
static bool blocks_signals(enum rqbpf_held_kind kind)
{
	return kind == RQBPF_HELD_RES_IRQ || kind == RQBPF_HELD_IRQ;
}

/* Release held[@p i]; the caller restores the signal mask where one applies. */
ALWAYS_INLINE void held_release(struct rqbpf_run *r, int i)
{
	/* first: the record below is not the critical section's */
	res_spin_unlock(r->held[i].lock);
	held_remove(r, i);
}

/*
 * 0 when held[@p i], which blocked signals, is the newest record that did,
 * else a fault: masks are restored in reverse order of saving (the kernel's
 * verifier refuses an irq flag restored out of order). Restoring an older
 * one first would unblock signals inside a newer region, and that region's
 * restore would then leave them blocked after the run: the run faults
 * instead, and the release at its end restores every mask newest first.
 */
static int mask_order(struct rqbpf_run *r, int i, const char *who)
{
	for (int j = r->nheld - 1; j > i; j--)
		if (blocks_signals(r->held[j].kind))
			return rqbpf_fault(r, "%s: out of order, a newer %s region is open", who,
			                   kind_name[r->held[j].kind]);
	return 0;
}

ALWAYS_INLINE int kf_lock(struct rqbpf_run *r, uint64_t *reg, bool irq)
{
	rqspinlock_t *lock = lock_arg(r, reg[BPF_REG_1]);
	uint64_t *flags = NULL, bits = 0;
	int ret;

	if (!lock)
		return rqbpf_fault(r, "res_spin_lock: R1 is not a lock in the program's memory");
	if (irq && !(flags = rqbpf_mem(r, reg[BPF_REG_2], sizeof(*flags), true)))
		return rqbpf_fault(r, "res_spin_lock_irqsave: R2 is not 8 writable bytes");
	if (held_room(r))
		return -EFAULT;
	ret = irq ? lock_irqsave(lock, &bits) : res_spin_lock(lock);
	reg[BPF_REG_0] = (uint64_t)(int64_t)ret;
	if (ret)
		return 0;
	if (irq)
		memcpy(flags, &bits, sizeof(*flags));
	r->held[r->nheld++] =
	    (struct rqbpf_held){lock, irq ? RQBPF_HELD_RES_IRQ : RQBPF_HELD_RES, bits, 0};
	return 0;
}

ALWAYS_INLINE int kf_unlock(struct rqbpf_run *r, uint64_t *reg, bool irq)
{
	const uint64_t *flags = NULL;
	uint64_t bits = 0;
	int i;

	if (irq && !(flags = rqbpf_mem(r, reg[BPF_REG_2], sizeof(*flags), false)))
		return rqbpf_fault(r, "res_spin_unlock_irqrestore: R2 is not 8 readable bytes");
	i = held_find(r, reg[BPF_REG_1], irq ? RQBPF_HELD_RES_IRQ : RQBPF_HELD_RES,
	              irq ? "res_spin_unlock_irqrestore" : "res_spin_unlock");
	if (i < 0)
		return i;
	if (irq && mask_order(r, i, "res_spin_unlock_irqrestore"))
		return -EFAULT;
	/* The mask comes from the run's record, never from the flag's bytes,
	 * which an unverified program may have changed: signals must not stay
	 * blocked after the run. A changed flag faults (the lock is released
	 * with the run's other locks). */
	if (irq) {
		memcpy(&bits, flags, sizeof(bits));
		if (bits != r->held[i].sigmask)
			return rqbpf_fault(r,
			                   "res_spin_unlock_irqrestore: the flag (%#" PRIx64
			                   ") is not what bpf_res_spin_lock_irqsave saved",
			                   bits);
	}
	held_release(r, i);
	if (irq)
		restore_mask(bits);
	return 0;
}

/* The fault of a bpf_spin_lock that res_spin_lock() refused with @p ret. */
static __attribute__((noinline, cold)) int spin_lock_failed(struct rqbpf_run *r, int ret)
{
	return rqbpf_fault(r, "spin_lock: not acquired (%s)",
	                   ret == -EDEADLK ? "-EDEADLK: a deadlock"
	                                   : "-ETIMEDOUT: the owner did not release it");
}

/*
 * bpf_spin_lock(lock): the kernel's is local_irq_save() and a plain spin
 * lock that cannot fail. Here it is the same word driven by res_spin_lock()
 * (the map's BPF_F_LOCK copies take that lock on that word too, maps.c),
 * with no signal blocked: blocking and restoring the mask would cost two
 * system calls per lock. What blocking would prevent is a signal handler of
 * the holding thread running a program that takes the same lock: that is
 * an AA, which res_spin_lock() detects, so the handler's run faults
 * (-EDEADLK) and the interrupted section goes on, unharmed (docs/BPF.md,
 * "bpf_spin_lock and signals"). A verified program cannot close a deadlock
 * with it otherwise (one bpf_spin_lock at a time, no calls while held), so a
 * failure means that nested run, an owner that did not release it within the
 * lock's timeout (stopped, or dead holding it), or an unverified program's
 * AA: the helper has no error to return, so the run faults instead of
 * hanging.
 */
int rqbpf_call_spin_lock(struct rqbpf_run *r, uint64_t *reg)
{
	rqspinlock_t *lock = lock_arg(r, reg[BPF_REG_1]);
	int ret;

	if (!lock)
		return rqbpf_fault(r, "spin_lock: R1 is not a lock in the program's memory");
	if (held_room(r))
		return -EFAULT;
	ret = res_spin_lock(lock);
	if (ret)
		return spin_lock_failed(r, ret);
	r->held[r->nheld++] = (struct rqbpf_held){lock, RQBPF_HELD_SPIN, 0, 0};
	reg[BPF_REG_0] = 0;
	return 0;
}

/* bpf_spin_unlock(lock): the lock this run's bpf_spin_lock took. */
int rqbpf_call_spin_unlock(struct rqbpf_run *r, uint64_t *reg)
{
	int i = held_find(r, reg[BPF_REG_1], RQBPF_HELD_SPIN, "spin_unlock");

	if (i < 0)
		return i;
	held_release(r, i);
	reg[BPF_REG_0] = 0;
	return 0;
}

/*
 * bpf_local_irq_save(flag): the kernel's local_irq_save() into an 8-byte
 * stack flag. Here it blocks every signal and keeps the previous mask in the
 * run's record, like bpf_spin_lock; the flag gets a token naming that record
 * (IRQ_TOKEN_TAG in the high half, the run's save count in the low half),
 * not the mask, so bpf_local_irq_restore of a flag this run's save did not
 * write, or of one already restored, faults instead of installing whatever
 * mask the flag's bytes would spell.
 */
#define IRQ_TOKEN_TAG (0x72716971ull << 32) /* "rqiq" */

int rqbpf_call_local_irq_save(struct rqbpf_run *r, uint64_t *reg)
{
	uint64_t *flag = rqbpf_mem(r, reg[BPF_REG_1], sizeof(*flag), true);
	uint64_t token;

	if (!flag)
		return rqbpf_fault(r, "local_irq_save: R1 is not 8 writable bytes");
	if (held_room(r))
		return -EFAULT;
	token = IRQ_TOKEN_TAG | ++r->irq_seq;
	r->held[r->nheld++] = (struct rqbpf_held){NULL, RQBPF_HELD_IRQ, block_signals(), token};
	memcpy(flag, &token, sizeof(token));
	return 0;
}

/* bpf_local_irq_restore(flag): the flag must hold the token of an open
 * region of this run, the newest one that blocked signals; its mask is
 * restored. */
int rqbpf_call_local_irq_restore(struct rqbpf_run *r, uint64_t *reg)
{
	const uint64_t *flag = rqbpf_mem(r, reg[BPF_REG_1], sizeof(*flag), false);
	uint64_t token, bits;
	int i;

	if (!flag)
		return rqbpf_fault(r, "local_irq_restore: R1 is not 8 readable bytes");
	memcpy(&token, flag, sizeof(token));
	for (i = r->nheld - 1;
	     i >= 0 && (r->held[i].kind != RQBPF_HELD_IRQ || r->held[i].token != token); i--)
		;
	if (i < 0)
		return rqbpf_fault(r,
		                   "local_irq_restore: the flag (0x%llx) is not from an open "
		                   "bpf_local_irq_save of this run",
		                   (unsigned long long)token);
	if (mask_order(r, i, "local_irq_restore"))
		return -EFAULT;
	bits = r->held[i].sigmask;
	held_remove(r, i);
	restore_mask(bits);
	return 0;
}

int rqbpf_call_res_spin_lock(struct rqbpf_run *r, uint64_t *reg)
{
	return kf_lock(r, reg, false);
}

int rqbpf_call_res_spin_unlock(struct rqbpf_run *r, uint64_t *reg)
{
	return kf_unlock(r, reg, false);
}

int rqbpf_call_res_spin_lock_irqsave(struct rqbpf_run *r, uint64_t *reg)
{
	return kf_lock(r, reg, true);
}

int rqbpf_call_res_spin_unlock_irqrestore(struct rqbpf_run *r, uint64_t *reg)
{
	return kf_unlock(r, reg, true);
}

/* The runtime's column of the table of calls (calls.h), row for row. */
#define CALL_FN(kind, id, name, ...) rqbpf_call_##name,
static const rqbpf_call_fn call_fns[] = {RQBPF_CALLS(CALL_FN)};
#undef CALL_FN

rqbpf_call_fn rqbpf_call_target(uint8_t src, int32_t id)
{
	size_t i;

	if (src != 0 && src != BPF_PSEUDO_KFUNC_CALL)
		return NULL;
	return rqbpf_call_find(src ? RQBPF_CALL_KFUNC : RQBPF_CALL_HELPER, id, &i) ? call_fns[i]
	                                                                           : NULL;
}

/* The fault of a run that ended with @p locks locks and @p irqs irq regions
 * still open, all now released. */
static void exit_open_msg(struct rqbpf_run *r, int locks, int irqs)
{
	char l[32] = "", q[32] = "";

	if (locks)
		snprintf(l, sizeof(l), "%d lock%s held", locks, locks > 1 ? "s" : "");
	if (irqs)
		snprintf(q, sizeof(q), "%d irq region%s open", irqs, irqs > 1 ? "s" : "");
	snprintf(r->msg, r->msg_size, "exit with %s%s%s (released)", l,
	         locks && irqs ? " and " : "", q);
}

/* Records still reserved at the end (of a run that faulted, or that the
 * verifier did not check), newest first: discarded, so that the consumer
 * does not wait for them forever. Returns how many. */
static int discard_records(struct rqbpf_run *r)
{
	int n = r->nrec;

	while (r->nrec > 0) {
		const struct rqbpf_record *rec = &r->rec[--r->nrec];

		rec->map->ops->commit(rec->map, rec->data, 0, true);
	}
	if (n && !r->msg[0])
		snprintf(r->msg, r->msg_size,
		         "exit with %d ring buffer record%s reserved (discarded)", n,
		         n > 1 ? "s" : "");
	return n;
}

/* Newest first, so the mask left is the one before the run's first save. */
int rqbpf_release_all(struct rqbpf_run *r)
{
	int locks = 0, irqs = 0, recs = discard_records(r);

	if (r->rcu) {
		rqmap_read_unlock();
		r->rcu = false;
	}
	while (r->nheld > 0) {
		const struct rqbpf_held *h = &r->held[--r->nheld];

		if (h->kind == RQBPF_HELD_IRQ) {
			irqs++;
		} else {
			locks++;
			res_spin_unlock(h->lock);
		}
		if (blocks_signals(h->kind))
			restore_mask(h->sigmask);
	}
	if (!locks && !irqs)
		return recs ? -EFAULT : 0;
	if (!r->msg[0] || recs)
		exit_open_msg(r, locks, irqs);
	return -EFAULT;
}
