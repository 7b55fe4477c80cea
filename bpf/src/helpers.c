/* SPDX-License-Identifier: MIT */
/* helpers.c: the BPF helpers rqbpf binds (map lookup/update/delete,
 * ktime_get_ns, get_prandom_u32, get_smp_processor_id, trace_printk), the
 * four res_spin kfuncs on rqspinlock, and the per-run record of held locks
 * that lets a run that ends or faults while holding locks release them. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "run.h"

static const struct {
	const char *name;
	int id;
} kfuncs[] = {
    {"bpf_res_spin_lock", RQBPF_KF_RES_SPIN_LOCK},
    {"bpf_res_spin_unlock", RQBPF_KF_RES_SPIN_UNLOCK},
    {"bpf_res_spin_lock_irqsave", RQBPF_KF_RES_SPIN_LOCK_IRQSAVE},
    {"bpf_res_spin_unlock_irqrestore", RQBPF_KF_RES_SPIN_UNLOCK_IRQRESTORE},
};

int rqbpf_kfunc_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		if (!strcmp(kfuncs[i].name, name))
			return kfuncs[i].id;
	return 0;
}

bool rqbpf_helper_supported(int32_t id)
{
	switch (id) {
	case BPF_FUNC_map_lookup_elem:
	case BPF_FUNC_map_update_elem:
	case BPF_FUNC_map_delete_elem:
	case BPF_FUNC_ktime_get_ns:
	case BPF_FUNC_trace_printk:
	case BPF_FUNC_get_prandom_u32:
	case BPF_FUNC_get_smp_processor_id:
		return true;
	default:
		return false;
	}
}

static struct rqbpf_map *map_arg(struct rqbpf_run *r, uint64_t v)
{
	const struct rqbpf_object *obj = r->prog->obj;
	uintptr_t off = (uintptr_t)v - (uintptr_t)obj->maps;

	if (off >= obj->map_cnt * sizeof(*obj->maps) || off % sizeof(*obj->maps))
		return NULL;
	return &obj->maps[off / sizeof(*obj->maps)];
}

/* A hash value is valid until the run's read-side section ends; the run
 * remembers the last RQBPF_DYN_REGIONS of them for its bounds checks. */
static int map_lookup(struct rqbpf_run *r, struct rqbpf_map *m, const void *key, uint64_t *reg)
{
	uint8_t *p;

	if (m->hash && !r->rcu) {
		if (rqmap_read_lock())
			return rqbpf_fault(r, "map_lookup_elem: cannot open a read-side section");
		r->rcu = true;
	}
	p = rqbpf_map_elem(m, key);
	if (p && m->hash) {
		r->dyn[r->dyn_next] = (struct rqbpf_region){(uintptr_t)p, m->desc.value_size, true};
		r->dyn_next = (r->dyn_next + 1) % RQBPF_DYN_REGIONS;
		if (r->ndyn < RQBPF_DYN_REGIONS)
			r->ndyn++;
	}
	reg[BPF_REG_0] = (uintptr_t)p;
	return 0;
}

static int map_helper(struct rqbpf_run *r, int32_t id, uint64_t *reg)
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
		reg[BPF_REG_0] = (uint64_t)(int64_t)rqbpf_map_update(m, key, value, reg[BPF_REG_4]);
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

	if (!state) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		state = ((uint64_t)ts.tv_nsec << 20) ^ (uintptr_t)&state ^ 0x9e3779b97f4a7c15ull;
	}
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return (uint32_t)((state * 0x2545f4914f6cdd1dull) >> 32);
}

static uint64_t ktime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One conversion of trace_printk's format: %[l|ll][diuxXc], %p, %%. */
static int format_one(char *out, size_t room, const char **fmt, uint64_t arg, bool *used)
{
	const char *f = *fmt + 1;
	int longs = 0, n;

	*used = true;
	while (*f == 'l' && longs < 2) {
		longs++;
		f++;
	}
	switch (*f) {
	case 'd':
	case 'i':
		n = snprintf(out, room, "%lld",
		             longs ? (long long)arg : (long long)(int32_t)(uint32_t)arg);
		break;
	case 'u':
		n = snprintf(out, room, "%llu", longs ? (unsigned long long)arg : (uint32_t)arg);
		break;
	case 'x':
		n = snprintf(out, room, "%llx", longs ? (unsigned long long)arg : (uint32_t)arg);
		break;
	case 'X':
		n = snprintf(out, room, "%llX", longs ? (unsigned long long)arg : (uint32_t)arg);
		break;
	case 'p':
		n = snprintf(out, room, "0x%llx", (unsigned long long)arg);
		break;
	case 'c':
		n = snprintf(out, room, "%c", (char)arg);
		break;
	case '%':
		*used = false;
		n = snprintf(out, room, "%%");
		break;
	default:
		return -EINVAL;
	}
	*fmt = f;
	return n;
}

static int trace_printk(struct rqbpf_run *r, uint64_t *reg)
{
	uint64_t size = reg[BPF_REG_2];
	const char *fmt = size && size <= 1024 ? rqbpf_mem(r, reg[BPF_REG_1], size, false) : NULL;
	char out[1024];
	size_t len = 0;
	int nargs = 0;

	if (!fmt || !memchr(fmt, 0, size))
		return rqbpf_fault(
		    r, "trace_printk: format outside the program's memory or not a string");
	for (const char *f = fmt; *f && len < sizeof(out) - 1; f++) {
		bool used;
		int n;

		if (*f != '%') {
			out[len++] = *f;
			continue;
		}
		n = format_one(out + len, sizeof(out) - len, &f,
		               nargs < 3 ? reg[BPF_REG_3 + nargs] : 0, &used);
		if (n < 0 || (used && ++nargs > 3)) {
			reg[BPF_REG_0] = (uint64_t)(int64_t)-EINVAL;
			return 0;
		}
		len += (size_t)n < sizeof(out) - len ? (size_t)n : sizeof(out) - 1 - len;
	}
	out[len] = 0;
	fprintf(stderr, "%s", out);
	reg[BPF_REG_0] = len;
	return 0;
}

int rqbpf_call_helper(struct rqbpf_run *r, int32_t id, uint64_t *reg)
{
	switch (id) {
	case BPF_FUNC_map_lookup_elem:
	case BPF_FUNC_map_update_elem:
	case BPF_FUNC_map_delete_elem:
		return map_helper(r, id, reg);
	case BPF_FUNC_ktime_get_ns:
		reg[BPF_REG_0] = ktime_ns();
		return 0;
	case BPF_FUNC_get_prandom_u32:
		reg[BPF_REG_0] = prandom();
		return 0;
	case BPF_FUNC_get_smp_processor_id:
		reg[BPF_REG_0] = (uint32_t)res_spin_thread_slot();
		return 0;
	case BPF_FUNC_trace_printk:
		return trace_printk(r, reg);
	default:
		return rqbpf_fault(r, "unknown helper %d", id);
	}
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

static rqspinlock_t *lock_arg(struct rqbpf_run *r, uint64_t v)
{
	if (v % _Alignof(rqspinlock_t))
		return NULL;
	return rqbpf_mem(r, v, sizeof(rqspinlock_t), true);
}

static int kf_lock(struct rqbpf_run *r, uint64_t *reg, bool irq)
{
	rqspinlock_t *lock = lock_arg(r, reg[BPF_REG_1]);
	uint64_t *flags = NULL;
	sigset_t all, old;
	int ret;

	if (!lock)
		return rqbpf_fault(r, "res_spin_lock: R1 is not a lock in the program's memory");
	if (irq && !(flags = rqbpf_mem(r, reg[BPF_REG_2], sizeof(*flags), true)))
		return rqbpf_fault(r, "res_spin_lock_irqsave: R2 is not 8 writable bytes");
	if (r->nheld == RQBPF_MAX_HELD)
		return rqbpf_fault(r, "more than %d locks held", RQBPF_MAX_HELD);
	if (irq) {
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
	}
	ret = res_spin_lock(lock);
	if (ret) {
		if (irq)
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		reg[BPF_REG_0] = (uint64_t)(int64_t)ret;
		return 0;
	}
	r->held[r->nheld] = (struct rqbpf_held){lock, irq, irq ? mask_bits(&old) : 0};
	if (irq)
		memcpy(flags, &r->held[r->nheld].sigmask, sizeof(*flags));
	r->nheld++;
	reg[BPF_REG_0] = 0;
	return 0;
}

static int kf_unlock(struct rqbpf_run *r, uint64_t *reg, bool irq)
{
	rqspinlock_t *lock = lock_arg(r, reg[BPF_REG_1]);
	const uint64_t *flags = NULL;
	uint64_t bits = 0;
	int i;

	if (irq && !(flags = rqbpf_mem(r, reg[BPF_REG_2], sizeof(*flags), false)))
		return rqbpf_fault(r, "res_spin_unlock_irqrestore: R2 is not 8 readable bytes");
	for (i = r->nheld - 1; i >= 0 && r->held[i].lock != lock; i--)
		;
	if (!lock || i < 0)
		return rqbpf_fault(r, "res_spin_unlock: R1 is not a lock this run holds");
	if (irq)
		memcpy(&bits, flags, sizeof(bits));
	memmove(&r->held[i], &r->held[i + 1], (size_t)(r->nheld - i - 1) * sizeof(r->held[0]));
	r->nheld--;
	res_spin_unlock(lock);
	if (irq)
		restore_mask(bits);
	return 0;
}

int rqbpf_call_kfunc(struct rqbpf_run *r, int32_t id, uint64_t *reg)
{
	switch (id) {
	case RQBPF_KF_RES_SPIN_LOCK:
		return kf_lock(r, reg, false);
	case RQBPF_KF_RES_SPIN_UNLOCK:
		return kf_unlock(r, reg, false);
	case RQBPF_KF_RES_SPIN_LOCK_IRQSAVE:
		return kf_lock(r, reg, true);
	case RQBPF_KF_RES_SPIN_UNLOCK_IRQRESTORE:
		return kf_unlock(r, reg, true);
	default:
		return rqbpf_fault(r, "unknown kfunc %d", id);
	}
}

int rqbpf_release_all(struct rqbpf_run *r)
{
	int n = r->nheld;

	if (r->rcu) {
		rqmap_read_unlock();
		r->rcu = false;
	}
	while (r->nheld > 0) {
		const struct rqbpf_held *h = &r->held[--r->nheld];

		res_spin_unlock(h->lock);
		if (h->irq)
			restore_mask(h->sigmask);
	}
	if (!n)
		return 0;
	if (!r->msg[0])
		snprintf(r->msg, r->msg_size, "exit with %d lock%s held (released)", n,
		         n > 1 ? "s" : "");
	return -EFAULT;
}
