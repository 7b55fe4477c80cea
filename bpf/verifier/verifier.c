/* SPDX-License-Identifier: MIT */
/*
 * verifier.c: the walk. A depth-first abstract interpretation of every
 * path from the first instruction: each instruction updates the current
 * state; a branch that both sides may take pushes one side for later. At
 * prune points the state is compared with the states already verified
 * there: a covered state ends its path. A state still being explored
 * (some path below it is not finished) never prunes another; meeting an
 * identical one means the loop makes no progress.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

/* A state remembered at a prune point. branches counts the paths below it
 * that are still being walked; at 0 it is fully verified. */
struct explored {
	struct vstate *st;
	uint64_t fingerprint; /* state_fingerprint(st) */
	struct explored *parent;
	struct explored *next;
	int branches;
};

struct pending {
	struct vstate *st;
	struct explored *parent;
	int idx;
	int from;
};

struct walk {
	struct explored **at; /* per insn */
	uint16_t *nstates;    /* per insn */
	struct pending *stack;
	int depth, cap;
	uint64_t total_states;
};

static void path_done(struct explored *e)
{
	for (; e; e = e->parent)
		if (--e->branches > 0)
			break;
}

static int push_pending(struct venv *env, struct walk *w, struct vstate *st, int idx, int from,
                        struct explored *parent)
{
	if (w->depth + 1 > V_MAX_PENDING) {
		verr(env, from, "The sequence of %d jumps is too complex.", w->depth + 1);
		state_free(st);
		return -1;
	}
	if (w->depth == w->cap) {
		int cap = w->cap ? w->cap * 2 : 64;
		struct pending *s = realloc(w->stack, sizeof(*s) * (size_t)cap);

		if (!s) {
			verr(env, from, "out of memory");
			state_free(st);
			return -1;
		}
		w->stack = s;
		w->cap = cap;
	}
	w->stack[w->depth++] = (struct pending){st, parent, idx, from};
	if (parent)
		parent->branches++;
	return 0;
}

/* The iterator bpf_iter_num_next() at @idx advances is active in @st. */
static bool iter_arg_active(const struct vstate *st)
{
	const struct vreg *r1 = &st->frame[st->curframe]->regs[BPF_REG_1];
	const struct vslot_state *s;
	int off;

	if (r1->type != T_STACK || !rng_is_const(&r1->r))
		return false;
	off = r1->off + (int)r1->r.smin;
	if (off >= 0 || off < -RQBPF_STACK_SIZE || off % 8)
		return false;
	s = &st->frame[r1->frameno]->stack[(-off - 1) / 8];
	return s->bytes[0] == S_ITER && s->iter_state == ITER_ACTIVE;
}

/*
 * At a loop's head, @old is a state still being explored (a path below it
 * goes round the loop) and @cur one more iteration of it: as the kernel,
 * @cur is safe when @old covers it and it went further round (may_goto),
 * its iterator is still active (an iterator's next), or always for a
 * callback call. 1: pruned; 0: not, and no infinite-loop check (an
 * iterator's next, a callback call); -1: not, check.
 */
static int loop_head_hit(struct venv *env, const struct vstate *old, const struct vstate *cur,
                         int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	const struct rqbpf_call *c;

	if (env->prune_point[idx] < V_LOOP_HEAD)
		return -1;
	if (is_may_goto(in))
		return old->may_goto_depth != cur->may_goto_depth &&
		               states_cover(env, old, cur, idx)
		           ? 1
		           : -1;
	c = rqbpf_call_of_insn(in);
	if (c && c->role == RQBPF_ROLE_ITER_NEXT)
		return states_cover(env, old, cur, idx) && iter_arg_active(cur) ? 1 : 0;
	return states_cover(env, old, cur, idx) ? 1 : 0;
}

/* 1: pruned, 0: continue, -1: error. Records the state at prune points. */
static int visit_prune_point(struct venv *env, struct walk *w, struct vstate *st, int idx,
                             struct explored **parent)
{
	struct explored *e;
	bool looping = false, have_fp = false;
	uint64_t fp = 0;

	if (!env->prune_point[idx])
		return 0;
	env->jmps++;
	if (env->prec_dirty)
		compute_precision(env);
	for (e = w->at[idx]; e; e = e->next) {
		int hit;

		if (e->branches == 0) {
			if (states_cover(env, e->st, st, idx)) {
				vlogf(env, "%d: safe\n", idx);
				return 1;
			}
			continue;
		}
		looping = true;
		hit = loop_head_hit(env, e->st, st, idx);
		if (hit > 0) {
			vlogf(env, "%d: safe\n", idx);
			return 1;
		}
		if (hit == 0) /* an iterator's next or a callback call: no check */
			continue;
		if (!have_fp) {
			fp = state_fingerprint(st);
			have_fp = true;
		}
		if (fp == e->fingerprint && states_equal_exact(env, e->st, st) &&
		    loop_depths_equal(e->st, st)) {
			verr(env, idx, "infinite loop detected at insn %d", idx);
			return -1;
		}
	}
	/* Remember states only every few jumps and instructions, and more
	 * rarely inside a loop, as the kernel does: comparing costs too. A
	 * loop's head always (its iterations converge there). */
	if (env->prune_point[idx] < V_LOOP_HEAD
	        ? w->nstates[idx] >= V_MAX_STATES_PER_INSN ||
	              env->jmps - env->prev_jmps < (looping ? 20u : 2u) ||
	              env->processed - env->prev_processed < (looping ? 100u : 8u)
	        : w->nstates[idx] >= V_MAX_LOOP_HEAD_STATES)
		return 0;
	env->prev_jmps = env->jmps;
	env->prev_processed = env->processed;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->st = state_copy(st))) {
		free(e);
		verr(env, idx, "out of memory");
		return -1;
	}
	e->parent = *parent;
	e->fingerprint = have_fp ? fp : state_fingerprint(st);
	e->branches = 1;
	e->next = w->at[idx];
	w->at[idx] = e;
	w->nstates[idx]++;
	w->total_states++;
	*parent = e;
	return 0;
}

static int ld_imm64(struct venv *env, struct vstate *st, int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	struct vreg *dst = &cur_frame(st)->regs[in->dst_reg];
	const struct rqbpf_map_desc *m;

	if (in->dst_reg >= BPF_REG_10) {
		verr(env, idx, "frame pointer is read only");
		return -1;
	}
	if (in->src_reg == 0) {
		reg_mark_const(dst, (uint32_t)in->imm | ((uint64_t)(uint32_t)in[1].imm << 32));
		return 0;
	}
	if (in->src_reg == BPF_PSEUDO_FUNC) {
		int target = insn_call_target(in, idx);

		if (is_global_func(env, target)) {
			verr(env, idx, "callback function not static");
			return -1;
		}
		reg_mark_not_init(dst);
		dst->type = T_FUNC_PTR;
		dst->off = target;
		rng_const(&dst->r, 0);
		return 0;
	}
	if (in->src_reg != BPF_PSEUDO_MAP_FD && in->src_reg != BPF_PSEUDO_MAP_VALUE) {
		verr(env, idx, "unrecognized bpf_ld_imm64 insn");
		return -1;
	}
	if (in->imm < 0 || (size_t)in->imm >= env->prog->map_cnt) {
		verr(env, idx, "fd %d is not pointing to valid bpf_map", in->imm);
		return -1;
	}
	m = &env->prog->maps[in->imm];
	reg_mark_not_init(dst);
	dst->map = (uint16_t)in->imm;
	rng_const(&dst->r, 0);
	if (in->src_reg == BPF_PSEUDO_MAP_FD) {
		dst->type = T_MAP_PTR;
		return 0;
	}
	if ((uint32_t)in[1].imm >= m->value_size) {
		verr(env, idx, "invalid access to map value pointer, value_size=%u off=%u",
		     m->value_size, (uint32_t)in[1].imm);
		return -1;
	}
	dst->type = T_MAP_VALUE;
	dst->off = in[1].imm;
	return 0;
}

static int access_size(const struct bpf_insn *in)
{
	static const int sz[4] = {4, 2, 1, 8};

	return sz[BPF_SIZE(in->code) >> 3];
}

static int ldx(struct venv *env, struct vstate *st, int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	struct vreg val;

	if (BPF_MODE(in->code) != BPF_MEM &&
	    (BPF_MODE(in->code) != BPF_MEMSX || BPF_SIZE(in->code) == BPF_DW)) {
		verr(env, idx, "unknown opcode %02x", in->code);
		return -1;
	}
	if (in->dst_reg >= BPF_REG_10 || in->src_reg > BPF_REG_10) {
		verr(env, idx,
		     in->dst_reg == BPF_REG_10 ? "frame pointer is read only" : "R%d is invalid",
		     in->dst_reg);
		return -1;
	}
	if (check_reg_read(env, st, in->src_reg))
		return -1;
	reg_mark_unknown(&val);
	if (mem_access(env, st, in->src_reg, in->off, access_size(in), false, &val,
	               BPF_MODE(in->code) == BPF_MEMSX))
		return -1;
	cur_frame(st)->regs[in->dst_reg] = val;
	return 0;
}

/* A store of a whole register to an 8-aligned constant stack offset: a
 * spill, which mem.c keeps as a copy of the register (a fill restores it,
 * id included). */
static bool is_full_spill(struct vstate *st, const struct bpf_insn *in)
{
	const struct vreg *base = &cur_frame(st)->regs[in->dst_reg];

	return BPF_CLASS(in->code) == BPF_STX && BPF_SIZE(in->code) == BPF_DW &&
	       base->type == T_STACK && rng_is_const(&base->r) &&
	       ((int64_t)base->off + in->off + base->r.smin) % 8 == 0;
}

static int store(struct venv *env, struct vstate *st, int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	struct vreg val;

	if (BPF_MODE(in->code) != BPF_MEM || in->dst_reg > BPF_REG_10 || in->src_reg > BPF_REG_10) {
		verr(env, idx, "unknown opcode %02x", in->code);
		return -1;
	}
	/* The operand a store does not use must be zero, as the kernel checks. */
	if (BPF_CLASS(in->code) == BPF_ST ? in->src_reg != BPF_REG_0 : in->imm != 0) {
		verr(env, idx, "%s uses reserved fields",
		     BPF_CLASS(in->code) == BPF_ST ? "BPF_ST" : "BPF_STX");
		return -1;
	}
	if (check_reg_read(env, st, in->dst_reg))
		return -1;
	if (BPF_CLASS(in->code) == BPF_ST) {
		reg_mark_const(&val, (uint64_t)(int64_t)in->imm);
	} else {
		if (check_reg_read(env, st, in->src_reg))
			return -1;
		if (is_full_spill(st, in))
			reg_link_before_copy(env, &cur_frame(st)->regs[in->src_reg]);
		val = cur_frame(st)->regs[in->src_reg];
	}
	if (val.type == T_STACK && cur_frame(st)->regs[in->dst_reg].type == T_STACK &&
	    val.frameno > cur_frame(st)->regs[in->dst_reg].frameno) {
		verr(env, idx, "cannot spill pointers to stack into stack frame of the caller");
		return -1;
	}
	return mem_access(env, st, in->dst_reg, in->off, access_size(in), true, &val, false);
}

static int atomic_op(struct venv *env, struct vstate *st, int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	int size = access_size(in), op = in->imm & ~BPF_FETCH;
	struct vreg old, val;
	bool fetch = in->imm & BPF_FETCH;

	if ((size != 4 && size != 8) ||
	    (op != BPF_ADD && op != BPF_AND && op != BPF_OR && op != BPF_XOR &&
	     in->imm != BPF_XCHG && in->imm != BPF_CMPXCHG)) {
		verr(env, idx, "BPF_ATOMIC uses invalid atomic opcode %02x", (unsigned)in->imm);
		return -1;
	}
	if (in->dst_reg > BPF_REG_10 || in->src_reg >= BPF_REG_10) {
		verr(env, idx, "R%d is invalid", in->src_reg);
		return -1;
	}
	if (check_reg_read(env, st, in->dst_reg) || check_reg_read(env, st, in->src_reg) ||
	    (in->imm == BPF_CMPXCHG && check_reg_read(env, st, BPF_REG_0)))
		return -1;
	if (reg_is_pointer(&cur_frame(st)->regs[in->src_reg])) {
		verr(env, idx, "R%d leaks addr into mem", in->src_reg);
		return -1;
	}
	if (cur_frame(st)->regs[in->dst_reg].type == T_CTX ||
	    vtype_is_pkt(cur_frame(st)->regs[in->dst_reg].type)) {
		verr(env, idx, "BPF_ATOMIC stores into R%d %s is not allowed", in->dst_reg,
		     vtype_name(cur_frame(st)->regs[in->dst_reg].type));
		return -1;
	}
	reg_mark_unknown(&old);
	if (mem_access(env, st, in->dst_reg, in->off, size, false, &old, false))
		return -1;
	reg_mark_unknown(&val);
	rng_bits(&val.r, size, false);
	if (mem_access(env, st, in->dst_reg, in->off, size, true, size == 8 ? &val : NULL, false))
		return -1;
	if (in->imm == BPF_CMPXCHG)
		cur_frame(st)->regs[BPF_REG_0] = old;
	else if (fetch)
		cur_frame(st)->regs[in->src_reg] = old;
	return 0;
}

/* BPF_LD_[ABS|IND]: the kernel's check_ld_abs(), its checks in its order
 * (only socket filters and tc programs; reserved fields; R6 the unmodified
 * context; no lock, irq flag or reference held, as the load may end the
 * run). R0 gets the loaded bytes, R1-R5 become unreadable. */
static int ld_abs(struct venv *env, struct vstate *st, int idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	struct vframe *f = cur_frame(st);
	uint32_t t = env->prog->prog_type;
	uint8_t mode = BPF_MODE(in->code);

	if ((mode != BPF_ABS && mode != BPF_IND) ||
	    (t != BPF_PROG_TYPE_SOCKET_FILTER && t != BPF_PROG_TYPE_SCHED_CLS &&
	     t != BPF_PROG_TYPE_SCHED_ACT)) {
		verr(env, idx, "BPF_LD_[ABS|IND] instructions not allowed for this program type");
		return -1;
	}
	if (in->dst_reg != BPF_REG_0 || in->off || BPF_SIZE(in->code) == BPF_DW ||
	    (mode == BPF_ABS && in->src_reg != BPF_REG_0) || in->src_reg > BPF_REG_10) {
		verr(env, idx, "BPF_LD_[ABS|IND] uses reserved fields");
		return -1;
	}
	if (check_reg_read(env, st, BPF_REG_6))
		return -1;
	if (locks_held(st)) {
		verr(env, idx, "BPF_LD_[ABS|IND] cannot be used inside bpf_spin_lock-ed region");
		return -1;
	}
	for (int i = 0; i < st->nrefs; i++)
		if (st->refs[i].type == REF_PTR) {
			vlogf(env, "Unreleased reference id=%u alloc_insn=%d\n", st->refs[i].id,
			      st->refs[i].insn);
			verr(env, idx, "BPF_LD_[ABS|IND] would lead to reference leak");
			return -1;
		}
	if (irqs_held(st)) {
		verr(env, idx,
		     "BPF_LD_[ABS|IND] cannot be used inside bpf_local_irq_save-ed region");
		return -1;
	}
	if (f->regs[BPF_REG_6].type != T_CTX) {
		verr(env, idx, "at the time of BPF_LD_ABS|IND R6 != pointer to skb");
		return -1;
	}
	if (mode == BPF_IND && check_reg_read(env, st, in->src_reg))
		return -1;
	if (f->regs[BPF_REG_6].off || !rng_is_const(&f->regs[BPF_REG_6].r) ||
	    f->regs[BPF_REG_6].r.umin) {
		verr(env, idx, "dereference of modified ctx ptr R6 off=%d disallowed",
		     f->regs[BPF_REG_6].off);
		return -1;
	}
	for (int r = BPF_REG_1; r <= BPF_REG_5; r++)
		reg_mark_not_init(&f->regs[r]);
	reg_mark_unknown(&f->regs[BPF_REG_0]);
	return 0;
}

/* may_goto: this path takes the jump (the loop's exit); the fall-through
 * (one more iteration) is pushed for later, one may_goto deeper. */
static int may_goto(struct venv *env, struct vstate *st, int idx, int *next, struct vstate **fork)
{
	const struct bpf_insn *in = &env->prog->insns[idx];

	if (!is_may_goto(in) || in->src_reg || in->dst_reg || in->imm) {
		verr(env, idx, "invalid may_goto imm %d", in->imm);
		return -1;
	}
	*fork = state_copy(st);
	if (!*fork) {
		verr(env, idx, "out of memory");
		return -1;
	}
	(*fork)->may_goto_depth++;
	*next = insn_jump_target(in, idx);
	return 0;
}

/*
 * One instruction. *next is where the path continues (-1: it ended);
 * *fork, when set, is a second path that starts at *fork_idx.
 */
static int step(struct venv *env, struct vstate *st, int idx, int *next, struct vstate **fork,
                int *fork_idx)
{
	const struct bpf_insn *in = &env->prog->insns[idx];
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	*next = idx + 1;
	*fork = NULL;
	*fork_idx = idx + 1;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		return alu_check(env, st, idx);
	case BPF_LDX:
		return ldx(env, st, idx);
	case BPF_ST:
		return store(env, st, idx);
	case BPF_STX:
		return BPF_MODE(in->code) == BPF_ATOMIC ? atomic_op(env, st, idx)
		                                        : store(env, st, idx);
	case BPF_LD:
		if (!is_ldimm64(in))
			return ld_abs(env, st, idx);
		*next = idx + 2;
		return ld_imm64(env, st, idx);
	default:
		break;
	}
	if (op == BPF_JA) {
		if (BPF_SRC(in->code) != BPF_K || in->src_reg || in->dst_reg ||
		    (cls == BPF_JMP ? in->imm : in->off)) {
			verr(env, idx, "BPF_JA uses reserved fields");
			return -1;
		}
		*next = insn_jump_target(in, idx);
		return 0;
	}
	if (op == V_JCOND)
		return may_goto(env, st, idx, next, fork);
	if (in->code == (BPF_JMP | BPF_CALL))
		return call_check(env, st, idx, fork, next, fork_idx);
	if (in->code == (BPF_JMP | BPF_EXIT))
		return exit_check(env, st, idx, next);
	if (op == BPF_CALL || op == BPF_EXIT) {
		verr(env, idx, "unknown opcode %02x", in->code);
		return -1;
	}
	return cond_jump(env, st, idx, next, fork, fork_idx);
}

static struct vstate *initial_state(void)
{
	struct vstate *st = state_new();
	struct vframe *f;

	if (!st)
		return NULL;
	f = st->frame[0];
	f->regs[BPF_REG_1].type = T_CTX;
	rng_const(&f->regs[BPF_REG_1].r, 0);
	f->regs[BPF_REG_10].type = T_STACK;
	rng_const(&f->regs[BPF_REG_10].r, 0);
	return st;
}

static int walk_path(struct venv *env, struct walk *w, struct vstate *st, int idx,
                     struct explored *parent)
{
	for (;;) {
		int next, fork_idx, r;
		struct vstate *fork;

		env->insn_idx = idx;
		r = visit_prune_point(env, w, st, idx, &parent);
		if (r < 0)
			return -1;
		if (r > 0)
			break;
		if (++env->processed > V_INSN_LIMIT) {
			verr(env, idx, "BPF program is too large. Processed %llu insn",
			     (unsigned long long)env->processed);
			return -1;
		}
		if (step(env, st, idx, &next, &fork, &fork_idx)) {
			state_free(fork);
			return -1;
		}
		vlog_insn(env, idx, st);
		if (fork && push_pending(env, w, fork, fork_idx, idx, parent))
			return -1;
		if (next < 0)
			break;
		idx = next;
	}
	path_done(parent);
	return 0;
}

/* Every path from @st at @start (the main program's first instruction, or
 * a global function's). */
static int walk_all(struct venv *env, struct walk *w, struct vstate *st, int start)
{
	int rc;

	if (!st) {
		verr(env, start, "out of memory");
		return -1;
	}
	rc = walk_path(env, w, st, start, NULL);
	state_free(st);
	while (!rc && w->depth) {
		struct pending p = w->stack[--w->depth];

		vlogf(env, "from %d to %d:\n", p.from, p.idx);
		rc = walk_path(env, w, p.st, p.idx, p.parent);
		state_free(p.st);
	}
	while (w->depth)
		state_free(w->stack[--w->depth].st);
	return rc;
}

static void free_walk(struct walk *w, size_t n)
{
	for (size_t i = 0; w->at && i < n; i++) {
		struct explored *e = w->at[i];

		while (e) {
			struct explored *nx = e->next;

			state_free(e->st);
			free(e);
			e = nx;
		}
	}
	free(w->at);
	free(w->nstates);
	free(w->stack);
}

static int verify(struct venv *env)
{
	size_t n = env->prog->insn_cnt;
	struct walk w = {0};
	int rc;

	if (!n || !env->prog->insns) {
		verr(env, 0, "BPF program is empty");
		return -1;
	}
	if (n > V_INSN_LIMIT) {
		verr(env, 0, "BPF program is too large. Processed 0 insn");
		return -1;
	}
	env->prune_point = calloc(n, 1);
	env->live_in = calloc(n, sizeof(uint16_t));
	env->prec_in = calloc(n, sizeof(uint16_t));
	env->sprec_in = calloc(n, sizeof(uint64_t));
	env->decided = calloc(n, 1);
	env->linked = calloc(n, sizeof(*env->linked));
	env->subprog_of = calloc(n, sizeof(int));
	env->stack_depth = calloc(n, sizeof(uint16_t));
	w.at = calloc(n, sizeof(struct explored *));
	w.nstates = calloc(n, sizeof(*w.nstates));
	env->idmap = idmap_new();
	env->global_called = calloc(env->prog->func_cnt + 1, 1);
	if (!env->prune_point || !env->live_in || !env->prec_in || !env->sprec_in ||
	    !env->decided || !env->linked || !env->subprog_of || !env->stack_depth || !w.at ||
	    !w.nstates || !env->idmap || !env->global_called)
		rc = -2;
	else
		rc = check_map_prog_types(env) ? -1 : cfg_check(env);
	if (!rc)
		rc = walk_all(env, &w, initial_state(), 0);
	/* Then the global functions the walks reached, each on its own. */
	for (const struct rqbpf_func_desc *f; !rc && (f = next_global_to_verify(env));) {
		vlogf(env, "Validating %s() func#%d...\n", f->name, (int)(f - env->prog->funcs));
		rc = walk_all(env, &w, global_entry_state(env, f), (int)f->start);
	}
	if (!rc)
		rc = check_call_chains(env);
	if (!rc)
		vlogf(env, "processed %llu insns (limit %d) total_states %llu\n",
		      (unsigned long long)env->processed, V_INSN_LIMIT,
		      (unsigned long long)w.total_states);
	free_walk(&w, n);
	free(env->prune_point);
	free(env->live_in);
	free(env->prec_in);
	free(env->sprec_in);
	free(env->decided);
	free(env->linked);
	free(env->maybe_ptr);
	free(env->maybe_fp);
	free(env->ret_matters);
	free(env->subprog_of);
	free(env->stack_depth);
	free(env->idmap);
	free(env->global_called);
	return rc;
}

int rqbpf_verify(const struct rqbpf_linked_prog *prog, struct rqbpf_verdict *out, FILE *vlog)
{
	struct venv env = {0};
	int rc;

	if (!prog || !out || (prog->map_cnt && !prog->maps))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	env.prog = prog;
	env.log = vlog;
	env.out = out;
	env.ret_checked = rqbpf_prog_type_ret_range(prog->prog_type, prog->attach_type,
	                                            &env.ret_min, &env.ret_max);
	rc = verify(&env);
	out->insns_processed = env.processed;
	if (rc == -2 && !env.failed)
		return -ENOMEM;
	if (rc || env.failed) {
		if (!env.failed)
			verr(&env, env.insn_idx, "verifier internal error");
		out->accepted = 0;
		return -EACCES;
	}
	out->accepted = 1;
	return 0;
}
