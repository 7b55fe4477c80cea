/* SPDX-License-Identifier: MIT */
/*
 * calls.c: helper and kfunc calls checked by their rows in the table of
 * calls (bpf/contract/calls.h), bpf-to-bpf calls and exits. A
 * res-lock kfunc forks the state: the success path holds the lock with
 * R0 = 0, the failure path (pushed for later) holds nothing and has R0 in
 * [-4095, -1].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

int check_reg_read(struct venv *env, struct vstate *st, int regno)
{
	if (cur_frame(st)->regs[regno].type == T_NOT_INIT) {
		verr(env, env->insn_idx, "R%d !read_ok", regno);
		return -1;
	}
	return 0;
}

static int check_args_init(struct venv *env, struct vstate *st, int nargs)
{
	for (int i = 1; i <= nargs; i++)
		if (check_reg_read(env, st, i))
			return -1;
	return 0;
}

static void clear_caller_saved(struct vframe *f)
{
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++)
		reg_mark_not_init(&f->regs[i]);
}

static int check_map_arg(struct venv *env, struct vstate *st, const struct rqbpf_map_desc **m)
{
	const struct vreg *r1 = &cur_frame(st)->regs[BPF_REG_1];

	if (r1->type != T_MAP_PTR) {
		verr(env, env->insn_idx, "R1 type=%s expected=map_ptr", vtype_name(r1->type));
		return -1;
	}
	*m = &env->prog->maps[r1->map];
	return 0;
}

static bool array_key_in_range(struct vstate *st, const struct rqbpf_map_desc *m)
{
	uint64_t key;

	return m->indexed && mem_const_key(st, BPF_REG_2, (int)m->key_size, &key) &&
	       key < m->max_entries;
}

/* A map key or value the helper reads at R@regno: @size bytes, not 0. */
static int map_mem_arg(struct venv *env, struct vstate *st, int regno, uint32_t size)
{
	if (!size) {
		verr(env, env->insn_idx, "invalid zero-sized read");
		return -1;
	}
	return mem_check_readable(env, st, regno, (int)size);
}

/* R@regno: the size of the memory at R@(regno - 1), which the helper reads:
 * bounded, 0 allowed (the kernel's check_mem_size_reg()). */
static int size_or_zero_arg(struct venv *env, struct vstate *st, int regno)
{
	const struct vreg *r = &cur_frame(st)->regs[regno];

	if (r->type != T_SCALAR) {
		verr(env, env->insn_idx, "R%d type=%s expected=scalar", regno, vtype_name(r->type));
		return -1;
	}
	if (r->r.smin < 0) {
		verr(env, env->insn_idx,
		     "R%d min value is negative, either use unsigned or 'var &= const'", regno);
		return -1;
	}
	if (r->r.umax >= (1u << 29)) {
		verr(env, env->insn_idx,
		     "R%d unbounded memory access, use 'var &= const' or 'if (var < const)'",
		     regno);
		return -1;
	}
	return r->r.umax ? mem_check_readable(env, st, regno - 1, (int)r->r.umax) : 0;
}

/* The arguments after the map, by their kinds; *@p alloc: an ALLOC_SIZE. */
static int map_op_args(struct venv *env, struct vstate *st, const struct rqbpf_call *c,
                       const struct rqbpf_map_desc *m, uint64_t *alloc)
{
	for (int i = 1; i < c->nargs; i++) {
		int regno = i + 1, ret = 0;

		switch (c->args[i]) {
		case RQBPF_ARG_MAP_KEY:
			ret = map_mem_arg(env, st, regno, m->key_size);
			break;
		case RQBPF_ARG_MAP_VALUE:
			ret = map_mem_arg(env, st, regno, m->value_size);
			break;
		case RQBPF_ARG_MAP_VALUE_UNINIT:
			ret = mem_check_writable(env, st, regno, (int)m->value_size);
			break;
		case RQBPF_ARG_SIZE_OR_ZERO:
			ret = size_or_zero_arg(env, st, regno);
			break;
		case RQBPF_ARG_ALLOC_SIZE:
			if (!reg_is_const(&cur_frame(st)->regs[regno], alloc)) {
				verr(env, env->insn_idx, "R%d is not a known constant'", regno);
				ret = -1;
			}
			break;
		default:
			break;
		}
		if (ret)
			return -1;
	}
	return 0;
}

/* A helper whose first argument is a map: its other arguments, the map's
 * type, and for one that returns a value of the map, R0 that value or NULL;
 * for bpf_ringbuf_reserve, a record or NULL. */
static int helper_map_op(struct venv *env, struct vstate *st, const struct rqbpf_call *c,
                         struct vreg *r0)
{
	const struct rqbpf_map_desc *m;
	uint64_t alloc = 0;
	int map;

	if (check_map_arg(env, st, &m))
		return -1;
	map = cur_frame(st)->regs[BPF_REG_1].map;
	if (map_op_args(env, st, c, m, &alloc) || map_func_compatible(env, m, c))
		return -1;
	if (c->ret == RQBPF_RET_RINGBUF_MEM_OR_NULL)
		return ringbuf_reserved(env, st, r0, (uint32_t)alloc);
	if (c->ret != RQBPF_RET_MAP_VALUE_OR_NULL)
		return 0;
	reg_mark_not_init(r0);
	r0->map = (uint16_t)map;
	rng_const(&r0->r, 0);
	if (array_key_in_range(st, m)) {
		/* As the kernel (6.14 on): an array lookup of a constant in-range
		 * key cannot fail. Its id then only names a lock. */
		r0->type = T_MAP_VALUE;
		r0->id = map_has_lock_field(env, map) ? ++env->id_gen : 0;
		return 0;
	}
	r0->type = T_MAP_VALUE_OR_NULL;
	r0->id = ++env->id_gen;
	if (m->inner_map && m->inner_map < env->prog->map_cnt) {
		/* a map of maps: an inner map, typed by its template */
		r0->type = T_MAP_PTR_OR_NULL;
		r0->map = (uint16_t)m->inner_map;
	}
	return 0;
}

/* A helper whose first argument is memory of the size in its second: a
 * known constant in (0, 512]; it reads the memory, or with @p fill writes
 * it (ARG_PTR_TO_UNINIT_MEM). */
static int helper_mem_size(struct venv *env, struct vstate *st, bool fill, bool or_zero)
{
	uint64_t len;

	if (!reg_is_const(&cur_frame(st)->regs[BPF_REG_2], &len) || (!len && !or_zero) ||
	    len > 512) {
		verr(env, env->insn_idx, "R2 is not a known constant'");
		return -1;
	}
	if (!len)
		return 0;
	return fill ? mem_check_writable(env, st, BPF_REG_1, (int)len)
	            : mem_check_readable(env, st, BPF_REG_1, (int)len);
}

/* A program of a type the row does not list may not call it (the kernel's
 * messages for a helper and for a kfunc). */
static int call_prog_type(struct venv *env, const struct rqbpf_call *c)
{
	if (rqbpf_call_allowed(c, env->prog->prog_type))
		return 0;
	if (c->kind == RQBPF_CALL_KFUNC && c->progs == RQBPF_PROG_SLEEPABLE)
		verr(env, env->insn_idx, "program must be sleepable to call sleepable kfunc %s",
		     c->name);
	else if (c->kind == RQBPF_CALL_KFUNC)
		verr(env, env->insn_idx, "calling kernel function %s is not allowed", c->name);
	else if (c->progs == RQBPF_PROG_SLEEPABLE)
		verr(env, env->insn_idx, "helper call might sleep in a non-sleepable prog");
	else
		verr(env, env->insn_idx, "program of this type cannot use helper %s#%d", c->name,
		     c->id);
	return -1;
}

/* A callback helper's argument R@regno: the callback (a subprogram's
 * address), or its context (a stack pointer or NULL). */
static int callback_arg(struct venv *env, struct vstate *st, int regno, enum rqbpf_call_arg kind)
{
	const struct vreg *r = &cur_frame(st)->regs[regno];
	uint64_t v = 1;

	if (kind == RQBPF_ARG_CALLBACK && r->type != T_FUNC_PTR) {
		verr(env, env->insn_idx, "R%d type=%s expected=func", regno, vtype_name(r->type));
		return -1;
	}
	if (kind == RQBPF_ARG_STACK_OR_NULL && r->type != T_STACK &&
	    !(r->type == T_SCALAR && reg_is_const(r, &v) && !v)) {
		verr(env, env->insn_idx, "R%d type=%s expected=fp", regno, vtype_name(r->type));
		return -1;
	}
	return 0;
}

/* The map types whose elements bpf_for_each_map_elem() visits. */
static bool map_has_for_each(uint32_t type)
{
	return type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

/*
 * bpf_loop() and bpf_for_each_map_elem(): their callback is walked as the
 * kernel walks it, in its own frame on a second path (*@p fork, from the
 * callback's first instruction), whose exit comes back to this call, which
 * then starts the next iteration (exit_check()); the call is a loop's head
 * where the iterations converge. This path goes on past the call as if the
 * callback had not run. The callback's registers: bpf_loop's R1 the index,
 * R2 the context; bpf_for_each_map_elem's R1-R3 the map, a key and a
 * value, R4 the context.
 */
static int callback_call(struct venv *env, struct vstate *st, const struct rqbpf_call *c,
                         struct vstate **fork, int *fork_idx)
{
	const struct vframe *caller = cur_frame(st);
	int target = caller->regs[BPF_REG_2].off;
	bool map = c->role == RQBPF_ROLE_MAP_CALLBACK;
	struct vframe *cb;
	struct vstate *s;

	/* As the kernel: bpf_loop's callback is walked at most as many times
	 * in a row as R1 may say (0: never), then the loop is done. */
	if (!map && caller->cb_iters >= caller->regs[BPF_REG_1].r.umax) {
		cur_frame(st)->cb_iters = 0;
		return 0;
	}
	if (st->curframe + 1 >= RQBPF_MAX_FRAMES) {
		verr(env, env->insn_idx, "the call stack of %d frames is too deep",
		     st->curframe + 2);
		return -1;
	}
	cur_frame(st)->cb_iters++; /* the callback's path, copied below */
	s = state_copy(st);
	cur_frame(st)->cb_iters = 0;
	cb = frame_new(env->insn_idx, target);
	if (!s || !cb) {
		state_free(s);
		free(cb);
		verr(env, env->insn_idx, "out of memory");
		return -1;
	}
	if (map) {
		for (int i = BPF_REG_1; i <= BPF_REG_3; i++) {
			cb->regs[i].type = i == BPF_REG_1   ? T_MAP_PTR
			                   : i == BPF_REG_2 ? T_MAP_KEY
			                                    : T_MAP_VALUE;
			cb->regs[i].map = caller->regs[BPF_REG_1].map;
			rng_const(&cb->regs[i].r, 0);
		}
		cb->regs[BPF_REG_4] = caller->regs[BPF_REG_3];
	} else {
		reg_mark_unknown(&cb->regs[BPF_REG_1]);
		cb->regs[BPF_REG_2] = caller->regs[BPF_REG_3];
	}
	cb->regs[BPF_REG_10].type = T_STACK;
	cb->regs[BPF_REG_10].frameno = (uint8_t)(st->curframe + 1);
	rng_const(&cb->regs[BPF_REG_10].r, 0);
	cb->in_callback = true;
	s->frame[++s->curframe] = cb;
	s->callback_depth++;
	*fork = s;
	*fork_idx = target;
	return 0;
}

static int helper_call(struct venv *env, struct vstate *st, int func, struct vstate **fork,
                       int *fork_idx)
{
	const struct rqbpf_call *c = rqbpf_call_find(RQBPF_CALL_HELPER, func, NULL);
	struct vreg r0;
	int ret = 0;

	if (!c) {
		verr(env, env->insn_idx, "invalid func unknown#%d", func);
		return -1;
	}
	if (call_prog_type(env, c) || check_args_init(env, st, c->nargs))
		return -1;
	if (c->ret == RQBPF_RET_VOID)
		reg_mark_not_init(&r0);
	else
		reg_mark_unknown(&r0);
	if (c->args[0] == RQBPF_ARG_PERCPU_BTF_ID) {
		verr(env, env->insn_idx,
		     "R1 type=%s expected=percpu_ptr_, percpu_rcu_ptr_, percpu_trusted_ptr_",
		     vtype_name(cur_frame(st)->regs[BPF_REG_1].type));
		return -1;
	}
	for (int i = 0; i < c->nargs && !ret; i++)
		if (c->args[i] == RQBPF_ARG_CALLBACK || c->args[i] == RQBPF_ARG_STACK_OR_NULL)
			ret = callback_arg(env, st, i + 1, c->args[i]);
	if (!ret && c->role == RQBPF_ROLE_MAP_CALLBACK &&
	    cur_frame(st)->regs[BPF_REG_1].type == T_MAP_PTR &&
	    !map_has_for_each(env->prog->maps[cur_frame(st)->regs[BPF_REG_1].map].type)) {
		/* before the map type's helpers, as the kernel */
		verr(env, env->insn_idx, "callback function not allowed for map");
		ret = -1;
	}
	if (ret)
		return -1;
	if (c->args[0] == RQBPF_ARG_MAP)
		ret = helper_map_op(env, st, c, &r0);
	else if ((c->args[0] == RQBPF_ARG_MEM || c->args[0] == RQBPF_ARG_UNINIT_MEM) &&
	         (c->args[1] == RQBPF_ARG_CONST_SIZE || c->args[1] == RQBPF_ARG_CONST_SIZE_OR_ZERO))
		ret = helper_mem_size(env, st, c->args[0] == RQBPF_ARG_UNINIT_MEM,
		                      c->args[1] == RQBPF_ARG_CONST_SIZE_OR_ZERO);
	else if (c->args[0] == RQBPF_ARG_RINGBUF_MEM)
		ret = ringbuf_release(env, st);
	else if (c->role == RQBPF_ROLE_SPIN_LOCK || c->role == RQBPF_ROLE_SPIN_UNLOCK)
		ret =
		    lock_process(env, st, BPF_REG_1, c->role == RQBPF_ROLE_SPIN_LOCK, false, false);
	if (!ret && (c->role == RQBPF_ROLE_LOOP_CALLBACK || c->role == RQBPF_ROLE_MAP_CALLBACK))
		ret = callback_call(env, st, c, fork, fork_idx);
	if (ret)
		return -1;
	clear_caller_saved(cur_frame(st));
	cur_frame(st)->regs[BPF_REG_0] = r0;
	return 0;
}

/* The state a failed lock call leaves: nothing taken, R0 in [-4095, -1]. */
static struct vstate *lock_failure_state(struct venv *env, const struct vstate *st)
{
	struct vstate *fail = state_copy(st);
	struct vreg *r0;

	if (!fail) {
		verr(env, env->insn_idx, "failed to push state for failed lock acquisition");
		return NULL;
	}
	clear_caller_saved(cur_frame(fail));
	r0 = &cur_frame(fail)->regs[BPF_REG_0];
	reg_mark_unknown(r0);
	rng_set_s32(&r0->r, -V_MAX_ERRNO, -1);
	return fail;
}

static int kfunc_null_arg(struct venv *env, struct vstate *st, const struct rqbpf_call *c)
{
	for (int i = 1; i <= c->nargs; i++) {
		const struct vreg *r = &cur_frame(st)->regs[i];
		enum rqbpf_call_arg kind = c->args[i - 1];

		/* pointers the kernel checks for NULL with this message: the
		 * locks, the irq flags, a kfunc's memory to fill */
		if (kind != RQBPF_ARG_LOCK && kind != RQBPF_ARG_IRQ_FLAG &&
		    kind != RQBPF_ARG_UNINIT_MEM)
			continue;
		if (r->type == T_MAP_VALUE_OR_NULL || reg_is_const(r, NULL)) {
			uint64_t v = 1;

			if (r->type == T_SCALAR && reg_is_const(r, &v) && v)
				continue;
			verr(env, env->insn_idx, "Possibly NULL pointer passed to trusted arg%d",
			     i - 1);
			return -1;
		}
	}
	return 0;
}

/* A kfunc's effect on the locks and irq flags, by its role: a res lock
 * taken or released (R1), with the irq flag (R2) saved or restored for the
 * irqsave pair; or a native irq flag (R1) saved or restored. */
static int kfunc_role(struct venv *env, struct vstate *st, enum rqbpf_call_role role)
{
	bool irq = role == RQBPF_ROLE_RES_LOCK_IRQSAVE || role == RQBPF_ROLE_RES_UNLOCK_IRQRESTORE;
	bool take = role == RQBPF_ROLE_RES_LOCK || role == RQBPF_ROLE_RES_LOCK_IRQSAVE;

	switch (role) {
	case RQBPF_ROLE_RES_LOCK:
	case RQBPF_ROLE_RES_LOCK_IRQSAVE:
	case RQBPF_ROLE_RES_UNLOCK:
	case RQBPF_ROLE_RES_UNLOCK_IRQRESTORE:
		if (lock_process(env, st, BPF_REG_1, take, true, irq))
			return -1;
		if (!irq)
			return 0;
		return take ? irq_flag_save(env, st, BPF_REG_2, 1, IRQ_LOCK)
		            : irq_flag_restore(env, st, BPF_REG_2, 1, IRQ_LOCK);
	case RQBPF_ROLE_IRQ_SAVE:
		return irq_flag_save(env, st, BPF_REG_1, 0, IRQ_NATIVE);
	case RQBPF_ROLE_IRQ_RESTORE:
		return irq_flag_restore(env, st, BPF_REG_1, 0, IRQ_NATIVE);
	default:
		return 0;
	}
}

/* A kfunc's memory and size pair (dst, dst__sz) that it fills: the size a
 * bounded scalar, the memory writable for all of it. The kernel reports any
 * failure with one message for the pair (its log has the cause before). */
static int kfunc_mem_size(struct venv *env, struct vstate *st)
{
	const struct vreg *sz = &cur_frame(st)->regs[BPF_REG_2];
	bool ok = sz->type == T_SCALAR && sz->r.smin >= 0 && sz->r.umax < (1u << 29);

	if (ok && sz->r.umax)
		ok = !mem_check_writable(env, st, BPF_REG_1, (int)sz->r.umax);
	if (ok)
		return 0;
	env->failed = false; /* the pair's message replaces the cause's */
	verr(env, env->insn_idx, "arg#0 arg#1 memory, len pair leads to invalid memory access");
	return -1;
}

/* The stack slot of the struct bpf_iter_num in R1, or NULL (message set):
 * for bpf_iter_num_new() (@init false) one to make, for next and destroy
 * one made; the kernel's messages. */
static struct vslot_state *iter_slot(struct venv *env, struct vstate *st, bool init)
{
	const struct vreg *reg = &cur_frame(st)->regs[BPF_REG_1];
	struct vslot_state *s;
	int off;

	if (reg->type != T_STACK) {
		verr(env, env->insn_idx, "arg#0 expected pointer to an iterator on stack");
		return NULL;
	}
	if (!rng_is_const(&reg->r)) {
		verr(env, env->insn_idx, "iter has to be at a constant offset");
		return NULL;
	}
	off = reg->off + (int)reg->r.smin;
	if (off % 8) {
		verr(env, env->insn_idx, "cannot pass in iter at an offset=%d", off);
		return NULL;
	}
	if (off >= 0 || off < -RQBPF_STACK_SIZE) {
		if (init)
			verr(env, env->insn_idx, "expected an initialized iter_num as arg #0");
		else
			verr(env, env->insn_idx, "invalid write to stack R1 off=%d size=8", off);
		return NULL;
	}
	mem_note_stack(env, st->frame[reg->frameno], off);
	s = &st->frame[reg->frameno]->stack[(-off - 1) / 8];
	if ((s->bytes[0] == S_ITER) != init) {
		verr(env, env->insn_idx, "expected %s iter_num as arg #0",
		     init ? "an initialized" : "uninitialized");
		return NULL;
	}
	return s;
}

/* bpf_iter_num_new(): the slot becomes an active iterator holding a new
 * reference; its int arguments may be anything. */
static int iter_new(struct venv *env, struct vstate *st)
{
	struct vslot_state *s = iter_slot(env, st, false);

	if (!s || push_ref(env, st, REF_ITER, ++env->id_gen, 0))
		return -1;
	memset(s->bytes, S_ITER, sizeof(s->bytes));
	reg_mark_not_init(&s->spill);
	s->narrow = 0;
	s->irq_id = env->id_gen;
	s->iter_state = ITER_ACTIVE;
	s->iter_depth = 0;
	return 0;
}

/* bpf_iter_num_destroy(): the reference released, the slot free again. */
static int iter_destroy(struct venv *env, struct vstate *st)
{
	struct vslot_state *s = iter_slot(env, st, true);

	if (!s)
		return -1;
	for (int i = 0; i < st->nrefs; i++)
		if (st->refs[i].type == REF_ITER && st->refs[i].id == s->irq_id) {
			remove_ref(st, i);
			break;
		}
	memset(s->bytes, S_INVALID, sizeof(s->bytes));
	s->irq_id = 0;
	s->iter_state = 0;
	s->iter_depth = 0;
	return 0;
}

/*
 * bpf_iter_num_next(), the loop's head, as the kernel walks it: this path
 * finds the iterator drained (R0 = NULL, and it stays drained); while it
 * is active, a second path (*@p fork) gets its next value (R0 points to 4
 * read-only bytes) one iteration deeper.
 */
static int iter_next(struct venv *env, struct vstate *st, struct vstate **fork)
{
	struct vslot_state *s = iter_slot(env, st, true), *fs;
	int spi;
	struct vreg *r0;

	if (!s)
		return -1;
	spi = (int)(s - st->frame[cur_frame(st)->regs[BPF_REG_1].frameno]->stack);
	/* R0 may be NULL: an id, as the kernel gives one (unused here, but
	 * the ids in messages count it) */
	++env->id_gen;
	clear_caller_saved(cur_frame(st));
	if (s->iter_state == ITER_ACTIVE) {
		*fork = state_copy(st);
		if (!*fork) {
			verr(env, env->insn_idx, "out of memory");
			return -1;
		}
		fs = &(*fork)->frame[cur_frame(st)->regs[BPF_REG_1].frameno]->stack[spi];
		fs->iter_depth++;
		r0 = &cur_frame(*fork)->regs[BPF_REG_0];
		reg_mark_not_init(r0);
		r0->type = T_MEM_RDONLY;
		r0->mem_size = sizeof(int);
		rng_const(&r0->r, 0);
	}
	s->iter_state = ITER_DRAINED;
	reg_mark_const(&cur_frame(st)->regs[BPF_REG_0], 0);
	return 0;
}

static int kfunc_call(struct venv *env, struct vstate *st, int kf, struct vstate **fork)
{
	const struct rqbpf_call *c = rqbpf_call_find(RQBPF_CALL_KFUNC, kf, NULL);
	struct vframe *f = cur_frame(st);

	if (!c) {
		verr(env, env->insn_idx, "calling kernel function %d is not allowed", kf);
		return -1;
	}
	if (call_prog_type(env, c))
		return -1;
	if (c->ret == RQBPF_RET_LOCK_RESULT) {
		*fork = lock_failure_state(env, st);
		if (!*fork)
			return -1;
	}
	if (check_args_init(env, st, c->nargs) || kfunc_null_arg(env, st, c))
		return -1;
	switch (c->role) {
	case RQBPF_ROLE_ITER_NEXT:
		return iter_next(env, st, fork);
	case RQBPF_ROLE_ITER_NEW:
		if (iter_new(env, st))
			return -1;
		break;
	case RQBPF_ROLE_ITER_DESTROY:
		if (iter_destroy(env, st))
			return -1;
		break;
	default:
		if (kfunc_role(env, st, c->role))
			return -1;
	}
	if (c->args[0] == RQBPF_ARG_UNINIT_MEM && kfunc_mem_size(env, st))
		return -1;
	clear_caller_saved(f);
	if (c->ret == RQBPF_RET_INTEGER)
		reg_mark_unknown(&f->regs[BPF_REG_0]);
	if (c->ret == RQBPF_RET_LOCK_RESULT)
		reg_mark_const(&f->regs[BPF_REG_0], 0);
	else if (c->ret == RQBPF_RET_INTEGER)
		reg_mark_unknown(&f->regs[BPF_REG_0]);
	return 0;
}

/*
 * Whether R0 may hold a pointer after the helper or kfunc call @in (for
 * precise.c, which must over-approximate): a call whose row returns a map
 * value, or one the table does not have.
 */
bool call_may_return_ptr(const struct bpf_insn *in)
{
	const struct rqbpf_call *c = rqbpf_call_of_insn(in);

	return !c || c->ret == RQBPF_RET_MAP_VALUE_OR_NULL ||
	       c->ret == RQBPF_RET_RINGBUF_MEM_OR_NULL || c->ret == RQBPF_RET_ITER_NUM_OR_NULL;
}

static int subprog_call(struct venv *env, struct vstate *st, int idx, int *next)
{
	int target = insn_call_target(&env->prog->insns[idx], idx);
	struct vframe *caller = cur_frame(st), *callee;

	if (st->curframe + 1 >= RQBPF_MAX_FRAMES) {
		verr(env, idx, "the call stack of %d frames is too deep", st->curframe + 2);
		return -1;
	}
	callee = frame_new(idx, target);
	if (!callee) {
		verr(env, idx, "out of memory");
		return -1;
	}
	for (int i = BPF_REG_1; i <= BPF_REG_5; i++)
		callee->regs[i] = caller->regs[i];
	callee->regs[BPF_REG_10].type = T_STACK;
	callee->regs[BPF_REG_10].frameno = (uint8_t)(st->curframe + 1);
	rng_const(&callee->regs[BPF_REG_10].r, 0);
	clear_caller_saved(caller);
	st->frame[++st->curframe] = callee;
	*next = target;
	return 0;
}

static int check_ret_range(struct venv *env, int idx, const struct vreg *r0, const char *where,
                           int32_t lo, int32_t hi, int regno);

/* The number of the function starting at @p start (0 the main program, then
 * in instruction order), as the kernel numbers subprograms. */
static int subprog_number(const struct venv *env, int start)
{
	int n = 0;

	for (int i = 1; i <= start; i++)
		n += env->subprog_of[i] == i && env->subprog_of[i - 1] != i;
	return n;
}

/*
 * bpf_throw(cookie): the path ends, the program returning the cookie (the
 * kernel's default exception callback): not from a callback, with no
 * reference or irq region held (locks: it is a call, refused under one),
 * the cookie in the type's return range.
 */
static int throw_check(struct venv *env, struct vstate *st, int idx)
{
	const struct vreg *r1 = &cur_frame(st)->regs[BPF_REG_1];

	for (int f = 1; f <= st->curframe; f++)
		if (st->frame[f]->in_callback) {
			verr(env, idx,
			     "bpf_throw kfunc (insn %d) cannot be called from callback "
			     "subprog %d",
			     idx, subprog_number(env, st->frame[f]->subprog_start));
			return -1;
		}
	if (refs_check_exit(env, st))
		return -1;
	if (irqs_held(st)) {
		verr(env, idx, "bpf_throw cannot be used inside bpf_local_irq_save-ed region");
		return -1;
	}
	if (!env->ret_checked)
		return 0;
	return check_ret_range(env, idx, r1, "At program exit", env->ret_min, env->ret_max,
	                       BPF_REG_1);
}

int call_check(struct venv *env, struct vstate *st, int idx, struct vstate **fork, int *next,
               int *fork_idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];

	const struct rqbpf_call *c = rqbpf_call_of_insn(in);

	*next = idx + 1;
	if (locks_held(st) &&
	    ((in->src_reg == 0 && (!c || !c->under_lock)) ||
	     (in->src_reg == BPF_PSEUDO_KFUNC_CALL && (in->off != 0 || !c || !c->under_lock)))) {
		verr(env, idx, "function calls are not allowed while holding a lock");
		return -1;
	}
	if (in->src_reg == BPF_PSEUDO_CALL)
		return is_global_func(env, insn_call_target(in, idx))
		           ? global_call(env, st, idx, insn_call_target(in, idx))
		           : subprog_call(env, st, idx, next);
	if (in->src_reg == BPF_PSEUDO_KFUNC_CALL && c && c->role == RQBPF_ROLE_THROW) {
		*next = -1;
		return check_args_init(env, st, c->nargs) || call_prog_type(env, c) ||
		               throw_check(env, st, idx)
		           ? -1
		           : 0;
	}
	if (in->src_reg == BPF_PSEUDO_KFUNC_CALL)
		return kfunc_call(env, st, in->imm, fork);
	if (in->src_reg != 0 || in->dst_reg || in->off) {
		verr(env, idx, "BPF_CALL uses reserved fields");
		return -1;
	}
	return helper_call(env, st, in->imm, fork, fork_idx);
}

/* A callback's exit: R0 a scalar in [0, 1]; back to the call that called
 * it (its next iteration), the caller's registers as they were there. */
static int callback_exit(struct venv *env, struct vstate *st, int idx, int *next)
{
	struct vframe *cb = cur_frame(st);
	const struct vreg *r0 = &cb->regs[BPF_REG_0];

	if (r0->type != T_SCALAR) {
		verr(env, idx, "R0 not a scalar value");
		return -1;
	}
	if (check_ret_range(env, idx, r0, "At callback return", 0, 1, BPF_REG_0))
		return -1;
	*next = cb->callsite;
	st->frame[st->curframe--] = NULL;
	free(cb);
	return 0;
}

/* BPF_EXIT: return to the caller's frame (*next = the insn after the
 * call), or end the path in the main program (*next = -1). */
int exit_check(struct venv *env, struct vstate *st, int idx, int *next)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	struct vreg *r0 = &cur_frame(st)->regs[BPF_REG_0];

	*next = -1;
	if (in->imm || in->src_reg || in->dst_reg) {
		verr(env, idx, "BPF_EXIT uses reserved fields");
		return -1;
	}
	if (!st->curframe && locks_held(st)) {
		verr(env, idx,
		     "BPF_EXIT instruction in main prog cannot be used inside bpf_spin_lock-ed "
		     "region");
		return -1;
	}
	if (!st->curframe && irqs_held(st)) {
		verr(
		    env, idx,
		    "BPF_EXIT instruction in main prog cannot be used inside bpf_local_irq_save-ed "
		    "region");
		return -1;
	}
	if (!st->curframe && refs_check_exit(env, st))
		return -1;
	if (cur_frame(st)->in_callback)
		return callback_exit(env, st, idx, next);
	if (st->curframe) {
		/* A static subprogram may leave R0 unset; the caller may then not
		 * read it. */
		struct vframe *callee = cur_frame(st);

		if (r0->type == T_STACK) {
			verr(env, idx, "cannot return stack pointer to the caller frame");
			return -1;
		}
		st->frame[st->curframe - 1]->regs[BPF_REG_0] = *r0;
		*next = callee->callsite + 1;
		st->frame[st->curframe--] = NULL;
		free(callee);
		return 0;
	}
	if (check_reg_read(env, st, BPF_REG_0))
		return -1;
	if (cur_frame(st)->subprog_start && r0->type != T_SCALAR) { /* a global function */
		verr(env, idx, "At subprogram exit the register R0 is not a scalar value (%s)",
		     vtype_name(r0->type));
		return -1;
	}
	if (cur_frame(st)->subprog_start)
		return 0;
	if (r0->type != T_SCALAR) {
		verr(env, idx, "At program exit the register R0 is not a known value (%s)",
		     vtype_name(r0->type));
		return -1;
	}
	if (!env->ret_checked)
		return 0;
	return check_ret_range(env, idx, r0, "At program exit", env->ret_min, env->ret_max,
	                       BPF_REG_0);
}

/*
 * The main program of a type with a return range (prog_types.h) returns a
 * value in it: the kernel's check_return_code() message, which shows the
 * bounds that are known.
 */
static int check_ret_range(struct venv *env, int idx, const struct vreg *r0, const char *where,
                           int32_t lo, int32_t hi, int regno)
{
	char bounds[64] = "";
	int n = 0;

	if (r0->r.smin >= lo && r0->r.smax <= hi)
		return 0;
	if (r0->r.smin > INT64_MIN)
		n += snprintf(bounds + n, sizeof(bounds) - (size_t)n, " smin=%lld",
		              (long long)r0->r.smin);
	if (r0->r.smax < INT64_MAX)
		snprintf(bounds + n, sizeof(bounds) - (size_t)n, " smax=%lld",
		         (long long)r0->r.smax);
	verr(env, idx, "%s the register R%d has%s should have been in [%d, %d]", where, regno,
	     bounds[0] ? bounds : " unknown scalar value", lo, hi);
	return -1;
}

/*
 * The kernel's check_map_prog_compatibility(), before anything else: a
 * program of a type that may not use locks (tracing, socket filters) may
 * not name a map whose value holds one (a BTF record with a lock), even
 * in code no path reaches.
 */
int check_map_prog_types(struct venv *env)
{
	const char *why = rqbpf_prog_type_lock_refusal(env->prog->prog_type);
	const struct bpf_insn *insns = env->prog->insns;

	for (size_t i = 0; why && i + 1 < env->prog->insn_cnt; i++) {
		const struct rqbpf_map_desc *m;

		if (!is_ldimm64(&insns[i]))
			continue;
		if ((insns[i].src_reg == BPF_PSEUDO_MAP_FD ||
		     insns[i].src_reg == BPF_PSEUDO_MAP_VALUE) &&
		    insns[i].imm >= 0 && (size_t)insns[i].imm < env->prog->map_cnt) {
			m = &env->prog->maps[insns[i].imm];
			if (!m->no_btf && map_has_lock_field(env, insns[i].imm)) {
				verr(env, (int)i, "%s", why);
				return -1;
			}
		}
		i++;
	}
	return 0;
}

/* A frame's stack as the kernel counts it against the 512 bytes of a call
 * chain: its depth rounded up to 16 (the JIT's granularity). */
static int frame_stack(const struct venv *env, int start)
{
	return (env->stack_depth[start] + 15) & ~15;
}

/* Past the limits: a chain worst case is kept only up to these. */
#define CHAIN_FRAMES_PAST RQBPF_MAX_FRAMES
#define CHAIN_STACK_PAST  (RQBPF_STACK_SIZE + 16)

/* The next call at or after *@i inside subprogram @start: its target, or -1. */
static int next_call(const struct venv *env, int start, int *i)
{
	int n = (int)env->prog->insn_cnt;

	for (; *i < n && env->subprog_of[*i] == start; ++*i)
		if (is_pseudo_call(&env->prog->insns[*i]) || is_pseudo_func(&env->prog->insns[*i]))
			return insn_call_target(&env->prog->insns[*i], *i);
	return -1;
}

struct chain_worst {
	uint8_t *state;  /* per subprogram start: 0 unseen, 1 being searched, 2 done */
	uint8_t *frames; /* frames of the longest chain from it, itself included */
	uint16_t *stack; /* stack of the deepest chain from it, itself included */
	int *path, *pos; /* the search's path of subprograms, each one's next insn */
};

/* Subprogram @parent calls @child, whose worst case is known: fold it in. */
static void fold_worst(const struct venv *env, struct chain_worst *w, int parent, int child)
{
	int f = 1 + w->frames[child], st = frame_stack(env, parent) + w->stack[child];

	if (f > w->frames[parent])
		w->frames[parent] = (uint8_t)(f < CHAIN_FRAMES_PAST ? f : CHAIN_FRAMES_PAST);
	if (st > w->stack[parent])
		w->stack[parent] = (uint16_t)(st < CHAIN_STACK_PAST ? st : CHAIN_STACK_PAST);
}

static void enter_worst(const struct venv *env, struct chain_worst *w, int *top, int start)
{
	w->state[start] = 1;
	w->frames[start] = 1;
	w->stack[start] = (uint16_t)frame_stack(env, start);
	w->path[++*top] = start;
	w->pos[*top] = start;
}

/*
 * Every subprogram's worst case over the chains of calls from it, in one
 * depth-first search (each subprogram and call once): a chain through a
 * cycle counts as past both limits. Lets check_call_chains() follow only
 * calls that lead to an error, instead of every chain, whose number grows
 * exponentially with nested calls.
 */
static void chain_worsts(const struct venv *env, struct chain_worst *w)
{
	int top = -1;

	enter_worst(env, w, &top, 0);
	while (top >= 0) {
		int s = w->path[top], c = next_call(env, s, &w->pos[top]);

		if (c < 0) {
			w->state[s] = 2;
			if (--top >= 0)
				fold_worst(env, w, w->path[top], s);
			continue;
		}
		w->pos[top]++;
		if (w->state[c] == 1) {
			w->frames[s] = CHAIN_FRAMES_PAST;
			w->stack[s] = CHAIN_STACK_PAST;
		} else if (w->state[c] == 2) {
			fold_worst(env, w, s, c);
		} else {
			enter_worst(env, w, &top, c);
		}
	}
}

/*
 * The kernel's check_max_stack_depth(), after the walk: along every chain
 * of calls from the main program, taken by the walk or not (a call behind
 * a branch no path takes, a recursion the walk bounded), at most 8 frames
 * and 512 bytes of stack in all. The chains are followed in the kernel's
 * order, so the first error is its; a call whose worst case stays within
 * both limits is not followed.
 */
static int first_chain_error(struct venv *env, const struct chain_worst *w)
{
	int ret_insn[RQBPF_MAX_FRAMES], ret_start[RQBPF_MAX_FRAMES];
	int frame = 0, start = 0, i = 0, c, depth = frame_stack(env, 0);

	for (;;) {
		while ((c = next_call(env, start, &i)) >= 0) {
			int call = i++;

			if (frame + w->frames[c] < RQBPF_MAX_FRAMES &&
			    depth + w->stack[c] <= RQBPF_STACK_SIZE)
				continue;
			ret_insn[frame] = i;
			ret_start[frame] = start;
			start = i = c;
			if (++frame >= RQBPF_MAX_FRAMES) {
				verr(env, call, "the call stack of %d frames is too deep !", frame);
				return -1;
			}
			depth += frame_stack(env, start);
			if (depth > RQBPF_STACK_SIZE) {
				verr(env, call, "combined stack size of %d calls is %d. Too large",
				     frame + 1, depth);
				return -1;
			}
		}
		if (frame == 0)
			return 0;
		depth -= frame_stack(env, start);
		frame--;
		i = ret_insn[frame];
		start = ret_start[frame];
	}
}

int check_call_chains(struct venv *env)
{
	size_t n = env->prog->insn_cnt;
	struct chain_worst w = {calloc(n, 1), calloc(n, 1), calloc(n, sizeof(uint16_t)),
	                        calloc(n, sizeof(int)), calloc(n, sizeof(int))};
	int rc = -1;

	if (w.state && w.frames && w.stack && w.path && w.pos) {
		chain_worsts(env, &w);
		rc = first_chain_error(env, &w);
	} else {
		verr(env, 0, "out of memory");
	}
	free(w.state);
	free(w.frames);
	free(w.stack);
	free(w.path);
	free(w.pos);
	return rc;
}
