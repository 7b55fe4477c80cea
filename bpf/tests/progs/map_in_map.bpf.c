// SPDX-License-Identifier: MIT
/* Maps of maps: an array of maps (slot 0 set by the BTF `values`
 * initialiser, slot 1 empty) whose inner arrays hold a bpf_spin_lock, and a
 * hash of maps (key 1 set) whose inner hash a program fills. bpf_kernel.c
 * runs them in the kernel and in rqbpf, swaps inner maps through each
 * one's map API, and compares; bpf_map_in_map.c checks rqbpf's map API. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct locked {
	struct bpf_spin_lock lock;
	int data;
};

struct inner_array {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct locked);
} a0 SEC(".maps"), a1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, int);
	__array(values, struct inner_array);
} outer SEC(".maps") = {
    .values = {[0] = &a0},
};

struct inner_hash {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u64);
} h0 SEC(".maps"), h1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, int);
	__array(values, struct inner_hash);
} houter SEC(".maps") = {
    .values = {[1] = &h0},
};

/* The inner array at slot cb[0] & 1: its value's count, under its lock;
 * -1 for an empty slot. */
SEC("tc")
int aom_count(struct __sk_buff *skb)
{
	int slot = skb->cb[0] & 1, zero = 0, n;
	struct locked *v;
	void *inner = bpf_map_lookup_elem(&outer, &slot);

	if (!inner)
		return -1;
	v = bpf_map_lookup_elem(inner, &zero);
	if (!v)
		return -2;
	bpf_spin_lock(&v->lock);
	n = ++v->data;
	bpf_spin_unlock(&v->lock);
	return n;
}

/* The inner hash at key cb[0] & 1: key cb[1] & 7 counted (inserted at 1;
 * the insert's error once the inner hash is full); -1 for no inner map. */
SEC("tc")
int hom_count(struct __sk_buff *skb)
{
	int slot = skb->cb[0] & 1, key = skb->cb[1] & 7;
	__u64 one = 1, *v;
	void *inner = bpf_map_lookup_elem(&houter, &slot);

	if (!inner)
		return -1;
	v = bpf_map_lookup_elem(inner, &key);
	if (!v)
		return bpf_map_update_elem(inner, &key, &one, BPF_NOEXIST) ?: 1;
	return (int)__sync_add_and_fetch(v, 1);
}

char LICENSE[] SEC("license") = "GPL";
