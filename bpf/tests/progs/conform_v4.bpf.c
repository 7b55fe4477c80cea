// SPDX-License-Identifier: MIT
/* cpu v4 instructions (clang 19, -mcpu=v4): sdiv/smod, sign-extending loads
 * and moves, bswap, gotol. Same scheme as conform.bpf.c. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "conform_fns.h"
#include "conform_v4_fns.h"

SEC("tc")
int signed_ops(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_signed(A(ctx), B(ctx), C(ctx)));
}

SEC("tc")
int bytes_v4(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_bytes(A(ctx), B(ctx)));
}

SEC("tc")
int arith_v4(struct __sk_buff *ctx)
{
	return (int)conform_fold(conform_arith(A(ctx), B(ctx), C(ctx)));
}

char _license[] SEC("license") = "GPL";
