/* SPDX-License-Identifier: MIT */
/*
 * jumps.c: conditional jumps. When the ranges decide a comparison, only one
 * side is walked (branch pruning, which also bounds loops whose counter is
 * known); otherwise the state forks and each side narrows the ranges to
 * what it implies, for the operands and for every copy of them (linked
 * scalars: same id, in any frame, registers or spilled slots). Comparing a
 * possibly-NULL map value with zero is the null check: every copy of that
 * pointer (same id) becomes a map value (a map of maps': its inner map) on
 * one side and the scalar 0 on the other. Comparing a packet pointer with
 * data_end gives the pointers of its id a range on the side where it is in
 * bounds.
 */
#include "vstate.h"

static void mark_null_checked_reg(const struct venv *env, struct vreg *r, uint32_t id, bool is_null)
{
	if (!vtype_maybe_null(r->type) || r->id != id)
		return;
	if (is_null) {
		reg_mark_const(r, 0);
		return;
	}
	if (r->type == T_RINGBUF_MEM_OR_NULL) {
		r->type = T_RINGBUF_MEM; /* the id stays: it names the reference */
		return;
	}
	if (r->type == T_MAP_PTR_OR_NULL) {
		/* a map of maps' inner map: the kernel's CONST_PTR_TO_MAP of
		 * the outer map's inner_map_meta (r->map, its template) */
		r->type = T_MAP_PTR;
		r->id = 0;
		return;
	}
	r->type = T_MAP_VALUE;
	if (!map_has_lock_field(env, r->map))
		r->id = 0;
}

static void mark_null_checked(const struct venv *env, struct vstate *st, uint32_t id, bool is_null)
{
	if (is_null)
		refs_drop_null(st, id); /* a NULL record holds no reference */
	for (int fr = 0; fr <= st->curframe; fr++) {
		struct vframe *f = st->frame[fr];

		for (int i = 0; i < V_NREGS; i++)
			mark_null_checked_reg(env, &f->regs[i], id, is_null);
		for (int i = 0; i < V_SLOTS; i++)
			if (f->stack[i].bytes[0] == S_SPILL)
				mark_null_checked_reg(env, &f->stack[i].spill, id, is_null);
	}
}

static bool is_const_zero(const struct vreg *r)
{
	uint64_t v;

	return reg_is_const(r, &v) && v == 0;
}

/* Outcome of comparing a pointer that cannot be NULL with zero: 1, 0, -1. */
static int nonnull_ptr_vs_zero(const struct vreg *a, const struct vreg *b, uint8_t op)
{
	if (!reg_is_pointer(a) || vtype_maybe_null(a->type) || !is_const_zero(b))
		return -1;
	if (op == BPF_JEQ)
		return 0;
	if (op == BPF_JNE)
		return 1;
	return -1;
}

static int check_jmp_fields(struct venv *env, const struct bpf_insn *in)
{
	uint8_t op = BPF_OP(in->code);

	if (op > BPF_JSLE) {
		verr(env, env->insn_idx, "invalid BPF_JMP/JMP32 opcode %x", op);
		return -1;
	}
	/* An operand field the source bit does not use must be zero. */
	if (in->dst_reg > BPF_REG_10 || in->src_reg > BPF_REG_10 ||
	    (BPF_SRC(in->code) == BPF_X ? in->imm != 0 : in->src_reg != BPF_REG_0)) {
		verr(env, env->insn_idx, "BPF_JMP/JMP32 uses reserved fields");
		return -1;
	}
	return 0;
}

/* The walk follows one side of the jump at @idx because of the ranges:
 * its operands' values matter from now on (precise.c). */
static void mark_decided(struct venv *env, int idx)
{
	if (!env->decided[idx]) {
		env->decided[idx] = 1;
		env->prec_dirty = true;
	}
}

/*
 * @reg, linked to @known (same base id), takes what @known's narrowed
 * range says of it: the same range when their deltas are equal (it then
 * takes @known's id and delta too, as the kernel copies the register),
 * else @known's range plus the difference of the deltas, as a 32-bit add
 * zero-extended when either is a 32-bit add link (both values then fit in
 * 32 bits). A 32-bit add link and a 64-bit one say nothing of each other.
 */
static void narrow_one(struct vreg *reg, const struct vreg *known)
{
	struct vrange k;
	bool is64 = !((reg->id | known->id) & V_ID_ADD32);

	if (((reg->id ^ known->id) & V_ID_ADD) == V_ID_ADD)
		return;
	if (scalar_delta(reg) == scalar_delta(known)) {
		reg->r = known->r;
		reg->id = known->id;
		reg->off = known->off;
		return;
	}
	rng_const(&k, (uint64_t)((int64_t)scalar_delta(reg) - scalar_delta(known)));
	reg->r = known->r;
	rng_alu(&reg->r, &k, BPF_ADD, is64, 0);
}

static bool linked_to(const struct vreg *r, uint32_t base)
{
	return r->type == T_SCALAR && r->id && scalar_base_id(r->id) == base;
}

/* Visits every scalar linked to @base (copies of one value, maybe plus
 * constants): registers and spilled slots of every frame. @reg or @slot is
 * the scalar's index in frame @fr, the other one -1. */
typedef void linked_visit(void *ctx, struct vreg *r, int fr, int reg, int slot);

static void for_each_linked(struct vstate *st, uint32_t base, linked_visit *visit, void *ctx)
{
	for (int fr = 0; fr <= st->curframe; fr++) {
		struct vframe *f = st->frame[fr];

		for (int i = 0; i < V_NREGS; i++)
			if (linked_to(&f->regs[i], base))
				visit(ctx, &f->regs[i], fr, i, -1);
		for (int i = 0; i < V_SLOTS; i++)
			if (f->stack[i].bytes[0] == S_SPILL && linked_to(&f->stack[i].spill, base))
				visit(ctx, &f->stack[i].spill, fr, -1, i);
	}
}

struct narrow_ctx {
	const struct vreg *known, *skip1, *skip2;
};

static void narrow_visit(void *ctx, struct vreg *r, int fr, int reg, int slot)
{
	const struct narrow_ctx *n = ctx;

	(void)fr;
	(void)reg;
	(void)slot;
	if (r != n->skip1 && r != n->skip2)
		narrow_one(r, n->known);
}

/* Scalars linked to @known take its narrowed range, the jump's operands
 * excepted (each keeps its own narrowing). */
static void narrow_linked(struct vstate *st, const struct vreg *known, const struct vreg *skip1,
                          const struct vreg *skip2)
{
	struct narrow_ctx n = {known, skip1, skip2};

	for_each_linked(st, scalar_base_id(known->id), narrow_visit, &n);
}

/* Store narrowed ranges into the operands and every copy of them. When
 * both operands are linked to one value, each keeps its own narrowing
 * (both are sound) and the other copies follow the destination. */
static void set_ranges(struct vstate *st, const struct bpf_insn *in, const struct vrange *d,
                       const struct vrange *s)
{
	struct vreg *dst = &cur_frame(st)->regs[in->dst_reg];
	struct vreg *src = BPF_SRC(in->code) == BPF_X ? &cur_frame(st)->regs[in->src_reg] : NULL;

	dst->r = *d;
	if (src)
		src->r = *s;
	if (dst->id)
		narrow_linked(st, dst, dst, src);
	if (src && src->id && scalar_base_id(src->id) != scalar_base_id(dst->id))
		narrow_linked(st, src, src, dst);
}

struct collect_ctx {
	struct vlink *l;
	int curframe;
};

static void collect_visit(void *ctx, struct vreg *r, int fr, int reg, int slot)
{
	struct collect_ctx *c = ctx;

	(void)r;
	if (fr != c->curframe)
		c->l->outer = true;
	else if (reg >= 0)
		c->l->regs |= (uint16_t)(1u << reg);
	else
		c->l->slots |= (uint64_t)1 << slot;
}

/* What is linked to the scalar base id @base at the jump: registers and
 * spilled slots of the current frame, and whether any copy lives in a
 * calling frame. */
static void collect_linked(struct vstate *st, uint32_t base, struct vlink *l)
{
	struct collect_ctx c = {l, st->curframe};

	for_each_linked(st, base, collect_visit, &c);
}

/* The jump at @idx narrows its operands' copies too: record them, so that
 * precision makes the operands and their copies matter together. */
static void record_linked(struct venv *env, struct vstate *st, int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	const struct vframe *f = st->frame[st->curframe];
	struct vlink *rec = &env->linked[idx], l = *rec;

	if (f->regs[in->dst_reg].id)
		collect_linked(st, scalar_base_id(f->regs[in->dst_reg].id), &l);
	if (BPF_SRC(in->code) == BPF_X && f->regs[in->src_reg].id)
		collect_linked(st, scalar_base_id(f->regs[in->src_reg].id), &l);
	if (l.regs != rec->regs || l.slots != rec->slots || l.outer != rec->outer) {
		*rec = l;
		env->prec_dirty = true;
	}
}

/* Scalar against scalar, outcome unknown: narrow each side, and fork when
 * both remain possible. */
static int scalar_fork(struct venv *env, struct vstate *st, int idx, int *next,
                       struct vstate **other, int *other_idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	uint8_t op = BPF_OP(in->code);
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32;
	int target = idx + in->off + 1;
	struct vrange jd = cur_frame(st)->regs[in->dst_reg].r, js, fd, fs;
	bool jump_ok, fall_ok;

	if (BPF_SRC(in->code) == BPF_X) {
		js = cur_frame(st)->regs[in->src_reg].r;
	} else {
		rng_const(&js, is32 ? (uint32_t)in->imm : (uint64_t)(int64_t)in->imm);
	}
	fd = jd;
	fs = js;
	record_linked(env, st, idx);
	jump_ok = rng_refine(&jd, &js, op, is32);
	fall_ok = rng_refine(&fd, &fs, rng_negate(op), is32);
	if (jump_ok && fall_ok) {
		struct vstate *fork = state_copy(st);

		if (!fork) {
			verr(env, idx, "out of memory");
			return -1;
		}
		set_ranges(fork, in, &jd, &js);
		*other = fork;
		*other_idx = target;
	}
	if (!jump_ok || !fall_ok)
		mark_decided(env, idx);
	if (fall_ok || !jump_ok) {
		set_ranges(st, in, &fd, &fs);
		*next = idx + 1;
	} else {
		set_ranges(st, in, &jd, &js);
		*next = target;
	}
	return 0;
}

#define MAX_PACKET_OFF 0xffff

/* The kernel's find_good_pkt_pointers(): on a side where the packet
 * pointer @r (a copy) is proved at most data_end (@right_open: below it),
 * every pointer of its type and id in @st may access the bytes before it. */
static void pkt_mark_range(struct vstate *st, const struct vreg *r, bool right_open)
{
	uint32_t range;

	if (r->off < 0 || (r->off == 0 && right_open))
		return;
	if (r->r.umax > MAX_PACKET_OFF || r->r.umax + (uint64_t)r->off > MAX_PACKET_OFF)
		return;
	range = (uint32_t)r->off + (right_open ? 1 : 0);
	for (int fr = 0; fr <= st->curframe; fr++) {
		struct vframe *f = st->frame[fr];

		for (int i = 0; i < V_NREGS + V_SLOTS; i++) {
			struct vreg *x = i < V_NREGS ? &f->regs[i] : &f->stack[i - V_NREGS].spill;

			if (i >= V_NREGS && f->stack[i - V_NREGS].bytes[0] != S_SPILL)
				continue;
			if (x->type == r->type && x->id == r->id && x->mem_size < range)
				x->mem_size = range;
		}
	}
}

/* data (offset and variable part zero): what data_meta is compared with. */
static bool is_init_pkt(const struct vreg *r)
{
	return r->type == T_PACKET && !r->off && rng_is_const(&r->r) && !r->r.umin;
}

/* @p is compared as the lower side of @end: data' with data_end, or
 * data_meta' with data. */
static bool pkt_below(const struct vreg *p, const struct vreg *end)
{
	return (p->type == T_PACKET && end->type == T_PACKET_END) ||
	       (p->type == T_PACKET_META && is_init_pkt(end));
}

/* The kernel's try_match_pkt_pointers(): a 64-bit comparison of a packet
 * pointer with data_end (or of data_meta' with data) gives the side where it
 * is in bounds its range. @fall continues after the jump, @jump at its
 * target. */
static void pkt_compare(const struct bpf_insn *in, const struct vreg *dst, const struct vreg *src,
                        struct vstate *fall, struct vstate *jump)
{
	uint8_t op = BPF_OP(in->code);
	bool lo_dst = pkt_below(dst, src), lo_src = pkt_below(src, dst);
	/* With the packet pointer first: "p' < end" and "p' <= end" hold on
	 * the jump's side, "p' > end" and "p' >= end" fail on the fall's;
	 * "<" and ">=" prove it below the end (right open). With the end
	 * first, each is the other way round. */
	bool on_jump = op == BPF_JLT || op == BPF_JLE, open = op == BPF_JLT || op == BPF_JGE;

	if (BPF_SRC(in->code) != BPF_X || BPF_CLASS(in->code) == BPF_JMP32 ||
	    (!lo_dst && !lo_src) ||
	    (op != BPF_JGT && op != BPF_JLT && op != BPF_JGE && op != BPF_JLE))
		return;
	if (lo_dst)
		pkt_mark_range(on_jump ? jump : fall, dst, open);
	else
		pkt_mark_range(on_jump ? fall : jump, src, !open);
}

/*
 * A conditional jump at @idx. On return the current state continues at
 * *next; when both sides are possible, *other (at *other_idx) is the side
 * to walk later.
 */
int cond_jump(struct venv *env, struct vstate *st, int idx, int *next, struct vstate **other,
              int *other_idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	uint8_t op = BPF_OP(in->code);
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32;
	int target = idx + in->off + 1, t;
	struct vreg *dst = &cur_frame(st)->regs[in->dst_reg], src;
	struct vstate *fork;

	if (check_jmp_fields(env, in))
		return -1;
	if (cur_frame(st)->regs[in->dst_reg].type == T_NOT_INIT ||
	    (BPF_SRC(in->code) == BPF_X && cur_frame(st)->regs[in->src_reg].type == T_NOT_INIT)) {
		verr(env, idx, "R%d !read_ok",
		     cur_frame(st)->regs[in->dst_reg].type == T_NOT_INIT ? in->dst_reg
		                                                         : in->src_reg);
		return -1;
	}
	if (BPF_SRC(in->code) == BPF_X)
		src = cur_frame(st)->regs[in->src_reg];
	else
		reg_mark_const(&src, is32 ? (uint32_t)in->imm : (uint64_t)(int64_t)in->imm);

	if (dst->type == T_SCALAR && src.type == T_SCALAR)
		t = rng_branch_taken(&dst->r, &src.r, op, is32);
	else if (!is32)
		t = nonnull_ptr_vs_zero(dst, &src, op);
	else
		t = -1;
	*other = NULL;
	if (t >= 0) {
		if (dst->type == T_SCALAR && src.type == T_SCALAR)
			mark_decided(env, idx);
		*next = t ? target : idx + 1;
		return 0;
	}
	if (dst->type == T_SCALAR && src.type == T_SCALAR && op != BPF_JSET)
		return scalar_fork(env, st, idx, next, other, other_idx);
	fork = state_copy(st);
	if (!fork) {
		verr(env, idx, "out of memory");
		return -1;
	}
	/* st continues at the fall-through, fork takes the jump. A null check
	 * is the kernel's: a compare with the immediate 0, not with a register
	 * that holds 0. */
	if (!is32 && vtype_maybe_null(dst->type) && BPF_SRC(in->code) == BPF_K && in->imm == 0 &&
	    (op == BPF_JEQ || op == BPF_JNE)) {
		uint32_t id = dst->id;

		mark_null_checked(env, fork, id, op == BPF_JEQ);
		mark_null_checked(env, st, id, op != BPF_JEQ);
	}
	{
		const struct vreg d = *dst;

		pkt_compare(in, &d, &src, st, fork);
	}
	*next = idx + 1;
	*other = fork;
	*other_idx = target;
	return 0;
}
