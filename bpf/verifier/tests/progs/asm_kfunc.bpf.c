/* SPDX-License-Identifier: MIT */
/*
 * asm_kfunc: a kfunc called only from inline asm has no BTF in the object,
 * and libbpf refuses the whole object ("failed to find BTF for extern");
 * rqbpf refuses the program with libbpf's message. Not in the kernel
 * comparison: libbpf cannot open it.
 */
#include "common.h"

SEC("?tc")
int asm_only_kfunc(struct __sk_buff *ctx)
{
	asm volatile("r1 = r10; r1 += -8; call bpf_local_irq_save;" ::
	                 : "r0", "r1", "r2", "r3", "r4", "r5");
	return 0;
}

char _license[] SEC("license") = "GPL";
