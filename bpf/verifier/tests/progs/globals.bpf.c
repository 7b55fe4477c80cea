/* SPDX-License-Identifier: MIT */
/*
 * globals: global (non-static) functions, which the kernel verifies on
 * their own, from their BTF prototype, after the main program: never
 * called while a lock is held, and never returning with one held.
 * Verdicts and messages in expect.txt, each checked against the 6.18
 * kernel.
 */
#include "common.h"

ARRAY_OF(elems, struct elem);

struct big {
	__u64 slot[4];
};
ARRAY_OF(bigs, struct big);

struct bpf_res_spin_lock glock HIDDEN SEC(".data.L");
struct bpf_spin_lock sglock HIDDEN SEC(".data.S");

__noinline int global_add(int x)
{
	return x + 1;
}

__noinline int global_len(struct __sk_buff *skb, int extra)
{
	return skb->len + extra;
}

/* Indexes a value with its argument, which is unknown when the function is
 * verified on its own. */
__noinline int global_index(int i)
{
	int key = 0;
	struct big *b = bpf_map_lookup_elem(&bigs, &key);

	if (!b)
		return 0;
	return b->slot[i];
}

static __noinline int static_index(int i)
{
	int key = 0;
	struct big *b = bpf_map_lookup_elem(&bigs, &key);

	if (!b)
		return 0;
	return b->slot[i];
}

/* Returns holding the lock. */
__noinline int global_take(int x)
{
	if (bpf_res_spin_lock(&glock))
		return 0;
	return x;
}

SEC("?tc")
int global_ok(struct __sk_buff *ctx)
{
	return global_add(ctx->len) + global_len(ctx, 3);
}

SEC("?tc")
int global_under_res_lock(struct __sk_buff *ctx)
{
	int r;

	if (bpf_res_spin_lock(&glock))
		return 0;
	r = global_add(ctx->len);
	bpf_res_spin_unlock(&glock);
	return r;
}

SEC("?tc")
int global_under_spin_lock(struct __sk_buff *ctx)
{
	int r;

	bpf_spin_lock(&sglock);
	r = global_add(ctx->len);
	bpf_spin_unlock(&sglock);
	return r;
}

SEC("?tc")
int global_after_unlock(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&glock))
		return 0;
	bpf_res_spin_unlock(&glock);
	return global_add(ctx->len);
}

SEC("?tc")
int global_returns_locked(struct __sk_buff *ctx)
{
	return global_take(1);
}

SEC("?tc")
int global_unchecked_index(struct __sk_buff *ctx)
{
	return global_index(1);
}

SEC("?tc")
int static_checked_index(struct __sk_buff *ctx)
{
	return static_index(1);
}

SEC("?tc")
int global_ctx_not_ctx(struct __sk_buff *ctx)
{
	return global_len((struct __sk_buff *)0, 1);
}

SEC("?tc")
int global_dead_call(struct __sk_buff *ctx)
{
	int zero;

	asm volatile("%0 = 0" : "=r"(zero));
	if (zero)
		return global_index(7);
	return 0;
}

SEC("?tc")
int global_with_irq_saved(struct __sk_buff *ctx)
{
	unsigned long flags;
	int r;

	bpf_local_irq_save(&flags);
	r = global_add(ctx->len);
	bpf_local_irq_restore(&flags);
	return r;
}

char _license[] SEC("license") = "GPL";
