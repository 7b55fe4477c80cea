/* SPDX-License-Identifier: MIT */
/*
 * insn.h: small macros that build post-link BPF instructions (prog.h's
 * encoding) for the verifier's hand-written test programs, and the fixed
 * map table the tests and the fuzzer share.
 */
#ifndef RQBPF_VERIFIER_TEST_INSN_H
#define RQBPF_VERIFIER_TEST_INSN_H

#include <linux/bpf.h>

#include "prog.h"

#ifndef BPF_MEMSX /* newer than Debian 12's <linux/bpf.h> */
#define BPF_MEMSX 0x80
#endif

#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_IMM(d, i)        INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s)        INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV32_REG(d, s)        INSN(BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU64_IMM(op, d, i)    INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU64_REG(op, d, s)    INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, i)    INSN(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU32_REG(op, d, s)    INSN(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define LDX(sz, d, s, o)       INSN(BPF_LDX | (sz) | BPF_MEM, d, s, o, 0)
#define STX(sz, d, s, o)       INSN(BPF_STX | (sz) | BPF_MEM, d, s, o, 0)
#define ST(sz, d, o, i)        INSN(BPF_ST | (sz) | BPF_MEM, d, 0, o, i)
#define JMP_IMM(op, d, i, o)   INSN(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP_REG(op, d, s, o)   INSN(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP32_IMM(op, d, i, o) INSN(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define JA(o)                  INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define LD_MAP(d, m)                                                                               \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, m), INSN(0, 0, 0, 0, 0)
#define LD_MAPVAL(d, m, o)                                                                         \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_VALUE, 0, m), INSN(0, 0, 0, 0, o)
#define LD_IMM64(d, v)                                                                             \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, (int32_t)(v)),                                    \
	    INSN(0, 0, 0, 0, (int32_t)((uint64_t)(v) >> 32))
#define CALL(f)    INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define KCALL(k)   INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, k)
#define PCALL(rel) INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
#define EXIT()     INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* r0 = lookup(map m, key = 4-byte k at fp-4). 6 instructions. */
#define LOOKUP(m, k)                                                                               \
	ST(BPF_W, BPF_REG_10, -4, k), MOV64_REG(BPF_REG_2, BPF_REG_10),                            \
	    ALU64_IMM(BPF_ADD, BPF_REG_2, -4), LD_MAP(BPF_REG_1, m),                               \
	    CALL(BPF_FUNC_map_lookup_elem)

enum test_map {
	M_ARR,    /* array, value 4: a res lock at 0 */
	M_DATA_A, /* .data.A: a res lock at 0 */
	M_DATA_B, /* .data.B: a res lock at 0 */
	M_BSS,    /* res_spin.bss: 8 bytes, no lock */
	M_PLAIN,  /* hash, value 16, no lock */
	M_SPIN,   /* array, value 8: a bpf_spin_lock at 0 */
	M_RODATA, /* .rodata, 8 bytes */
	M_BIG,    /* array, value 64: a res lock at 8 */
	M_RING,   /* ring buffer, 4096 bytes */
	M_QUEUE,  /* queue of 4 values of 8 bytes */
	M_PCPU,   /* per-CPU array, value 8 */
	M_OUTER,  /* array of 2 maps like M_INNER */
	M_INNER,  /* M_OUTER's inner map template: array, value 8, a bpf_spin_lock at 0 */
	M_COUNT
};

static const struct rqbpf_map_desc test_maps[M_COUNT] = {
    [M_ARR] = {"arrmap", BPF_MAP_TYPE_ARRAY, 4, 4, 64, 0, -1, false, false, false, true, 0},
    [M_DATA_A] = {".data.A", BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, -1, true, false, false, true, 0},
    [M_DATA_B] = {".data.B", BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, -1, true, false, false, true, 0},
    [M_BSS] = {"res_spin.bss", BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, -1, true, false, false, true, 0},
    [M_PLAIN] = {"plain", BPF_MAP_TYPE_HASH, 4, 16, 16, -1, -1, false, false, false, false, 0},
    [M_SPIN] = {"spinmap", BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, 0, false, false, false, true, 0},
    [M_RODATA] = {"res_spin.rodata", BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, -1, true, true, false, true,
                  0},
    [M_BIG] = {"bigval", BPF_MAP_TYPE_ARRAY, 4, 64, 8, 8, -1, false, false, false, true, 0},
    [M_RING] = {"ring", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, -1, -1, false, false, false, false, 0},
    [M_QUEUE] = {"qmap", BPF_MAP_TYPE_QUEUE, 0, 8, 4, -1, -1, false, false, false, false, 0},
    [M_PCPU] = {"pcpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, -1, -1, false, false, false, true, 0},
    [M_OUTER] = {"outer", BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, -1, -1, false, false, false, false,
                 M_INNER},
    [M_INNER] = {"outer.inner", BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, 0, false, false, false, true, 0},
};

#endif /* RQBPF_VERIFIER_TEST_INSN_H */
