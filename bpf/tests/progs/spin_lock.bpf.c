// SPDX-License-Identifier: MIT
/* The bpf_spin_lock helpers: a counter under the lock of an array value, of
 * a hash value and of a global, and a long critical section that signal
 * handlers interrupt (their spin_count on the same lock is an AA: it
 * faults with -EDEADLK). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct sval {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 hits;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sval);
} spins SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct sval);
} hspins SEC(".maps");

struct bpf_spin_lock glock SEC(".data.G");
__u64 gcount SEC(".data.G");

static __u64 bump(struct sval *v, int n)
{
	__u64 hits;

	bpf_spin_lock(&v->lock);
	for (int i = 0; i < n; i++)
		*(volatile __u64 *)&v->hits += 1;
	hits = v->hits;
	bpf_spin_unlock(&v->lock);
	return hits;
}

/* Increments the array value's counter; returns the new count. */
SEC("tc")
int spin_count(struct __sk_buff *ctx)
{
	__u32 key = 0;
	struct sval *v = bpf_map_lookup_elem(&spins, &key);

	return v ? (int)bump(v, 1) : -1;
}

/* 500 increments in one critical section; returns the new count. */
SEC("tc")
int spin_hold_long(struct __sk_buff *ctx)
{
	__u32 key = 0;
	struct sval *v = bpf_map_lookup_elem(&spins, &key);

	return v ? (int)bump(v, 500) : -1;
}

/* Increments key cb[0] % 16 of the hash map; returns the new count. */
SEC("tc")
int spin_hash_count(struct __sk_buff *ctx)
{
	__u32 key = ctx->cb[0] & 15;
	struct sval zero = {}, *v = bpf_map_lookup_elem(&hspins, &key);

	if (!v) {
		bpf_map_update_elem(&hspins, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&hspins, &key);
	}
	return v ? (int)bump(v, 1) : -1;
}

/* Increments the global counter under the global lock; returns it. */
SEC("tc")
int spin_global(struct __sk_buff *ctx)
{
	__u64 n;

	bpf_spin_lock(&glock);
	n = ++gcount;
	bpf_spin_unlock(&glock);
	return (int)n;
}

char _license[] SEC("license") = "GPL";
