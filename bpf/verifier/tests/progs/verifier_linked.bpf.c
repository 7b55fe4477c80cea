/* SPDX-License-Identifier: MIT */
/*
 * verifier_linked: linked scalars. A copy of a scalar (a register move, or
 * a spill to the stack and its fill) shares the original's id: a jump that
 * narrows one narrows every copy. A copy plus a constant (one add or
 * subtraction of a constant, 64-bit or 32-bit) stays linked with that
 * delta: a jump that narrows one gives the others the range shifted by the
 * difference of the deltas. Any other write to a copy ends the link.
 * The programs are asm, so that clang 14 and clang-19 emit the same
 * instructions and the same walk.
 */
#include "asm_table.h"

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

/* A copy minus one is compared: R1 = R2 + 1 is in [1, 63]. */
SEC("?tc")
__attribute__((naked)) int add_compared(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 += -1;"
	                       "if r2 > 62 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* The same through a subtraction of a constant. */
SEC("?tc")
__attribute__((naked)) int sub_compared(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 -= 1;"
	                       "if r2 > 62 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A 32-bit copy minus one, compared in 32 bits: R1 = (u32)(R2 + 1). */
SEC("?tc")
__attribute__((naked)) int add32_compared(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "w2 = w1;"
	                       "w2 += -1;"
	                       "if w2 > 62 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* The original is compared, the copy plus four indexes: R2 in [4, 63]. */
SEC("?tc")
__attribute__((naked)) int base_compared(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 += 4;"
	                       "if r1 > 59 goto 1f;"
	                       "r1 = r2;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A 32-bit add wraps: W2 in [0, 63] leaves R1 = (u32)(R2 - 1), which may
 * be 0xffffffff. */
SEC("?tc")
__attribute__((naked)) int add32_wraps(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "w2 = w1;"
	                       "w2 += 1;"
	                       "if w2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A 32-bit add of a value wider than 32 bits is not linked. */
SEC("?tc")
__attribute__((naked)) int add32_wide(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r1 <<= 4;"
	                       "r2 = r1;"
	                       "w2 += 0;"
	                       "if w2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A second constant ends the link. */
SEC("?tc")
__attribute__((naked)) int add_twice(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 += 1;"
	                       "r2 += -1;"
	                       "if r2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* Subtracting S32_MIN cannot be a delta (its negation does not fit): no
 * link, where adding S32_MIN links (R2 in [1 << 31, (1 << 31) + 63]). */
SEC("?tc")
__attribute__((naked)) int sub_s32_min(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 -= -2147483648;"
	                       "r3 = 0x8000003f ll;"
	                       "if r2 > r3 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

SEC("?tc")
__attribute__((naked)) int add_s32_min(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 += -2147483648;"
	                       "r3 = -2147483585 ll;"
	                       "if r2 s> r3 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A copy of a copy plus a constant starts a new link: R3 and R2 are
 * linked, R1 no longer. */
SEC("?tc")
__attribute__((naked)) int copy_of_add(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = r1;"
	                       "r2 += 0;"
	                       "r3 = r2;"
	                       "if r3 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A 32-bit and a 64-bit add link say nothing of each other: W2 in [0, 63]
 * bounds R1 (0xffffffff or [0, 62]) but not R3 = R1 + 1, which may be
 * 1 << 32. */
SEC("?tc")
__attribute__((naked)) int mixed_widths(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "w2 = w1;"
	                       "w2 += 1;"
	                       "r3 = r1;"
	                       "r3 += 1;"
	                       "if r2 > 63 goto 1f;"
	                       "r1 = r3;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/*
 * The states at label 2 differ only in the delta: R2 = (u32)(R1 + 0) on
 * the path walked first, (u32)(R1 - 64) on the other, where W2 in
 * [0, 63] puts R1 in [64, 127]. The second may not be pruned against the
 * first.
 */
SEC("?tc")
__attribute__((naked)) int prune_delta(void)
{
	asm volatile(LOOKUP_R8 "r3 = 1;"
	                       "r4 = 2;"
	                       "r5 = 3;"
	                       "r9 = 4;"
	                       "r1 = *(u32 *)(r6 + 0);"
	                       "r7 = *(u32 *)(r6 + 8);"
	                       "if r7 != 0 goto 3f;"
	                       "w2 = w1;"
	                       "w2 += 0;"
	                       "goto 2f;"
	                       "3: w2 = w1;"
	                       "w2 += -64;"
	                       "2: if w2 > 63 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* As prune_link, R2 being R1 minus one on the path walked first: R2 must
 * matter at label 2 with R1 (precision through an add link). */
SEC("?tc")
__attribute__((naked)) int prune_add_link(void)
{
	asm volatile(LOOKUP_R8 "r3 = 1;"
	                       "r4 = 2;"
	                       "r5 = 3;"
	                       "r9 = 4;"
	                       "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u32 *)(r6 + 4);"
	                       "r7 = *(u32 *)(r6 + 8);"
	                       "if r7 != 0 goto 2f;"
	                       "w2 = w1;"
	                       "w2 += -1;"
	                       "2: if r2 > 62 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

char _license[] SEC("license") = "GPL";
