/* SPDX-License-Identifier: MIT */
/*
 * refs.c: referenced pointers, as the kernel tracks them: a ring buffer
 * record from bpf_ringbuf_reserve() is a reference (REF_PTR) the program
 * must release on every path, with bpf_ringbuf_submit() or
 * bpf_ringbuf_discard(); its NULL check drops it on the NULL side. And
 * which map types each helper takes (the kernel's
 * check_map_func_compatibility()): the ring buffer's and the queue's
 * helpers take only their maps, and those maps only their helpers.
 */
#include "vstate.h"

/* bpf_ringbuf_reserve's R0: a record of @p size bytes or NULL, holding a
 * new reference. Two ids, as the kernel's: one for the NULL check, then the
 * reference's, which both name from then on. */
int ringbuf_reserved(struct venv *env, struct vstate *st, struct vreg *r0, uint32_t size)
{
	uint16_t map = cur_frame(st)->regs[BPF_REG_1].map;

	reg_mark_not_init(r0);
	r0->type = T_RINGBUF_MEM_OR_NULL;
	r0->map = map;
	r0->mem_size = size;
	rng_const(&r0->r, 0);
	++env->id_gen;
	r0->id = ++env->id_gen;
	return push_ref(env, st, REF_PTR, r0->id, map);
}

static int find_ptr_ref(const struct vstate *st, uint32_t id)
{
	for (int i = 0; i < st->nrefs; i++)
		if (st->refs[i].type == REF_PTR && st->refs[i].id == id)
			return i;
	return -1;
}

void refs_drop_null(struct vstate *st, uint32_t id)
{
	int i = find_ptr_ref(st, id);

	if (i >= 0)
		remove_ref(st, i);
}

/* Every copy of a released record (registers, spilled slots, any frame)
 * becomes an unknown scalar, as the kernel leaves it for a privileged
 * program: using it as a pointer is then refused. */
static void invalidate_copies(struct vstate *st, uint32_t id)
{
	for (int fr = 0; fr <= st->curframe; fr++) {
		struct vframe *f = st->frame[fr];

		for (int i = 0; i < V_NREGS; i++)
			if (f->regs[i].type == T_RINGBUF_MEM && f->regs[i].id == id)
				reg_mark_unknown(&f->regs[i]);
		for (int i = 0; i < V_SLOTS; i++)
			if (f->stack[i].bytes[0] == S_SPILL &&
			    f->stack[i].spill.type == T_RINGBUF_MEM && f->stack[i].spill.id == id)
				reg_mark_unknown(&f->stack[i].spill);
	}
}

/* bpf_ringbuf_submit/discard(R1): a record, at its start, that the path
 * holds; released. */
int ringbuf_release(struct venv *env, struct vstate *st)
{
	const struct vreg *r1 = &cur_frame(st)->regs[BPF_REG_1];
	uint32_t id = r1->id;
	int i;

	if (r1->type != T_RINGBUF_MEM) {
		verr(env, env->insn_idx, "R1 type=%s expected=ringbuf_mem", vtype_name(r1->type));
		return -1;
	}
	if (r1->off || !rng_is_const(&r1->r) || r1->r.umin) {
		verr(env, env->insn_idx,
		     "R1 must have zero offset when passed to release func or trusted arg to "
		     "kfunc");
		return -1;
	}
	i = find_ptr_ref(st, id);
	if (i < 0) {
		verr(env, env->insn_idx, "R1 must be referenced when passed to release function");
		return -1;
	}
	remove_ref(st, i);
	invalidate_copies(st, id);
	return 0;
}

/* At the main program's exit: no record or iterator left unreleased. */
int refs_check_exit(struct venv *env, const struct vstate *st)
{
	for (int i = 0; i < st->nrefs; i++)
		if (st->refs[i].type == REF_PTR || st->refs[i].type == REF_ITER) {
			verr(env, env->insn_idx, "Unreleased reference id=%u alloc_insn=%d",
			     st->refs[i].id, st->refs[i].insn);
			return -1;
		}
	return 0;
}

static bool is_ringbuf_helper(int32_t id)
{
	return id == BPF_FUNC_ringbuf_output || id == BPF_FUNC_ringbuf_reserve ||
	       id == BPF_FUNC_ringbuf_query;
}

static bool is_queue_helper(int32_t id)
{
	return id == BPF_FUNC_map_push_elem || id == BPF_FUNC_map_pop_elem ||
	       id == BPF_FUNC_map_peek_elem;
}

static bool is_queue_map(uint32_t type)
{
	return type == BPF_MAP_TYPE_QUEUE || type == BPF_MAP_TYPE_STACK;
}

/* The helper @p c may take map @p m (after its arguments' checks, as the
 * kernel checks it): the map type's helpers, then the helper's map types. */
int map_func_compatible(struct venv *env, const struct rqbpf_map_desc *m,
                        const struct rqbpf_call *c)
{
	bool ok = true;

	if (c->kind != RQBPF_CALL_HELPER)
		return 0;
	if (m->type == BPF_MAP_TYPE_RINGBUF)
		ok = is_ringbuf_helper(c->id);
	else if (m->inner_map) /* a map of maps: lookups only */
		ok = c->id == BPF_FUNC_map_lookup_elem;
	else if (is_queue_map(m->type))
		ok = is_queue_helper(c->id);
	if (is_ringbuf_helper(c->id))
		ok = ok && m->type == BPF_MAP_TYPE_RINGBUF;
	else if (c->id == BPF_FUNC_map_pop_elem)
		ok = ok && is_queue_map(m->type);
	else if (is_queue_helper(c->id))
		ok = ok && (is_queue_map(m->type) || m->type == BPF_MAP_TYPE_BLOOM_FILTER);
	if (ok)
		return 0;
	verr(env, env->insn_idx, "cannot pass map_type %u into func %s#%d", m->type, c->name,
	     c->id);
	return -1;
}
