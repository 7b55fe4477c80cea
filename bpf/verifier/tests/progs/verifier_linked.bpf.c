/* SPDX-License-Identifier: MIT */
/*
 * verifier_linked: linked scalars. A copy of a scalar (a register move, or
 * a spill to the stack and its fill) shares the original's id: a jump that
 * narrows one narrows every copy. Any other write to a copy ends the link.
 * The programs are asm, so that clang 14 and clang-19 emit the same
 * instructions and the same walk.
 */
#include "common.h"

struct table {
	__u64 slot[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct table);
} tables SEC(".maps");

/* R8 = &tables[0], R6 = ctx; a null lookup goes to label 1 (return 0). */
#define LOOKUP_R8                                                                                  \
	"r6 = r1;"                                                                                 \
	"r1 = 0;"                                                                                  \
	"*(u32 *)(r10 - 4) = r1;"                                                                  \
	"r2 = r10;"                                                                                \
	"r2 += -4;"                                                                                \
	"r1 = %[tables] ll;"                                                                       \
	"call %[lookup];"                                                                          \
	"if r0 == 0 goto 1f;"                                                                      \
	"r8 = r0;"
/* A byte of the 64-byte value at offset R1. */
#define LOAD_AT_R1                                                                                 \
	"r8 += r1;"                                                                                \
	"r0 = *(u8 *)(r8 + 0);"                                                                    \
	"exit;"                                                                                    \
	"1: r0 = 0;"                                                                               \
	"exit;"
#define LOOKUP_ARGS [tables] "i"(&tables), [lookup] "i"(bpf_map_lookup_elem)

/* The copy is compared, the original indexes. */
SEC("?tc")
__attribute__((naked)) int copy_compared(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "if r2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A 32-bit move of a value that fits in 32 bits is a copy too. */
SEC("?tc")
__attribute__((naked)) int copy32_compared(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "w2 = w1;"
	                       "if r2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* The register is compared, its spilled copy is filled and indexes. */
SEC("?tc")
__attribute__((naked)) int spill_compared(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "*(u64 *)(r10 - 16) = r1;"
	                       "if r1 > 63 goto 1f;"
	                       "r1 = *(u64 *)(r10 - 16);" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* The copy is halved before the comparison: no longer a copy. */
SEC("?tc")
__attribute__((naked)) int copy_shifted(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 >>= 1;"
	                       "if r2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* The register is reloaded after the spill: the slot keeps the old value. */
SEC("?tc")
__attribute__((naked)) int spill_reg_reloaded(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "*(u64 *)(r10 - 16) = r1;"
	                       "r1 = *(u32 *)(r6 + 4);"
	                       "if r1 > 63 goto 1f;"
	                       "r1 = *(u64 *)(r10 - 16);" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* The slot is overwritten after the spill: the fill is another value. */
SEC("?tc")
__attribute__((naked)) int spill_slot_overwritten(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r3 = *(u32 *)(r6 + 4);"
	                       "*(u64 *)(r10 - 16) = r1;"
	                       "*(u64 *)(r10 - 16) = r3;"
	                       "if r1 > 63 goto 1f;"
	                       "r1 = *(u64 *)(r10 - 16);" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/*
 * R2 is a copy of R1 on the path walked first and another length on the
 * other; both meet at label 2, where the comparison of R2 bounds R1 only
 * on the first. The second may not be pruned against the first: R2
 * matters there with R1 (precision of linked registers), and the states
 * link them differently (ids compared). The four moves only add
 * instructions, so that the state at label 2 is remembered.
 */
SEC("?tc")
__attribute__((naked)) int prune_link(void)
{
	asm volatile(LOOKUP_R8 "r3 = 1;"
	                       "r4 = 2;"
	                       "r5 = 3;"
	                       "r9 = 4;"
	                       "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u32 *)(r6 + 4);"
	                       "r7 = *(u32 *)(r6 + 8);"
	                       "if r7 != 0 goto 2f;"
	                       "r2 = r1;"
	                       "2: if r2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* As prune_link, through a spilled copy: R1 is spilled on the path walked
 * first, another length on the other. */
SEC("?tc")
__attribute__((naked)) int prune_spill_link(void)
{
	asm volatile(LOOKUP_R8 "r3 = 1;"
	                       "r4 = 2;"
	                       "r5 = 3;"
	                       "r9 = 4;"
	                       "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u32 *)(r6 + 4);"
	                       "r7 = *(u32 *)(r6 + 8);"
	                       "if r7 != 0 goto 2f;"
	                       "r2 = r1;"
	                       "2: *(u64 *)(r10 - 16) = r2;"
	                       "r2 = 0;"
	                       "if r1 > 63 goto 1f;"
	                       "r1 = *(u64 *)(r10 - 16);" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

char _license[] SEC("license") = "GPL";
