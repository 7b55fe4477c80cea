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
 *
 * The forward pass is sound if, at every instruction, every register the
 * walk may hold a pointer in (in any frame, on any path) is in its set: a
 * pointer it missed would make "rP += rS" no check, and a state with rS
 * in a narrow range could then prune one where the add is refused. It
 * follows the walk's own rules for where a pointer can come from:
 *  - a function's entry: R10, the context in the main program's R1, and
 *    anything in a subprogram's R1-R5 (stack pointers of its callers too);
 *  - a 64-bit move, add or subtract with a pointer operand (alu.c refuses
 *    every other operation on one, or gives a scalar, as a 32-bit move);
 *  - ld_imm64 of a map or a map value;
 *  - a call: only a map lookup among the helpers and kfuncs
 *    (call_may_return_ptr() in calls.c, next to their signatures), and a
 *    subprogram that may return one at one of its exits (it never
 *    returns a stack pointer);
 *  - a 4-byte load through a register that may hold a pointer at the
 *    offset of a packet pointer field of the program's context (data,
 *    data_end, data_meta: mem.c gives a packet pointer for those fields);
 *  - otherwise a load: mem.c gives a scalar for every load from a map
 *    value or the context (a program may
 *    store a pointer into a map value, but a load from one is always a
 *    scalar), for any narrower load and any load at a
 *    variable offset; only an aligned 8-byte fill of a spilled register
 *    gives a pointer, and an atomic fetch reads as that load would (its
 *    old value goes to the source register, or R0 for cmpxchg). So a load
 *    can give a pointer only through a register that may point into a
 *    stack, and the pass tracks those too: R10, the arguments of
 *    subprograms, and whatever is moved, added or filled from them. A
 *    fill through R10 at a fixed slot gives what may have been spilled
 *    there; a fill through any other stack pointer (another frame's stack,
 *    or an offset not known here) may give anything.
 * The slots of the function's own frame that may hold a (stack) pointer
 * are set by an aligned 8-byte store of one through R10; by one through
 * any other stack pointer, all of them; and after a bpf-to-bpf call, all
 * of them (the callee may write through the pointers it was passed).
 * Stores through a map value or the context cannot reach a stack, and no
 * helper or kfunc writes a pointer to the stack. Invariants the rules rely
 * on: the stack pointers are a subset of the pointers (registers and
 * slots); R10 stays a stack pointer, as nothing may write it; and only the
 * innermost frame's registers and stack are compared with precision
 * (state.c), the calling frames' always in full, so the pass need only be
 * right for the function being walked.
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

/* What may hold a pointer, and what may hold a stack pointer (a subset):
 * registers, and the 8-byte slots of the function's own stack (bit k:
 * fp-8*(k+1)) as R10-based spills reach them. */
struct maybe {
	uint16_t regs, fp;
	uint64_t slots, fp_slots;
};

static int fp_slot(const struct bpf_insn *in, int base);

static void set_reg(struct maybe *p, int r, bool ptr, bool fp)
{
	uint16_t b = (uint16_t)(1u << (r & 0xf));

	p->regs = ptr ? (uint16_t)(p->regs | b) : (uint16_t)(p->regs & ~b);
	p->fp = fp ? (uint16_t)(p->fp | b) : (uint16_t)(p->fp & ~b);
}

/* What an 8-byte (or narrower) load of @in through R@base may give. Only a
 * fill of an aligned 8-byte spill gives a pointer (mem.c); map values and
 * the context give scalars. */
static void load_maybe(const struct bpf_insn *in, int base, const struct maybe *p, bool *ptr,
                       bool *fp)
{
	int slot = fp_slot(in, base);

	*ptr = *fp = false;
	if (BPF_SIZE(in->code) != BPF_DW || !(p->fp & (1u << (base & 0xf))))
		return;
	if (slot >= 0) {
		*ptr = p->slots & ((uint64_t)1 << slot);
		*fp = p->fp_slots & ((uint64_t)1 << slot);
		return;
	}
	*ptr = *fp = true; /* another frame's stack, or an offset not known here */
}

/* A store: only an aligned 8-byte STX through a stack pointer spills. */
static void ptr_store(const struct bpf_insn *in, struct maybe *p)
{
	uint16_t s = (uint16_t)(1u << (in->src_reg & 0xf));
	bool stx = BPF_CLASS(in->code) == BPF_STX;
	int slot = fp_slot(in, in->dst_reg);

	if (!(p->fp & (1u << (in->dst_reg & 0xf))))
		return; /* a map value or the context: no stack byte changes */
	if (slot >= 0) {
		uint64_t b = (uint64_t)1 << slot;

		p->slots = stx && (p->regs & s) ? p->slots | b : p->slots & ~b;
		p->fp_slots = stx && (p->fp & s) ? p->fp_slots | b : p->fp_slots & ~b;
		return;
	}
	if (!stx || BPF_SIZE(in->code) != BPF_DW)
		return;
	if (p->regs & s) /* a spill at an offset not known here */
		p->slots = UINT64_MAX;
	if (p->fp & s)
		p->fp_slots = UINT64_MAX;
}

/* An atomic reads the old value into R0 (cmpxchg) or the source (fetch),
 * as a load of its size through its base would. Its own store writes a
 * scalar: the slots' bits may stay. */
static void ptr_atomic(const struct bpf_insn *in, struct maybe *p)
{
	bool ptr, fp;

	load_maybe(in, in->dst_reg, p, &ptr, &fp);
	if (in->imm == BPF_CMPXCHG)
		set_reg(p, BPF_REG_0, ptr, fp);
	else if (in->imm & BPF_FETCH)
		set_reg(p, in->src_reg, ptr, fp);
}

static void ptr_mem(const struct bpf_insn *in, struct maybe *p)
{
	bool ptr, fp;

	if (BPF_CLASS(in->code) == BPF_LDX) {
		load_maybe(in, in->src_reg, p, &ptr, &fp);
		set_reg(p, in->dst_reg, ptr, fp);
	} else if (BPF_MODE(in->code) == BPF_ATOMIC) {
		ptr_atomic(in, p);
	} else {
		ptr_store(in, p);
	}
}

/* After a call: R1-R5 are unset, R0 is what the callee returns (never a
 * stack pointer: exit_check() refuses one), and a subprogram may have
 * written anything into our stack through the pointers we passed. */
static void ptr_call(const struct bpf_insn *in, struct maybe *p, bool subprog_returns_ptr)
{
	bool subprog = in->src_reg == BPF_PSEUDO_CALL;

	p->regs &= (uint16_t)~CALLER_SAVED;
	p->fp &= (uint16_t)~CALLER_SAVED;
	set_reg(p, BPF_REG_0, subprog ? subprog_returns_ptr : call_may_return_ptr(in), false);
	if (subprog)
		p->slots = p->fp_slots = UINT64_MAX;
}

/* What may hold a pointer after @in, given what may before it. Only a
 * 64-bit move, add or subtract of a pointer gives a pointer (alu.c: other
 * operations on one are refused, or give a scalar, as a 32-bit move). */
static struct maybe ptr_transfer(const struct bpf_insn *in, struct maybe p, bool returns_ptr)
{
	uint16_t d = (uint16_t)(1u << (in->dst_reg & 0xf)),
	         s = (uint16_t)(1u << (in->src_reg & 0xf));
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	switch (cls) {
	case BPF_ALU64:
		if (op == BPF_MOV && BPF_SRC(in->code) == BPF_X && !in->off)
			set_reg(&p, in->dst_reg, p.regs & s, p.fp & s);
		else if ((op == BPF_ADD || op == BPF_SUB) && BPF_SRC(in->code) == BPF_X)
			set_reg(&p, in->dst_reg, p.regs & (s | d), p.fp & (s | d));
		else if (op != BPF_ADD && op != BPF_SUB)
			set_reg(&p, in->dst_reg, false, false);
		return p;
	case BPF_ALU:
		set_reg(&p, in->dst_reg, false, false);
		return p;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		ptr_mem(in, &p);
		return p;
	case BPF_LD: /* ld_imm64 of a map or a map value */
		set_reg(&p, in->dst_reg, in->src_reg != 0, false);
		return p;
	case BPF_JMP:
		if (op == BPF_CALL)
			ptr_call(in, &p, returns_ptr);
		return p;
	default:
		return p;
	}
}

static bool merge_maybe(struct maybe *dst, const struct maybe *src)
{
	struct maybe m = {(uint16_t)(dst->regs | src->regs), (uint16_t)(dst->fp | src->fp),
	                  dst->slots | src->slots, dst->fp_slots | src->fp_slots};
	bool changed = m.regs != dst->regs || m.fp != dst->fp || m.slots != dst->slots ||
	               m.fp_slots != dst->fp_slots;

	*dst = m;
	return changed;
}

/* Function entries: the main program gets the context in R1, a subprogram
 * (or the main program, if some call targets it) anything in R1-R5. */
static void init_entries(struct venv *env, struct maybe *in_state)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	uint16_t fp = 1u << BPF_REG_10;
	bool main_called = false; /* its arguments may then be stack pointers */

	for (int i = 0; i < n && !main_called; i++)
		main_called = is_pseudo_call(&insns[i]) && insn_call_target(&insns[i], i) == 0;
	for (int i = 0; i < n; i++) {
		if (env->subprog_of[i] != i)
			continue;
		in_state[i].regs = (uint16_t)(ARGS_R1_R5 | fp);
		in_state[i].fp = (uint16_t)(i || main_called ? fp | ARGS_R1_R5 : fp);
	}
	/* A callback's R1 is bpf_loop's index or bpf_for_each_map_elem's map,
	 * on which arithmetic is refused: no pointer whose offset can matter
	 * (unless it is called as a function too). */
	for (int i = 0; i + 1 < n; i++)
		if (is_pseudo_func(&insns[i]))
			in_state[insn_call_target(&insns[i], i)].regs &=
			    (uint16_t) ~(1u << BPF_REG_1);
	for (int i = 0; i < n; i++)
		if (is_pseudo_call(&insns[i]))
			in_state[insn_call_target(&insns[i], i)].regs |= 1u << BPF_REG_1;
}

/* One round over the program; true when anything grew. @ret_ptr (per
 * subprogram start): an exit of it may return a pointer in R0. */
static bool maybe_round(struct venv *env, struct maybe *in_state, bool *ret_ptr)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	const struct rqbpf_prog_type *t = rqbpf_prog_type_find(env->prog->prog_type);
	bool changed = false;

	for (int i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];
		bool callee_ptr = is_pseudo_call(in) && ret_ptr[insn_call_target(in, i)];
		struct maybe out;

		if (i > 0 && is_ldimm64(&insns[i - 1]))
			continue;
		if (is_exit(in) && (in_state[i].regs & 1u) && !ret_ptr[env->subprog_of[i]])
			changed = ret_ptr[env->subprog_of[i]] = true;
		out = ptr_transfer(in, in_state[i], callee_ptr);
		if (t && in->code == (BPF_LDX | BPF_MEM | BPF_W) &&
		    (in->off == (int)t->data || in->off == (int)t->data_end ||
		     in->off == (int)t->data_meta) &&
		    (in_state[i].regs & (1u << (in->src_reg & 0xf))))
			set_reg(&out, in->dst_reg, true, false); /* maybe a packet pointer */
		if (insn_falls_through(in) && insn_next(in, i) < n)
			changed |= merge_maybe(&in_state[insn_next(in, i)], &out);
		if (insn_is_jump(in))
			changed |= merge_maybe(&in_state[insn_jump_target(in, i)], &out);
	}
	return changed;
}

static void compute_maybe_ptr(struct venv *env, uint16_t *mp)
{
	int n = (int)env->prog->insn_cnt;
	struct maybe *in_state = calloc((size_t)n, sizeof(*in_state));
	bool *ret_ptr = calloc((size_t)n, sizeof(*ret_ptr));

	if (!in_state || !ret_ptr) { /* anything may be a pointer */
		memset(mp, 0xff, sizeof(uint16_t) * (size_t)n);
		memset(env->maybe_fp, 0xff, sizeof(uint16_t) * (size_t)n);
	} else {
		init_entries(env, in_state);
		while (maybe_round(env, in_state, ret_ptr))
			;
		for (int i = 0; i < n; i++) {
			mp[i] = in_state[i].regs;
			env->maybe_fp[i] = in_state[i].fp;
		}
	}
	free(in_state);
	free(ret_ptr);
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
	    in->off < -RQBPF_STACK_SIZE || in->off % 8)
		return -1;
	return (-in->off) / 8 - 1;
}

/* A load from @slot (-1: not a fixed R10 slot, so any) into a register
 * that matters: what it read matters. */
static void slot_read_matters(struct prec *p, int slot)
{
	p->slots |= slot >= 0 ? (uint64_t)1 << slot : ALL_SLOTS;
}

static void prec_mem(const struct bpf_insn *in, struct prec *p, bool sink, uint16_t maybe_fp)
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
			slot_read_matters(p, slot);
		return;
	}
	if (BPF_MODE(in->code) == BPF_ATOMIC && (in->imm & BPF_FETCH)) {
		/* A fetch (xchg, cmpxchg too) loads the old value into the
		 * source register, or R0 for cmpxchg: if that matters, so does
		 * the slot it came from, as for a load. */
		uint16_t loaded = in->imm == BPF_CMPXCHG ? 1u : s;

		if (p->regs & loaded)
			slot_read_matters(p, fp_slot(in, in->dst_reg));
	}
	/* ST, STX: the base matters; a value stored into a slot that matters
	 * (or anywhere else that might be read back) matters. An atomic keeps
	 * the slot's old value in play (the slot's bit stays). */
	slot = BPF_MODE(in->code) == BPF_ATOMIC ? -1 : fp_slot(in, in->dst_reg);
	p->regs |= d;
	if (slot >= 0 && !(p->slots & ((uint64_t)1 << slot)))
		return; /* a spill nobody reads precisely */
	if (slot >= 0)
		p->slots &= ~((uint64_t)1 << slot);
	if (slot < 0 && (sink || !(maybe_fp & d)))
		return; /* only the loads that read it back can use it; a load
		         * from anything but a stack (a map value, the context, a
		         * record) gives an unknown scalar */
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

static bool calls_callback(const struct bpf_insn *in);

/* The registers whose values call @in at @i reads: a helper's or kfunc's
 * arguments, by its row; none for a global function (verified on its own,
 * for any scalar: a pointer argument is compared by its type anyway);
 * R1-R5 for a static subprogram or a call the table does not have. */
static uint16_t call_args(const struct venv *env, const struct bpf_insn *in, int i)
{
	const struct rqbpf_call *c;

	if (in->src_reg == BPF_PSEUDO_CALL)
		return is_global_func(env, insn_call_target(in, i)) ? 0 : ARGS_R1_R5;
	c = rqbpf_call_of_insn(in);
	return c ? (uint16_t)(((1u << c->nargs) - 1) << 1) : ARGS_R1_R5;
}

/* What matters before insn @i, given what matters after it. */
static struct prec prec_transfer(const struct venv *env, int i, struct prec out, uint16_t maybe_ptr,
                                 bool sink)
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
			/* a pointer's offset. With @sink, where one operand only may
			 * be a pointer, the other: the pointer's own value, if it is
			 * one, came from a register or a spilled pointer, which
			 * states compare in full anyway. */
			p.regs |= sink && (maybe_ptr & (d | s)) != (d | s)
			              ? (uint16_t)((d | s) & ~maybe_ptr)
			              : (uint16_t)(d | s);
		else if ((out.regs & d) && x)
			p.regs |= s;
		return p;
	case BPF_LD:
		p.regs &= (uint16_t)~d;
		return p;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		prec_mem(in, &p, sink, env->maybe_fp[i]);
		return p;
	default:
		break;
	}
	if (is_call(in)) { /* arguments, and memory they may point to */
		p.regs = (uint16_t)((out.regs & ~CALLER_SAVED) | call_args(env, in, i));
		/* A callback call reads no memory itself: only its callbacks may,
		 * and where they use nothing they read in a check, the caller's
		 * stack matters as it does after the call. */
		if (!calls_callback(in) || env->cb_reads_matter)
			p.slots = ALL_SLOTS;
	} else if (is_exit(in)) { /* a subprogram's R0 reaches its callers, where it
		                   * may matter after the call; a callback's, its
		                   * range; the main program's, a type's range */
		p.regs = env->ret_matters[env->subprog_of[i]] ||
		                 (!env->subprog_of[i] && env->ret_checked)
		             ? 1u
		             : 0;
		p.slots = 0;
	} else if (is_cond_jump(in)) {
		prec_cond_jump(env, i, &p);
	}
	return p;
}

static void prec_fixpoint(const struct venv *env, uint16_t *regs, uint64_t *slots, bool sink);

static bool calls_callback(const struct bpf_insn *in)
{
	const struct rqbpf_call *c = rqbpf_call_of_insn(in);

	return c && (c->role == RQBPF_ROLE_LOOP_CALLBACK || c->role == RQBPF_ROLE_MAP_CALLBACK);
}

/* R@reg at @i is set, in the straight-line code just before it (no jump
 * lands between), to R10 plus a constant: a pointer into the function's own
 * stack. */
static bool own_stack_ptr(const struct venv *env, int i, int reg)
{
	const struct bpf_insn *insns = env->prog->insns;
	int start = env->subprog_of[i];

	for (int k = i - 1; k >= start && k >= i - 8; k--) {
		const struct bpf_insn *in = &insns[k];

		if (in->dst_reg == reg && in->code == (BPF_ALU64 | BPF_MOV | BPF_X))
			return in->src_reg == BPF_REG_10 && !in->off;
		if (in->dst_reg == reg &&
		    (BPF_CLASS(in->code) != BPF_ALU64 || BPF_OP(in->code) != BPF_ADD ||
		     BPF_SRC(in->code) != BPF_K))
			return false;
		if (env->prune_point[k] || is_call(in))
			return false;
	}
	return false;
}

/* Insn @i of a callback may use what it reads through a pointer that may
 * point into a stack other than its own (a caller's, through its context)
 * in a check: a load or atomic fetch through such a pointer whose result
 * matters after it; a helper or kfunc that reads memory through such a
 * pointer. */
static bool cb_insn_reads_matter(const struct venv *env, const uint16_t *prec, int i)
{
	const struct bpf_insn *in = &env->prog->insns[i];
	uint8_t cls = BPF_CLASS(in->code);
	const struct rqbpf_call *c;

	uint16_t fp = env->maybe_fp[i];

	if (cls == BPF_LDX)
		return in->src_reg != BPF_REG_10 && (fp & (1u << (in->src_reg & 0xf))) &&
		       (prec[i + 1] & (1u << (in->dst_reg & 0xf)));
	if (cls == BPF_STX && BPF_MODE(in->code) == BPF_ATOMIC && (in->imm & BPF_FETCH))
		return in->dst_reg != BPF_REG_10 && (fp & (1u << (in->dst_reg & 0xf)));
	if (!is_call(in) || in->src_reg == BPF_PSEUDO_CALL)
		return false;
	c = rqbpf_call_of_insn(in);
	if (!c)
		return true;
	for (int a = 0; a < c->nargs; a++)
		if ((c->args[a] == RQBPF_ARG_MAP_KEY || c->args[a] == RQBPF_ARG_MAP_VALUE ||
		     c->args[a] == RQBPF_ARG_MEM) &&
		    !own_stack_ptr(env, i, a + 1))
			return true;
	return false;
}

/* Whether any callback, or a function one calls, may use what it reads
 * through its context in a check (env->cb_reads_matter). */
static bool callbacks_reads_matter(const struct venv *env)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	uint8_t *in_cb = calloc((size_t)n, 1);
	uint16_t *regs = calloc((size_t)n, sizeof(uint16_t));
	uint64_t *slots = calloc((size_t)n, sizeof(uint64_t));
	bool changed = true, matter = false, any = false;

	if (!in_cb || !regs || !slots) {
		free(in_cb);
		free(regs);
		free(slots);
		return true;
	}
	for (int i = 0; i + 1 < n && !any; i++)
		any = is_pseudo_func(&insns[i]);
	if (any)
		prec_fixpoint(env, regs, slots, true);
	for (int i = 0; i + 1 < n; i++)
		if (is_pseudo_func(&insns[i]))
			in_cb[insn_call_target(&insns[i], i)] = 1;
	while (changed) { /* the functions callbacks call, transitively */
		changed = false;
		for (int i = 0; i < n; i++)
			if (in_cb[env->subprog_of[i]] && is_pseudo_call(&insns[i]) &&
			    !in_cb[insn_call_target(&insns[i], i)]) {
				in_cb[insn_call_target(&insns[i], i)] = 1;
				changed = true;
			}
	}
	for (int i = 0; i + 1 < n && !matter; i++) {
		matter = in_cb[env->subprog_of[i]] && !(i && is_ldimm64(&insns[i - 1])) &&
		         cb_insn_reads_matter(env, regs, i);
	}
	free(in_cb);
	free(regs);
	free(slots);
	return matter;
}

int precision_init(struct venv *env)
{
	env->maybe_ptr = calloc(env->prog->insn_cnt, sizeof(uint16_t));
	env->maybe_fp = calloc(env->prog->insn_cnt, sizeof(uint16_t));
	env->ret_matters = calloc(env->prog->insn_cnt, 1);
	if (!env->maybe_ptr || !env->maybe_fp || !env->ret_matters)
		return -1;
	compute_maybe_ptr(env, env->maybe_ptr);
	compute_precision(env);
	return 0;
}

/*
 * The backward fixpoint into @p regs and @p slots (per insn). With @p sink,
 * a value stored other than into the function's own stack does not matter
 * by being stored: only a load that reads it back and whose result matters
 * makes it matter (callbacks_reads_matter() asks which loads those are).
 */
static void prec_fixpoint(const struct venv *env, uint16_t *regs, uint64_t *slots, bool sink)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	bool changed = true;

	memset(regs, 0, sizeof(uint16_t) * (size_t)n);
	memset(slots, 0, sizeof(uint64_t) * (size_t)n);
	while (changed) {
		changed = false;
		for (int i = n - 1; i >= 0; i--) {
			const struct bpf_insn *in = &insns[i];
			struct prec out = {0, 0}, pin;

			if (i > 0 && is_ldimm64(&insns[i - 1]))
				continue;
			if (insn_falls_through(in) && insn_next(in, i) < n) {
				out.regs |= regs[insn_next(in, i)];
				out.slots |= slots[insn_next(in, i)];
			}
			if (insn_is_jump(in)) {
				out.regs |= regs[insn_jump_target(in, i)];
				out.slots |= slots[insn_jump_target(in, i)];
			}
			pin = prec_transfer(env, i, out, env->maybe_ptr[i], sink);
			if ((pin.regs | regs[i]) != regs[i] || (pin.slots | slots[i]) != slots[i]) {
				regs[i] |= pin.regs;
				slots[i] |= pin.slots;
				changed = true;
			}
		}
	}
}

/* Which functions' R0 matters at their exits (env->ret_matters, per
 * start): a callback's (its range is checked), and a function's whose R0
 * matters after one of its calls. True when it grew. */
static bool update_ret_matters(struct venv *env)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	bool grew = false;

	for (int i = 0; i < n; i++) {
		int t;

		if (i && is_ldimm64(&insns[i - 1]))
			continue;
		if (!is_pseudo_func(&insns[i]) &&
		    !(is_pseudo_call(&insns[i]) && i + 1 < n && (env->prec_in[i + 1] & 1u)))
			continue;
		t = insn_call_target(&insns[i], i);
		if (!env->ret_matters[t]) {
			env->ret_matters[t] = 1;
			grew = true;
		}
	}
	return grew;
}

void compute_precision(struct venv *env)
{
	env->prec_dirty = false;
	memset(env->ret_matters, 0, env->prog->insn_cnt);
	for (;;) {
		prec_fixpoint(env, env->prec_in, env->sprec_in, false);
		if (update_ret_matters(env))
			continue;
		if (env->cb_reads_matter || !callbacks_reads_matter(env))
			break;
		env->cb_reads_matter = true;
	}
}
