/* SPDX-License-Identifier: MIT */
/*
 * precise.c: which registers' values matter exactly at each instruction.
 *
 * A scalar whose value can never reach a check (a branch condition, a
 * pointer's offset, a stack slot, a helper or subprogram argument, a
 * subprogram's return value) does not need its range compared when a
 * state is pruned: any scalar will do. This is a static stand-in for the
 * kernel's precision tracking, computed once before the walk:
 *  - a forward pass finds the registers that may hold a pointer (pointer
 *    arithmetic makes its scalar operand matter);
 *  - a backward pass propagates "matters" from those uses to the values
 *    they were computed from.
 * It over-approximates both. Conditional jumps count as checks only once
 * the walk has decided one (taken one side because of the operands'
 * ranges, env->decided): when a new one is decided the analysis is redone
 * before the next comparison. A jump between two registers that was not
 * decided narrows each by the other, so if either matters, both do. A
 * jump narrows the copies of its operands too (linked scalars, jumps.c):
 * the copies the walk has seen there (env->linked, which also redoes the
 * analysis when it grows) matter with the operands, all of them when one
 * does; a copy in a calling frame, whose registers and stack always
 * matter, makes them all matter. A
 * state that is fully verified was verified with every decision its own
 * paths made already recorded, so pruning against it stays sound: a value
 * that reaches no recorded check could only steer branches whose both
 * sides it has walked.
 */
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

#define ARGS_R1_R5   0x3eu
#define CALLER_SAVED 0x3fu

static bool is_call(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_CALL);
}

static bool is_exit(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_EXIT);
}

static bool is_cond_jump(const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT &&
	       op != BPF_JA;
}

/* What may hold a pointer: registers, and the 8-byte slots of the
 * function's own stack (bit k: fp-8*(k+1)) as R10-based spills reach them. */
struct maybe {
	uint16_t regs;
	uint64_t slots;
};

static int fp_slot(const struct bpf_insn *in, int base);

static void ptr_mem(const struct bpf_insn *in, struct maybe *p)
{
	uint16_t d = (uint16_t)(1u << (in->dst_reg & 0xf)),
	         s = (uint16_t)(1u << (in->src_reg & 0xf));
	uint8_t cls = BPF_CLASS(in->code);
	int slot;

	if (cls == BPF_LDX) {
		slot = fp_slot(in, in->src_reg);
		bool scalar = BPF_SIZE(in->code) != BPF_DW ||
		              (slot >= 0 && !(p->slots & ((uint64_t)1 << slot)));

		/* else a spilled pointer, or a load through another base */
		p->regs = scalar ? (uint16_t)(p->regs & ~d) : (uint16_t)(p->regs | d);
		return;
	}
	if (BPF_MODE(in->code) == BPF_ATOMIC) {
		p->regs &= (uint16_t) ~(s | 1u);
		return;
	}
	slot = fp_slot(in, in->dst_reg);
	if (slot >= 0 && cls == BPF_STX && (p->regs & s))
		p->slots |= (uint64_t)1 << slot;
	else if (slot >= 0)
		p->slots &= ~((uint64_t)1 << slot);
	else if (in->dst_reg != BPF_REG_10 && cls == BPF_STX && (p->regs & s))
		p->slots = UINT64_MAX; /* a pointer stored where it may alias the stack */
}

/* What may hold a pointer after @in, given what may before it. */
static struct maybe ptr_transfer(const struct bpf_insn *in, struct maybe p)
{
	uint16_t d = (uint16_t)(1u << (in->dst_reg & 0xf)),
	         s = (uint16_t)(1u << (in->src_reg & 0xf));
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	switch (cls) {
	case BPF_ALU64:
		if (op == BPF_MOV && BPF_SRC(in->code) == BPF_X && !in->off)
			p.regs = (uint16_t)((p.regs & ~d) | ((p.regs & s) ? d : 0));
		else if ((op == BPF_ADD || op == BPF_SUB) && BPF_SRC(in->code) == BPF_X)
			p.regs |= (p.regs & (s | d)) ? d : 0;
		else if (op != BPF_ADD && op != BPF_SUB)
			p.regs &= (uint16_t)~d;
		return p;
	case BPF_ALU:
		p.regs &= (uint16_t)~d;
		return p;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		ptr_mem(in, &p);
		return p;
	case BPF_LD:
		p.regs = in->src_reg ? (uint16_t)(p.regs | d) : (uint16_t)(p.regs & ~d);
		return p;
	case BPF_JMP:
		if (op == BPF_CALL) {
			p.regs = (uint16_t)((p.regs & ~CALLER_SAVED) | 1u);
			if (in->src_reg == BPF_PSEUDO_CALL) /* the callee may write our stack */
				p.slots = UINT64_MAX;
		}
		return p;
	default:
		return p;
	}
}

static bool merge_maybe(struct maybe *dst, const struct maybe *src)
{
	struct maybe m = {(uint16_t)(dst->regs | src->regs), dst->slots | src->slots};
	bool changed = m.regs != dst->regs || m.slots != dst->slots;

	*dst = m;
	return changed;
}

static void compute_maybe_ptr(struct venv *env, uint16_t *mp)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	struct maybe *in_state = calloc((size_t)n, sizeof(*in_state));
	bool changed = true;

	if (!in_state) { /* anything may be a pointer */
		memset(mp, 0xff, sizeof(uint16_t) * (size_t)n);
		return;
	}
	for (int i = 0; i < n; i++)
		if (env->subprog_of[i] == i) /* entry: ctx or arguments, and the frame */
			in_state[i].regs = (uint16_t)(ARGS_R1_R5 | (1u << BPF_REG_10));
	while (changed) {
		changed = false;
		for (int i = 0; i < n; i++) {
			const struct bpf_insn *in = &insns[i];
			struct maybe out;

			if (i > 0 && is_ldimm64(&insns[i - 1]))
				continue;
			out = ptr_transfer(in, in_state[i]);
			if (insn_falls_through(in) && insn_next(in, i) < n)
				changed |= merge_maybe(&in_state[insn_next(in, i)], &out);
			if (insn_is_jump(in))
				changed |= merge_maybe(&in_state[insn_jump_target(in, i)], &out);
		}
	}
	for (int i = 0; i < n; i++)
		mp[i] = in_state[i].regs;
	free(in_state);
}

/* What matters at a point: registers, and the main stack's 8-byte slots
 * (bit k: fp-8*(k+1)), addressed through R10 only. */
struct prec {
	uint16_t regs;
	uint64_t slots;
};

#define ALL_SLOTS UINT64_MAX

/* The slot an R10-based access of @size at @off covers exactly, or -1. */
static int fp_slot(const struct bpf_insn *in, int base)
{
	if (base != BPF_REG_10 || BPF_SIZE(in->code) != BPF_DW || in->off >= 0 ||
	    in->off < -V_STACK_SIZE || in->off % 8)
		return -1;
	return (-in->off) / 8 - 1;
}

static void prec_mem(const struct bpf_insn *in, struct prec *p)
{
	uint16_t d = (uint16_t)(1u << (in->dst_reg & 0xf)),
	         s = (uint16_t)(1u << (in->src_reg & 0xf));
	uint8_t cls = BPF_CLASS(in->code);
	int slot;

	if (cls == BPF_LDX) {
		bool needed = p->regs & d;

		slot = fp_slot(in, in->src_reg);
		p->regs = (uint16_t)((p->regs & ~d) | s);
		if (needed)
			p->slots |= slot >= 0 ? (uint64_t)1 << slot : ALL_SLOTS;
		return;
	}
	/* ST, STX: the base matters; a value stored into a slot that matters
	 * (or anywhere else that might be read back) matters. */
	slot = BPF_MODE(in->code) == BPF_ATOMIC ? -1 : fp_slot(in, in->dst_reg);
	p->regs |= d;
	if (slot >= 0 && !(p->slots & ((uint64_t)1 << slot)))
		return; /* a spill nobody reads precisely */
	if (slot >= 0)
		p->slots &= ~((uint64_t)1 << slot);
	if (cls == BPF_STX)
		p->regs |= (uint16_t)(s | (BPF_MODE(in->code) == BPF_ATOMIC ? 1u : 0));
}

/* A conditional jump at @i; @p holds what matters after it. */
static void prec_cond_jump(const struct venv *env, int i, struct prec *p)
{
	const struct bpf_insn *in = &env->prog->insns[i];
	const struct vlink *l = &env->linked[i];
	uint16_t d = (uint16_t)(1u << (in->dst_reg & 0xf)),
	         s = BPF_SRC(in->code) == BPF_X ? (uint16_t)(1u << (in->src_reg & 0xf)) : 0;
	/* The operands and their copies: the jump narrows each by the others. */
	uint16_t group = (uint16_t)(d | s | l->regs);

	if (env->decided[i]) /* the walk took one side only, trusting the operands */
		p->regs |= (uint16_t)(d | s);
	if ((p->regs & group) || (p->slots & l->slots) || l->outer) {
		p->regs |= group;
		p->slots |= l->slots;
	}
}

/* What matters before insn @i, given what matters after it. */
static struct prec prec_transfer(const struct venv *env, int i, struct prec out, uint16_t maybe_ptr)
{
	const struct bpf_insn *in = &env->prog->insns[i];
	uint16_t d = (uint16_t)(1u << (in->dst_reg & 0xf)),
	         s = (uint16_t)(1u << (in->src_reg & 0xf));
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	bool x = BPF_SRC(in->code) == BPF_X;
	struct prec p = out;

	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (op == BPF_MOV)
			p.regs = (uint16_t)((out.regs & ~d) | ((out.regs & d) && x ? s : 0));
		else if ((op == BPF_ADD || op == BPF_SUB) && x && cls == BPF_ALU64 &&
		         (maybe_ptr & (d | s)))
			p.regs |= d | s; /* a pointer's offset */
		else if ((out.regs & d) && x)
			p.regs |= s;
		return p;
	case BPF_LD:
		p.regs &= (uint16_t)~d;
		return p;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		prec_mem(in, &p);
		return p;
	default:
		break;
	}
	if (is_call(in)) { /* arguments, and memory they may point to */
		p.regs = (uint16_t)((out.regs & ~CALLER_SAVED) | ARGS_R1_R5);
		p.slots = ALL_SLOTS;
	} else if (is_exit(in)) { /* a subprogram's R0 reaches its caller */
		p.regs = env->subprog_of[i] ? 1u : 0;
		p.slots = 0;
	} else if (is_cond_jump(in)) {
		prec_cond_jump(env, i, &p);
	}
	return p;
}

int precision_init(struct venv *env)
{
	env->maybe_ptr = calloc(env->prog->insn_cnt, sizeof(uint16_t));
	if (!env->maybe_ptr)
		return -1;
	compute_maybe_ptr(env, env->maybe_ptr);
	compute_precision(env);
	return 0;
}

void compute_precision(struct venv *env)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	const uint16_t *mp = env->maybe_ptr;
	bool changed = true;

	env->prec_dirty = false;
	memset(env->prec_in, 0, sizeof(uint16_t) * (size_t)n);
	memset(env->sprec_in, 0, sizeof(uint64_t) * (size_t)n);
	while (changed) {
		changed = false;
		for (int i = n - 1; i >= 0; i--) {
			const struct bpf_insn *in = &insns[i];
			struct prec out = {0, 0}, pin;

			if (i > 0 && is_ldimm64(&insns[i - 1]))
				continue;
			if (insn_falls_through(in) && insn_next(in, i) < n) {
				out.regs |= env->prec_in[insn_next(in, i)];
				out.slots |= env->sprec_in[insn_next(in, i)];
			}
			if (insn_is_jump(in)) {
				out.regs |= env->prec_in[insn_jump_target(in, i)];
				out.slots |= env->sprec_in[insn_jump_target(in, i)];
			}
			pin = prec_transfer(env, i, out, mp[i]);
			if ((pin.regs | env->prec_in[i]) != env->prec_in[i] ||
			    (pin.slots | env->sprec_in[i]) != env->sprec_in[i]) {
				env->prec_in[i] |= pin.regs;
				env->sprec_in[i] |= pin.slots;
				changed = true;
			}
		}
	}
}
