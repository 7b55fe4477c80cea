/* SPDX-License-Identifier: MIT */
/*
 * state.c: abstract states (registers, frames, references), their copies,
 * and the comparison that prunes a path when an already verified state at
 * the same instruction covers it.
 */
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

void reg_mark_not_init(struct vreg *r)
{
	memset(r, 0, sizeof(*r));
	rng_unknown(&r->r);
}

void reg_mark_unknown(struct vreg *r)
{
	reg_mark_not_init(r);
	r->type = T_SCALAR;
}

void reg_mark_const(struct vreg *r, uint64_t v)
{
	reg_mark_not_init(r);
	r->type = T_SCALAR;
	rng_const(&r->r, v);
}

bool reg_is_pointer(const struct vreg *r)
{
	return r->type != T_NOT_INIT && r->type != T_SCALAR;
}

bool reg_is_const(const struct vreg *r, uint64_t *v)
{
	if (r->type != T_SCALAR || !rng_is_const(&r->r))
		return false;
	if (v)
		*v = r->r.umin;
	return true;
}

/* Before a copy of @src (a move, a spill): give a scalar an id, so that
 * the copy is linked to it and a jump that narrows one narrows both. A
 * constant needs none: there is nothing to narrow. A copy plus a constant
 * leaves its link first (as the kernel does: one delta per register, and
 * the copy would need the same one), then takes a new id like any other. */
void reg_link_before_copy(struct venv *env, struct vreg *src)
{
	if (src->type != T_SCALAR)
		return;
	if (src->id & V_ID_ADD) {
		src->id = 0;
		src->off = 0;
	}
	if (!src->id && !rng_is_const(&src->r))
		src->id = ++env->id_gen;
}

struct vframe *frame_new(int callsite, int subprog_start)
{
	struct vframe *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	for (int i = 0; i < V_NREGS; i++)
		reg_mark_not_init(&f->regs[i]);
	f->callsite = callsite;
	f->subprog_start = subprog_start;
	return f;
}

struct vstate *state_new(void)
{
	struct vstate *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->frame[0] = frame_new(-1, 0);
	if (!st->frame[0]) {
		free(st);
		return NULL;
	}
	return st;
}

void state_free(struct vstate *st)
{
	if (!st)
		return;
	for (int i = 0; i <= st->curframe; i++)
		free(st->frame[i]);
	free(st);
}

struct vstate *state_copy(const struct vstate *src)
{
	struct vstate *st = malloc(sizeof(*st));

	if (!st)
		return NULL;
	*st = *src;
	for (int i = 0; i <= src->curframe; i++) {
		st->frame[i] = malloc(sizeof(struct vframe));
		if (!st->frame[i]) {
			st->curframe = i - 1;
			state_free(st);
			return NULL;
		}
		*st->frame[i] = *src->frame[i];
	}
	return st;
}

/* --- comparison ---------------------------------------------------------- */

/* Ids must correspond one to one between the old and the current state.
 * tmp names the unlinked scalars (id 0) met in a comparison: above every
 * id the walk has given, so it meets none of them. */
struct idmap {
	int n;
	uint32_t tmp;
	uint32_t old[2 * V_NREGS * RQBPF_MAX_FRAMES + V_SLOTS * RQBPF_MAX_FRAMES + RQBPF_MAX_HELD];
	uint32_t cur[2 * V_NREGS * RQBPF_MAX_FRAMES + V_SLOTS * RQBPF_MAX_FRAMES + RQBPF_MAX_HELD];
};

struct idmap *idmap_new(void)
{
	return calloc(1, sizeof(struct idmap));
}

static bool check_ids(struct idmap *m, uint32_t old, uint32_t cur)
{
	if (!old || !cur)
		return old == cur;
	for (int i = 0; i < m->n; i++) {
		if (m->old[i] == old)
			return m->cur[i] == cur;
		if (m->cur[i] == cur)
			return false;
	}
	if (m->n >= (int)(sizeof(m->old) / sizeof(m->old[0])))
		return false;
	m->old[m->n] = old;
	m->cur[m->n] = cur;
	m->n++;
	return true;
}

/* Scalars: cur must link its registers as old does. An unlinked scalar
 * (id 0) gets a name of its own, so it matches no linked one elsewhere,
 * as the kernel's check_scalar_ids() does. */
static bool check_scalar_ids(struct idmap *m, uint32_t old, uint32_t cur)
{
	if (!old && !cur)
		return true;
	if (!old)
		old = ++m->tmp;
	if (!cur)
		cur = ++m->tmp;
	return check_ids(m, old, cur);
}

/* Scalars: cur must link its registers as old does, with the same kind of
 * add link and the same constant (the value old was verified with is base
 * plus that constant); the base ids correspond one to one. */
static bool scalar_links_match(struct idmap *m, const struct vreg *old, const struct vreg *cur)
{
	if ((old->id & V_ID_ADD) != (cur->id & V_ID_ADD))
		return false;
	if (scalar_delta(old) != scalar_delta(cur))
		return false;
	return check_scalar_ids(m, scalar_base_id(old->id), scalar_base_id(cur->id));
}

/* Does old cover cur: every concrete value cur allows, old allows too? With
 * @exact, they must be the same abstract value. */
static bool reg_covers(const struct vreg *old, const struct vreg *cur, struct idmap *m, bool exact)
{
	if (!exact && old->type == T_NOT_INIT)
		return true;
	if (old->type != cur->type)
		return false;
	switch (old->type) {
	case T_NOT_INIT:
		return true;
	case T_SCALAR:
		return (exact ? rng_equal(&old->r, &cur->r) : rng_within(&old->r, &cur->r)) &&
		       scalar_links_match(m, old, cur);
	case T_CTX:
	case T_MAP_PTR:
		return old->off == cur->off && old->map == cur->map && rng_equal(&old->r, &cur->r);
	case T_STACK:
		return old->off == cur->off && old->frameno == cur->frameno &&
		       (exact ? rng_equal(&old->r, &cur->r) : rng_within(&old->r, &cur->r));
	case T_FUNC_PTR:
		return old->off == cur->off;
	case T_MAP_KEY:
		return old->off == cur->off && old->map == cur->map && rng_equal(&old->r, &cur->r);
	case T_MEM_RDONLY:
		return old->off == cur->off && old->mem_size == cur->mem_size &&
		       (exact ? rng_equal(&old->r, &cur->r) : rng_within(&old->r, &cur->r));
	case T_RINGBUF_MEM:
	case T_RINGBUF_MEM_OR_NULL:
		if (old->mem_size != cur->mem_size)
			return false;
		/* fallthrough */
	case T_PACKET:
	case T_PACKET_META:
		/* cur must have at least old's range (the kernel's regsafe()) */
		if (exact ? old->mem_size != cur->mem_size : old->mem_size > cur->mem_size)
			return false;
		return old->off == cur->off &&
		       (exact ? rng_equal(&old->r, &cur->r) : rng_within(&old->r, &cur->r)) &&
		       check_ids(m, old->id, cur->id);
	case T_PACKET_END:
		return true;
	case T_MAP_VALUE:
	case T_MAP_VALUE_OR_NULL:
	case T_MAP_PTR_OR_NULL:
		return old->off == cur->off && old->map == cur->map &&
		       (exact ? rng_equal(&old->r, &cur->r) : rng_within(&old->r, &cur->r)) &&
		       check_ids(m, old->id, cur->id);
	default:
		return false;
	}
}

static bool byte_covers(uint8_t old, uint8_t cur, bool exact)
{
	if (exact)
		return old == cur;
	if (old == S_INVALID)
		return true;
	if (old == S_MISC)
		return cur == S_MISC || cur == S_ZERO;
	return old == cur;
}

static bool slot_covers(const struct vslot_state *o, const struct vslot_state *c, struct idmap *m,
                        bool exact)
{
	bool old_spill = o->bytes[0] == S_SPILL, cur_spill = c->bytes[0] == S_SPILL;

	if (old_spill && cur_spill)
		return reg_covers(&o->spill, &c->spill, m, exact);
	if (o->bytes[0] == S_IRQ_FLAG || c->bytes[0] == S_IRQ_FLAG)
		return o->bytes[0] == c->bytes[0] && o->irq_class == c->irq_class &&
		       check_ids(m, o->irq_id, c->irq_id);
	/* An iterator: the same state and reference; its depth does not count
	 * (as the kernel's stacksafe()). */
	if (o->bytes[0] == S_ITER || c->bytes[0] == S_ITER)
		return o->bytes[0] == c->bytes[0] && o->iter_state == c->iter_state &&
		       check_ids(m, o->irq_id, c->irq_id);
	/* A known narrow constant covers only the same constant. */
	if ((o->narrow || exact) && (o->narrow != c->narrow || o->narrow_val != c->narrow_val))
		return false;
	if (!exact && cur_spill && c->spill.type == T_SCALAR) {
		/* A spilled scalar is some bytes: covered by misc or invalid. */
		for (int i = 0; i < 8; i++)
			if (o->bytes[i] != S_INVALID && o->bytes[i] != S_MISC)
				return false;
		return true;
	}
	if (old_spill != cur_spill && (exact || o->bytes[0] != S_INVALID))
		return false;
	for (int i = 0; i < 8; i++)
		if (!byte_covers(o->bytes[i], c->bytes[i], exact))
			return false;
	return true;
}

static bool spilled_scalar(const struct vslot_state *s)
{
	return s->bytes[0] == S_SPILL && s->spill.type == T_SCALAR;
}

static bool frame_covers(const struct vframe *o, const struct vframe *c, struct idmap *m,
                         uint16_t live, uint16_t precise, uint64_t slots_precise, bool exact)
{
	if (o->callsite != c->callsite || o->in_callback != c->in_callback)
		return false;
	for (int i = 0; i < V_NREGS; i++) {
		if (!exact && !(live & (1u << i)))
			continue;
		/* A scalar whose value reaches no check: any scalar will do. */
		if (!exact && !(precise & (1u << i)) && o->regs[i].type == T_SCALAR &&
		    c->regs[i].type == T_SCALAR)
			continue;
		if (!reg_covers(&o->regs[i], &c->regs[i], m, exact))
			return false;
	}
	for (int i = 0; i < V_SLOTS; i++) {
		if (!exact && !(slots_precise & ((uint64_t)1 << i)) &&
		    spilled_scalar(&o->stack[i]) && spilled_scalar(&c->stack[i]))
			continue;
		if (!slot_covers(&o->stack[i], &c->stack[i], m, exact))
			return false;
	}
	return true;
}

static bool refs_equal(const struct vstate *o, const struct vstate *c, struct idmap *m)
{
	if (o->nrefs != c->nrefs)
		return false;
	for (int i = 0; i < o->nrefs; i++) {
		if (o->refs[i].type != c->refs[i].type)
			return false;
		if ((o->refs[i].type & REF_LOCK_MASK) && o->refs[i].map != c->refs[i].map)
			return false;
		if (!check_ids(m, o->refs[i].id, c->refs[i].id))
			return false;
	}
	return true;
}

static bool states_compare(struct venv *env, const struct vstate *old, const struct vstate *cur,
                           int insn, bool exact)
{
	struct idmap *m = env->idmap;
	bool ok = old->curframe == cur->curframe;

	m->n = 0;
	m->tmp = env->id_gen;
	for (int i = 0; ok && i <= old->curframe; i++) {
		/* Liveness is known for the innermost frame, and for the caller
		 * of a callback, which goes on at the call (precise.c counts what
		 * its callbacks read there); other callers' registers are compared
		 * in full. */
		bool inner = i == old->curframe;
		int at = inner ? insn
		         : old->frame[i + 1]->in_callback && cur->frame[i + 1]->in_callback
		             ? old->frame[i + 1]->callsite
		             : -1;
		uint16_t live = at >= 0 ? env->live_in[at] : 0x7ff;
		uint16_t precise = at >= 0 ? env->prec_in[at] : 0x7ff;
		uint64_t slots = at >= 0 ? env->sprec_in[at] : UINT64_MAX;

		ok = frame_covers(old->frame[i], cur->frame[i], m, live, precise, slots, exact);
	}
	return ok && refs_equal(old, cur, m);
}

bool states_cover(struct venv *env, const struct vstate *old, const struct vstate *cur, int insn)
{
	return states_compare(env, old, cur, insn, false);
}

bool states_equal_exact(struct venv *env, const struct vstate *old, const struct vstate *cur)
{
	return states_compare(env, old, cur, 0, true);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/* A fingerprint of what states_equal_exact() compares first: equal states
 * have equal fingerprints (ids, which only need to correspond, are left
 * out). */
uint64_t state_fingerprint(const struct vstate *st)
{
	const struct vframe *f = st->frame[st->curframe];
	uint64_t h = mix(0xcbf29ce484222325ULL, (uint64_t)st->curframe << 8 | (uint64_t)st->nrefs);

	for (int i = 0; i < V_NREGS; i++) {
		const struct vreg *r = &f->regs[i];

		h = mix(h, (uint64_t)r->type | (uint64_t)r->frameno << 8 | (uint64_t)r->map << 16 |
		               (uint64_t)(uint32_t)r->off << 32);
		h = mix(h, r->r.umin);
		h = mix(h, r->r.umax);
		h = mix(h, (uint64_t)r->r.smin);
		h = mix(h, (uint64_t)r->r.smax);
		h = mix(h, (uint64_t)r->r.u32min << 32 | r->r.u32max);
	}
	return h;
}

/* The loop depths the kernel compares before it calls two equal states an
 * infinite loop: may_goto and callback iterations, and the depth of every
 * active iterator. */
bool loop_depths_equal(const struct vstate *old, const struct vstate *cur)
{
	if (old->may_goto_depth != cur->may_goto_depth ||
	    old->callback_depth != cur->callback_depth || old->curframe != cur->curframe)
		return false;
	for (int fr = 0; fr <= old->curframe; fr++)
		for (int i = 0; i < V_SLOTS; i++) {
			const struct vslot_state *o = &old->frame[fr]->stack[i],
			                         *c = &cur->frame[fr]->stack[i];

			if (o->bytes[0] == S_ITER && c->bytes[0] == S_ITER &&
			    o->iter_state == ITER_ACTIVE && o->iter_depth != c->iter_depth)
				return false;
		}
	return true;
}
