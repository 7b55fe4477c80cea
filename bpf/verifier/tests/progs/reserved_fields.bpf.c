/* SPDX-License-Identifier: MIT */
/*
 * reserved_fields: instructions with an operand field their form does not
 * use set to something other than zero; the kernel refuses each with
 * "<class> uses reserved fields" (expect.txt). The instructions are
 * spelled as bytes: an assembler would not emit them.
 */
#include "common.h"

#define PROG(name, body)                                                                           \
	SEC("?tc") __attribute__((naked)) int name(void)                                           \
	{                                                                                          \
		asm volatile(body ::: "memory");                                                   \
	}
/* One instruction: opcode, dst | src << 4, off, imm. */
#define INSN(code, regs, off, imm) ".byte " #code "," #regs "; .short " #off "; .long " #imm ";"

PROG(jeq_imm_with_src, "r0 = 0;" INSN(0x15, 0x10, 0, 0) "exit;")
PROG(jeq_reg_with_imm, "r0 = 0; r1 = 0;" INSN(0x1d, 0x10, 0, 5) "exit;")
PROG(exit_with_imm, "r0 = 0;" INSN(0x95, 0x00, 0, 1))
PROG(ldx_with_imm, "r1 = 0; *(u64 *)(r10 - 8) = r1;" INSN(0x79, 0xa0, -8, 5) "exit;")
PROG(stx_with_imm, "r1 = 0;" INSN(0x7b, 0x1a, -8, 5) "r0 = *(u64 *)(r10 - 8); exit;")
PROG(st_with_src, INSN(0x7a, 0x1a, -8, 5) "r0 = *(u64 *)(r10 - 8); exit;")

char _license[] SEC("license") = "GPL";
