/* SPDX-License-Identifier: MIT */
/*
 * alu.c: ALU and ALU64 instructions: scalar arithmetic on ranges, and the
 * pointer arithmetic the kernel allows (adding or subtracting a scalar to
 * a stack, map value, packet or context pointer; subtracting two pointers).
 */
#include "vstate.h"

#define MAX_PTR_OFF (1 << 29)

static const char *const op_names[16] = {"+=",  "-=", "*=", "/=", "|=",   "&=", "<<=", ">>=",
                                         "neg", "%=", "^=", "=",  "s>>=", "?",  "?",   "?"};

static bool ptr_arith_ok(struct venv *env, const struct vreg *ptr, int regno)
{
	if (vtype_maybe_null(ptr->type)) {
		verr(env, env->insn_idx,
		     "R%d pointer arithmetic on %s prohibited, null-check it first", regno,
		     vtype_name(ptr->type));
		return false;
	}
	if (ptr->type == T_MAP_PTR || ptr->type == T_PACKET_END || ptr->type == T_FUNC_PTR) {
		verr(env, env->insn_idx, "R%d pointer arithmetic on %s prohibited", regno,
		     vtype_name(ptr->type));
		return false;
	}
	return true;
}

/* The kernel's check_reg_sane_offset() for a variable part (the scalar's,
 * or the pointer's own) of a pointer sum. */
static bool var_off_sane(struct venv *env, const struct vrange *r, const struct vreg *ptr)
{
	if (r->smin == INT64_MIN) {
		verr(env, env->insn_idx,
		     "math between %s pointer and register with unbounded min value is not allowed",
		     vtype_name(ptr->type));
		return false;
	}
	if (r->smin >= MAX_PTR_OFF || r->smin <= -MAX_PTR_OFF) {
		verr(env, env->insn_idx, "value %lld makes %s pointer be out of bounds",
		     (long long)r->smin, vtype_name(ptr->type));
		return false;
	}
	return true;
}

/* dst = ptr +/- scalar (or scalar + ptr). */
static int ptr_add_scalar(struct venv *env, struct vreg *dst, const struct vreg *ptr,
                          const struct vreg *scalar, bool sub, int regno)
{
	struct vreg res = *ptr;
	struct vrange s = scalar->r;

	if (!ptr_arith_ok(env, ptr, regno))
		return -1;
	if ((!rng_is_const(&s) && !var_off_sane(env, &s, ptr)) || !var_off_sane(env, &ptr->r, ptr))
		return -1;
	if (rng_is_const(&s)) {
		int64_t v = sub ? -(int64_t)s.umin : (int64_t)s.umin;
		int64_t off = (int64_t)ptr->off + v;

		if (v <= -MAX_PTR_OFF || v >= MAX_PTR_OFF || off <= -MAX_PTR_OFF ||
		    off >= MAX_PTR_OFF) {
			verr(env, env->insn_idx, "value %lld makes %s pointer be out of bounds",
			     (long long)v, vtype_name(ptr->type));
			return -1;
		}
		res.off = (int32_t)off;
	} else {
		if (sub) {
			struct vrange zero;

			rng_const(&zero, 0);
			rng_alu(&zero, &s, BPF_SUB, true, 0);
			s = zero;
		}
		rng_add(&res.r, &s);
		if (vtype_is_pkt(ptr->type)) {
			/* a new variable part: its own id, no range yet (the
			 * kernel keeps the range of a subtraction of a
			 * non-negative value) */
			res.id = ++env->id_gen;
			if (!sub || scalar->r.smin < 0)
				res.mem_size = 0;
		}
	}
	*dst = res;
	return 0;
}

/* Both are pointers into the packet or its end: their difference is a
 * length (data_end - data), which the kernel gives root as a scalar. */
static bool packet_pair(const struct vreg *a, const struct vreg *b)
{
	return (vtype_is_pkt(a->type) || a->type == T_PACKET_END) &&
	       (vtype_is_pkt(b->type) || b->type == T_PACKET_END);
}

static int ptr_alu(struct venv *env, const struct bpf_insn *in, struct vreg *dst,
                   const struct vreg *src)
{
	uint8_t op = BPF_OP(in->code);
	bool dst_ptr = reg_is_pointer(dst), src_ptr = reg_is_pointer(src);

	if (BPF_CLASS(in->code) == BPF_ALU && op == BPF_SUB) {
		/* a meaningless scalar, which the kernel gives root
		 * ((u32)data_end - (u32)data, as clang may compute a length) */
		reg_mark_unknown(dst);
		return 0;
	}
	if (BPF_CLASS(in->code) == BPF_ALU) {
		verr(env, env->insn_idx, "R%d 32-bit pointer arithmetic prohibited", in->dst_reg);
		return -1;
	}
	if (op == BPF_AND || op == BPF_OR || op == BPF_XOR) {
		verr(env, env->insn_idx, "R%d bitwise operator %s on pointer prohibited",
		     in->dst_reg, op_names[op >> 4]);
		return -1;
	}
	if (op == BPF_SUB && dst_ptr && src_ptr) {
		if (dst->type != src->type && !packet_pair(dst, src)) {
			verr(env, env->insn_idx, "R%d pointer -= pointer prohibited", in->dst_reg);
			return -1;
		}
		reg_mark_unknown(dst);
		return 0;
	}
	if (op == BPF_ADD && dst_ptr && !src_ptr)
		return ptr_add_scalar(env, dst, dst, src, false, in->dst_reg);
	if (op == BPF_ADD && src_ptr && !dst_ptr) {
		struct vreg scalar = *dst;

		return ptr_add_scalar(env, dst, src, &scalar, false, in->src_reg);
	}
	if (op == BPF_SUB && dst_ptr)
		return ptr_add_scalar(env, dst, dst, src, true, in->dst_reg);
	if (op == BPF_SUB) {
		verr(env, env->insn_idx, "R%d tried to subtract pointer from scalar", in->dst_reg);
		return -1;
	}
	verr(env, env->insn_idx, "R%d pointer arithmetic with %s operator prohibited", in->dst_reg,
	     op_names[op >> 4]);
	return -1;
}

/* The fields an ALU instruction must leave zero, as the kernel checks. */
static bool reserved_fields_used(const struct bpf_insn *in)
{
	uint8_t op = BPF_OP(in->code);
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64, x = BPF_SRC(in->code) == BPF_X;
	bool divmod = op == BPF_DIV || op == BPF_MOD;

	switch (op) {
	case BPF_NEG:
		return x || in->src_reg || in->off || in->imm;
	case BPF_END:
		return in->src_reg || in->off ||
		       (in->imm != 16 && in->imm != 32 && in->imm != 64) || (is64 && x);
	case BPF_MOV:
		if (!x)
			return in->src_reg || in->off;
		return in->imm ||
		       (in->off && in->off != 8 && in->off != 16 && (!is64 || in->off != 32));
	default:
		return (x ? in->imm != 0 : in->src_reg != 0) ||
		       (in->off && !(divmod && in->off == 1));
	}
}

static int check_alu_fields(struct venv *env, const struct bpf_insn *in)
{
	uint8_t op = BPF_OP(in->code);
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;

	if (op > BPF_END) {
		verr(env, env->insn_idx, "invalid BPF_ALU opcode %x", op);
		return -1;
	}
	if (in->dst_reg >= BPF_REG_10 || in->src_reg > BPF_REG_10) {
		if (in->dst_reg == BPF_REG_10)
			verr(env, env->insn_idx, "frame pointer is read only");
		else
			verr(env, env->insn_idx, "R%d is invalid",
			     in->dst_reg > 10 ? in->dst_reg : in->src_reg);
		return -1;
	}
	if (reserved_fields_used(in)) {
		verr(env, env->insn_idx, "%s uses reserved fields",
		     op == BPF_END   ? "BPF_END"
		     : op == BPF_NEG ? "BPF_NEG"
		     : op == BPF_MOV ? "BPF_MOV"
		                     : "BPF_ALU");
		return -1;
	}
	if (op == BPF_END)
		return 0;
	if ((op == BPF_DIV || op == BPF_MOD) && BPF_SRC(in->code) == BPF_K && in->imm == 0) {
		verr(env, env->insn_idx, "div by zero");
		return -1;
	}
	if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) && BPF_SRC(in->code) == BPF_K &&
	    (in->imm < 0 || in->imm >= (is64 ? 64 : 32))) {
		verr(env, env->insn_idx, "invalid shift %d", in->imm);
		return -1;
	}
	return 0;
}

/* The source operand: a register, or the immediate (sign-extended to 64
 * bits for ALU64, zero-extended 32 bits for ALU). */
static struct vreg alu_src(struct vstate *st, const struct bpf_insn *in, bool is64)
{
	struct vreg s;

	if (BPF_SRC(in->code) == BPF_X && BPF_OP(in->code) != BPF_END)
		return cur_frame(st)->regs[in->src_reg];
	reg_mark_const(&s, is64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm);
	return s;
}

/* A register move whose result is the source's value: a 64-bit move, or a
 * narrower or sign-extending one of a scalar too small to change (as the
 * kernel links them). */
static bool mov_copies(const struct bpf_insn *in, const struct vreg *src)
{
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;

	if (is64 && !in->off)
		return true;
	if (src->type != T_SCALAR)
		return false;
	if (!in->off)
		return src->r.umax <= UINT32_MAX;
	return src->r.umax < (uint64_t)1 << (in->off - 1);
}

/* The constant an add link records for dst += src (or -= src), as the
 * kernel takes it: a 32-bit constant for a 32-bit op, a 64-bit one that
 * fits in s32 otherwise; false when there is none (a subtraction of
 * S32_MIN, which cannot be negated, included). */
static bool add_link_delta(const struct bpf_insn *in, const struct vreg *src, bool is64,
                           int32_t *delta)
{
	uint8_t op = BPF_OP(in->code);
	int64_t v;

	if ((op != BPF_ADD && op != BPF_SUB) || src->type != T_SCALAR ||
	    (BPF_SRC(in->code) == BPF_X && in->src_reg == in->dst_reg))
		return false;
	if (is64 ? !rng_is_const(&src->r) : !rng_is_const32(&src->r))
		return false;
	v = is64 ? (int64_t)src->r.umin : (int32_t)src->r.u32min;
	if (v < INT32_MIN || v > INT32_MAX || (op == BPF_SUB && v == INT32_MIN))
		return false;
	*delta = (int32_t)(op == BPF_SUB ? -v : v);
	return true;
}

/* Before the scalar dst = dst OP src: a copy (linked, no delta yet) plus
 * a constant stays linked with that delta (jumps.c narrows it by its base
 * shifted by the delta); any other result leaves the link. A 32-bit add
 * links only a value that fits in 32 bits, whose result is zero-extended.
 * A second constant ends the link: the delta cannot accumulate. */
static void link_add_const(const struct bpf_insn *in, struct vreg *dst, const struct vreg *src,
                           bool is64)
{
	int32_t delta;

	if (dst->id && !(dst->id & V_ID_ADD) && add_link_delta(in, src, is64, &delta) &&
	    (is64 || dst->r.umax <= UINT32_MAX)) {
		dst->id |= is64 ? V_ID_ADD64 : V_ID_ADD32;
		dst->off = delta;
		return;
	}
	dst->id = 0;
	dst->off = 0;
}

int alu_check(struct venv *env, struct vstate *st, int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	struct vframe *f = cur_frame(st);
	uint8_t op = BPF_OP(in->code);
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;
	struct vreg *dst, src;
	int16_t off = in->off;

	if (check_alu_fields(env, in))
		return -1;
	dst = &f->regs[in->dst_reg];
	if (BPF_SRC(in->code) == BPF_X && op != BPF_END && op != BPF_NEG &&
	    check_reg_read(env, st, in->src_reg))
		return -1;
	if (op != BPF_MOV && check_reg_read(env, st, in->dst_reg))
		return -1;
	if (op == BPF_MOV && BPF_SRC(in->code) == BPF_X && mov_copies(in, &f->regs[in->src_reg])) {
		/* The copy is linked to its source (jumps.c). */
		reg_link_before_copy(env, &f->regs[in->src_reg]);
		*dst = f->regs[in->src_reg];
		return 0;
	}
	src = alu_src(st, in, is64);
	if (op == BPF_MOV && is64 && !off) { /* an immediate */
		*dst = src;
		return 0;
	}
	if (op == BPF_MOV) {
		if (reg_is_pointer(&src))
			reg_mark_unknown(&src);
		reg_mark_unknown(dst);
		rng_alu(&dst->r, &src.r, BPF_MOV, is64, off);
		return 0;
	}
	if (reg_is_pointer(dst) || reg_is_pointer(&src))
		return ptr_alu(env, in, dst, &src);
	if (op == BPF_END) {
		/* off: 0 converts to little endian (a truncation on this host). */
		reg_mark_const(&src, (uint64_t)in->imm);
		off = (int16_t)(is64 || BPF_SRC(in->code) == BPF_X);
	} else if (op == BPF_DIV || op == BPF_MOD) {
		off = (int16_t)(off == 1);
	}
	link_add_const(in, dst, &src, is64);
	rng_alu(&dst->r, &src.r, op, is64, off);
	return 0;
}
