// SPDX-License-Identifier: MIT
/* A hash map with a res lock in its value: counting per key under the lock,
 * AA on two lookups of one element, and a value read after its delete (it
 * stays valid until the run ends, as under the kernel's RCU). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_res_spin_lock.h"
#include "expect_aa.h"

#define EDEADLK 35

struct hval {
	struct bpf_res_spin_lock lock;
	__u32 pad;
	__u64 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct hval);
} table SEC(".maps");

static struct hval *get(__u32 key)
{
	struct hval zero = {}, *v = bpf_map_lookup_elem(&table, &key);

	if (v)
		return v;
	bpf_map_update_elem(&table, &key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&table, &key);
}

/* Increments key cb[0] % 64 under its lock; returns the new count. */
SEC("tc")
int hash_count(struct __sk_buff *ctx)
{
	struct hval *v = get(ctx->cb[0] & 63);
	__u64 n;

	if (!v)
		return -1;
	if (bpf_res_spin_lock(&v->lock))
		return -2;
	n = ++v->n;
	bpf_res_spin_unlock(&v->lock);
	return (int)n;
}

SEC("tc")
int hash_aa(struct __sk_buff *ctx)
{
	struct hval *a = get(7), *b = get(7);

	if (!a || !b)
		return -1;
	return expect_aa(&a->lock, &b->lock);
}

/* Deletes key cb[0] % 64 and returns its count, read after the delete. */
SEC("tc")
int hash_delete(struct __sk_buff *ctx)
{
	__u32 key = ctx->cb[0] & 63;
	struct hval *v = bpf_map_lookup_elem(&table, &key);

	if (!v)
		return -1;
	if (bpf_map_delete_elem(&table, &key))
		return -2;
	return (int)v->n;
}

#define MANY 40

/* Looks up key 36, then MANY other keys (writing each value), then writes
 * through the first pointer again: a pointer kept across 40 more lookups
 * stays accessible. Returns 6. */
SEC("tc")
int hash_many_lookups(struct __sk_buff *ctx)
{
	struct hval *first, *v;
	int i;

	first = get(36);
	if (!first)
		return -1;
	first->n = 5;
	for (i = 1; i <= MANY; i++) {
		v = get((36 + i) % 64);
		if (!v)
			return -2;
		v->n = i;
	}
	first->n += 1;
	return (int)first->n;
}

/* BPF_F_LOCK copies under a bpf_spin_lock only: with a bpf_res_spin_lock
 * in the value the update fails with -EINVAL (-22), as in the kernel. */
SEC("tc")
int hash_update_f_lock(struct __sk_buff *ctx)
{
	struct hval zero = {};
	__u32 key = 3;

	bpf_map_update_elem(&table, &key, &zero, BPF_ANY);
	return bpf_map_update_elem(&table, &key, &zero, BPF_F_LOCK);
}

char _license[] SEC("license") = "GPL";
