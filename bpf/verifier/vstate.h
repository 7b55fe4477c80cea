/* SPDX-License-Identifier: MIT */
/*
 * vstate.h: the verifier's internal model. An abstract state is the call
 * stack of frames (registers and 512-byte stacks) plus the references the
 * path holds (locks and saved irq flags, in acquisition order). Each file
 * of the verifier implements one concern over these types.
 */
#ifndef RQBPF_VSTATE_H
#define RQBPF_VSTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "calls.h"
#include "isa.h"
#include "prog_types.h"
#include "verifier.h"

#define V_SLOTS               (RQBPF_STACK_SIZE / 8)
#define V_NREGS               11
#define V_MAX_PENDING         8192
#define V_MAX_STATES_PER_INSN 64
/* ... at a loop's head, where each iteration's state is remembered: past
 * this many, a loop that has not converged walks on to the instruction
 * limit without comparing more. */
#define V_MAX_LOOP_HEAD_STATES 64
#define V_MAX_ERRNO            4095
/* The kernel's limit on processed instructions; the fuzzer builds with less
 * (bpf/verifier/tests/CMakeLists.txt says why). */
#ifndef V_INSN_LIMIT
#define V_INSN_LIMIT 1000000
#endif

/* Register types, as the kernel names them in its log. */
enum vtype {
	T_NOT_INIT = 0,
	T_SCALAR,
	T_CTX,
	T_STACK,
	T_MAP_PTR,
	T_MAP_VALUE,
	T_MAP_VALUE_OR_NULL,
	T_RINGBUF_MEM,         /* a reserved ring buffer record (refs.c) */
	T_RINGBUF_MEM_OR_NULL, /* ... or NULL: bpf_ringbuf_reserve's result */
	T_PACKET,              /* ctx->data and pointers made from it (mem.c) */
	T_PACKET_META,         /* ctx->data_meta ... */
	T_PACKET_END,          /* ctx->data_end: only compared, never accessed */
	T_MAP_PTR_OR_NULL,     /* an inner map or NULL: a map of maps' lookup */
	T_MEM_RDONLY,          /* read-only bytes (mem_size): bpf_iter_num_next's value */
	T_FUNC_PTR,            /* a subprogram (ld_imm64 of BPF_PSEUDO_FUNC): off is its start */
	T_MAP_KEY,             /* a key of map .map: a bpf_for_each_map_elem callback's R2 */
};

/* A pointer into the packet whose range a comparison with data_end (or,
 * for meta, with data) extends. */
static inline bool vtype_is_pkt(uint8_t type)
{
	return type == T_PACKET || type == T_PACKET_META;
}

/* A pointer that the program must compare with 0 before it uses it. */
static inline bool vtype_maybe_null(uint8_t type)
{
	return type == T_MAP_VALUE_OR_NULL || type == T_RINGBUF_MEM_OR_NULL ||
	       type == T_MAP_PTR_OR_NULL;
}

/* A range of values: the 64-bit view and the low 32-bit subregister view.
 * For scalars it is the value; for pointers it is the variable part of the
 * offset (the fixed part is vreg.off). */
struct vrange {
	uint64_t umin, umax;
	int64_t smin, smax;
	uint32_t u32min, u32max;
	int32_t s32min, s32max;
};

struct vreg {
	uint8_t type;      /* enum vtype */
	uint8_t frameno;   /* T_STACK: the frame whose stack it points into */
	uint16_t map;      /* T_MAP_*: index into prog->maps */
	int32_t off;       /* pointers: fixed offset. scalar: the delta of an add link */
	uint32_t mem_size; /* T_RINGBUF_MEM*: the record's size. T_PACKET*: the
	                    * kernel's range: bytes past the pointer's base
	                    * (without off) a comparison proved in the packet */
	uint32_t id;       /* map value (or null): the lookup's id; 0 for global data.
	                    * packet: pointers that share a variable part (0: none)
	                    * ring buffer record: the reference's id (refs.c).
	                    * scalar: copies of one value share a nonzero id (linked),
	                    * a copy plus a constant adds a V_ID_ADD flag (below) */
	struct vrange r;
};

/*
 * A linked scalar that is a copy plus a constant (the kernel's
 * BPF_ADD_CONST): the id keeps the copy's base id with one of these flags
 * and off holds the constant, so that the register is base + off. ADD64:
 * a 64-bit add; ADD32: a 32-bit add of a value that fit in 32 bits, the
 * result zero-extended. A register without a flag has off 0.
 */
#define V_ID_ADD64 (1u << 31)
#define V_ID_ADD32 (1u << 30)
#define V_ID_ADD   (V_ID_ADD64 | V_ID_ADD32)

static inline uint32_t scalar_base_id(uint32_t id)
{
	return id & ~V_ID_ADD;
}

/* The constant a linked scalar adds to its base value. */
static inline int32_t scalar_delta(const struct vreg *r)
{
	return (r->id & V_ID_ADD) ? r->off : 0;
}

/* Per-byte stack slot types. */
enum vslot {
	S_INVALID = 0, /* never written: reading it is an error */
	S_MISC,        /* some scalar bytes */
	S_ZERO,        /* known zero bytes */
	S_SPILL,       /* an 8-byte register spill (slot.spill holds it) */
	S_IRQ_FLAG,    /* saved irq state (slot.irq_id, slot.irq_class) */
	S_ITER,        /* a struct bpf_iter_num (slot.irq_id: its reference, iter_*) */
};

/* An iterator's state (the kernel's bpf_iter_state): ACTIVE until a
 * bpf_iter_num_next() that returned NULL, DRAINED after it. */
enum iter_state { ITER_ACTIVE = 1, ITER_DRAINED = 2 };

enum irq_class { IRQ_NATIVE = 0, IRQ_LOCK = 1 };

struct vslot_state {
	uint8_t bytes[8]; /* enum vslot per byte */
	struct vreg spill;
	uint32_t irq_id; /* S_IRQ_FLAG: the flag's id; S_ITER: the iterator's reference */
	uint8_t irq_class;
	uint8_t iter_state;  /* S_ITER: enum iter_state */
	uint32_t iter_depth; /* S_ITER: the loop iterations this path went through */
	/* A 1, 2 or 4-byte store of a nonzero constant at the slot's start (the
	 * kernel's narrow spill; its bytes are S_MISC): its size and value, read
	 * back by a load of that size and by a constant map key. 0: none. */
	uint8_t narrow;
	uint32_t narrow_val;
};

struct vframe {
	struct vreg regs[V_NREGS];
	struct vslot_state stack[V_SLOTS]; /* stack[i] covers fp-8*(i+1) .. fp-8*i-1 */
	int callsite;                      /* insn of the call that made this frame, -1 main */
	int subprog_start;
	/* A callback's frame (bpf_loop, bpf_for_each_map_elem): its exit goes
	 * back to the call at callsite, with R0 in [0, 1]. */
	bool in_callback;
	/* The iterations of a bpf_loop callback this frame's path went
	 * through at its current call: the kernel walks at most R1's umax
	 * (not compared between states, as the kernel's callback_depth). */
	uint32_t cb_iters;
};

/* References a path holds, in acquisition order. */
enum vref_type {
	REF_LOCK = 1,         /* bpf_spin_lock */
	REF_RES_LOCK = 2,     /* bpf_res_spin_lock */
	REF_RES_LOCK_IRQ = 4, /* bpf_res_spin_lock_irqsave */
	REF_IRQ = 8,          /* a saved irq flag */
	REF_PTR = 16,         /* a reserved ring buffer record (refs.c) */
	REF_ITER = 32,        /* an iterator bpf_iter_num_new() made (refs.c) */
};
#define REF_LOCK_MASK (REF_LOCK | REF_RES_LOCK | REF_RES_LOCK_IRQ)

struct vref {
	uint8_t type;
	uint16_t map; /* locks: the map; the kernel's "ptr" */
	uint32_t id;  /* locks: the pointer's id; irq: the flag's id */
	int insn;     /* where it was acquired */
};

struct vstate {
	int curframe;
	/* Loop iterations the path went through at may_goto instructions and
	 * at callback calls: a state that went further is not an infinite
	 * loop of one that went less far (verifier.c). */
	uint32_t may_goto_depth;
	uint32_t callback_depth;
	struct vframe *frame[RQBPF_MAX_FRAMES];
	int nrefs;
	struct vref refs[RQBPF_MAX_HELD];
};

struct idmap;

/* At a conditional jump that narrowed a linked scalar: what the walk has
 * seen linked to its operands (precise.c makes them matter together). */
struct vlink {
	uint16_t regs;  /* registers of the jump's frame */
	bool outer;     /* a register or slot of a calling frame */
	uint64_t slots; /* spilled slots of the jump's frame (bit k: fp-8*(k+1)) */
};

/* The verifier's run: program, log, limits, id generator. */
struct venv {
	const struct rqbpf_linked_prog *prog;
	FILE *log;
	struct rqbpf_verdict *out;
	uint32_t id_gen;
	uint64_t processed;
	int insn_idx;
	bool failed;
	uint8_t *prune_point;               /* per insn */
	uint16_t *live_in;                  /* per insn: bitmask of live registers */
	uint16_t *prec_in;                  /* per insn: registers whose value matters */
	uint64_t *sprec_in;                 /* per insn: stack slots whose value matters */
	uint16_t *maybe_ptr;                /* per insn: registers that may hold a pointer */
	uint16_t *maybe_fp;                 /* per insn: ... that may point into a stack */
	uint8_t *ret_matters;               /* per function start: its R0 matters at its exits */
	uint8_t *decided;                   /* per insn: a jump the walk decided by ranges */
	struct vlink *linked;               /* per insn: copies a jump narrowed together */
	bool prec_dirty;                    /* decided or linked changed: redo precision */
	int *subprog_of;                    /* per insn: the start of its subprogram */
	uint16_t *stack_depth;              /* per subprogram start: stack bytes its frames used */
	uint64_t jmps;                      /* prune points visited */
	uint64_t prev_jmps, prev_processed; /* ... when a state was last remembered */
	struct idmap *idmap;                /* scratch for state comparison */
	const struct rqbpf_line *prev_line; /* the source line the log showed last */
	uint8_t *global_called;             /* per function: 1 a walk called it, 2 verified */
	bool ret_checked;                   /* the type has a return range (ret_min, ret_max) */
	/* A callback may use a value it reads through a pointer it was given
	 * (its context, in a caller's stack) in a check (precise.c). */
	bool cb_reads_matter;
	int32_t ret_min, ret_max;
};

/* vlog.c: messages and the kernel-style log */
void verr(struct venv *env, int insn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void vlogf(struct venv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vlog_insn(struct venv *env, int idx, const struct vstate *st);
void vlog_reg(FILE *f, const struct venv *env, const struct vreg *r);
const char *vtype_name(uint8_t type);

/* scalar.c: value ranges */
void rng_unknown(struct vrange *r);
void rng_const(struct vrange *r, uint64_t v);
bool rng_is_const(const struct vrange *r);
bool rng_is_const32(const struct vrange *r);
void rng_sync(struct vrange *r);
void rng_zext32(struct vrange *r);
bool rng_within(const struct vrange *old, const struct vrange *cur);
bool rng_equal(const struct vrange *a, const struct vrange *b);
void rng_set_s32(struct vrange *r, int32_t lo, int32_t hi);
void rng_bits(struct vrange *r, int bytes, bool sign);
int rng_alu(struct vrange *dst, const struct vrange *src, uint8_t op, bool is64, int16_t off);
int rng_branch_taken(const struct vrange *a, const struct vrange *b, uint8_t op, bool is32);
bool rng_refine(struct vrange *a, struct vrange *b, uint8_t op, bool is32);
uint8_t rng_negate(uint8_t op);
void rng_add(struct vrange *dst, const struct vrange *src);

/* state.c: states, registers, comparison */
void reg_mark_unknown(struct vreg *r);
void reg_mark_const(struct vreg *r, uint64_t v);
void reg_mark_not_init(struct vreg *r);
bool reg_is_pointer(const struct vreg *r);
bool reg_is_const(const struct vreg *r, uint64_t *v);
void reg_link_before_copy(struct venv *env, struct vreg *src);
struct vstate *state_new(void);
struct vstate *state_copy(const struct vstate *src);
void state_free(struct vstate *st);
struct vframe *frame_new(int callsite, int subprog_start);
static inline struct vframe *cur_frame(struct vstate *st)
{
	return st->frame[st->curframe];
}
bool states_cover(struct venv *env, const struct vstate *old, const struct vstate *cur, int insn);
bool states_equal_exact(struct venv *env, const struct vstate *old, const struct vstate *cur);
bool loop_depths_equal(const struct vstate *old, const struct vstate *cur);
struct idmap *idmap_new(void);
uint64_t state_fingerprint(const struct vstate *st);

/* cfg.c: structure checks before the walk, liveness, prune points (1; 2:
 * a loop's head, where the walk always remembers the state: may_goto, an
 * iterator's next, a call that calls a callback) */
#define V_LOOP_HEAD 2
bool insn_is_loop_head(const struct bpf_insn *in);
int cfg_check(struct venv *env);

/* precise.c: registers whose exact value can reach a check */
int precision_init(struct venv *env);
void compute_precision(struct venv *env);

/* mem.c: loads, stores, stack and map value bounds */
int mem_access(struct venv *env, struct vstate *st, int regno, int off, int size, bool write,
               struct vreg *val, bool sign_ext);
int mem_check_readable(struct venv *env, struct vstate *st, int regno, int size);
int mem_check_writable(struct venv *env, struct vstate *st, int regno, int size);
bool mem_const_key(struct vstate *st, int regno, int size, uint64_t *key);
/* Frame @f's stack is used down to offset @off (negative): its subprogram's
 * depth, for check_call_chains(). */
void mem_note_stack(struct venv *env, const struct vframe *f, int off);

/* locks.c: lock and irq-flag references */
int lock_process(struct venv *env, struct vstate *st, int regno, bool is_lock, bool res, bool irq);
int irq_flag_save(struct venv *env, struct vstate *st, int regno, int argno, int cls);
int irq_flag_restore(struct venv *env, struct vstate *st, int regno, int argno, int cls);
int locks_held(const struct vstate *st);
int irqs_held(const struct vstate *st);
bool map_has_lock_field(const struct venv *env, int map);
int push_ref(struct venv *env, struct vstate *st, uint8_t type, uint32_t id, int map);
void remove_ref(struct vstate *st, int i);

/* refs.c: ring buffer records (referenced pointers) and the map types each
 * helper takes */
int ringbuf_reserved(struct venv *env, struct vstate *st, struct vreg *r0, uint32_t size);
int ringbuf_release(struct venv *env, struct vstate *st);
void refs_drop_null(struct vstate *st, uint32_t id);
int refs_check_exit(struct venv *env, const struct vstate *st);
int map_func_compatible(struct venv *env, const struct rqbpf_map_desc *m,
                        const struct rqbpf_call *c);

/* calls.c: helpers, kfuncs, subprogram calls and exits */
int call_check(struct venv *env, struct vstate *st, int idx, struct vstate **fork, int *next,
               int *fork_idx);
int check_call_chains(struct venv *env);
int check_map_prog_types(struct venv *env);
int exit_check(struct venv *env, struct vstate *st, int idx, int *next_idx);
bool call_may_return_ptr(const struct bpf_insn *in);

/* globals.c: global functions, verified on their own */
const struct rqbpf_func_desc *func_at_insn(const struct venv *env, int start);
bool is_global_func(const struct venv *env, int start);
int global_call(struct venv *env, struct vstate *st, int idx, int target);
struct vstate *global_entry_state(const struct venv *env, const struct rqbpf_func_desc *f);
const struct rqbpf_func_desc *next_global_to_verify(struct venv *env);

/* jumps.c: conditional jumps */
int cond_jump(struct venv *env, struct vstate *st, int idx, int *next, struct vstate **other,
              int *other_idx);

/* alu.c */
int alu_check(struct venv *env, struct vstate *st, int idx);

/* Helpers shared by the files above. */
static inline bool is_ldimm64(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW);
}
int check_reg_read(struct venv *env, struct vstate *st, int regno);

/* A bpf-to-bpf call (its imm is the callee's offset). */
static inline bool is_pseudo_call(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL;
}

/* may_goto (BPF_JMP | BPF_JCOND, src_reg BPF_MAY_GOTO = 0): a jump the
 * program may take at any time, and takes after a bound number of times. */
#define V_JCOND 0xe0
static inline bool is_may_goto(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | V_JCOND);
}

/* ld_imm64 of a subprogram's address (a callback): its imm, as a call's,
 * is the subprogram's offset. */
static inline bool is_pseudo_func(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg == BPF_PSEUDO_FUNC;
}

/* The first instruction of the subprogram bpf-to-bpf call @in at @i calls
 * (once cfg.c has checked that it is in the program). */
static inline int insn_call_target(const struct bpf_insn *in, int i)
{
	return i + in->imm + 1;
}

/* A jump with a target: JA, gotol or a conditional jump (not call, exit). */

static inline bool insn_is_jump(const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT;
}

/* Control may reach the next instruction (all but exit and JA/gotol). */
static inline bool insn_falls_through(const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	return (cls != BPF_JMP && cls != BPF_JMP32) || (op != BPF_EXIT && op != BPF_JA);
}

/* The next instruction's index (ld_imm64 takes two slots). */
static inline int insn_next(const struct bpf_insn *in, int i)
{
	return i + (is_ldimm64(in) ? 2 : 1);
}

/* A jump's target (gotol: JMP32 | JA takes imm); -1 when out of int range. */
static inline int insn_jump_target(const struct bpf_insn *in, int i)
{
	bool gotol = BPF_CLASS(in->code) == BPF_JMP32 && BPF_OP(in->code) == BPF_JA;
	int64_t t = (int64_t)i + 1 + (gotol ? in->imm : in->off);

	return t < 0 || t > INT32_MAX ? -1 : (int)t;
}

#endif /* RQBPF_VSTATE_H */
