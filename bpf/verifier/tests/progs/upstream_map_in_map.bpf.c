/* SPDX-License-Identifier: GPL-2.0 */
/*
 * upstream_map_in_map: the cases of Linux's test_spin_lock_fail.c that
 * need a map of maps or bpf_this_cpu_ptr, which rqbpf lacked, written anew
 * (programs mim_*, each naming its upstream case), and rqbpf's own cases on
 * maps of maps: the inner map pointer's NULL check, the helpers an outer
 * map takes, a hash of maps. Adapted from repository torvalds/linux,
 * tools/testing/selftests/bpf/progs/test_spin_lock_fail.c, commit
 * 5fc5768c7ca92895ccd1de94dc521e5a55ae7896 (not the cases that need
 * bpf_obj_new or callbacks). GPL-2.0, as that file; only
 * the tests build it. Verdicts in expect.txt, the kernel's (verifier_kernel).
 */
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
} first SEC(".maps"), second SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, int);
	__array(values, struct inner_array);
} outer SEC(".maps") = {
    .values = {[0] = &first, [1] = &second},
};

struct inner_hash {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct locked);
} hinner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, int);
	__array(values, struct inner_hash);
} houter SEC(".maps") = {
    .values = {[1] = &hinner},
};

static struct bpf_spin_lock glock SEC(".data.G");

/* The value at key 0 of the inner map at @slot of outer, or NULL. */
static __always_inline struct locked *inner_value(int slot)
{
	int zero = 0;
	void *map = bpf_map_lookup_elem(&outer, &slot);

	return map ? bpf_map_lookup_elem(map, &zero) : NULL;
}

/* Upstream lock_id_mismatch_global_innermapval: a global's lock, then the
 * inner map value's unlock. */
SEC("?tc")
int mim_global_innermapval(struct __sk_buff *ctx)
{
	struct locked *iv = inner_value(0);

	if (!iv)
		return 0;
	bpf_spin_lock(&glock);
	bpf_spin_unlock(&iv->lock);
	return 0;
}

/* Upstream lock_id_mismatch_innermapval_global: the other way round. */
SEC("?tc")
int mim_innermapval_global(struct __sk_buff *ctx)
{
	struct locked *iv = inner_value(0);

	if (!iv)
		return 0;
	bpf_spin_lock(&iv->lock);
	bpf_spin_unlock(&glock);
	return 0;
}

/* Upstream lock_id_mismatch_mapval_innermapval: an outer-level map's value
 * (the inner map itself, looked up directly) against an inner value. */
SEC("?tc")
int mim_mapval_innermapval(struct __sk_buff *ctx)
{
	struct locked *iv = inner_value(0), *v;
	int zero = 0;

	if (!iv)
		return 0;
	v = bpf_map_lookup_elem(&first, &zero);
	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	bpf_spin_unlock(&iv->lock);
	return 0;
}

/* Upstream lock_id_mismatch_innermapval_mapval. */
SEC("?tc")
int mim_innermapval_mapval(struct __sk_buff *ctx)
{
	struct locked *iv = inner_value(0), *v;
	int zero = 0;

	if (!iv)
		return 0;
	v = bpf_map_lookup_elem(&first, &zero);
	if (!v)
		return 0;
	bpf_spin_lock(&iv->lock);
	bpf_spin_unlock(&v->lock);
	return 0;
}

/* Upstream lock_id_mismatch_innermapval_innermapval1: two lookups in one
 * inner map are two values to the verifier. */
SEC("?tc")
int mim_innermapval_innermapval1(struct __sk_buff *ctx)
{
	int zero = 0;
	void *map = bpf_map_lookup_elem(&outer, &zero);
	struct locked *a, *b;

	if (!map)
		return 0;
	a = bpf_map_lookup_elem(map, &zero);
	if (!a)
		return 0;
	b = bpf_map_lookup_elem(map, &zero);
	if (!b)
		return 0;
	bpf_spin_lock(&a->lock);
	a->data = 42;
	bpf_spin_unlock(&b->lock);
	return 0;
}

/* Upstream lock_id_mismatch_innermapval_innermapval2: values of two outer
 * lookups. */
SEC("?tc")
int mim_innermapval_innermapval2(struct __sk_buff *ctx)
{
	struct locked *a = inner_value(0), *b;

	if (!a)
		return 0;
	b = inner_value(0);
	if (!b)
		return 0;
	bpf_spin_lock(&a->lock);
	a->data = 42;
	bpf_spin_unlock(&b->lock);
	return 0;
}

/* Upstream lock_id_global_zero: a global's lock is no per-CPU pointer. */
SEC("?tc")
int mim_this_cpu_global(struct __sk_buff *ctx)
{
	bpf_this_cpu_ptr(&glock);
	return 0;
}

/* Upstream lock_id_mapval_preserve: nor is a map value. */
SEC("?tc")
int mim_this_cpu_mapval(struct __sk_buff *ctx)
{
	int zero = 0;
	struct locked *v = bpf_map_lookup_elem(&first, &zero);

	if (!v)
		return 0;
	bpf_this_cpu_ptr(v);
	return 0;
}

/* Upstream lock_id_innermapval_preserve: nor an inner map's value. */
SEC("?tc")
int mim_this_cpu_innermapval(struct __sk_buff *ctx)
{
	struct locked *iv = inner_value(0);

	if (!iv)
		return 0;
	bpf_this_cpu_ptr(iv);
	return 0;
}

/* bpf_per_cpu_ptr of the stack (rqbpf's own). */
SEC("?tc")
int mim_per_cpu_stack(struct __sk_buff *ctx)
{
	int x = 0;

	return bpf_per_cpu_ptr(&x, 0) != 0;
}

/* An inner value's lock taken and released: accepted. */
SEC("?tc")
int mim_inner_count(struct __sk_buff *ctx)
{
	struct locked *iv = inner_value(ctx->cb[0] & 1);
	int n;

	if (!iv)
		return -1;
	bpf_spin_lock(&iv->lock);
	n = ++iv->data;
	bpf_spin_unlock(&iv->lock);
	return n;
}

/* A hash of maps, its inner hash updated through the inner map pointer. */
SEC("?tc")
int mim_hash_of_maps(struct __sk_buff *ctx)
{
	int slot = 1, key = ctx->cb[0] & 3;
	struct locked init = {.data = 1}, *v;
	void *map = bpf_map_lookup_elem(&houter, &slot);

	if (!map)
		return -1;
	v = bpf_map_lookup_elem(map, &key);
	if (!v)
		return bpf_map_update_elem(map, &key, &init, BPF_NOEXIST) ?: 1;
	bpf_spin_lock(&v->lock);
	key = ++v->data;
	bpf_spin_unlock(&v->lock);
	return key;
}

/* An outer map takes lookups only. */
SEC("?tc")
int mim_update_outer(struct __sk_buff *ctx)
{
	int slot = 0, fd = 0;

	return bpf_map_update_elem(&outer, &slot, &fd, BPF_ANY);
}

/* The inner map pointer before its NULL check. */
SEC("?tc")
int mim_no_null_check(struct __sk_buff *ctx)
{
	int zero = 0;
	void *map = bpf_map_lookup_elem(&outer, &zero);

	return bpf_map_lookup_elem(map, &zero) ? 1 : 0;
}

char _license[] SEC("license") = "GPL";
