/* SPDX-License-Identifier: MIT */
/*
 * fuzz_template: the maps the verifier's fuzzer runs programs against, and
 * a program of 256 instructions whose body the fuzzer replaces.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct counter);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, int);
	__type(value, __u64);
} plain SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 4);
	__type(value, __u64);
} qmap SEC(".maps");

struct bpf_res_spin_lock lock_a HIDDEN SEC(".data.A");
__u64 scratch[4];

SEC("tc")
int fuzz_target(struct __sk_buff *ctx)
{
	asm volatile(".rept 254\n\tr0 = 0\n\t.endr" ::: "r0");
	return 0;
}

char _license[] SEC("license") = "GPL";
