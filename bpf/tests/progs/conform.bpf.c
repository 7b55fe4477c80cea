// SPDX-License-Identifier: MIT
/* Conformance programs: each computes one function of conform_fns.h from the
 * inputs in ctx->cb (a = cb0:cb1, b = cb2:cb3, c = cb4) and returns its
 * fold; the test compares with the same function compiled for the host.
 * Also global data (.data, .rodata, .bss), atomics and a '?tc' program. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "conform_fns.h"

SEC("tc")
int arith(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_arith(A(ctx), B(ctx), C(ctx)));
}

SEC("tc")
int branches(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_branches(A(ctx), B(ctx), C(ctx)));
}

SEC("tc")
int loop(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_loop(A(ctx), C(ctx)));
}

SEC("tc")
int bytes(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_bytes(A(ctx), B(ctx)));
}

SEC("tc")
int calls(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_calls(A(ctx), B(ctx), C(ctx)));
}

__u64 data_counter = 5;
const volatile __u32 rodata_table[4] = {11, 22, 33, 44};
__u64 bss_total;

/* Reads .rodata, updates .data and .bss atomically: returns the old total
 * plus the table entry, so repeated runs are checkable. */
SEC("tc")
int globals(struct __sk_buff *ctx)
{
	__u64 old = __sync_fetch_and_add(&bss_total, rodata_table[C(ctx) & 3]);

	__sync_fetch_and_add(&data_counter, 1);
	return (int)(old + data_counter);
}

/* Atomics on the stack: every operation, 32 and 64 bits; returns a fold. */
SEC("tc")
int atomics(struct __sk_buff *ctx)
{
	volatile __u64 v64 = A(ctx);
	volatile __u32 v32 = (__u32)B(ctx);
	__u64 r = 0;

	r += __sync_fetch_and_add(&v64, 3);
	r ^= __sync_fetch_and_or(&v64, 0x100);
	r += __sync_fetch_and_and(&v64, ~0xfull);
	r ^= __sync_fetch_and_xor(&v64, C(ctx));
	r += __sync_val_compare_and_swap(&v64, v64, 77);
	r += __sync_val_compare_and_swap(&v64, 1, 99);
	r += __atomic_exchange_n(&v64, r, __ATOMIC_SEQ_CST);
	r += __sync_fetch_and_add(&v32, 7);
	r ^= __sync_fetch_and_or(&v32, 0x30);
	r += __sync_fetch_and_and(&v32, 0xff00ff);
	r ^= __sync_fetch_and_xor(&v32, 5);
	r += __sync_val_compare_and_swap(&v32, v32, 8);
	r += __atomic_exchange_n(&v32, (__u32)r, __ATOMIC_SEQ_CST);
	__sync_fetch_and_add(&v64, 1);
	return (int)conform_fold(r + v64 + v32);
}

/* The context in and out: cb[1] and the mark from cb[0]; returns cb[0]
 * (rqbpf run's ctx_in and ctx_out, and the kernel's, compare them). */
SEC("tc")
int ctx_cb(struct __sk_buff *ctx)
{
	__u32 v = ctx->cb[0];

	ctx->cb[1] = v * 2 + 1;
	ctx->mark = v ^ 0x5a5a;
	return (int)v;
}

SEC("?tc")
int not_autoloaded(struct __sk_buff *ctx)
{
	return 42;
}

char _license[] SEC("license") = "GPL";
