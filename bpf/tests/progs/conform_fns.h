/* SPDX-License-Identifier: MIT */
/* Functions the conformance programs compute, compiled twice: by clang for
 * BPF (conform*.bpf.c) and by the host compiler for the expected values
 * (bpf_conform.c). Only defined behaviour: unsigned arithmetic, guarded
 * divisions and shifts below the width. */
#ifndef CONFORM_FNS_H
#define CONFORM_FNS_H

#include <linux/types.h>

#ifndef CONFORM_NOINLINE
#define CONFORM_NOINLINE __attribute__((noinline))
#endif

/* The inputs, in struct __sk_buff's cb: a = cb0:cb1, b = cb2:cb3, c = cb4. */
#define A(ctx) (((__u64)(ctx)->cb[0] << 32) | (ctx)->cb[1])
#define B(ctx) (((__u64)(ctx)->cb[2] << 32) | (ctx)->cb[3])
#define C(ctx) ((__u64)(ctx)->cb[4])

static inline __u32 conform_fold(__u64 x)
{
	return (__u32)(x ^ (x >> 32));
}

static inline __u64 conform_arith(__u64 a, __u64 b, __u64 c)
{
	__u32 a32 = (__u32)a, b32 = (__u32)b;
	__u64 r = a + b * 3 - (c << 7);

	r ^= a * b;
	r += b ? a / b : 0xdead;
	r += b ? a % b : 0xbeef;
	r ^= a >> (c & 63);
	r ^= (__u64)((__s64)a >> (c & 63));
	r += (__u64)(__u32)(a32 << (c & 31)) + (__u32)(a32 >> ((c >> 6) & 31));
	r += (__u64)(__u32)((__s32)a32 >> (c & 31));
	r += b32 ? a32 / b32 + a32 % b32 : 7;
	r += (__u32)(a32 * b32 - a32 + (~b32 & 0xff0f));
	r |= (c & 1) << 63;
	r &= ~(c & 0xff00);
	return r - (0 - a);
}

static inline __u64 conform_branches(__u64 a, __u64 b, __u64 c)
{
	__u64 bits = 0;
	__u32 a32 = (__u32)a, b32 = (__u32)b;

	bits |= (__u64)(a == b) << 0;
	bits |= (__u64)(a != c) << 1;
	bits |= (__u64)(a > b) << 2;
	bits |= (__u64)(a >= c) << 3;
	bits |= (__u64)(a < b) << 4;
	bits |= (__u64)(a <= c) << 5;
	bits |= (__u64)((__s64)a > (__s64)b) << 6;
	bits |= (__u64)((__s64)a >= (__s64)c) << 7;
	bits |= (__u64)((__s64)a < (__s64)b) << 8;
	bits |= (__u64)((__s64)a <= (__s64)c) << 9;
	bits |= (__u64)((a & b) != 0) << 10;
	bits |= (__u64)(a32 > b32) << 11;
	bits |= (__u64)((__s32)a32 < (__s32)b32) << 12;
	bits |= (__u64)(a32 == (__u32)c) << 13;
	bits |= (__u64)((__s32)a32 >= -5) << 14;
	bits |= (__u64)(a32 < 1000) << 15;
	if ((__s64)b < 0)
		bits += a;
	else if (b32 & 4)
		bits -= c;
	return bits;
}

static inline __u64 conform_loop(__u64 a, __u64 c)
{
	__u64 h = 14695981039346656037ull;

	for (int i = 0; i < 64; i++) {
		if (i >= (int)(c & 31) + 8)
			break;
		h = (h ^ ((a >> (i & 7) * 8) & 0xff)) * 1099511628211ull;
	}
	return h;
}

static inline __u64 conform_bytes(__u64 a, __u64 b)
{
	volatile __u8 buf[16];
	__u64 r = 0;

	for (int i = 0; i < 8; i++) {
		buf[i] = (__u8)(a >> (8 * i));
		buf[8 + i] = (__u8)(b >> (8 * i));
	}
	r += (__u64)(__s64)(__s8)buf[1];
	r += (__u64)(__s64)(__s16)(buf[2] | buf[3] << 8);
	r ^= (__u64)buf[9] << 40;
	r += __builtin_bswap64(a) ^ __builtin_bswap32((__u32)b) ^ __builtin_bswap16((__u16)a);
	return r;
}

static CONFORM_NOINLINE __u64 conform_leaf(__u64 x, __u64 y)
{
	return (x ^ y) * 0x9e3779b97f4a7c15ull + (y >> 3);
}

static CONFORM_NOINLINE __u64 conform_mid(__u64 x, __u64 y, __u64 depth)
{
	__u64 r = conform_leaf(x, y);

	if (depth & 1)
		r += conform_leaf(y, r);
	return r ^ depth;
}

static inline __u64 conform_calls(__u64 a, __u64 b, __u64 c)
{
	return conform_mid(a, b, c & 3) + conform_mid(b, c, 1) - conform_leaf(c, a);
}

#endif /* CONFORM_FNS_H */
