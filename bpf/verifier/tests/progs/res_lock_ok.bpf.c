/* SPDX-License-Identifier: MIT */
/*
 * res_lock_ok: programs the verifier (and the kernel) must accept.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, int);
	__type(value, struct elem);
} locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct counter);
} counters SEC(".maps");

struct bpf_res_spin_lock lock_a HIDDEN SEC(".data.A");
struct bpf_res_spin_lock lock_b HIDDEN SEC(".data.B");

int deadlocks;

/* Two lookups of one key are two objects: the second lock is AA only at
 * run time, where it fails with -EDEADLK. */
SEC("tc")
int same_elem_twice(struct __sk_buff *ctx)
{
	int key = 0;
	struct elem *first = bpf_map_lookup_elem(&locks, &key);
	struct elem *second = bpf_map_lookup_elem(&locks, &key);
	int err;

	if (!first || !second)
		return -1;
	err = bpf_res_spin_lock(&first->lock);
	if (err)
		return err;
	if (bpf_res_spin_lock(&second->lock) == 0) {
		bpf_res_spin_unlock(&second->lock);
		bpf_res_spin_unlock(&first->lock);
		return -1;
	}
	bpf_res_spin_unlock(&first->lock);
	return 0;
}

SEC("tc")
int counter_add(struct __sk_buff *ctx)
{
	int key = ctx->len & 3;
	struct counter *c = bpf_map_lookup_elem(&counters, &key);

	if (!c)
		return 0;
	if (bpf_res_spin_lock(&c->lock))
		return 1;
	c->hits++;
	c->total += ctx->len;
	bpf_res_spin_unlock(&c->lock);
	return 0;
}

SEC("tc")
int order_ab(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&lock_a))
		return 0;
	if (bpf_res_spin_lock(&lock_b) == 0)
		bpf_res_spin_unlock(&lock_b);
	bpf_res_spin_unlock(&lock_a);
	return 0;
}

SEC("tc")
int order_ba(struct __sk_buff *ctx)
{
	int ret = 0;

	if (bpf_res_spin_lock(&lock_b))
		return 0;
	if (bpf_res_spin_lock(&lock_a) == 0)
		bpf_res_spin_unlock(&lock_a);
	else
		ret = deadlocks = -35;
	bpf_res_spin_unlock(&lock_b);
	return ret;
}

/* Out-of-order locking across maps is fine while unlocks are in order. */
SEC("tc")
int lock_two_maps(struct __sk_buff *ctx)
{
	int key = 1;
	struct elem *e = bpf_map_lookup_elem(&locks, &key);

	if (!e)
		return 0;
	if (bpf_res_spin_lock(&lock_b))
		return 0;
	if (bpf_res_spin_lock(&e->lock)) {
		bpf_res_spin_unlock(&lock_b);
		return 0;
	}
	bpf_res_spin_unlock(&e->lock);
	bpf_res_spin_unlock(&lock_b);
	return 0;
}

SEC("tc")
int lock_two_maps_irq(struct __sk_buff *ctx)
{
	unsigned long outer, inner;
	int key = 2;
	struct elem *e = bpf_map_lookup_elem(&locks, &key);

	if (!e)
		return 0;
	if (bpf_res_spin_lock_irqsave(&lock_b, &outer))
		return 0;
	if (bpf_res_spin_lock_irqsave(&e->lock, &inner)) {
		bpf_res_spin_unlock_irqrestore(&lock_b, &outer);
		return 0;
	}
	bpf_res_spin_unlock_irqrestore(&e->lock, &inner);
	bpf_res_spin_unlock_irqrestore(&lock_b, &outer);
	return 0;
}

#define NR_HELD 34
#define NR_PTRS 48

/* Hold 34 locks (more than the runtime's held-lock table), then take the
 * first one again: only the timeout catches that AA. The verifier walks
 * both loops with a known counter. */
SEC("tc")
int held_lock_max(struct __sk_buff *ctx)
{
	struct bpf_res_spin_lock *held[NR_PTRS] = {};
	__u64 start, elapsed;
	int i, ret = 0;

	for (i = 0; i < NR_PTRS; i++) {
		int key = i < NR_HELD ? i : i - 2;
		struct elem *e = bpf_map_lookup_elem(&locks, &key);

		if (!e)
			return 1;
		held[i] = &e->lock;
	}
	start = bpf_ktime_get_ns();
	for (i = 0; i < NR_HELD; i++)
		if (bpf_res_spin_lock(held[i]))
			break;
	if (i == NR_HELD && bpf_res_spin_lock(held[NR_HELD]) == 0) {
		bpf_res_spin_unlock(held[NR_HELD]);
		ret = 1;
	}
	while (--i >= 0)
		bpf_res_spin_unlock(held[i]);
	elapsed = bpf_ktime_get_ns() - start;
	return ret ? ret : (elapsed > 250000000ULL ? 0 : 1);
}

static __attribute__((noinline)) int bump(struct counter *c)
{
	c->hits++;
	return 0;
}

/* A static subprogram may run under a lock. */
SEC("tc")
int subprog_under_lock(struct __sk_buff *ctx)
{
	int key = 0, ret;
	struct counter *c = bpf_map_lookup_elem(&counters, &key);

	if (!c)
		return 0;
	if (bpf_res_spin_lock(&c->lock))
		return 0;
	ret = bump(c);
	bpf_res_spin_unlock(&c->lock);
	return ret;
}

SEC("tc")
int bounded_sum(struct __sk_buff *ctx)
{
	__u32 sum = 0;

	for (int i = 0; i < 200; i++)
		sum += i * ctx->len;
	return sum & 1;
}

/* An array lookup of a constant in-range key cannot fail (kernel 6.14 on):
 * no null check is needed. */
SEC("tc")
int lock_const_key(struct __sk_buff *ctx)
{
	int key = 0;
	struct elem *e = bpf_map_lookup_elem(&locks, &key);

	if (bpf_res_spin_lock(&e->lock))
		return 0;
	bpf_res_spin_unlock(&e->lock);
	return 0;
}

char _license[] SEC("license") = "GPL";
