/* SPDX-License-Identifier: MIT */
/* Signed division and sign extension (cpu v4), shared like conform_fns.h. */
#ifndef CONFORM_V4_FNS_H
#define CONFORM_V4_FNS_H

#include <linux/types.h>

static inline __u64 conform_signed(__u64 a, __u64 b, __u64 c)
{
	__s64 sa = (__s64)a, sb = (__s64)b;
	__s32 a32 = (__s32)(__u32)a, b32 = (__s32)(__u32)b;
	__u64 r = 0;

	if (sb != 0 && !(sb == -1 && sa == (__s64)(1ull << 63)))
		r += (__u64)(sa / sb) ^ (__u64)(sa % sb);
	if (b32 != 0 && !(b32 == -1 && a32 == (__s32)0x80000000u))
		r += (__u64)(__s64)(a32 / b32) + (__u64)(__s64)(a32 % b32);
	r += (__u64)(__s64)(__s8)(__u8)c;
	r += (__u64)(__s64)(__s16)(__u16)(c >> 3);
	r ^= (__u64)(__s64)(__s32)(__u32)(a >> 5);
	return r;
}

#endif /* CONFORM_V4_FNS_H */
