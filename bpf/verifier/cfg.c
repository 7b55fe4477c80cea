/* SPDX-License-Identifier: MIT */
/*
 * cfg.c: checks on the program's structure before the abstract walk
 * (subprogram bounds, jump targets, ld_imm64 pairs, unreachable code), the
 * prune points where states are remembered, and the registers live at each
 * instruction (dead registers do not stop a state from covering another).
 */
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

/* Mark subprogram starts and check that each ends in an exit or a jump and
 * that no jump leaves its subprogram. */
static int check_subprogs(struct venv *env, uint8_t *is_start)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt, cur = 0;

	is_start[0] = 1;
	for (int i = 0; i < n; i++) {
		if (!is_pseudo_call(&insns[i]) && !is_pseudo_func(&insns[i]))
			continue;
		int64_t t = (int64_t)i + insns[i].imm + 1;

		if (t < 0 || t >= n) {
			verr(env, i, "call to invalid destination");
			return -1;
		}
		is_start[t] = 1;
	}
	for (int i = 0; i < n; i++) {
		if (is_start[i])
			cur = i;
		env->subprog_of[i] = cur;
	}
	for (int i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];

		if (insn_is_jump(in)) {
			int t = insn_jump_target(in, i);

			if (t < 0 || t >= n || env->subprog_of[t] != env->subprog_of[i]) {
				verr(env, i, "jump out of range from insn %d to %d", i, t);
				return -1;
			}
		}
		if ((i + 1 == n || is_start[i + 1]) && insn_falls_through(in)) {
			verr(env, i, "last insn is not an exit or jmp");
			return -1;
		}
	}
	return 0;
}

/* A load whose mode or unused imm the kernel refuses. */
static bool ldx_fields_used(const struct bpf_insn *in)
{
	uint8_t mode = BPF_MODE(in->code);

	return BPF_CLASS(in->code) == BPF_LDX &&
	       ((mode != BPF_MEM && mode != BPF_MEMSX) || in->imm);
}

/* The pass the kernel makes over every instruction before its walk, in
 * instruction order: a load's unused fields, an ld_imm64's second half;
 * then no jump into a second half. */
static int check_ldimm64(struct venv *env, uint8_t *second_half)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;

	for (int i = 0; i < n; i++) {
		if (ldx_fields_used(&insns[i])) {
			verr(env, i, "BPF_LDX uses reserved fields");
			return -1;
		}
		if (!is_ldimm64(&insns[i]))
			continue;
		if (i + 1 >= n || insns[i + 1].code || insns[i + 1].dst_reg ||
		    insns[i + 1].src_reg || insns[i + 1].off) {
			verr(env, i, "invalid bpf_ld_imm64 insn");
			return -1;
		}
		second_half[i + 1] = 1;
		i++;
	}
	for (int i = 0; i < n; i++) {
		int t = insn_jump_target(&insns[i], i);

		if (insn_is_jump(&insns[i]) && t >= 0 && t < n && second_half[t]) {
			verr(env, i, "jump into the middle of ldimm64 insn %d",
			     insn_jump_target(&insns[i], i));
			return -1;
		}
	}
	return 0;
}

bool insn_is_loop_head(const struct bpf_insn *in)
{
	const struct rqbpf_call *c;

	if (is_may_goto(in))
		return true;
	if (in->code != (BPF_JMP | BPF_CALL) || !(c = rqbpf_call_of_insn(in)))
		return false;
	return c->role == RQBPF_ROLE_ITER_NEXT || c->role == RQBPF_ROLE_LOOP_CALLBACK ||
	       c->role == RQBPF_ROLE_MAP_CALLBACK;
}

static int check_reachable(struct venv *env)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt, top = 0, rc = 0;
	uint8_t *seen = n > 0 ? calloc((size_t)n, 1) : NULL;
	int *stack = malloc(sizeof(int) * (size_t)n * 2);

	if (!seen || !stack) {
		free(seen);
		free(stack);
		return -2;
	}
	stack[top++] = 0;
	seen[0] = 1;
	while (top) {
		int i = stack[--top], succ[3], ns = 0;
		const struct bpf_insn *in = &insns[i];

		if (insn_falls_through(in) && insn_next(in, i) < n)
			succ[ns++] = insn_next(in, i);
		if (insn_is_jump(in))
			succ[ns++] = insn_jump_target(in, i);
		if (is_pseudo_call(in) || is_pseudo_func(in))
			succ[ns++] = insn_call_target(in, i);
		for (int k = 0; k < ns; k++) {
			if (!seen[succ[k]]) {
				seen[succ[k]] = 1;
				stack[top++] = succ[k];
			}
		}
		if (insn_is_jump(in))
			for (int k = 0; k < ns; k++)
				env->prune_point[succ[k]] |= 1;
		if (BPF_CLASS(in->code) == BPF_JMP && BPF_OP(in->code) == BPF_CALL && i + 1 < n)
			env->prune_point[i + 1] |= 1;
		if (insn_is_loop_head(in))
			env->prune_point[i] |= V_LOOP_HEAD;
	}
	for (int i = 0; i < n; i++) {
		if (!seen[i]) {
			verr(env, i, "unreachable insn %d", i);
			rc = -1;
			break;
		}
		if (is_ldimm64(&insns[i]))
			seen[i + 1] = 1;
	}
	free(seen);
	free(stack);
	return rc;
}

/* Registers an instruction reads (use) and writes (def). */
static void insn_use_def(const struct bpf_insn *in, uint16_t *use, uint16_t *def)
{
	uint8_t cls = BPF_CLASS(in->code);
	uint16_t d = (uint16_t)(1u << (in->dst_reg & 0xf)),
	         s = (uint16_t)(1u << (in->src_reg & 0xf));

	*use = 1u << BPF_REG_10;
	*def = 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		*def = d;
		if (BPF_OP(in->code) != BPF_MOV)
			*use |= d;
		if (BPF_SRC(in->code) == BPF_X && BPF_OP(in->code) != BPF_END &&
		    BPF_OP(in->code) != BPF_NEG)
			*use |= s;
		break;
	case BPF_LDX:
		*use |= s;
		*def = d;
		break;
	case BPF_ST:
		*use |= d;
		break;
	case BPF_STX:
		*use |= d | s | (1u << BPF_REG_0);
		if (BPF_MODE(in->code) == BPF_ATOMIC)
			*def = s | (1u << BPF_REG_0);
		break;
	case BPF_LD: /* ld_imm64; LD_ABS/IND read R6 (and src), clobber R0-R5 */
		*def = d;
		if (BPF_MODE(in->code) == BPF_ABS || BPF_MODE(in->code) == BPF_IND) {
			*use |=
			    (uint16_t)((1u << BPF_REG_6) | (BPF_MODE(in->code) == BPF_IND ? s : 0));
			*def = 0x3f;
		}
		break;
	default: /* JMP, JMP32 */
		if (BPF_OP(in->code) == BPF_CALL) {
			*use |= 0x3e;
			*def = 0x3f;
		} else if (BPF_OP(in->code) == BPF_EXIT) {
			*use |= 1;
		} else if (BPF_OP(in->code) != BPF_JA && !is_may_goto(in)) {
			*use |= d;
			if (BPF_SRC(in->code) == BPF_X)
				*use |= s;
		}
		break;
	}
}

static void compute_liveness(struct venv *env)
{
	const struct bpf_insn *insns = env->prog->insns;
	int n = (int)env->prog->insn_cnt;
	bool changed = true;

	memset(env->live_in, 0, sizeof(uint16_t) * (size_t)n);
	while (changed) {
		changed = false;
		for (int i = n - 1; i >= 0; i--) {
			const struct bpf_insn *in = &insns[i];
			uint16_t use, def, out = 0, lin;

			if (i > 0 && is_ldimm64(&insns[i - 1]))
				continue;
			insn_use_def(in, &use, &def);
			if (insn_falls_through(in) && insn_next(in, i) < n)
				out |= env->live_in[insn_next(in, i)];
			if (insn_is_jump(in))
				out |= env->live_in[insn_jump_target(in, i)];
			lin = (uint16_t)(use | (out & (uint16_t)~def));
			if (lin != env->live_in[i]) {
				env->live_in[i] = lin;
				changed = true;
			}
		}
	}
}

int cfg_check(struct venv *env)
{
	int n = (int)env->prog->insn_cnt, rc;
	uint8_t *buf = calloc((size_t)n * 2, 1);

	if (!buf)
		return -2;
	rc = check_ldimm64(env, buf);
	if (!rc)
		rc = check_subprogs(env, buf + n);
	if (!rc)
		rc = check_reachable(env);
	if (!rc) {
		compute_liveness(env);
		rc = precision_init(env) ? -2 : 0;
	}
	free(buf);
	return rc;
}
