/* SPDX-License-Identifier: MIT */
/*
 * test_verifier: hand-built programs, one per rule of the verifier, each
 * with the verdict, the exact kernel message and the instruction it names.
 * Usage: test_verifier [-v] [NAME]  (-v prints the log of each program).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn.h"
#include "verifier.h"

#define R0  BPF_REG_0
#define R1  BPF_REG_1
#define R2  BPF_REG_2
#define R3  BPF_REG_3
#define R4  BPF_REG_4
#define R5  BPF_REG_5
#define R6  BPF_REG_6
#define R7  BPF_REG_7
#define R9  BPF_REG_9
#define R10 BPF_REG_10

struct vcase {
	const char *name;
	const struct bpf_insn *insns;
	size_t n;
	const char *msg; /* NULL: accepted; else the exact message */
	int insn;        /* the offending insn, -1: do not check */
};

#define P(...)                                                                                     \
	(const struct bpf_insn[]){__VA_ARGS__},                                                    \
	    sizeof((struct bpf_insn[]){__VA_ARGS__}) / sizeof(struct bpf_insn)

/* Lookup of arrmap[0] into R6 with a null check (exit 0 on NULL): 9 insns. */
#define ELEM_R6(m)                                                                                 \
	LOOKUP(m, 0), JMP_IMM(BPF_JNE, R0, 0, 2), MOV64_IMM(R0, 0), EXIT(), MOV64_REG(R6, R0)

#define LOCK_R(r)   MOV64_REG(R1, r), KCALL(RQBPF_KF_RES_SPIN_LOCK)
#define UNLOCK_R(r) MOV64_REG(R1, r), KCALL(RQBPF_KF_RES_SPIN_UNLOCK)
#define RET0()      MOV64_IMM(R0, 0), EXIT()

/* rP += r3, with r3 = 0 on the path walked first and r3 a value with no
 * lower bound (a 32-bit context field shifted left by 32) on the other,
 * then exit 0: 8 insns. The second path reaches the add after the first
 * has been verified, and may only be pruned there if r3 cannot matter: if
 * rP may be a pointer, the add is a check ("math between ... unbounded min
 * value"). The walk must have remembered the first path's state at the
 * add (2 prune points and 8 instructions after the last one): PAD() moves
 * it there. */
#define PTR_ADD_AFTER_FORK(p, c)                                                                   \
	LDX(BPF_W, R2, c, 0), LDX(BPF_W, R3, c, 8), ALU64_IMM(BPF_LSH, R3, 32),                    \
	    JMP_IMM(BPF_JNE, R2, 0, 1), MOV64_IMM(R3, 0), ALU64_REG(BPF_ADD, p, R3), RET0()
#define UNBOUNDED_PTR_ADD                                                                          \
	"math between map_value pointer and register with unbounded min value is not allowed"
#define PAD() MOV64_IMM(R2, 0)
/* Spill to fp-8 a scalar that is 0 or in [0, 255] depending on ctx @c. */
#define SLOT_FORK(c)                                                                               \
	LDX(BPF_W, R2, c, 0), LDX(BPF_W, R3, c, 8), ALU64_IMM(BPF_AND, R3, 255),                   \
	    JMP_IMM(BPF_JNE, R2, 0, 1), MOV64_IMM(R3, 0), STX(BPF_DW, R10, R3, -8)
#define ATOMIC64(op, d, s, o) INSN(BPF_STX | BPF_DW | BPF_ATOMIC, d, s, o, op)

static int run_case(const struct vcase *c, int verbose)
{
	struct rqbpf_linked_prog p = {
	    .name = c->name,
	    .section = "tc",
	    .prog_type = BPF_PROG_TYPE_SCHED_CLS,
	    .insns = c->insns,
	    .insn_cnt = c->n,
	    .maps = test_maps,
	    .map_cnt = M_COUNT,
	    .ctx_size = sizeof(struct __sk_buff),
	};
	struct rqbpf_verdict v;
	int rc = rqbpf_verify(&p, &v, verbose ? stderr : NULL);

	if (!c->msg) {
		if (rc || !v.accepted) {
			printf("FAIL %s: expected accepted, got rejected: %s (insn %u)\n", c->name,
			       v.msg, v.insn);
			return 1;
		}
		printf("ok   %s: accepted (%llu insns processed)\n", c->name,
		       (unsigned long long)v.insns_processed);
		return 0;
	}
	if (v.accepted || strcmp(v.msg, c->msg) != 0 ||
	    (c->insn >= 0 && v.insn != (uint32_t)c->insn)) {
		printf("FAIL %s: expected rejected: %s (insn %d), got %s: %s (insn %u)\n", c->name,
		       c->msg, c->insn, v.accepted ? "accepted" : "rejected", v.msg, v.insn);
		return 1;
	}
	printf("ok   %s: rejected: %s (insn %u)\n", c->name, v.msg, v.insn);
	return 0;
}

/* Sanitizer builds run the tests with RQ_TEST_SCALE < 1. */
static int scaled_down(void)
{
	const char *s = getenv("RQ_TEST_SCALE");

	return s && atof(s) < 1.0;
}

/* -v's log: one kernel-style line per processed instruction, the message. */
static int check_log(void)
{
	const struct bpf_insn insns[] = {
	    LD_MAPVAL(BPF_REG_1, M_DATA_A, 0),
	    KCALL(RQBPF_KF_RES_SPIN_LOCK),
	    MOV64_IMM(BPF_REG_0, 0),
	    EXIT(),
	};
	const char *want[] = {
	    "0: (18) r1 = 0x1 ll (src 2)\t; R1=map_value(map=.data.A,ks=4,vs=4) R10=fp0\n",
	    "2: (85) call bpf_res_spin_lock#1\t; R0=0 R10=fp0 refs[0]=lock(id=0)\n",
	    "3: (b7) r0 = 0\t; R0=0 R10=fp0 refs[0]=lock(id=0)\n",
	    "BPF_EXIT instruction in main prog cannot be used inside bpf_spin_lock-ed region\n",
	};
	struct rqbpf_linked_prog p = {.name = "log",
	                              .insns = insns,
	                              .insn_cnt = 5,
	                              .maps = test_maps,
	                              .map_cnt = M_COUNT,
	                              .ctx_size = 192};
	struct rqbpf_verdict v;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int fails = 0;

	if (!f)
		return 1;
	rqbpf_verify(&p, &v, f);
	fclose(f);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(buf, want[i])) {
			printf("FAIL log: no line \"%s\" in:\n%s", want[i], buf);
			fails++;
		}
	}
	if (!fails)
		printf("ok   log: kernel-style lines\n");
	free(buf);
	return fails;
}

/* Levels of subprograms in check_call_fanout(), and calls per level. */
#define FANOUT_LEVELS 7
#define FANOUT_CALLS  24
#define FANOUT_BODY   (4 + FANOUT_CALLS + 1)

/*
 * Main and 6 levels of subprograms, each calling the next level 24 times
 * behind a branch no path takes, and a leaf: 205 instructions, 24^7 chains
 * of calls, each within the limits (8 frames, no stack). The check of every
 * chain after the walk must not follow them one by one (it did, for
 * hours); the program is accepted, as by the kernel.
 */
static int check_call_fanout(void)
{
	struct bpf_insn insns[FANOUT_LEVELS * FANOUT_BODY + 2];
	struct vcase c = {"call_fanout", insns, 0, NULL, -1};
	size_t n = 0;

	for (int level = 0; level < FANOUT_LEVELS; level++) {
		size_t next = (size_t)(level + 1) * FANOUT_BODY;

		insns[n++] = (struct bpf_insn)MOV64_IMM(R1, 0);
		insns[n++] = (struct bpf_insn)JMP_IMM(BPF_JNE, R1, 0, 2);
		insns[n++] = (struct bpf_insn)MOV64_IMM(R0, 0);
		insns[n++] = (struct bpf_insn)EXIT();
		for (int k = 0; k < FANOUT_CALLS; k++, n++)
			insns[n] = (struct bpf_insn)PCALL((int32_t)(next - n - 1));
		insns[n++] = (struct bpf_insn)EXIT();
	}
	insns[n++] = (struct bpf_insn)MOV64_IMM(R0, 0);
	insns[n++] = (struct bpf_insn)EXIT();
	c.n = n;
	return run_case(&c, 0);
}

/* A row's arguments: nargs of them, then only NONE. */
static int row_args_ok(const struct rqbpf_call *c)
{
	for (int a = 0; a < RQBPF_CALL_MAX_ARGS; a++)
		if ((a < c->nargs) != (c->args[a] != RQBPF_ARG_NONE))
			return 0;
	return 1;
}

/*
 * The table of calls (bpf/contract/calls.h) is consistent: each helper row's
 * name is the kernel's for its id, each kfunc row has an id of its own and
 * is found by its name, no (kind, id) has two rows, the arguments are
 * contiguous, and only the res-lock roles return a lock result.
 */
static int check_call_table(void)
{
	int fails = 0;
	const struct rqbpf_call *c;

	for (size_t i = 0; (c = rqbpf_call_at(i)); i++) {
		const char *kname = rqbpf_kernel_helper_name(c->id);
		bool lock =
		    c->role == RQBPF_ROLE_RES_LOCK || c->role == RQBPF_ROLE_RES_LOCK_IRQSAVE;
		int ok = rqbpf_call_find(c->kind, c->id, NULL) == c && row_args_ok(c) &&
		         (c->ret == RQBPF_RET_LOCK_RESULT) == lock;

		if (c->kind == RQBPF_CALL_HELPER)
			ok = ok && kname && !strcmp(kname, c->name);
		else
			ok = ok && c->id > 0 && rqbpf_call_by_name(RQBPF_CALL_KFUNC, c->name) == c;
		if (!ok) {
			printf("FAIL call_table: row %zu (%s#%d)\n", i, c->name, (int)c->id);
			fails++;
		}
	}
	if (!fails)
		printf("ok   call_table\n");
	return fails != 0;
}

int main(int argc, char **argv)
{
	int verbose = 0, fails = 0, ran = 0;
	const char *only = NULL;
	const struct vcase cases[] = {
	    {"ret0", P(RET0()), NULL, -1},
	    {"r0_uninit", P(EXIT()), "R0 !read_ok", 0},
	    {"lock_unlock_elem",
	     P(ELEM_R6(M_ARR), LOCK_R(R6), JMP32_IMM(BPF_JNE, R0, 0, 2), UNLOCK_R(R6), RET0()),
	     NULL, -1},
	    {"lock_unlock_global",
	     P(LD_MAPVAL(R1, M_DATA_A, 0), KCALL(RQBPF_KF_RES_SPIN_LOCK),
	       JMP32_IMM(BPF_JNE, R0, 0, 3), LD_MAPVAL(R1, M_DATA_A, 0),
	       KCALL(RQBPF_KF_RES_SPIN_UNLOCK), RET0()),
	     NULL, -1},
	    {"unchecked_lookup_deref", P(LOOKUP(M_PLAIN, 0), LDX(BPF_W, R0, R0, 0), EXIT()),
	     "R0 invalid mem access 'map_value_or_null'", 6},
	    {"unchecked_lookup_lock",
	     P(LOOKUP(M_ARR, 64), MOV64_REG(R1, R0), KCALL(RQBPF_KF_RES_SPIN_LOCK), RET0()),
	     "Possibly NULL pointer passed to trusted arg0", 7},
	    {"aa", P(ELEM_R6(M_ARR), LOCK_R(R6), LOCK_R(R6), RET0()),
	     "Acquiring the same lock again, AA deadlock detected", 13},
	    {"cond_aa",
	     P(ELEM_R6(M_ARR), LOCK_R(R6), JMP32_IMM(BPF_JEQ, R0, 0, 2), RET0(), LOCK_R(R6),
	       RET0()),
	     "Acquiring the same lock again, AA deadlock detected", 16},
	    {"two_lookups_same_key",
	     P(ELEM_R6(M_ARR), LOOKUP(M_ARR, 0), JMP_IMM(BPF_JNE, R0, 0, 1), EXIT(),
	       MOV64_REG(R7, R0), LOCK_R(R6), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(), LOCK_R(R7),
	       JMP32_IMM(BPF_JNE, R0, 0, 6), UNLOCK_R(R7), UNLOCK_R(R6), RET0(), UNLOCK_R(R6),
	       RET0()),
	     NULL, -1},
	    {"unlock_different",
	     P(ELEM_R6(M_ARR), LOCK_R(R6), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(),
	       LD_MAPVAL(R1, M_DATA_B, 0), KCALL(RQBPF_KF_RES_SPIN_UNLOCK), RET0()),
	     "bpf_res_spin_unlock of different lock", 16},
	    {"unlock_without_lock",
	     P(LD_MAPVAL(R1, M_DATA_A, 0), KCALL(RQBPF_KF_RES_SPIN_UNLOCK), RET0()),
	     "bpf_res_spin_unlock without taking a lock", 2},
	    {"unlock_out_of_order",
	     P(LD_MAPVAL(R1, M_DATA_A, 0), KCALL(RQBPF_KF_RES_SPIN_LOCK),
	       JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(), LD_MAPVAL(R1, M_DATA_B, 0),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK), JMP32_IMM(BPF_JEQ, R0, 0, 4),
	       LD_MAPVAL(R1, M_DATA_A, 0), KCALL(RQBPF_KF_RES_SPIN_UNLOCK), EXIT(),
	       LD_MAPVAL(R1, M_DATA_A, 0), KCALL(RQBPF_KF_RES_SPIN_UNLOCK),
	       LD_MAPVAL(R1, M_DATA_B, 0), KCALL(RQBPF_KF_RES_SPIN_UNLOCK), RET0()),
	     "bpf_res_spin_unlock cannot be out of order", 15},
	    {"out_of_order_lock_in_order_unlock",
	     P(ELEM_R6(M_ARR), LD_MAPVAL(R1, M_DATA_B, 0), KCALL(RQBPF_KF_RES_SPIN_LOCK),
	       JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(), LOCK_R(R6), JMP32_IMM(BPF_JEQ, R0, 0, 5),
	       LD_MAPVAL(R1, M_DATA_B, 0), KCALL(RQBPF_KF_RES_SPIN_UNLOCK), RET0(), UNLOCK_R(R6),
	       LD_MAPVAL(R1, M_DATA_B, 0), KCALL(RQBPF_KF_RES_SPIN_UNLOCK), RET0()),
	     NULL, -1},
	    {"lock_arg_stack",
	     P(MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8), ST(BPF_DW, R10, -8, 0),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK), RET0()),
	     "arg#0 doesn't point to map value or allocated object", 3},
	    {"lock_bad_off",
	     P(ELEM_R6(M_ARR), MOV64_REG(R1, R6), ALU64_IMM(BPF_ADD, R1, 1),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK), RET0()),
	     "off 1 doesn't point to 'struct bpf_res_spin_lock' that is at 0", 12},
	    {"lock_var_off",
	     P(ELEM_R6(M_BIG), LDX(BPF_W, R2, R6, 0), ALU64_IMM(BPF_AND, R2, 8), MOV64_REG(R1, R6),
	       ALU64_REG(BPF_ADD, R1, R2), KCALL(RQBPF_KF_RES_SPIN_LOCK), RET0()),
	     "R1 doesn't have constant offset. bpf_res_spin_lock has to be at the constant offset",
	     14},
	    {"lock_no_lock_map", P(LD_MAPVAL(R1, M_BSS, 1), KCALL(RQBPF_KF_RES_SPIN_LOCK), RET0()),
	     "map 'res_spin.bss' has no valid bpf_res_spin_lock", 2},
	    {"res_lock_on_spin_lock_map", P(ELEM_R6(M_SPIN), LOCK_R(R6), RET0()),
	     "map 'spinmap' has no valid bpf_res_spin_lock", 11},
	    {"spin_lock_on_res_lock_map",
	     P(ELEM_R6(M_ARR), MOV64_REG(R1, R6), CALL(BPF_FUNC_spin_lock), RET0()),
	     "map 'arrmap' has no valid bpf_spin_lock", 11},
	    {"spin_lock_inside_res_lock",
	     P(ELEM_R6(M_SPIN), LD_MAPVAL(R1, M_DATA_A, 0), KCALL(RQBPF_KF_RES_SPIN_LOCK),
	       JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(), MOV64_REG(R1, R6), CALL(BPF_FUNC_spin_lock),
	       RET0()),
	     "function calls are not allowed while holding a lock", 16},
	    {"helper_in_lock",
	     P(ELEM_R6(M_ARR), LOCK_R(R6), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(),
	       CALL(BPF_FUNC_ktime_get_ns), UNLOCK_R(R6), RET0()),
	     "function calls are not allowed while holding a lock", 14},
	    {"exit_with_lock",
	     P(ELEM_R6(M_ARR), LOCK_R(R6), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(), RET0()),
	     "BPF_EXIT instruction in main prog cannot be used inside bpf_spin_lock-ed region", 15},
	    {"irqsave_restore",
	     P(LD_MAPVAL(R1, M_DATA_A, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -8),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK_IRQSAVE), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(),
	       LD_MAPVAL(R1, M_DATA_A, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -8),
	       KCALL(RQBPF_KF_RES_SPIN_UNLOCK_IRQRESTORE), RET0()),
	     NULL, -1},
	    {"irq_out_of_order",
	     P(LD_MAPVAL(R1, M_DATA_A, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -8),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK_IRQSAVE), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(),
	       LD_MAPVAL(R1, M_DATA_B, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -16),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK_IRQSAVE), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(),
	       LD_MAPVAL(R1, M_DATA_B, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -8),
	       KCALL(RQBPF_KF_RES_SPIN_UNLOCK_IRQRESTORE), RET0()),
	     "cannot restore irq state out of order, expected id=2 acquired at insn_idx=11", 18},
	    {"irq_class_mismatch",
	     P(MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -16), KCALL(RQBPF_KF_LOCAL_IRQ_SAVE),
	       LD_MAPVAL(R1, M_DATA_A, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -8),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK_IRQSAVE), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(),
	       LD_MAPVAL(R1, M_DATA_A, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -16),
	       KCALL(RQBPF_KF_RES_SPIN_UNLOCK_IRQRESTORE), RET0()),
	     "irq flag acquired by native kfuncs cannot be restored with lock kfuncs", 14},
	    {"irq_lock_mismatch",
	     P(MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8), KCALL(RQBPF_KF_LOCAL_IRQ_SAVE),
	       LD_MAPVAL(R1, M_DATA_A, 0), KCALL(RQBPF_KF_RES_SPIN_LOCK),
	       JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(), LD_MAPVAL(R1, M_DATA_A, 0), MOV64_REG(R2, R10),
	       ALU64_IMM(BPF_ADD, R2, -8), KCALL(RQBPF_KF_RES_SPIN_UNLOCK_IRQRESTORE), RET0()),
	     "bpf_res_spin_unlock of different lock", 12},
	    {"irq_exit",
	     P(MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8), KCALL(RQBPF_KF_LOCAL_IRQ_SAVE),
	       RET0()),
	     "BPF_EXIT instruction in main prog cannot be used inside bpf_local_irq_save-ed region",
	     4},
	    /* A store over a saved flag destroys it (the kernel allows the
	     * store): the restore then finds no flag. */
	    {"irq_flag_overwritten",
	     P(MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8), KCALL(RQBPF_KF_LOCAL_IRQ_SAVE),
	       ST(BPF_DW, R10, -8, 0), MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8),
	       KCALL(RQBPF_KF_LOCAL_IRQ_RESTORE), RET0()),
	     "expected an initialized irq flag as arg#0", 6},
	    {"irq_flag_overwritten_exit",
	     P(MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8), KCALL(RQBPF_KF_LOCAL_IRQ_SAVE),
	       ST(BPF_B, R10, -3, 0), RET0()),
	     "BPF_EXIT instruction in main prog cannot be used inside bpf_local_irq_save-ed region",
	     5},
	    {"irq_flag_misaligned",
	     P(MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -12), KCALL(RQBPF_KF_LOCAL_IRQ_SAVE),
	       RET0()),
	     "expected uninitialized irq flag as arg#0", 2},
	    {"native_irq_in_lock",
	     P(LD_MAPVAL(R1, M_DATA_A, 0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -8),
	       KCALL(RQBPF_KF_RES_SPIN_LOCK_IRQSAVE), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(),
	       MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8), KCALL(RQBPF_KF_LOCAL_IRQ_RESTORE),
	       RET0()),
	     "function calls are not allowed while holding a lock", 9},
	    {"map_value_oob", P(ELEM_R6(M_PLAIN), LDX(BPF_W, R0, R6, 16), EXIT()),
	     "invalid access to map value, value_size=16 off=16 size=4", 10},
	    {"map_value_lock_access", P(ELEM_R6(M_ARR), LDX(BPF_W, R0, R6, 0), EXIT()),
	     "bpf_res_spin_lock cannot be accessed directly by load/store", 10},
	    {"map_value_var_ok",
	     P(ELEM_R6(M_PLAIN), LDX(BPF_W, R1, R6, 0), ALU64_IMM(BPF_AND, R1, 7),
	       ALU64_REG(BPF_ADD, R6, R1), LDX(BPF_DW, R0, R6, 0), EXIT()),
	     NULL, -1},
	    {"map_value_var_oob",
	     P(ELEM_R6(M_PLAIN), LDX(BPF_W, R1, R6, 0), ALU64_IMM(BPF_AND, R1, 15),
	       ALU64_REG(BPF_ADD, R6, R1), LDX(BPF_DW, R0, R6, 0), EXIT()),
	     "invalid access to map value, value_size=16 off=15 size=8", 13},
	    {"rodata_write", P(LD_MAPVAL(R1, M_RODATA, 0), ST(BPF_W, R1, 0, 1), RET0()),
	     "write into map forbidden, value_size=8 off=0 size=4", 2},
	    {"stack_oob_write", P(STX(BPF_DW, R10, R10, 8), RET0()),
	     "invalid write to stack R10 off=8 size=8", 0},
	    {"stack_uninit_read", P(LDX(BPF_DW, R0, R10, -8), EXIT()),
	     "invalid read from stack off -8+0 size 8", 0},
	    {"stack_spill_fill",
	     P(LOOKUP(M_PLAIN, 0), STX(BPF_DW, R10, R0, -16), LDX(BPF_DW, R6, R10, -16),
	       JMP_IMM(BPF_JEQ, R0, 0, 1), LDX(BPF_W, R1, R6, 0), RET0()),
	     NULL, -1},
	    {"scalar_deref", P(MOV64_IMM(R1, 64), LDX(BPF_W, R0, R1, 0), EXIT()),
	     "R1 invalid mem access 'scalar'", 1},
	    {"ctx_oob", P(LDX(BPF_W, R0, R1, 4096), EXIT()),
	     "invalid bpf_context access off=4096 size=4", 0},
	    {"null_ptr_arith", P(LOOKUP(M_PLAIN, 0), ALU64_IMM(BPF_ADD, R0, 4), RET0()),
	     "R0 pointer arithmetic on map_value_or_null prohibited, null-check it first", 6},
	    {"bounded_loop",
	     P(MOV64_IMM(R1, 0), ALU64_IMM(BPF_ADD, R1, 1), JMP_IMM(BPF_JLT, R1, 1000, -2), RET0()),
	     NULL, -1},
	    {"infinite_loop", P(MOV64_IMM(R0, 0), JMP_IMM(BPF_JEQ, R0, 0, -1), EXIT()),
	     "infinite loop detected at insn 1", 1},
	    {"too_many_insns",
	     P(MOV64_IMM(R1, 0), ALU64_IMM(BPF_ADD, R1, 1), JMP_IMM(BPF_JNE, R1, -1, -2), RET0()),
	     "BPF program is too large. Processed 1000001 insn", -1},
	    {"branch_pruned_by_range",
	     P(LDX(BPF_W, R2, R1, 0), ALU64_IMM(BPF_AND, R2, 7), JMP_IMM(BPF_JLE, R2, 7, 1),
	       LDX(BPF_W, R0, R2, 0), RET0()),
	     NULL, -1},
	    {"lock_failure_range",
	     P(ELEM_R6(M_ARR), LOCK_R(R6), JMP32_IMM(BPF_JSLT, R0, 0, 4), UNLOCK_R(R6), RET0(),
	       EXIT()),
	     NULL, -1},
	    /* R7 is 16 on the path walked first, any length on the other: the
	     * access is bounded through "r1 < r7" only, so the second path may
	     * not be pruned at insn 19 against the first. */
	    {"prune_jump_operand",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), MOV64_IMM(R3, 0), MOV64_IMM(R3, 0),
	       MOV64_IMM(R3, 0), MOV64_IMM(R3, 0), LDX(BPF_W, R7, R9, 0), LDX(BPF_W, R2, R9, 4),
	       JMP_IMM(BPF_JNE, R2, 0, 1), MOV64_IMM(R7, 16), LDX(BPF_W, R1, R9, 8),
	       JMP_REG(BPF_JLT, R1, R7, 2), RET0(), ALU64_REG(BPF_ADD, R6, R1),
	       LDX(BPF_B, R0, R6, 0), EXIT()),
	     "R6 unbounded memory access, make sure to bounds check any such access", 24},
	    {"subprog", P(PCALL(1), EXIT(), RET0()), NULL, -1},
	    {"subprog_in_lock",
	     P(ELEM_R6(M_ARR), LOCK_R(R6), JMP32_IMM(BPF_JEQ, R0, 0, 1), EXIT(), PCALL(4),
	       UNLOCK_R(R6), RET0(), RET0()),
	     NULL, -1},
	    {"div_by_zero", P(MOV64_IMM(R0, 1), ALU64_IMM(BPF_DIV, R0, 0), EXIT()), "div by zero",
	     1},
	    /* As the 6.18 kernel: a quotient or remainder is not tracked, not
	     * even zero-extended when 32-bit: it is unbounded and may not be
	     * added to a pointer. */
	    {"mod_maybe_zero",
	     P(ELEM_R6(M_PLAIN), LDX(BPF_W, R1, R6, 0), LDX(BPF_W, R2, R6, 4),
	       ALU64_IMM(BPF_AND, R2, 7), ALU64_REG(BPF_MOD, R1, R2), ALU64_REG(BPF_ADD, R6, R1),
	       LDX(BPF_B, R0, R6, 0), EXIT()),
	     "math between map_value pointer and register with unbounded min value is not allowed",
	     14},
	    {"mod32_maybe_zero",
	     P(ELEM_R6(M_PLAIN), LDX(BPF_W, R1, R6, 0), LDX(BPF_W, R2, R6, 4),
	       ALU64_IMM(BPF_AND, R2, 7), ALU32_REG(BPF_MOD, R1, R2), ALU64_REG(BPF_ADD, R6, R1),
	       LDX(BPF_B, R0, R6, 0), EXIT()),
	     "math between map_value pointer and register with unbounded min value is not allowed",
	     14},
	    {"mod_nonzero",
	     P(ELEM_R6(M_PLAIN), LDX(BPF_W, R1, R6, 0), LDX(BPF_W, R2, R6, 4),
	       ALU64_IMM(BPF_AND, R2, 7), ALU64_IMM(BPF_OR, R2, 1), ALU64_REG(BPF_MOD, R1, R2),
	       ALU64_REG(BPF_ADD, R6, R1), LDX(BPF_DW, R0, R6, 0), EXIT()),
	     "math between map_value pointer and register with unbounded min value is not allowed",
	     15},
	    {"mod_small_dividend",
	     P(ELEM_R6(M_PLAIN), LDX(BPF_W, R1, R6, 0), ALU64_IMM(BPF_AND, R1, 7),
	       LDX(BPF_DW, R2, R6, 8), ALU64_REG(BPF_MOD, R1, R2), ALU64_REG(BPF_ADD, R6, R1),
	       LDX(BPF_DW, R0, R6, 0), EXIT()),
	     "math between map_value pointer and register with unbounded min value is not allowed",
	     14},
	    {"div_const",
	     P(ELEM_R6(M_PLAIN), MOV64_IMM(R1, 8), ALU64_IMM(BPF_DIV, R1, 2),
	       ALU64_REG(BPF_ADD, R6, R1), LDX(BPF_B, R0, R6, 0), EXIT()),
	     "math between map_value pointer and register with unbounded min value is not allowed",
	     12},
	    {"unreachable", P(RET0(), RET0()), "unreachable insn 2", 2},
	    {"jump_out_of_range", P(JA(5), RET0()), "jump out of range from insn 0 to 6", 0},
	    {"no_exit", P(MOV64_IMM(R0, 0)), "last insn is not an exit or jmp", 0},
	    {"unknown_helper", P(CALL(1000), RET0()), "invalid func unknown#1000", 0},
	    {"key_uninit",
	     P(MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -4), LD_MAP(R1, M_PLAIN),
	       CALL(BPF_FUNC_map_lookup_elem), RET0()),
	     "invalid read from stack R2 off -4+0 size 4", 4},
	    {"mov_reserved_off", P(INSN(BPF_ALU64 | BPF_MOV | BPF_X, R0, R1, 3, 0), RET0()),
	     "BPF_MOV uses reserved fields", 0},
	    {"alu_reserved_src",
	     P(MOV64_IMM(R0, 0), INSN(BPF_ALU64 | BPF_ADD | BPF_K, R0, 1, 0, 1), EXIT()),
	     "BPF_ALU uses reserved fields", 1},
	    {"movsx_ok",
	     P(MOV64_IMM(R1, 0xff), INSN(BPF_ALU64 | BPF_MOV | BPF_X, R0, R1, 8, 0),
	       JMP_IMM(BPF_JEQ, R0, -1, 1), LDX(BPF_W, R0, R0, 0), EXIT()),
	     NULL, -1},
	    {"array_const_key_not_null", P(LOOKUP(M_BIG, 0), LDX(BPF_W, R0, R0, 0), EXIT()), NULL,
	     -1},
	    {"array_key_out_of_range", P(LOOKUP(M_BIG, 8), LDX(BPF_W, R0, R0, 0), EXIT()),
	     "R0 invalid mem access 'map_value_or_null'", 6},
	    {"percpu_const_key_not_null", P(LOOKUP(M_PCPU, 0), LDX(BPF_W, R0, R0, 0), EXIT()), NULL,
	     -1},
	    {"outer_then_inner_lookup",
	     P(LOOKUP(M_OUTER, 0), JMP_IMM(BPF_JNE, R0, 0, 2), MOV64_IMM(R0, 0), EXIT(),
	       MOV64_REG(R1, R0), MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -4),
	       CALL(BPF_FUNC_map_lookup_elem), JMP_IMM(BPF_JEQ, R0, 0, 1), LDX(BPF_W, R0, R0, 4),
	       EXIT()),
	     NULL, -1},
	    {"outer_inner_unchecked",
	     P(LOOKUP(M_OUTER, 0), MOV64_REG(R1, R0), MOV64_REG(R2, R10),
	       ALU64_IMM(BPF_ADD, R2, -4), CALL(BPF_FUNC_map_lookup_elem), RET0()),
	     "R1 type=map_ptr_or_null expected=map_ptr", 9},
	    {"outer_ptr_arith", P(LOOKUP(M_OUTER, 0), ALU64_IMM(BPF_ADD, R0, 8), RET0()),
	     "R0 pointer arithmetic on map_ptr_or_null prohibited, null-check it first", 6},
	    {"outer_update",
	     P(ST(BPF_W, R10, -4, 0), ST(BPF_W, R10, -8, 0), LD_MAP(R1, M_OUTER),
	       MOV64_REG(R2, R10), ALU64_IMM(BPF_ADD, R2, -4), MOV64_REG(R3, R10),
	       ALU64_IMM(BPF_ADD, R3, -8), MOV64_IMM(BPF_REG_4, 0), CALL(BPF_FUNC_map_update_elem),
	       RET0()),
	     "cannot pass map_type 12 into func bpf_map_update_elem#2", 9},
	    {"callx", P(INSN(BPF_JMP | BPF_CALL | BPF_X, 0, 1, 0, 0), RET0()), "unknown opcode 8d",
	     0},
	    {"ldx_memsx_dw", P(INSN(BPF_LDX | BPF_MEMSX | BPF_DW, R0, R1, 0, 0), EXIT()),
	     "unknown opcode 99", 0},
	    {"frame_pointer_write", P(MOV64_IMM(R10, 0), RET0()), "frame pointer is read only", 0},
	    /* Legacy packet loads: the kernel's checks (check_ld_abs()), in its order. */
	    {"ld_abs", P(MOV64_REG(R6, R1), INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 0), EXIT()),
	     NULL, -1},
	    {"ld_ind",
	     P(MOV64_REG(R6, R1), MOV64_IMM(R7, 3), INSN(BPF_LD | BPF_IND | BPF_H, 0, R7, 0, 0),
	       EXIT()),
	     NULL, -1},
	    {"ld_abs_no_r6", P(INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 0), RET0()), "R6 !read_ok",
	     0},
	    {"ld_abs_r6_not_ctx",
	     P(MOV64_IMM(R6, 0), INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 0), RET0()),
	     "at the time of BPF_LD_ABS|IND R6 != pointer to skb", 1},
	    {"ld_abs_dw", P(MOV64_REG(R6, R1), INSN(BPF_LD | BPF_ABS | BPF_DW, 0, 0, 0, 0), RET0()),
	     "BPF_LD_[ABS|IND] uses reserved fields", 1},
	    {"ld_abs_clobbers_r1",
	     P(MOV64_REG(R6, R1), INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 0), MOV64_REG(R0, R1),
	       EXIT()),
	     "R1 !read_ok", 2},
	    /* Direct packet access (tc): data at 76, data_end at 80. */
	    {"pkt_checked",
	     P(MOV64_IMM(R0, 0), LDX(BPF_W, R2, R1, 76), LDX(BPF_W, R3, R1, 80), MOV64_REG(R4, R2),
	       ALU64_IMM(BPF_ADD, R4, 14), JMP_REG(BPF_JGT, R4, R3, 1), LDX(BPF_B, R0, R2, 13),
	       EXIT()),
	     NULL, -1},
	    {"pkt_checked_end_first", /* if (end >= data + 14): 14 bytes */
	     P(MOV64_IMM(R0, 0), LDX(BPF_W, R2, R1, 76), LDX(BPF_W, R3, R1, 80), MOV64_REG(R4, R2),
	       ALU64_IMM(BPF_ADD, R4, 14), JMP_REG(BPF_JGE, R3, R4, 1), EXIT(),
	       LDX(BPF_H, R0, R2, 12), EXIT()),
	     NULL, -1},
	    {"pkt_past_range",
	     P(MOV64_IMM(R0, 0), LDX(BPF_W, R2, R1, 76), LDX(BPF_W, R3, R1, 80), MOV64_REG(R4, R2),
	       ALU64_IMM(BPF_ADD, R4, 14), JMP_REG(BPF_JGT, R4, R3, 1), LDX(BPF_B, R0, R2, 14),
	       EXIT()),
	     "R2 offset is outside of the packet", 6},
	    {"pkt_unchecked", P(LDX(BPF_W, R2, R1, 76), LDX(BPF_B, R0, R2, 0), EXIT()),
	     "R2 offset is outside of the packet", 1},
	    {"pkt_jump_side", /* the jump side is past the end */
	     P(MOV64_IMM(R0, 0), LDX(BPF_W, R2, R1, 76), LDX(BPF_W, R3, R1, 80), MOV64_REG(R4, R2),
	       ALU64_IMM(BPF_ADD, R4, 14), JMP_REG(BPF_JGT, R4, R3, 1), EXIT(),
	       LDX(BPF_B, R0, R2, 0), EXIT()),
	     "R2 offset is outside of the packet", 7},
	    {"pkt_ldsx", /* a sign-extending load of data: the kernel refuses it */
	     P(INSN(BPF_LDX | BPF_MEMSX | BPF_W, R2, R1, 76, 0), RET0()),
	     "invalid bpf_context access off=76 size=4", 0},
	    {"pkt_end_arith", P(LDX(BPF_W, R3, R1, 80), ALU64_IMM(BPF_ADD, R3, 1), RET0()),
	     "R3 pointer arithmetic on pkt_end prohibited", 1},
	    {"pkt_end_read", P(LDX(BPF_W, R3, R1, 80), LDX(BPF_B, R0, R3, 0), EXIT()),
	     "R3 invalid mem access 'pkt_end'", 1},
	    {"pkt_len", /* data_end - data: a scalar */
	     P(LDX(BPF_W, R2, R1, 76), LDX(BPF_W, R0, R1, 80), ALU64_REG(BPF_SUB, R0, R2), EXIT()),
	     NULL, -1},
	    {"pkt_var_off_new_range", /* data + x has a new id and no range */
	     P(MOV64_IMM(R0, 0), LDX(BPF_W, R2, R1, 76), LDX(BPF_W, R3, R1, 80), MOV64_REG(R4, R2),
	       ALU64_IMM(BPF_ADD, R4, 14), JMP_REG(BPF_JGT, R4, R3, 4), LDX(BPF_B, R5, R2, 0),
	       ALU64_IMM(BPF_AND, R5, 7), ALU64_REG(BPF_ADD, R2, R5), LDX(BPF_B, R0, R2, 0),
	       EXIT()),
	     "R2 offset is outside of the packet", 9},
	    {"ld_abs_irq_saved",
	     P(MOV64_REG(R6, R1), MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8),
	       KCALL(RQBPF_KF_LOCAL_IRQ_SAVE), INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, 0), RET0()),
	     "BPF_LD_[ABS|IND] cannot be used inside bpf_local_irq_save-ed region", 4},
	    /* Which registers may hold a pointer (precise.c): each case makes
	     * one by a route the forward pass must follow, then adds an
	     * unbounded scalar to it on a path that would be pruned if the
	     * pass missed it. An atomic without fetch leaves R0 alone: */
	    {"ptr_kept_by_atomic",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), MOV64_IMM(R1, 1), ATOMIC64(BPF_ADD, R6, R1, 0),
	       PAD(), PTR_ADD_AFTER_FORK(R0, R9)),
	     UNBOUNDED_PTR_ADD, 19},
	    /* an atomic fetch of a spilled pointer gives the pointer back; */
	    {"ptr_from_atomic_fetch",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), STX(BPF_DW, R10, R6, -16), MOV64_IMM(R7, 0),
	       ATOMIC64(BPF_ADD | BPF_FETCH, R10, R7, -16), PTR_ADD_AFTER_FORK(R7, R9)),
	     UNBOUNDED_PTR_ADD, 19},
	    /* a spill through a copy of R10, filled through R10; */
	    {"ptr_spilled_through_fp_copy",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), MOV64_REG(R1, R10), ALU64_IMM(BPF_ADD, R1, -8),
	       STX(BPF_DW, R1, R6, 0), LDX(BPF_DW, R7, R10, -8), PTR_ADD_AFTER_FORK(R7, R9)),
	     UNBOUNDED_PTR_ADD, 20},
	    /* a subprogram filling a pointer from its caller's stack; */
	    {"ptr_filled_from_caller_stack",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), STX(BPF_DW, R10, R6, -8), MOV64_REG(R1, R10),
	       ALU64_IMM(BPF_ADD, R1, -8), MOV64_REG(R2, R9), PCALL(1), EXIT(),
	       LDX(BPF_DW, R7, R1, 0), MOV64_REG(R9, R2), PTR_ADD_AFTER_FORK(R7, R9)),
	     UNBOUNDED_PTR_ADD, 24},
	    /* a stack pointer made by a register add (the constant first); */
	    {"ptr_filled_through_add_x",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), STX(BPF_DW, R10, R6, -16), MOV64_IMM(R1, -16),
	       ALU64_REG(BPF_ADD, R1, R10), LDX(BPF_DW, R7, R1, 0), PTR_ADD_AFTER_FORK(R7, R9)),
	     UNBOUNDED_PTR_ADD, 20},
	    /* a callee writing a map value into its caller's slot, which the
	     * caller fills through R10; */
	    {"ptr_spilled_by_callee",
	     P(MOV64_REG(R9, R1), ST(BPF_DW, R10, -8, 0), MOV64_REG(R1, R10),
	       ALU64_IMM(BPF_ADD, R1, -8), PCALL(13), LDX(BPF_DW, R7, R10, -8),
	       JMP_IMM(BPF_JNE, R7, 0, 2), RET0(), PAD(), PTR_ADD_AFTER_FORK(R7, R9),
	       MOV64_REG(R6, R1), LOOKUP(M_BIG, 0), STX(BPF_DW, R6, R0, 0), RET0()),
	     UNBOUNDED_PTR_ADD, 15},
	    /* a subprogram returning a map value. */
	    {"ptr_returned_by_subprog",
	     P(MOV64_REG(R9, R1), PCALL(11), JA(0), PAD(), PAD(), PTR_ADD_AFTER_FORK(R0, R9),
	       LOOKUP(M_BIG, 0), EXIT()),
	     UNBOUNDED_PTR_ADD, 10},
	    /* Which stack slots matter (precise.c): an atomic fetch loads the
	     * slot's old value, here a scalar in [0, 255] on one path and 0 on
	     * the other, which then offsets a 16-byte map value. If the slot
	     * did not matter before the fetch, the path with 0 would prune the
	     * other, and the read past the value would be accepted. */
	    {"slot_read_by_atomic_fetch",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), PAD(), PAD(), PAD(), PAD(), SLOT_FORK(R9),
	       MOV64_IMM(R7, 0), ATOMIC64(BPF_ADD | BPF_FETCH, R10, R7, -8),
	       ALU64_REG(BPF_ADD, R6, R7), LDX(BPF_B, R0, R6, 0), RET0()),
	     "invalid access to map value, value_size=16 off=255 size=1", 24},
	    /* the same through xchg, and cmpxchg (old value to R0) */
	    {"slot_read_by_xchg",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), PAD(), PAD(), PAD(), PAD(), SLOT_FORK(R9),
	       MOV64_IMM(R7, 0), ATOMIC64(BPF_XCHG, R10, R7, -8), ALU64_REG(BPF_ADD, R6, R7),
	       LDX(BPF_B, R0, R6, 0), RET0()),
	     "invalid access to map value, value_size=16 off=255 size=1", 24},
	    {"slot_read_by_cmpxchg",
	     P(MOV64_REG(R9, R1), ELEM_R6(M_PLAIN), PAD(), PAD(), PAD(), PAD(), SLOT_FORK(R9),
	       MOV64_IMM(R7, 0), MOV64_IMM(R0, 0), ATOMIC64(BPF_CMPXCHG, R10, R7, -8),
	       ALU64_REG(BPF_ADD, R6, R0), LDX(BPF_B, R0, R6, 0), RET0()),
	     "invalid access to map value, value_size=16 off=255 size=1", 25},
	};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else
			only = argv[i];
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (only && strcmp(only, cases[i].name) != 0)
			continue;
		if (!only && scaled_down() && !strcmp(cases[i].name, "too_many_insns")) {
			printf("skip %s: walks a million instructions (RQ_TEST_SCALE < 1)\n",
			       cases[i].name);
			continue;
		}
		fails += run_case(&cases[i], verbose);
		ran++;
	}
	if (!only) {
		fails += check_log();
		fails += check_call_fanout();
		fails += check_call_table();
		ran += 3;
	}
	printf("%d/%d passed\n", ran - fails, ran);
	return fails || !ran ? 1 : 0;
}
