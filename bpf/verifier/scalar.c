/* SPDX-License-Identifier: MIT */
/*
 * scalar.c: value ranges of scalars (and of pointers' variable offsets).
 * A range keeps unsigned and signed bounds for the full 64-bit register and
 * for its low 32-bit subregister; rng_sync() tightens each view from the
 * others. Arithmetic is sound: when a result could overflow, it is unknown.
 */
#include <linux/bpf.h>

#include "vstate.h"

#define U32_MAXV 0xffffffffULL

static uint64_t umax64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}
static uint64_t umin64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}
static int64_t smax64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}
static int64_t smin64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

void rng_unknown(struct vrange *r)
{
	r->umin = 0;
	r->umax = UINT64_MAX;
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
	r->u32min = 0;
	r->u32max = UINT32_MAX;
	r->s32min = INT32_MIN;
	r->s32max = INT32_MAX;
}

void rng_const(struct vrange *r, uint64_t v)
{
	r->umin = r->umax = v;
	r->smin = r->smax = (int64_t)v;
	r->u32min = r->u32max = (uint32_t)v;
	r->s32min = r->s32max = (int32_t)(uint32_t)v;
}

bool rng_is_const(const struct vrange *r)
{
	return r->umin == r->umax;
}

bool rng_is_const32(const struct vrange *r)
{
	return r->u32min == r->u32max;
}

/* Tighten the 32-bit view from the 64-bit one and back, and each view's
 * signed and unsigned bounds from each other. */
static void sync32(struct vrange *r)
{
	if ((int32_t)r->u32min <= (int32_t)r->u32max) {
		r->s32min = r->s32min > (int32_t)r->u32min ? r->s32min : (int32_t)r->u32min;
		r->s32max = r->s32max < (int32_t)r->u32max ? r->s32max : (int32_t)r->u32max;
	}
	if (r->s32min >= 0 || r->s32max < 0) {
		r->u32min = r->u32min > (uint32_t)r->s32min ? r->u32min : (uint32_t)r->s32min;
		r->u32max = r->u32max < (uint32_t)r->s32max ? r->u32max : (uint32_t)r->s32max;
	}
}

static void sync64(struct vrange *r)
{
	if ((int64_t)r->umin <= (int64_t)r->umax) {
		r->smin = smax64(r->smin, (int64_t)r->umin);
		r->smax = smin64(r->smax, (int64_t)r->umax);
	}
	if (r->smin >= 0 || r->smax < 0) {
		r->umin = umax64(r->umin, (uint64_t)r->smin);
		r->umax = umin64(r->umax, (uint64_t)r->smax);
	}
}

void rng_sync(struct vrange *r)
{
	sync64(r);
	/* 64 -> 32: the upper halves agree, so the low halves are ordered. */
	if ((r->umin >> 32) == (r->umax >> 32)) {
		uint32_t lo = (uint32_t)r->umin, hi = (uint32_t)r->umax;

		r->u32min = r->u32min > lo ? r->u32min : lo;
		r->u32max = r->u32max < hi ? r->u32max : hi;
	}
	if (r->smin >= INT32_MIN && r->smax <= INT32_MAX) {
		r->s32min = r->s32min > (int32_t)r->smin ? r->s32min : (int32_t)r->smin;
		r->s32max = r->s32max < (int32_t)r->smax ? r->s32max : (int32_t)r->smax;
	}
	sync32(r);
	/* 32 -> 64: with the upper half known zero the views are the same. */
	if (r->umax <= U32_MAXV) {
		r->umin = umax64(r->umin, r->u32min);
		r->umax = umin64(r->umax, r->u32max);
		sync64(r);
	}
	if (r->smin >= INT32_MIN && r->smax <= INT32_MAX) {
		r->smin = smax64(r->smin, r->s32min);
		r->smax = smin64(r->smax, r->s32max);
		sync64(r);
	}
}

/* A 32-bit ALU result: the 64-bit value is the zero-extended subregister. */
void rng_zext32(struct vrange *r)
{
	sync32(r);
	r->umin = r->u32min;
	r->umax = r->u32max;
	r->smin = r->u32min;
	r->smax = r->u32max;
	rng_sync(r);
}

void rng_set_s32(struct vrange *r, int32_t lo, int32_t hi)
{
	rng_unknown(r);
	r->s32min = lo;
	r->s32max = hi;
	rng_sync(r);
}

/* An unknown value of @bytes bytes, zero- or sign-extended. */
void rng_bits(struct vrange *r, int bytes, bool sign)
{
	rng_unknown(r);
	if (bytes >= 8)
		return;
	if (sign) {
		int64_t half = (int64_t)1 << (bytes * 8 - 1);

		r->smin = -half;
		r->smax = half - 1;
	} else {
		r->umin = 0;
		r->umax = ((uint64_t)1 << (bytes * 8)) - 1;
	}
	rng_sync(r);
}

bool rng_within(const struct vrange *old, const struct vrange *cur)
{
	return old->umin <= cur->umin && old->umax >= cur->umax && old->smin <= cur->smin &&
	       old->smax >= cur->smax && old->u32min <= cur->u32min && old->u32max >= cur->u32max &&
	       old->s32min <= cur->s32min && old->s32max >= cur->s32max;
}

bool rng_equal(const struct vrange *a, const struct vrange *b)
{
	return rng_within(a, b) && rng_within(b, a);
}

/* dst += src on 64-bit ranges. */
void rng_add(struct vrange *dst, const struct vrange *src)
{
	struct vrange r;
	int64_t s1, s2;

	rng_unknown(&r);
	if (!__builtin_add_overflow(dst->smin, src->smin, &s1) &&
	    !__builtin_add_overflow(dst->smax, src->smax, &s2)) {
		r.smin = s1;
		r.smax = s2;
	}
	if (dst->umin + src->umin >= dst->umin && dst->umax + src->umax >= dst->umax &&
	    !__builtin_add_overflow(dst->umax, src->umax, &r.umax)) {
		r.umin = dst->umin + src->umin;
	} else {
		r.umin = 0;
		r.umax = UINT64_MAX;
	}
	if (rng_is_const(dst) && rng_is_const(src))
		rng_const(&r, dst->umin + src->umin);
	rng_sync(&r);
	*dst = r;
}

static void rng_sub(struct vrange *dst, const struct vrange *src)
{
	struct vrange r;
	int64_t s1, s2;

	rng_unknown(&r);
	if (!__builtin_sub_overflow(dst->smin, src->smax, &s1) &&
	    !__builtin_sub_overflow(dst->smax, src->smin, &s2)) {
		r.smin = s1;
		r.smax = s2;
	}
	if (dst->umin >= src->umax) {
		r.umin = dst->umin - src->umax;
		r.umax = dst->umax - src->umin;
	}
	if (rng_is_const(dst) && rng_is_const(src))
		rng_const(&r, dst->umin - src->umin);
	rng_sync(&r);
	*dst = r;
}

static void rng_mul(struct vrange *dst, const struct vrange *src)
{
	struct vrange r;
	uint64_t hi;

	rng_unknown(&r);
	if (!__builtin_mul_overflow(dst->umax, src->umax, &hi) && hi <= (uint64_t)INT64_MAX) {
		r.umin = dst->umin * src->umin;
		r.umax = hi;
	}
	if (rng_is_const(dst) && rng_is_const(src))
		rng_const(&r, dst->umin * src->umin);
	rng_sync(&r);
	*dst = r;
}

/* Bitwise ops: exact on constants; AND bounded by a non-negative side; OR
 * and XOR bounded by the next power of two above both maxima. */
static void rng_bitwise(struct vrange *dst, const struct vrange *src, uint8_t op)
{
	struct vrange r;
	uint64_t a = dst->umin, b = src->umin;

	rng_unknown(&r);
	if (rng_is_const(dst) && rng_is_const(src)) {
		rng_const(&r, op == BPF_AND ? (a & b) : op == BPF_OR ? (a | b) : (a ^ b));
	} else if (op == BPF_AND) {
		r.umin = 0;
		r.umax = umin64(dst->umax, src->umax);
	} else {
		uint64_t m = dst->umax | src->umax;
		int bits = m ? 64 - __builtin_clzll(m) : 0;

		if (bits < 64) {
			r.umin = op == BPF_OR ? umax64(dst->umin, src->umin) : 0;
			r.umax = ((uint64_t)1 << bits) - 1;
		}
	}
	rng_sync(&r);
	*dst = r;
}

static void rng_shift(struct vrange *dst, uint64_t k, uint8_t op, bool is64)
{
	struct vrange r;

	rng_unknown(&r);
	if (op == BPF_LSH && is64 && k >= 32) {
		/* Only the low 64-k bits survive: with k == 32 they are the
		 * subregister, whose bounds carry over (the zero- or sign-extension
		 * idiom "<<= 32; >>= 32" or "s>>= 32" keeps them). */
		if (k == 32 || dst->u32max < ((uint64_t)1 << (64 - k))) {
			r.umin = (uint64_t)dst->u32min << k;
			r.umax = (uint64_t)dst->u32max << k;
		}
		if (k == 32) {
			r.smin = (int64_t)dst->s32min * ((int64_t)1 << 32);
			r.smax = (int64_t)dst->s32max * ((int64_t)1 << 32);
		}
	} else if (op == BPF_LSH) {
		if (k < 64 && (dst->umax >> (63 - k)) == 0) {
			r.umin = dst->umin << k;
			r.umax = dst->umax << k;
		}
	} else if (op == BPF_RSH) {
		r.umin = dst->umin >> k;
		r.umax = dst->umax >> k;
	} else if (is64) {
		r.smin = dst->smin >> k;
		r.smax = dst->smax >> k;
	} else {
		r.smin = dst->s32min >> k;
		r.smax = dst->s32max >> k;
	}
	rng_sync(&r);
	*dst = r;
}

/* Truncate a 64-bit result to the 32-bit subregister, zero-extended. */
static void trunc32(struct vrange *r)
{
	if (r->umax <= U32_MAXV) {
		rng_sync(r);
		return;
	}
	if (rng_is_const(r)) {
		rng_const(r, (uint32_t)r->umin);
		return;
	}
	rng_bits(r, 4, false);
}

/* The 32-bit view of a range as a zero-extended 64-bit range. */
static struct vrange low32(const struct vrange *r)
{
	struct vrange v;

	rng_unknown(&v);
	v.umin = r->u32min;
	v.umax = r->u32max;
	rng_sync(&v);
	return v;
}

static uint64_t bswap_const(uint64_t v, int bits, bool to_le)
{
	if (to_le) /* this host is little-endian: to_le only truncates */
		return bits == 64 ? v : v & (((uint64_t)1 << bits) - 1);
	if (bits == 16)
		return __builtin_bswap16((uint16_t)v);
	if (bits == 32)
		return __builtin_bswap32((uint32_t)v);
	return __builtin_bswap64(v);
}

/* Sign-extending move: movsx from 8, 16 or 32 bits. */
static void rng_movsx(struct vrange *dst, int bits)
{
	if (rng_is_const(dst)) {
		uint64_t v = dst->umin;
		int sh = 64 - bits;

		rng_const(dst, (uint64_t)((int64_t)(v << sh) >> sh));
		return;
	}
	int64_t lim = (int64_t)1 << (bits - 1);

	if (dst->smin >= -lim && dst->smax < lim)
		return;
	rng_bits(dst, bits / 8, true);
}

/*
 * dst = dst OP src for ALU op @op (the BPF_OP bits). @off carries the
 * instruction's off field (signed div/mod, movsx). Returns 0, or -1 when
 * the operation is not an arithmetic one this function handles.
 */
int rng_alu(struct vrange *dst, const struct vrange *src, uint8_t op, bool is64, int16_t off)
{
	struct vrange a = is64 ? *dst : low32(dst);
	struct vrange b = is64 ? *src : low32(src);

	switch (op) {
	case BPF_MOV:
		a = b;
		if (off == 8 || off == 16 || off == 32)
			rng_movsx(&a, off);
		if (!is64 && (off == 8 || off == 16))
			a = low32(&a);
		break;
	case BPF_ADD:
		rng_add(&a, &b);
		break;
	case BPF_SUB:
		rng_sub(&a, &b);
		break;
	case BPF_MUL:
		rng_mul(&a, &b);
		break;
	case BPF_DIV:
	case BPF_MOD:
		/* As the 6.18 kernel: the result is not tracked, even from two
		 * constants, and a 32-bit one is not even zero-extended (its
		 * log: `w1 %= w2 ; R1=scalar()`); a bound here would accept
		 * programs it rejects. */
		rng_unknown(dst);
		return 0;
	case BPF_AND:
	case BPF_OR:
	case BPF_XOR:
		rng_bitwise(&a, &b, op);
		break;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH:
		if (!rng_is_const(&b) || b.umin >= (is64 ? 64u : 32u)) {
			rng_unknown(&a);
		} else if (rng_is_const(&a)) {
			uint64_t v = a.umin, k = b.umin;

			if (op == BPF_LSH)
				v <<= k;
			else if (op == BPF_RSH)
				v >>= k;
			else
				v = is64 ? (uint64_t)((int64_t)v >> k)
				         : (uint32_t)((int32_t)(uint32_t)v >> k);
			rng_const(&a, v);
		} else {
			rng_shift(&a, b.umin, op, is64);
		}
		break;
	case BPF_NEG:
		if (rng_is_const(&a))
			rng_const(&a, 0 - a.umin);
		else
			rng_unknown(&a);
		break;
	case BPF_END: {
		int bits = (int)src->umin;
		bool to_le = off == 0; /* off carries the source bit for BPF_END */

		if (rng_is_const(dst))
			rng_const(&a, bswap_const(dst->umin, bits, to_le));
		else
			rng_bits(&a, bits / 8, false);
		*dst = a;
		return 0;
	}
	default:
		return -1;
	}
	if (!is64)
		trunc32(&a);
	*dst = a;
	return 0;
}

/* --- conditional jumps --------------------------------------------------- */

/* The view of a range a jump of width is32 compares, as 64-bit bounds. */
struct view {
	uint64_t umin, umax;
	int64_t smin, smax;
};

static struct view view_of(const struct vrange *r, bool is32)
{
	struct view v;

	if (is32) {
		v.umin = r->u32min;
		v.umax = r->u32max;
		v.smin = r->s32min;
		v.smax = r->s32max;
	} else {
		v.umin = r->umin;
		v.umax = r->umax;
		v.smin = r->smin;
		v.smax = r->smax;
	}
	return v;
}

static void view_store(struct vrange *r, const struct view *v, bool is32)
{
	if (is32) {
		r->u32min = (uint32_t)v->umin;
		r->u32max = (uint32_t)v->umax;
		r->s32min = (int32_t)v->smin;
		r->s32max = (int32_t)v->smax;
		sync32(r);
	} else {
		r->umin = v->umin;
		r->umax = v->umax;
		r->smin = v->smin;
		r->smax = v->smax;
	}
	rng_sync(r);
}

static bool view_empty(const struct view *v)
{
	return v->umin > v->umax || v->smin > v->smax;
}

/* 1: a OP b always holds; 0: never; -1: unknown. */
static int taken(const struct view *a, const struct view *b, uint8_t op)
{
	switch (op) {
	case BPF_JEQ:
		if (a->umin == a->umax && b->umin == b->umax && a->umin == b->umin)
			return 1;
		if (a->umin > b->umax || a->umax < b->umin || a->smin > b->smax ||
		    a->smax < b->smin)
			return 0;
		return -1;
	case BPF_JNE: {
		int t = taken(a, b, BPF_JEQ);

		return t < 0 ? t : !t;
	}
	case BPF_JGT:
		return a->umin > b->umax ? 1 : a->umax <= b->umin ? 0 : -1;
	case BPF_JGE:
		return a->umin >= b->umax ? 1 : a->umax < b->umin ? 0 : -1;
	case BPF_JLT:
		return taken(b, a, BPF_JGT);
	case BPF_JLE:
		return taken(b, a, BPF_JGE);
	case BPF_JSGT:
		return a->smin > b->smax ? 1 : a->smax <= b->smin ? 0 : -1;
	case BPF_JSGE:
		return a->smin >= b->smax ? 1 : a->smax < b->smin ? 0 : -1;
	case BPF_JSLT:
		return taken(b, a, BPF_JSGT);
	case BPF_JSLE:
		return taken(b, a, BPF_JSGE);
	case BPF_JSET:
		if (a->umin == a->umax && b->umin == b->umax)
			return (a->umin & b->umin) != 0;
		if (a->umax == 0 || b->umax == 0)
			return 0;
		return -1;
	default:
		return -1;
	}
}

int rng_branch_taken(const struct vrange *a, const struct vrange *b, uint8_t op, bool is32)
{
	struct view va = view_of(a, is32), vb = view_of(b, is32);

	return taken(&va, &vb, op);
}

/* Narrow a and b so that a OP b holds. Returns false when that is
 * impossible (the branch cannot be taken). */
static bool narrow(struct view *a, struct view *b, uint8_t op)
{
	switch (op) {
	case BPF_JEQ:
		a->umin = b->umin = umax64(a->umin, b->umin);
		a->umax = b->umax = umin64(a->umax, b->umax);
		a->smin = b->smin = smax64(a->smin, b->smin);
		a->smax = b->smax = smin64(a->smax, b->smax);
		break;
	case BPF_JNE:
		if (b->umin == b->umax) {
			if (a->umin == b->umin)
				a->umin++;
			if (a->umax == b->umin)
				a->umax--;
			if (a->smin == b->smin)
				a->smin++;
			if (a->smax == b->smin)
				a->smax--;
		}
		break;
	case BPF_JGT:
		if (b->umin == UINT64_MAX || a->umax == 0)
			return false;
		a->umin = umax64(a->umin, b->umin + 1);
		b->umax = umin64(b->umax, a->umax - 1);
		break;
	case BPF_JGE:
		a->umin = umax64(a->umin, b->umin);
		b->umax = umin64(b->umax, a->umax);
		break;
	case BPF_JLT:
		return narrow(b, a, BPF_JGT);
	case BPF_JLE:
		return narrow(b, a, BPF_JGE);
	case BPF_JSGT:
		if (b->smin == INT64_MAX || a->smax == INT64_MIN)
			return false;
		a->smin = smax64(a->smin, b->smin + 1);
		b->smax = smin64(b->smax, a->smax - 1);
		break;
	case BPF_JSGE:
		a->smin = smax64(a->smin, b->smin);
		b->smax = smin64(b->smax, a->smax);
		break;
	case BPF_JSLT:
		return narrow(b, a, BPF_JSGT);
	case BPF_JSLE:
		return narrow(b, a, BPF_JSGE);
	default:
		break;
	}
	return !view_empty(a) && !view_empty(b);
}

static uint8_t negate(uint8_t op)
{
	switch (op) {
	case BPF_JEQ:
		return BPF_JNE;
	case BPF_JNE:
		return BPF_JEQ;
	case BPF_JGT:
		return BPF_JLE;
	case BPF_JGE:
		return BPF_JLT;
	case BPF_JLT:
		return BPF_JGE;
	case BPF_JLE:
		return BPF_JGT;
	case BPF_JSGT:
		return BPF_JSLE;
	case BPF_JSGE:
		return BPF_JSLT;
	case BPF_JSLT:
		return BPF_JSGE;
	case BPF_JSLE:
		return BPF_JSGT;
	default:
		return 0; /* JSET's negation narrows nothing */
	}
}

/* Narrow a and b for the side of a jump where (a OP b) holds; the caller
 * passes rng_negate(op) for the fall-through side. Returns false when that
 * side cannot be reached. */
bool rng_refine(struct vrange *a, struct vrange *b, uint8_t op, bool is32)
{
	struct view va = view_of(a, is32), vb = view_of(b, is32);

	if (!narrow(&va, &vb, op))
		return false;
	view_store(a, &va, is32);
	view_store(b, &vb, is32);
	return a->umin <= a->umax && a->smin <= a->smax && b->umin <= b->umax && b->smin <= b->smax;
}

uint8_t rng_negate(uint8_t op)
{
	return negate(op);
}
