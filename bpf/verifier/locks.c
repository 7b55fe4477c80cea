/* SPDX-License-Identifier: MIT */
/*
 * locks.c: lock and irq-flag references. A lock is identified, as in the
 * kernel, by its map and the id of the pointer it was taken through (0 for
 * global data, the lookup's id for a map value). Held locks form a stack:
 * an unlock must release the most recent lock. Saved irq flags live in
 * stack slots, remember which class of kfunc saved them, and must be
 * restored in reverse order too.
 */
#include "vstate.h"

int locks_held(const struct vstate *st)
{
	int n = 0;

	for (int i = 0; i < st->nrefs; i++)
		n += (st->refs[i].type & REF_LOCK_MASK) != 0;
	return n;
}

int irqs_held(const struct vstate *st)
{
	int n = 0;

	for (int i = 0; i < st->nrefs; i++)
		n += st->refs[i].type == REF_IRQ;
	return n;
}

bool map_has_lock_field(const struct venv *env, int map)
{
	const struct rqbpf_map_desc *m = &env->prog->maps[map];

	return m->res_lock_off >= 0 || m->spin_lock_off >= 0;
}

static int find_ref(const struct vstate *st, int types, uint32_t id, int map)
{
	for (int i = 0; i < st->nrefs; i++)
		if ((st->refs[i].type & types) && st->refs[i].id == id && st->refs[i].map == map)
			return i;
	return -1;
}

/* The most recent reference among @types, or -1. */
static int top_ref(const struct vstate *st, int types)
{
	for (int i = st->nrefs - 1; i >= 0; i--)
		if (st->refs[i].type & types)
			return i;
	return -1;
}

void remove_ref(struct vstate *st, int i)
{
	for (; i + 1 < st->nrefs; i++)
		st->refs[i] = st->refs[i + 1];
	st->nrefs--;
}

int push_ref(struct venv *env, struct vstate *st, uint8_t type, uint32_t id, int map)
{
	if (st->nrefs >= RQBPF_MAX_HELD) {
		verr(env, env->insn_idx, "Failed to acquire lock state");
		return -1;
	}
	st->refs[st->nrefs].type = type;
	st->refs[st->nrefs].id = id;
	st->refs[st->nrefs].map = (uint16_t)map;
	st->refs[st->nrefs].insn = env->insn_idx;
	st->nrefs++;
	return 0;
}

/* Checks shared by lock and unlock: the argument points at the value's lock. */
static int check_lock_arg(struct venv *env, const struct vreg *reg, int regno, bool res)
{
	const char *lock_str = res ? "bpf_res_spin" : "bpf_spin";
	const struct rqbpf_map_desc *m;
	int lock_off;
	long long off;

	if (!rng_is_const(&reg->r)) {
		verr(env, env->insn_idx,
		     "R%d doesn't have constant offset. %s_lock has to be at the constant offset",
		     regno, lock_str);
		return -1;
	}
	m = &env->prog->maps[reg->map];
	if (m->no_btf) {
		verr(env, env->insn_idx, "map '%s' has to have BTF in order to use %s_lock",
		     m->name ? m->name : "", lock_str);
		return -1;
	}
	lock_off = res ? m->res_lock_off : m->spin_lock_off;
	if (lock_off < 0) {
		verr(env, env->insn_idx, "map '%s' has no valid %s_lock", m->name ? m->name : "",
		     lock_str);
		return -1;
	}
	off = (long long)reg->off + (long long)reg->r.smin;
	if (off != lock_off) {
		verr(env, env->insn_idx, "off %lld doesn't point to 'struct %s_lock' that is at %d",
		     off, lock_str, lock_off);
		return -1;
	}
	return 0;
}

/*
 * bpf_res_spin_lock{,_irqsave} (is_lock), bpf_res_spin_unlock{,_irqrestore},
 * or with !res the bpf_spin_lock/unlock helpers, on R@regno.
 */
int lock_process(struct venv *env, struct vstate *st, int regno, bool is_lock, bool res, bool irq)
{
	const char *lock_str = res ? "bpf_res_spin" : "bpf_spin";
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	uint8_t type = res ? (irq ? REF_RES_LOCK_IRQ : REF_RES_LOCK) : REF_LOCK;
	int top;

	if (reg->type != T_MAP_VALUE) {
		if (res)
			verr(env, env->insn_idx,
			     "arg#%d doesn't point to map value or allocated object", regno - 1);
		else
			verr(env, env->insn_idx, "R%d type=%s expected=map_value", regno,
			     vtype_name(reg->type));
		return -1;
	}
	if (check_lock_arg(env, reg, regno, res))
		return -1;
	if (is_lock) {
		if (!res && find_ref(st, REF_LOCK, reg->id, reg->map) >= 0) {
			verr(env, env->insn_idx, "Locking two bpf_spin_locks are not allowed");
			return -1;
		}
		if (!res && top_ref(st, REF_LOCK) >= 0) {
			verr(env, env->insn_idx, "Locking two bpf_spin_locks are not allowed");
			return -1;
		}
		if (res && find_ref(st, REF_RES_LOCK | REF_RES_LOCK_IRQ, reg->id, reg->map) >= 0) {
			verr(env, env->insn_idx,
			     "Acquiring the same lock again, AA deadlock detected");
			return -1;
		}
		return push_ref(env, st, type, reg->id, reg->map);
	}
	if (!locks_held(st)) {
		verr(env, env->insn_idx, "%s_unlock without taking a lock", lock_str);
		return -1;
	}
	if (find_ref(st, type, reg->id, reg->map) < 0) {
		verr(env, env->insn_idx, "%s_unlock of different lock", lock_str);
		return -1;
	}
	top = top_ref(st, REF_LOCK_MASK);
	if (st->refs[top].id != reg->id || st->refs[top].map != reg->map) {
		verr(env, env->insn_idx, "%s_unlock cannot be out of order", lock_str);
		return -1;
	}
	remove_ref(st, top);
	return 0;
}

static void irq_flag_expected(struct venv *env, int argno, bool init)
{
	if (init)
		verr(env, env->insn_idx, "expected an initialized irq flag as arg#%d", argno);
	else
		verr(env, env->insn_idx, "expected uninitialized irq flag as arg#%d", argno);
}

/* The stack slot an irq-flag argument points to, or NULL (message set).
 * @init: the call expects a saved flag there (restore), else a free slot.
 * As the kernel's: a flag at a variable, misaligned or non-negative offset
 * fails with a line naming the problem, then one saying the flag is not in
 * the expected state (the last line, the one compared); below the stack, a
 * save fails as the write it would do, a restore as a flag not saved. */
static struct vslot_state *irq_slot(struct venv *env, struct vstate *st, int regno, int argno,
                                    bool init)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	int off;

	if (reg->type != T_STACK) {
		verr(env, env->insn_idx, "arg#%d doesn't point to an irq flag on stack", argno);
		return NULL;
	}
	if (!rng_is_const(&reg->r)) {
		irq_flag_expected(env, argno, init);
		return NULL;
	}
	off = reg->off + (int)reg->r.smin;
	if (off % 8 || off >= 0) {
		irq_flag_expected(env, argno, init);
		return NULL;
	}
	if (off < -RQBPF_STACK_SIZE) {
		if (init)
			irq_flag_expected(env, argno, init);
		else
			verr(env, env->insn_idx, "invalid write to stack R%d off=%d size=8", regno,
			     off);
		return NULL;
	}
	mem_note_stack(env, st->frame[reg->frameno], off);
	return &st->frame[reg->frameno]->stack[(-off - 1) / 8];
}

int irq_flag_save(struct venv *env, struct vstate *st, int regno, int argno, int cls)
{
	struct vslot_state *s = irq_slot(env, st, regno, argno, false);

	if (!s)
		return -1;
	if (s->bytes[0] == S_IRQ_FLAG) {
		irq_flag_expected(env, argno, false);
		return -1;
	}
	if (push_ref(env, st, REF_IRQ, ++env->id_gen, 0))
		return -1;
	for (int i = 0; i < 8; i++)
		s->bytes[i] = S_IRQ_FLAG;
	s->narrow = 0;
	reg_mark_not_init(&s->spill);
	s->irq_id = env->id_gen;
	s->irq_class = (uint8_t)cls;
	return 0;
}

int irq_flag_restore(struct venv *env, struct vstate *st, int regno, int argno, int cls)
{
	static const char *const cls_name[] = {"native", "lock"};
	struct vslot_state *s = irq_slot(env, st, regno, argno, true);
	int top;

	if (!s)
		return -1;
	if (s->bytes[0] != S_IRQ_FLAG) {
		irq_flag_expected(env, argno, true);
		return -1;
	}
	if (s->irq_class != cls) {
		verr(env, env->insn_idx,
		     "irq flag acquired by %s kfuncs cannot be restored with %s kfuncs",
		     cls_name[s->irq_class & 1], cls_name[cls & 1]);
		return -1;
	}
	top = top_ref(st, REF_IRQ);
	if (top < 0 || st->refs[top].id != s->irq_id) {
		verr(
		    env, env->insn_idx,
		    "cannot restore irq state out of order, expected id=%u acquired at insn_idx=%d",
		    top < 0 ? 0 : st->refs[top].id, top < 0 ? 0 : st->refs[top].insn);
		return -1;
	}
	remove_ref(st, top);
	for (int i = 0; i < 8; i++)
		s->bytes[i] = S_INVALID;
	s->irq_id = 0;
	return 0;
}
