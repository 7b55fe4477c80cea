// SPDX-License-Identifier: MIT
/*
 * typed.bpf.c: values of many BTF kinds for `rqbpf dump` (bpf/tests/cli.sh):
 * a signed integer, bitfields, an enum (named and unnamed values), a char
 * array, an anonymous union inside a struct, a bool, and a pointer; held in
 * a global (the .data section) and in an array map whose key is typed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

enum colour { RED = 1, GREEN = 2 };

struct typed {
	int neg;
	unsigned int low : 3, high : 5;
	int sbits : 4;
	enum colour named, unnamed;
	char tag[4];
	union {
		__u32 as_u32;
		__u16 as_u16[2];
	};
	_Bool yes;
	void *ptr;
};

struct typed sample = {
    .neg = -5,
    .low = 5,
    .high = 17,
    .sbits = -3,
    .named = GREEN,
    .unnamed = (enum colour)7,
    .tag = "ab",
    .as_u32 = 0x00020001,
    .yes = 1,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct typed);
} typed_map SEC(".maps");

SEC("tc")
int copy_sample(struct __sk_buff *ctx)
{
	__u32 key = 1;

	bpf_map_update_elem(&typed_map, &key, &sample, BPF_ANY);
	return sample.neg;
}

char _license[] SEC("license") = "GPL";
