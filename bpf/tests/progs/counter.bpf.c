// SPDX-License-Identifier: MIT
/* The benchmark's programs: lock a value, increment its counter, unlock;
 * with bpf_res_spin_lock (count) and with bpf_spin_lock (spin_count). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_res_spin_lock.h"

/* A one-element array @name of struct @val: a lock of type @lock_t, then
 * the counter. */
#define COUNTER_MAP(name, val, lock_t)                                                             \
	struct val {                                                                               \
		lock_t lock;                                                                       \
		__u32 pad;                                                                         \
		__u64 hits;                                                                        \
	};                                                                                         \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, 1);                                                            \
		__type(key, __u32);                                                                \
		__type(value, struct val);                                                         \
	} name SEC(".maps")

COUNTER_MAP(counters, counter, struct bpf_res_spin_lock);
COUNTER_MAP(spin_counters, spin_counter, struct bpf_spin_lock);

SEC("tc")
int count(struct __sk_buff *ctx)
{
	__u32 key = 0;
	struct counter *c = bpf_map_lookup_elem(&counters, &key);
	int err;

	if (!c)
		return 1;
	err = bpf_res_spin_lock(&c->lock);
	if (err)
		return err;
	c->hits++;
	bpf_res_spin_unlock(&c->lock);
	return 0;
}

SEC("tc")
int spin_count(struct __sk_buff *ctx)
{
	__u32 key = 0;
	struct spin_counter *c = bpf_map_lookup_elem(&spin_counters, &key);

	if (!c)
		return 1;
	bpf_spin_lock(&c->lock);
	c->hits++;
	bpf_spin_unlock(&c->lock);
	return 0;
}

/* ALU work only, for the interpreter's cost per instruction. */
SEC("tc")
int alu_loop(struct __sk_buff *ctx)
{
	__u64 h = ctx->cb[0] + 1;

	for (int i = 0; i < 1000; i++)
		h = (h ^ (h >> 7)) * 0x100000001b3ull + i;
	return (int)(h ^ (h >> 32));
}

char _license[] SEC("license") = "GPL";
