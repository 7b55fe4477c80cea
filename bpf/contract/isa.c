/* SPDX-License-Identifier: MIT */
/* isa.c: which instructions rqbpf runs (the whole set clang 14 and 19 emit
 * at -O2, cpu v1-v4), checked once at load, and where jumps and calls go. */
#include <stdio.h>

#include "isa.h"

/* may_goto is BPF_JMP | BPF_JCOND with source 0 (BPF_MAY_GOTO), both newer
 * than Debian 12's <linux/bpf.h>. */
#define BPF_JCOND_OP 0xe0

/* Instruction classes and their valid opcodes, for the loader's check. */
static bool alu_ok(const struct bpf_insn *in, bool is64)
{
	uint8_t op = OP(in->code);

	switch (op) {
	case BPF_ADD:
	case BPF_SUB:
	case BPF_MUL:
	case BPF_OR:
	case BPF_AND:
	case BPF_LSH:
	case BPF_RSH:
	case BPF_XOR:
	case BPF_ARSH:
		return in->off == 0;
	case BPF_DIV:
	case BPF_MOD:
		return in->off == 0 || in->off == 1;
	case BPF_NEG:
		return !SRC_X(in->code) && in->off == 0;
	case BPF_MOV:
		if (!SRC_X(in->code))
			return in->off == 0;
		return in->off == 0 || in->off == 8 || in->off == 16 || (is64 && in->off == 32);
	case BPF_END:
		if (is64 && SRC_X(in->code))
			return false;
		return in->imm == 16 || in->imm == 32 || in->imm == 64;
	default:
		return false;
	}
}

static bool jmp_ok(const struct bpf_insn *in, bool is64)
{
	switch (OP(in->code)) {
	case BPF_JA:
		return !SRC_X(in->code);
	case BPF_CALL:
		return is64 && !SRC_X(in->code) && (in->src_reg <= BPF_PSEUDO_KFUNC_CALL);
	case BPF_EXIT:
		return is64 && !SRC_X(in->code);
	case BPF_JEQ:
	case BPF_JGT:
	case BPF_JGE:
	case BPF_JSET:
	case BPF_JNE:
	case BPF_JSGT:
	case BPF_JSGE:
	case BPF_JLT:
	case BPF_JLE:
	case BPF_JSLT:
	case BPF_JSLE:
		return true;
	default:
		return false;
	}
}

static bool atomic_ok(int32_t imm)
{
	switch (imm) {
	case BPF_ADD:
	case BPF_OR:
	case BPF_AND:
	case BPF_XOR:
	case BPF_ADD | BPF_FETCH:
	case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH:
	case BPF_XOR | BPF_FETCH:
	case BPF_XCHG:
	case BPF_CMPXCHG:
		return true;
	default:
		return false;
	}
}

static const char *mem_check(const struct bpf_insn *in)
{
	uint8_t mode = in->code & 0xe0, size = in->code & 0x18, cls = CLASS(in->code);

	if (cls == BPF_LDX && (mode == BPF_MEM || (mode == BPF_MEMSX && size != BPF_DW)))
		return NULL;
	if ((cls == BPF_ST || cls == BPF_STX) && mode == BPF_MEM)
		return NULL;
	if (cls == BPF_STX && mode == BPF_ATOMIC && (size == BPF_W || size == BPF_DW))
		return atomic_ok(in->imm) ? NULL : "unsupported atomic operation";
	if (cls == BPF_LD && (mode == BPF_ABS || mode == BPF_IND))
		return NULL; /* legacy packet access: the verifier checks its fields */
	return "unknown load/store opcode";
}

const char *rqbpf_insn_check(const struct bpf_insn *insns, size_t cnt, size_t i)
{
	const struct bpf_insn *in = &insns[i];
	/* per thread: objects may be opened on several threads at once */
	static _Thread_local char buf[64];

	if (in->dst_reg > BPF_REG_10 || in->src_reg > BPF_REG_10)
		return "bad register";
	switch (CLASS(in->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		if (in->dst_reg == BPF_REG_10)
			return "write to the frame pointer r10";
		return alu_ok(in, CLASS(in->code) == BPF_ALU64) ? NULL : "unknown ALU opcode";
	case BPF_JMP:
	case BPF_JMP32:
		if (in->code == (BPF_JMP | BPF_JCOND_OP))
			return NULL; /* may_goto: the verifier checks its fields */
		return jmp_ok(in, CLASS(in->code) == BPF_JMP) ? NULL : "unknown jump opcode";
	case BPF_LD:
		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			return mem_check(in);
		if (i + 1 >= cnt || insns[i + 1].code || insns[i + 1].dst_reg ||
		    insns[i + 1].src_reg || insns[i + 1].off)
			return "malformed ld_imm64";
		if ((in->src_reg > BPF_PSEUDO_MAP_VALUE && in->src_reg != BPF_PSEUDO_FUNC) ||
		    in->dst_reg == BPF_REG_10) {
			snprintf(buf, sizeof(buf), "ld_imm64 source %u is not supported",
			         in->src_reg);
			return in->dst_reg == BPF_REG_10 ? "write to the frame pointer r10" : buf;
		}
		return NULL;
	case BPF_LDX:
		if (in->dst_reg == BPF_REG_10)
			return "write to the frame pointer r10";
		return mem_check(in);
	default:
		return mem_check(in);
	}
}

bool rqbpf_insn_target(const struct bpf_insn *in, size_t i, int64_t *target)
{
	uint8_t cls = CLASS(in->code), op = OP(in->code);

	if (cls != BPF_JMP && cls != BPF_JMP32)
		return false;
	if (op == BPF_EXIT || (op == BPF_CALL && in->src_reg != BPF_PSEUDO_CALL))
		return false;
	if (op == BPF_CALL || (cls == BPF_JMP32 && op == BPF_JA))
		*target = (int64_t)i + in->imm + 1;
	else
		*target = (int64_t)i + in->off + 1;
	return true;
}
