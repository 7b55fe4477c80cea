/* SPDX-License-Identifier: MIT */
/*
 * call_chains: the kernel's check of every chain of calls after the walk
 * (at most 8 frames and 512 bytes of stack, each frame's depth rounded up
 * to 16), including calls no path takes and recursion the walk bounded;
 * and the walk's own frame limit (expect.txt).
 */
#include "common.h"

#define NAKED __attribute__((naked, noinline, used)) static int

/* f1 -> f2 -> ... -> f9: nine frames below the main program's. */
NAKED f9(void)
{
	asm volatile("r0 = 0; exit;" ::: "memory");
}
#define CHAIN(n, next)                                                                             \
	NAKED f##n(void)                                                                           \
	{                                                                                          \
		asm volatile("call " #next "; r0 += 1; exit;" ::: "memory");                       \
	}
CHAIN(8, f9)
CHAIN(7, f8)
CHAIN(6, f7)
CHAIN(5, f6)
CHAIN(4, f5)
CHAIN(3, f4)
CHAIN(2, f3)
CHAIN(1, f2)

/* The chain is called only behind a branch no path takes. */
SEC("?tc")
__attribute__((naked)) int chain_not_taken(void)
{
	asm volatile("r1 = 0; if r1 != 0 goto 1f; r0 = 0; exit; 1: call f1; exit;" ::: "memory");
}

/* Recursion r1 levels deep: 3 passes the walk, 9 does not. */
NAKED countdown(void)
{
	asm volatile("if r1 s> 0 goto 1f; r0 = 1; exit;"
	             "1: r1 += -1; call countdown; r0 += 1; exit;" ::
	                 : "memory");
}

SEC("?tc")
__attribute__((naked)) int recursion_shallow(void)
{
	asm volatile("r1 = 3; call countdown; exit;" ::: "memory");
}

SEC("?tc")
__attribute__((naked)) int recursion_deep(void)
{
	asm volatile("r1 = 9; call countdown; exit;" ::: "memory");
}

/* Frames of 264 and 256 bytes: 272 + 256 after rounding, one frame of
 * 256 under another of 256: exactly 512. */
NAKED use_256(void)
{
	asm volatile("r1 = 1; *(u64 *)(r10 - 256) = r1; r0 = *(u64 *)(r10 - 256); exit;" ::
	                 : "memory");
}

SEC("?tc")
__attribute__((naked)) int stack_528(void)
{
	asm volatile("r1 = 2; *(u64 *)(r10 - 264) = r1; call use_256;"
	             "r1 = *(u64 *)(r10 - 264); r0 += r1; exit;" ::
	                 : "memory");
}

SEC("?tc")
__attribute__((naked)) int stack_512(void)
{
	asm volatile("r1 = 2; *(u64 *)(r10 - 256) = r1; call use_256;"
	             "r1 = *(u64 *)(r10 - 256); r0 += r1; exit;" ::
	                 : "memory");
}

char _license[] SEC("license") = "GPL";
