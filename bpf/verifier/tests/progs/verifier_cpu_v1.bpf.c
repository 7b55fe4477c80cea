/* SPDX-License-Identifier: MIT */
/*
 * verifier_cpu_v1: loops as clang emits them at -mcpu=v1, the default of
 * clang 14 and clang-19 (CMakeLists.txt builds this file with it, the
 * others with -mcpu=v3). Without 32-bit ALU instructions clang keeps
 * counters and sums in 64-bit registers: the static precision (precise.c)
 * must not take a helper's return value or a load from a map value for a
 * pointer, or the 64-bit adds make every accumulator matter and the loop
 * never prunes ("BPF program is too large").
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32);
	__type(key, __u64);
	__type(value, __u32);
} h64 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} h32 SEC(".maps");

/* A loop that counts the updates that succeed: R0 of map_update_elem is a
 * number, added into the count. */
SEC("?tc")
int update_loop(struct __sk_buff *ctx)
{
	long last = 0;
	int ok = 0;

	for (__u64 i = 0; i < 40; i++) {
		__u32 v = i * 3;
		__u64 k = i * 0x100000001ull + ctx->cb[0];

		last = bpf_map_update_elem(&h64, &k, &v, BPF_ANY);
		if (!last)
			ok++;
	}
	return ok * 1000 + (int)last;
}

/* Unrolled bit tests, each adding a map value to the score: the value
 * loaded through the lookup's pointer is a scalar. */
SEC("?tc")
int lookup_sum_unrolled(struct __sk_buff *ctx)
{
	__u32 x = ctx->cb[0], y = ctx->cb[1];
	int score = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < 32; i++) {
		if (x & (1u << i))
			score += i;
		else
			score -= 1;
		if ((y >> i) & 1) {
			__u32 k = i;
			__u64 *v = bpf_map_lookup_elem(&h32, &k);

			if (v)
				score += *v;
		}
	}
	return score;
}

/* The sum still matters where it becomes a pointer's offset: used as an
 * index after the loop without a bound, it is refused. */
SEC("?tc")
int lookup_sum_as_index(struct __sk_buff *ctx)
{
	__u64 sum = 0, *base;
	__u32 k = 0;

#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < 8; i++) {
		__u64 *v;

		k = i;
		v = bpf_map_lookup_elem(&h32, &k);
		if (v)
			sum += *v;
	}
	k = 0;
	base = bpf_map_lookup_elem(&h32, &k);
	if (!base)
		return 0;
	return *(__u8 *)((void *)base + sum);
}

char _license[] SEC("license") = "GPL";
