/* SPDX-License-Identifier: MIT */
/*
 * loops.bpf.c: programs that loop through the kernel's loop constructs,
 * run by rqbpf and, as root, by the kernel (bpf_kernel.c compares their
 * results): open-coded iterators, may_goto, bpf_loop and
 * bpf_for_each_map_elem; and bpf_throw. Each result is a known number (in its comment).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf_res_spin_lock.h"

/* may_goto +@off, encoded by hand: clang 14's assembler has no mnemonic. */
#define MAY_GOTO(off) ".byte 0xe5, 0x00, " #off ", 0x00, 0x00, 0x00, 0x00, 0x00;"

struct counter {
	__u64 hits;
	struct bpf_res_spin_lock lock;
	__u32 pad;
	__u64 total;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct counter);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u64);
} vals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} hvals SEC(".maps");

/* 45 */
SEC("tc") int iter_sum(struct __sk_buff *ctx)
{
	int i, s = 0;

	bpf_for(i, 0, 10) s += i;
	return s;
}

/* 5 */
SEC("tc") int iter_repeat(struct __sk_buff *ctx)
{
	int n = 0;

	bpf_repeat(5) n++;
	return n;
}

/* 1000 * (-3 + ... + 2) + 100 * 0 + 10 * 2 + 1 = -2979 */
SEC("tc") int iter_ranges(struct __sk_buff *ctx)
{
	int i, neg = 0, empty = 0, edge = 0, lone = 0;

	bpf_for(i, -3, 3) neg += i;
	bpf_for(i, 7, 7) empty++;
	bpf_for(i, -2147483647 - 1, -2147483647 + 1) edge++;
	bpf_for(i, 2147483646, 2147483647) lone++;
	return 1000 * neg + 100 * empty + 10 * edge + lone;
}

/* new() refuses start > end (-EINVAL) and more than 1 << 23 values
 * (-E2BIG); next() then finds nothing: -22 * 1000 - 7 * 10 = -22070 */
SEC("tc") int iter_errors(struct __sk_buff *ctx)
{
	struct bpf_iter_num a, b;
	int ra = bpf_iter_num_new(&a, 5, 1), rb = bpf_iter_num_new(&b, 0, (1 << 23) + 1), n = 0;

	while (bpf_iter_num_next(&a))
		n++;
	while (bpf_iter_num_next(&b))
		n++;
	bpf_iter_num_destroy(&a);
	bpf_iter_num_destroy(&b);
	return ra * 1000 + rb * 10 + n;
}

/* 0+0+0+0+1+2+0+2+4 = 9 */
SEC("tc") int iter_nested(struct __sk_buff *ctx)
{
	int i, j, s = 0;

	bpf_for(i, 0, 3)
	{
		bpf_for(j, 0, 3) s += i * j;
	}
	return s;
}

/* 2; counters[1].total += 0+1+2+3 per run */
SEC("tc") int iter_under_lock(struct __sk_buff *ctx)
{
	struct counter *v;
	int key = 1, i;

	v = bpf_map_lookup_elem(&counters, &key);
	if (!v)
		return 0;
	if (bpf_res_spin_lock(&v->lock))
		return 1;
	bpf_for(i, 0, 4) v->total += i;
	bpf_res_spin_unlock(&v->lock);
	return v->total == 6 ? 2 : 3;
}

/* 10: a loop that ends before may_goto's bound */
SEC("tc") __attribute__((naked)) int mg_bounded(void)
{
	asm volatile("r0 = 0;"
	             "1:" MAY_GOTO(3) "r0 += 1;"
	                              "if r0 < 10 goto 1b;"
	                              "exit;"
	                              "exit;");
}

/* 8388608: may_goto's bound, the kernel interpreter's BPF_MAX_LOOPS (its
 * x86-64 JIT bounds the loop by time: bpf_conform only, not compared) */
SEC("tc") __attribute__((naked)) int mg_count(void)
{
	asm volatile("r0 = 0;"
	             "1:" MAY_GOTO(2) "r0 += 1;"
	                              "goto 1b;"
	                              "exit;");
}

/* 2 * 8388608: each call of a function counts anew */
static __attribute__((noinline)) int mg_sub(void)
{
	int n = 0;

	asm volatile("1:" MAY_GOTO(2) "%[n] += 1;"
	                              "goto 1b;"
	             : [n] "+r"(n));
	return n;
}

SEC("tc") int mg_two_calls(struct __sk_buff *ctx)
{
	return mg_sub() + mg_sub();
}

static long sum_cb(__u32 i, void *c)
{
	*(__u64 *)c += i;
	return 0;
}

static long stop_at_3(__u32 i, void *c)
{
	return i == 3;
}

static long iter_cb(__u32 i, void *c)
{
	int j;

	bpf_for(j, 0, 3) * (__u64 *)c += j + i;
	return 0;
}

static long nested_cb(__u32 i, void *c)
{
	bpf_loop(3, sum_cb, c, 0);
	return 0;
}

/* 45 + 10 = 55 */
SEC("tc") int loop_sum(struct __sk_buff *ctx)
{
	__u64 s = 0;
	long n = bpf_loop(10, sum_cb, &s, 0);

	return s + n;
}

/* 4 * 1000 + 0 * 100 - 22 (flags) * 10 ... as one number: see the sum */
SEC("tc") int loop_results(struct __sk_buff *ctx)
{
	long stop = bpf_loop(10, stop_at_3, 0, 0);             /* 4 */
	long none = bpf_loop(0, stop_at_3, 0, 0);              /* 0 */
	long flags = bpf_loop(10, stop_at_3, 0, 1);            /* -EINVAL */
	long many = bpf_loop((1u << 23) + 1, stop_at_3, 0, 0); /* -E2BIG */

	return stop * 100000 + none * 10000 + flags * 100 + many; /* 397793 */
}

/* 4 calls of (0+1+2 + 3 * i): 12 + 18 = 30 */
SEC("tc") int loop_iter_in_cb(struct __sk_buff *ctx)
{
	__u64 s = 0;

	bpf_loop(4, iter_cb, &s, 0);
	return s;
}

/* 2 calls of (0+1+2) = 6 */
SEC("tc") int loop_nested(struct __sk_buff *ctx)
{
	__u64 s = 0;

	bpf_loop(2, nested_cb, &s, 0);
	return s;
}

/* A loop over keys whose address a helper takes loses its bound (both
 * verifiers then see an infinite loop): the values are put one by one. */
static __always_inline void put(void *map, __u32 key, __u64 v)
{
	bpf_map_update_elem(map, &key, &v, BPF_ANY);
}

static long fe_sum(void *map, int *key, __u64 *val, __u64 *c)
{
	*c += *val + *key;
	return 0;
}

static long fe_stop(void *map, int *key, __u64 *val, __u64 *c)
{
	*c += *val;
	return *key == 2;
}

static long fe_lock(void *map, int *key, struct counter *val, void *c)
{
	if (bpf_res_spin_lock(&val->lock))
		return 1;
	val->hits++;
	bpf_res_spin_unlock(&val->lock);
	return 0;
}

static long fe_hash(void *map, __u32 *key, __u64 *val, __u64 *c)
{
	*c += *val * *key;
	return 0;
}

/* vals = {0, 10, 20, 30}: sum (60 + 6) * 100 + visited 4 = 6604; then
 * stopping at key 2: (0 + 10 + 20) * 100 + 3 visited = 3003 */
SEC("tc") int foreach_array(struct __sk_buff *ctx)
{
	__u64 s = 0, t = 0;
	long n, m;

	put(&vals, 0, 0);
	put(&vals, 1, 10);
	put(&vals, 2, 20);
	put(&vals, 3, 30);
	n = bpf_for_each_map_elem(&vals, fe_sum, &s, 0);
	m = bpf_for_each_map_elem(&vals, fe_stop, &t, 0);
	return (s * 100 + n) * 10000 + t * 100 + m;
}

/* keys 1..5 with values 2 * key: sum of 2 * key * key = 110, 5 visited;
 * flags: -EINVAL */
SEC("tc") int foreach_hash(struct __sk_buff *ctx)
{
	__u64 s = 0;
	long n, bad;

	put(&hvals, 1, 2);
	put(&hvals, 2, 4);
	put(&hvals, 3, 6);
	put(&hvals, 4, 8);
	put(&hvals, 5, 10);
	n = bpf_for_each_map_elem(&hvals, fe_hash, &s, 0);
	bad = bpf_for_each_map_elem(&hvals, fe_hash, &s, 1);
	return (s * 10 + n) * 100 + bad;
}

/* 4: each element's hits += 1, under its lock */
SEC("tc") int foreach_lock(struct __sk_buff *ctx)
{
	return bpf_for_each_map_elem(&counters, fe_lock, 0, 0);
}

/* 64: bpf_throw ends the program, which returns the cookie */
SEC("tc") int throw_cookie(struct __sk_buff *ctx)
{
	bpf_throw(64);
	return 0;
}

static __attribute__((noinline)) int sub_throw(int x)
{
	if (x == 3)
		bpf_throw(9);
	return x + 1;
}

/* 9: thrown from a subprogram's second call */
SEC("tc") int throw_in_subprog(struct __sk_buff *ctx)
{
	return sub_throw(ctx->cb[0]) + sub_throw(3);
}

char _license[] SEC("license") = "GPL";
