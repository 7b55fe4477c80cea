/* SPDX-License-Identifier: MIT */
/*
 * loops.bpf.c: the kernel's bounded loops that are not a jump back over a
 * known counter: open-coded iterators (bpf_iter_num_*, bpf_for,
 * bpf_repeat), may_goto, and callbacks (bpf_loop, bpf_for_each_map_elem),
 * alone, together and with res locks, and bpf_throw, each accepted or refused as the 6.18
 * kernel does it (progs/expect.txt). Written for this project; the cases
 * follow the rules of the kernel's iters.c, verifier_may_goto_*.c and
 * cb_refs/loop tests in tools/testing/selftests/bpf/progs/.
 */
#include "common.h"

/* may_goto +@off, encoded by hand: clang 14's assembler has no mnemonic. */
#define MAY_GOTO(off) ".byte 0xe5, 0x00, " #off ", 0x00, 0x00, 0x00, 0x00, 0x00;"
/* ... with its unused imm set (the kernel refuses it). */
#define MAY_GOTO_IMM1(off) ".byte 0xe5, 0x00, " #off ", 0x00, 0x01, 0x00, 0x00, 0x00;"

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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

/* --- iterators --- */

SEC("?tc") int iter_sum(struct __sk_buff *ctx)
{
	int i, s = 0;

	bpf_for(i, 0, 10) s += i;
	return s;
}

SEC("?tc") int iter_repeat(struct __sk_buff *ctx)
{
	int n = 0;

	bpf_repeat(5) n++;
	return n;
}

SEC("?tc") int iter_nested(struct __sk_buff *ctx)
{
	int i, j, s = 0;

	bpf_for(i, 0, 3)
	{
		bpf_for(j, 0, 3) s += i * j;
	}
	return s;
}

SEC("?tc") int iter_map_keys(struct __sk_buff *ctx)
{
	__u64 s = 0;
	int i;

	bpf_for(i, 0, 4)
	{
		__u64 *v = bpf_map_lookup_elem(&vals, &i);

		if (v)
			s += *v;
	}
	return s;
}

/* The kernel allows iterators inside a locked region. */
SEC("?tc") int iter_under_lock(struct __sk_buff *ctx)
{
	struct counter *v;
	int key = 0, i;

	v = bpf_map_lookup_elem(&counters, &key);
	if (!v)
		return 0;
	if (bpf_res_spin_lock(&v->lock))
		return 1;
	bpf_for(i, 0, 4) v->total += i;
	bpf_res_spin_unlock(&v->lock);
	return 2;
}

/* new() fails for start > end; the iterator must still be destroyed. */
SEC("?tc") int iter_bad_range(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;
	int r = bpf_iter_num_new(&it, 5, 1), n = 0;

	while (bpf_iter_num_next(&it))
		n++;
	bpf_iter_num_destroy(&it);
	return r * 10 + n;
}

SEC("?tc") int iter_leak(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 3);
	bpf_iter_num_next(&it);
	return 0;
}

SEC("?tc") int iter_next_uninit(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;

	asm volatile("" : "=m"(it));
	bpf_iter_num_next(&it);
	return 0;
}

SEC("?tc") int iter_new_twice(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 3);
	bpf_iter_num_new(&it, 0, 3);
	bpf_iter_num_destroy(&it);
	return 0;
}

SEC("?tc") int iter_destroy_twice(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 3);
	bpf_iter_num_destroy(&it);
	bpf_iter_num_destroy(&it);
	return 0;
}

/* The path on which next() finds the iterator drained has R0 = NULL. */
SEC("?tc") int iter_deref_unchecked(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;
	int *p, r;

	bpf_iter_num_new(&it, 0, 3);
	p = bpf_iter_num_next(&it);
	r = *p;
	bpf_iter_num_destroy(&it);
	return r;
}

SEC("?tc") int iter_write_value(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;
	int *p;

	bpf_iter_num_new(&it, 0, 3);
	p = bpf_iter_num_next(&it);
	if (p)
		*p = 1;
	bpf_iter_num_destroy(&it);
	return 0;
}

/* A store over the iterator destroys it (its reference stays). */
SEC("?tc") int iter_overwritten(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 3);
	*(volatile __u64 *)&it = 0;
	bpf_iter_num_destroy(&it);
	return 0;
}

SEC("?tc") int iter_read_state(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;
	__u64 x;

	bpf_iter_num_new(&it, 0, 3);
	x = *(volatile __u64 *)&it;
	bpf_iter_num_destroy(&it);
	return x;
}

/* --- may_goto --- */

/* Counts how often may_goto falls through: the kernel's bound. */
SEC("?tc") __attribute__((naked)) int mg_count(void)
{
	asm volatile("r0 = 0;"
	             "1:" MAY_GOTO(2) "r0 += 1;"
	                              "goto 1b;"
	                              "exit;");
}

/* A loop that ends on its own first: 10. */
SEC("?tc") __attribute__((naked)) int mg_bounded(void)
{
	asm volatile("r0 = 0;"
	             "1:" MAY_GOTO(3) "r0 += 1;"
	                              "if r0 < 10 goto 1b;"
	                              "exit;"
	                              "exit;");
}

/* A jump, not a call: allowed under a lock. */
SEC("?tc") __attribute__((naked)) int mg_under_lock(void)
{
	asm volatile("r1 = 0;"
	             "*(u32 *)(r10 - 4) = r1;"
	             "r2 = r10;"
	             "r2 += -4;"
	             "r1 = %[counters] ll;"
	             "call %[lookup];"
	             "if r0 == 0 goto 3f;"
	             "r6 = r0;"
	             "r1 = r0;"
	             "r1 += 8;"
	             "call %[lock];"
	             "if r0 != 0 goto 3f;"
	             "r7 = 0;"
	             "1:" MAY_GOTO(2) "r7 += 1;"
	                              "goto 1b;"
	                              "*(u64 *)(r6 + 16) = r7;"
	                              "r1 = r6;"
	                              "r1 += 8;"
	                              "call %[unlock];"
	                              "3: r0 = 0;"
	                              "exit;"
	             :
	             : [counters] "i"(&counters), [lookup] "i"(bpf_map_lookup_elem),
	               [lock] "i"(bpf_res_spin_lock), [unlock] "i"(bpf_res_spin_unlock)
	             : "memory");
}

SEC("?tc") __attribute__((naked)) int mg_bad_imm(void)
{
	asm volatile("r0 = 0;"
	             "1:" MAY_GOTO_IMM1(2) "r0 += 1;"
	                                   "goto 1b;"
	                                   "exit;");
}

/* --- callbacks --- */

static long sum_cb(__u32 i, void *c)
{
	*(__u64 *)c += i;
	return 0;
}

static long ret2_cb(__u32 i, void *c)
{
	return 2;
}

static long stop_at_3(__u32 i, void *c)
{
	return i == 3;
}

static long lock_cb(__u32 i, void *c)
{
	struct counter *v;
	int key = 0;

	v = bpf_map_lookup_elem(&counters, &key);
	if (!v)
		return 1;
	if (bpf_res_spin_lock(&v->lock))
		return 1;
	v->total++;
	bpf_res_spin_unlock(&v->lock);
	return 0;
}

static long leak_lock_cb(__u32 i, void *c)
{
	struct counter *v;
	int key = 0;

	v = bpf_map_lookup_elem(&counters, &key);
	if (!v)
		return 1;
	if (bpf_res_spin_lock(&v->lock))
		return 1;
	return 0;
}

static long iter_cb(__u32 i, void *c)
{
	int j;

	bpf_for(j, 0, 3) * (__u64 *)c += j;
	return 0;
}

static long nested_cb(__u32 i, void *c)
{
	bpf_loop(3, sum_cb, c, 0);
	return 0;
}

/* The context's value used as an index: the kernel walks bpf_loop's
 * callback at most R1's umax times in a row, here 4, and each stays in the
 * array. */
struct idx_ctx {
	__u64 idx;
	__u64 slots[4];
};

static long index_cb(__u32 i, void *c)
{
	struct idx_ctx *x = c;

	if (x->idx < 4)
		x->slots[x->idx] = i;
	x->idx++;
	return 0;
}

SEC("?tc") int loop_ctx_index(struct __sk_buff *ctx)
{
	struct idx_ctx x = {};

	bpf_loop(4, index_cb, &x, 0);
	return x.slots[3];
}

SEC("?tc") int loop_sum(struct __sk_buff *ctx)
{
	__u64 s = 0;
	long n = bpf_loop(10, sum_cb, &s, 0);

	return s + n;
}

SEC("?tc") int loop_stop(struct __sk_buff *ctx)
{
	return bpf_loop(10, stop_at_3, 0, 0);
}

SEC("?tc") int loop_flags(struct __sk_buff *ctx)
{
	return bpf_loop(10, stop_at_3, 0, 1);
}

SEC("?tc") int loop_too_many(struct __sk_buff *ctx)
{
	return bpf_loop((1u << 23) + 1, stop_at_3, 0, 0);
}

SEC("?tc") int loop_ret2(struct __sk_buff *ctx)
{
	return bpf_loop(10, ret2_cb, 0, 0);
}

SEC("?tc") int loop_lock_in_cb(struct __sk_buff *ctx)
{
	return bpf_loop(10, lock_cb, 0, 0);
}

SEC("?tc") int loop_lock_leak_cb(struct __sk_buff *ctx)
{
	return bpf_loop(10, leak_lock_cb, 0, 0);
}

SEC("?tc") int loop_under_lock(struct __sk_buff *ctx)
{
	struct counter *v;
	int key = 0;
	long n;

	v = bpf_map_lookup_elem(&counters, &key);
	if (!v)
		return 0;
	if (bpf_res_spin_lock(&v->lock))
		return 1;
	n = bpf_loop(3, ret2_cb, 0, 0);
	bpf_res_spin_unlock(&v->lock);
	return n;
}

SEC("?tc") int loop_ctx_not_stack(struct __sk_buff *ctx)
{
	return bpf_loop(10, stop_at_3, ctx, 0);
}

SEC("?tc") int loop_iter_in_cb(struct __sk_buff *ctx)
{
	__u64 s = 0;

	bpf_loop(4, iter_cb, &s, 0);
	return s;
}

SEC("?tc") int loop_nested(struct __sk_buff *ctx)
{
	__u64 s = 0;

	bpf_loop(2, nested_cb, &s, 0);
	return s;
}

static long fe_sum(void *map, int *key, __u64 *val, __u64 *c)
{
	*c += *val + *key;
	return 0;
}

static long fe_lock(void *map, int *key, struct counter *val, void *c)
{
	if (bpf_res_spin_lock(&val->lock))
		return 1;
	val->total++;
	bpf_res_spin_unlock(&val->lock);
	return 0;
}

static long fe_write_key(void *map, int *key, __u64 *val, void *c)
{
	*key = 1;
	return 0;
}

static long fe_hash(void *map, __u32 *key, __u64 *val, __u64 *c)
{
	*c += *val;
	return *key == 7;
}

SEC("?tc") int foreach_sum(struct __sk_buff *ctx)
{
	__u64 s = 0;
	long n = bpf_for_each_map_elem(&vals, fe_sum, &s, 0);

	return s * 10 + n;
}

SEC("?tc") int foreach_lock(struct __sk_buff *ctx)
{
	return bpf_for_each_map_elem(&counters, fe_lock, 0, 0);
}

SEC("?tc") int foreach_write_key(struct __sk_buff *ctx)
{
	return bpf_for_each_map_elem(&vals, fe_write_key, 0, 0);
}

SEC("?tc") int foreach_hash(struct __sk_buff *ctx)
{
	__u64 s = 0;

	bpf_for_each_map_elem(&hvals, fe_hash, &s, 0);
	return s;
}

SEC("?tc") int foreach_ringbuf(struct __sk_buff *ctx)
{
	return bpf_for_each_map_elem(&rb, fe_sum, 0, 0);
}

/* A callback must be static. */
__attribute__((noinline)) long global_cb(__u32 i, void *c)
{
	return 0;
}

SEC("?tc") int loop_global_cb(struct __sk_buff *ctx)
{
	return bpf_loop(2, global_cb, 0, 0);
}

/* --- bpf_throw --- */

SEC("?tc") int throw_cond(struct __sk_buff *ctx)
{
	if (ctx->cb[0] == 5)
		bpf_throw(7);
	return 1;
}

static __attribute__((noinline)) int sub_throw(int x)
{
	if (x == 3)
		bpf_throw(9);
	return x + 1;
}

SEC("?tc") int throw_in_subprog(struct __sk_buff *ctx)
{
	return sub_throw(ctx->cb[0]) + sub_throw(3);
}

/* A call: not under a lock. */
SEC("?tc") int throw_locked(struct __sk_buff *ctx)
{
	struct counter *v;
	int key = 0;

	v = bpf_map_lookup_elem(&counters, &key);
	if (!v)
		return 0;
	if (bpf_res_spin_lock(&v->lock))
		return 1;
	if (ctx->cb[0])
		bpf_throw(1);
	bpf_res_spin_unlock(&v->lock);
	return 2;
}

SEC("?tc") int throw_holding_iter(struct __sk_buff *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 3);
	if (ctx->cb[0])
		bpf_throw(1);
	bpf_iter_num_destroy(&it);
	return 0;
}

static long throw_cb(__u32 i, void *c)
{
	if (i == 2)
		bpf_throw(11);
	return 0;
}

SEC("?tc") int throw_from_callback(struct __sk_buff *ctx)
{
	return bpf_loop(5, throw_cb, 0, 0);
}

/* The cookie is the program's return value: in the type's range. */
SEC("?cgroup_skb/ingress") int throw_out_of_range(struct __sk_buff *ctx)
{
	if (ctx->len)
		bpf_throw(5);
	return 1;
}

char _license[] SEC("license") = "GPL";
