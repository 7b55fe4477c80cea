/* SPDX-License-Identifier: MIT */
/*
 * globals.c: global (non-static) functions, as the kernel verifies them.
 * A call to one does not walk into it: the caller's arguments are checked
 * against the function's BTF prototype (a scalar, or the context), R0
 * becomes an unknown scalar and R1-R5 are cleared. No lock may be held at
 * the call. Each global function a walk reached is then verified on its
 * own, after the main program, from a state its prototype gives: its
 * scalar arguments unknown, its context argument the context, nothing
 * held. Its exit is a main program's (no lock or irq flag held) that
 * returns a scalar.
 */
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

enum garg { GARG_SCALAR, GARG_CTX, GARG_UNSUPPORTED };

const struct rqbpf_func_desc *func_at_insn(const struct venv *env, int start)
{
	for (size_t i = 0; i < env->prog->func_cnt; i++)
		if ((int)env->prog->funcs[i].start == start)
			return &env->prog->funcs[i];
	return NULL;
}

bool is_global_func(const struct venv *env, int start)
{
	const struct rqbpf_func_desc *f = func_at_insn(env, start);

	return f && f->global;
}

/* What argument @i of @f is to rqbpf: a pointer to the struct the type's
 * context is (by name) is the context; other pointers are not modelled. */
static enum garg global_arg(const struct venv *env, const struct rqbpf_func_desc *f, int i)
{
	const struct rqbpf_prog_type *t = rqbpf_prog_type_find(env->prog->prog_type);

	if (f->args[i].kind == RQBPF_FARG_SCALAR)
		return GARG_SCALAR;
	if (f->args[i].kind == RQBPF_FARG_PTR && f->args[i].ptr_struct && t &&
	    !strcmp(f->args[i].ptr_struct, t->ctx_struct))
		return GARG_CTX;
	return GARG_UNSUPPORTED;
}

static int check_global_arg(struct venv *env, struct vstate *st, const struct rqbpf_func_desc *f,
                            int i)
{
	const struct vreg *r = &cur_frame(st)->regs[i + 1];

	switch (global_arg(env, f, i)) {
	case GARG_SCALAR:
		if (r->type == T_SCALAR)
			return 0;
		verr(env, env->insn_idx, "R%d is not a scalar", i + 1);
		return -1;
	case GARG_CTX:
		if (r->type == T_CTX && !r->off && rng_is_const(&r->r) && !r->r.umin)
			return 0;
		if (r->type == T_CTX)
			verr(env, env->insn_idx,
			     "dereference of modified ctx ptr R%d off=%d disallowed", i + 1,
			     r->off);
		else
			verr(env, env->insn_idx, "arg#%d expects pointer to ctx", i);
		return -1;
	default:
		verr(env, env->insn_idx,
		     "arg#%d of global function %s() is not supported by rqbpf (only scalars and "
		     "the "
		     "context)",
		     i, f->name);
		return -1;
	}
}

int global_call(struct venv *env, struct vstate *st, int idx, int target)
{
	const struct rqbpf_func_desc *f = func_at_insn(env, target);
	struct vframe *caller = cur_frame(st);

	if (locks_held(st)) {
		verr(env, idx, "global function calls are not allowed while holding a lock,");
		return -1;
	}
	for (int i = 0; i < f->nargs; i++)
		if (check_global_arg(env, st, f, i))
			return -1;
	env->global_called[f - env->prog->funcs] = 1;
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++)
		reg_mark_not_init(&caller->regs[i]);
	reg_mark_unknown(&caller->regs[BPF_REG_0]);
	return 0;
}

struct vstate *global_entry_state(const struct venv *env, const struct rqbpf_func_desc *f)
{
	struct vstate *st = state_new();
	struct vframe *fr;

	if (!st)
		return NULL;
	fr = st->frame[0];
	fr->subprog_start = (int)f->start;
	for (int i = 0; i < f->nargs; i++) {
		struct vreg *r = &fr->regs[i + 1];

		if (global_arg(env, f, i) == GARG_CTX) {
			r->type = T_CTX;
			rng_const(&r->r, 0);
		} else {
			reg_mark_unknown(r);
		}
	}
	fr->regs[BPF_REG_10].type = T_STACK;
	rng_const(&fr->regs[BPF_REG_10].r, 0);
	return st;
}

/* The next global function a walk reached and none has verified, or NULL
 * (marking it verified). */
const struct rqbpf_func_desc *next_global_to_verify(struct venv *env)
{
	for (size_t i = 1; i < env->prog->func_cnt; i++)
		if (env->global_called[i] == 1) {
			env->global_called[i] = 2;
			return &env->prog->funcs[i];
		}
	return NULL;
}
