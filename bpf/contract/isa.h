/* SPDX-License-Identifier: MIT */
/* isa.h: instruction-set facts (Floor 0, docs/HACKING.md "bpf/"): opcode
 * fields, opcodes newer than Debian 12's <linux/bpf.h>, which instructions
 * rqbpf runs, and where jumps and calls go (isa.c). */
#ifndef RQBPF_ISA_H
#define RQBPF_ISA_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OP(c)    ((c)&0xf0)
#define CLASS(c) ((c)&0x07)
#define SRC_X(c) ((c)&BPF_X)
#ifndef BPF_JMP32
#define BPF_JMP32 0x06
#endif
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

/* NULL when instruction @p i of @p insns is one rqbpf runs, else why not. */
const char *rqbpf_insn_check(const struct bpf_insn *insns, size_t cnt, size_t i);
/* The target of the jump or bpf-to-bpf call @p insn at @p i (true when it has one). */
bool rqbpf_insn_target(const struct bpf_insn *insn, size_t i, int64_t *target);

#endif /* RQBPF_ISA_H */
