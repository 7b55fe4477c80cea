/* SPDX-License-Identifier: MIT */
/*
 * verifier_bounds: scalar bounds from arithmetic and from comparisons, as
 * they reach a map value access. The programs are asm, so that clang 14 and
 * clang-19 emit the same instructions, the walk order and the prune points
 * included (clang 14 has no mnemonic for mod: the instruction is encoded).
 */
#include "asm_table.h"

#define MOD64_R1_R2 ".8byte 0x219f;" /* r1 %= r2 */
#define MOD32_R1_R2 ".8byte 0x219c;" /* w1 %= w2 */

/* ctx->len % (value & 7): a divisor of 0 leaves the length as it is. */
SEC("?tc")
__attribute__((naked)) int mod_maybe_zero(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u64 *)(r8 + 0);"
	                       "r2 &= 7;" MOD64_R1_R2 "w1 = w1;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

SEC("?tc")
__attribute__((naked)) int mod32_maybe_zero(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u64 *)(r8 + 0);"
	                       "r2 &= 7;" MOD32_R1_R2 "w1 = w1;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/*
 * R7 is 8 on the path walked first and any length on the other; the
 * access is bounded only through "r1 < r7", so R7 matters where the paths
 * meet and the second one may not be pruned against the first. The four
 * moves only add instructions, so that the state at label 2 is remembered.
 */
SEC("?tc")
__attribute__((naked)) int prune_x(void)
{
	asm volatile(LOOKUP_R8 "r3 = 1;"
	                       "r4 = 2;"
	                       "r5 = 3;"
	                       "r9 = 4;"
	                       "r7 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u32 *)(r6 + 4);"
	                       "if r2 != 0 goto 2f;"
	                       "r7 = 8;"
	                       "2: r1 = *(u32 *)(r6 + 8);"
	                       "if r1 < r7 goto 3f;"
	                       "r0 = 0;"
	                       "exit;"
	                       "3:" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A remainder or quotient is not tracked (Linux 6.18), even by a divisor
 * that cannot be 0, or of two constants: the 64-bit result is unbounded
 * and may not be added to a pointer. */
SEC("?tc")
__attribute__((naked)) int mod_nonzero(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u64 *)(r8 + 0);"
	                       "r2 &= 7;"
	                       "r2 |= 1;" MOD64_R1_R2 LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

/* A 32-bit remainder is not even zero-extended: bounding its low half
 * leaves the register unbounded. */
SEC("?tc")
__attribute__((naked)) int mod32_low_half_bounded(void)
{
	asm volatile(LOOKUP_R8 "r1 = *(u32 *)(r6 + 0);"
	                       "r2 = *(u64 *)(r8 + 0);"
	                       "r2 &= 7;" MOD32_R1_R2 "if w1 > 7 goto 1f;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

SEC("?tc")
__attribute__((naked)) int div_of_constants(void)
{
	asm volatile(LOOKUP_R8 "r1 = 8;"
	                       "r1 /= 2;" LOAD_AT_R1
	             :
	             : LOOKUP_ARGS
	             : "memory");
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u64);
} hashed SEC(".maps");

/* A null check is a compare with the immediate 0: one with a register
 * that holds 0 leaves the pointer possibly NULL (a hash lookup: an array's
 * with a constant key in range is never NULL). */
SEC("?tc")
__attribute__((naked)) int null_check_by_register(void)
{
	asm volatile("r1 = 0;"
	             "*(u32 *)(r10 - 4) = r1;"
	             "r2 = r10;"
	             "r2 += -4;"
	             "r1 = %[hashed] ll;"
	             "call %[lookup];"
	             "r1 = 0;"
	             "if r0 == r1 goto 1f;"
	             "r0 = *(u64 *)(r0 + 0);"
	             "exit;"
	             "1: r0 = 0;"
	             "exit;"
	             :
	             : [hashed] "i"(&hashed), [lookup] "i"(bpf_map_lookup_elem)
	             : "memory");
}

char _license[] SEC("license") = "GPL";
