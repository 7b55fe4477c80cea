/* SPDX-License-Identifier: MIT */
/*
 * stack_narrow: a 1, 2 or 4-byte store of a constant at the start of an
 * 8-byte stack slot keeps its value, as the kernel's narrow spill does: a
 * load of that size reads the constant back, and an array map key stored
 * so (`&(int){1}`, which clang writes as `*(u32 *)(r10 - 8) = r1` with
 * r1 = 1) makes the lookup one that cannot fail when it is in range.
 */
#include "common.h"

struct val {
	__u64 v;
};
ARRAY_OF(vals2, struct val); /* 2 entries */

/* Program @name: stores @key with a @size store at fp-8 (or fp-@at), looks
 * it up in vals2 (2 entries) and reads the value without a null check. */
#define NARROW(name, store)                                                                        \
	SEC("?tc") __attribute__((naked)) int name(void)                                           \
	{                                                                                          \
		asm volatile("r1 = 0; *(u64 *)(r10 - 8) = r1; *(u64 *)(r10 - 16) = r1;" store      \
		             "r2 = r10; r2 += -8; r1 = %[map] ll; call %[lookup];"                 \
		             "r0 = *(u64 *)(r0 + 0); exit;" ::[map] "i"(&vals2),                   \
		             [lookup] "i"(bpf_map_lookup_elem)                                     \
		             : "memory");                                                          \
	}

NARROW(narrow_key_in_range, "r1 = 1; *(u32 *)(r10 - 8) = r1;")
NARROW(narrow_key_out_of_range, "r1 = 2; *(u32 *)(r10 - 8) = r1;")
NARROW(narrow_key_byte, "r1 = 1; *(u8 *)(r10 - 8) = r1;")
/* The slot's other half written after: the constant is gone. */
NARROW(narrow_key_overwritten, "r1 = 1; *(u32 *)(r10 - 8) = r1; *(u32 *)(r10 - 4) = r1;")
/* Not at a slot's start: the kernel keeps no constant. */
NARROW(narrow_key_unaligned, "r1 = 1; *(u32 *)(r10 - 12) = r1; r1 = *(u32 *)(r10 - 12);"
                             "*(u32 *)(r10 - 8) = r1;")

char _license[] SEC("license") = "GPL";
