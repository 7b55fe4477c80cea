// SPDX-License-Identifier: MIT
/* Per-CPU maps (a CPU is a thread slot in rqbpf): the helpers' results on a
 * PERCPU_ARRAY and a PERCPU_HASH, packed into the context's cb[]
 * (bpf_kernel.c compares them and the return values with the kernel's), and counters that each
 * thread bumps in its own value (bpf_percpu.c runs them on 8 threads and
 * reads every CPU's value through the map API). */
#include <linux/errno.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* 12 bytes: each CPU's value takes 16 in the map API's buffers. */
struct counter {
	__u64 hits;
	__u32 last;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct counter);
} pcpu_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, struct counter);
} pcpu_hash SEC(".maps");

/* A call's result in 5 bits: its errno (E2BIG 7, ENOENT 2, EINVAL 22,
 * EEXIST 17), 0 for success; 6 of them packed per word, no branches (so
 * that the verifier's paths stay few). */
#define ERR(r)      ((__u32)(-(r)) & 31)
#define PUT(acc, r) ((acc) = (acc) << 5 | ERR(r))

/* The array: a constant index's lookup cannot fail (no NULL check), an
 * update writes this CPU's value, then the refused calls. cb[0]: 0 (BPF_ANY),
 * EEXIST (BPF_NOEXIST), E2BIG (index 4), EINVAL (flags 4), EINVAL (delete);
 * cb[1]: the values read back, and whether index 9's lookup is NULL. */
SEC("tc")
int pa_ops(struct __sk_buff *skb)
{
	struct counter c = {.hits = 7, .last = 3}, *v;
	__u32 k = 0, far = 4, bad = 9, acc = 0, seen;

	v = bpf_map_lookup_elem(&pcpu_array, &k);
	v->hits = 5;
	seen = v->hits == 5;
	PUT(acc, bpf_map_update_elem(&pcpu_array, &k, &c, BPF_ANY));
	seen = seen << 1 | (v->hits == 7);
	seen = seen << 1 | (v->last == 3);
	PUT(acc, bpf_map_update_elem(&pcpu_array, &k, &c, BPF_NOEXIST));
	PUT(acc, bpf_map_update_elem(&pcpu_array, &far, &c, BPF_ANY));
	PUT(acc, bpf_map_update_elem(&pcpu_array, &k, &c, 4));
	PUT(acc, bpf_map_delete_elem(&pcpu_array, &k));
	seen = seen << 1 | !bpf_map_lookup_elem(&pcpu_array, &bad);
	skb->cb[0] = acc;
	skb->cb[1] = seen;
	return 0;
}

/* The hash: insert, the refused insert and update, update in place,
 * delete twice, bad flags; cb[1]: the values read back. */
SEC("tc")
int ph_ops(struct __sk_buff *skb)
{
	struct counter c = {.hits = 2}, *v;
	__u32 k = 1, absent = 2, acc = 0, seen;

	PUT(acc, bpf_map_update_elem(&pcpu_hash, &k, &c, BPF_NOEXIST));
	PUT(acc, bpf_map_update_elem(&pcpu_hash, &k, &c, BPF_NOEXIST));
	v = bpf_map_lookup_elem(&pcpu_hash, &k);
	seen = v && v->hits == 2;
	PUT(acc, bpf_map_update_elem(&pcpu_hash, &absent, &c, BPF_EXIST));
	c.hits = 9;
	PUT(acc, bpf_map_update_elem(&pcpu_hash, &k, &c, BPF_EXIST));
	v = bpf_map_lookup_elem(&pcpu_hash, &k);
	seen = seen << 1 | (v && v->hits == 9);
	PUT(acc, bpf_map_delete_elem(&pcpu_hash, &k));
	PUT(acc, bpf_map_delete_elem(&pcpu_hash, &k));
	skb->cb[0] = acc;
	acc = 0;
	PUT(acc, bpf_map_update_elem(&pcpu_hash, &k, &c, 4));
	PUT(acc, bpf_map_update_elem(&pcpu_hash, &k, &c, BPF_ANY));
	PUT(acc, bpf_map_update_elem(&pcpu_hash, &k, &c, BPF_ANY));
	skb->cb[1] = seen;
	skb->cb[2] = acc;
	return 0;
}

/* Bumps this CPU's counter at index cb[0] % 4 (plain increments: only this
 * CPU writes it); returns the count. */
SEC("tc")
int pa_count(struct __sk_buff *skb)
{
	__u32 k = skb->cb[0] % 4;
	struct counter *v = bpf_map_lookup_elem(&pcpu_array, &k);

	if (!v)
		return -1;
	v->hits++;
	v->last = skb->cb[1];
	return (int)v->hits;
}

/* As pa_count in the hash, key cb[0] % 4, inserting it (this CPU's value
 * 1, the others 0) when absent; returns the count or the insert's error. */
SEC("tc")
int ph_count(struct __sk_buff *skb)
{
	__u32 k = skb->cb[0] % 4;
	struct counter *v = bpf_map_lookup_elem(&pcpu_hash, &k), c = {.hits = 1};

	if (!v) {
		c.last = skb->cb[1];
		return bpf_map_update_elem(&pcpu_hash, &k, &c, BPF_NOEXIST) ?: 1;
	}
	v->hits++;
	v->last = skb->cb[1];
	return (int)v->hits;
}

/* This CPU's hits at index cb[0] % 4, as the map API wrote them. */
SEC("tc")
int pa_read(struct __sk_buff *skb)
{
	__u32 k = skb->cb[0] % 4;
	struct counter *v = bpf_map_lookup_elem(&pcpu_array, &k);

	return v ? (int)v->hits : -1;
}

char LICENSE[] SEC("license") = "GPL";
