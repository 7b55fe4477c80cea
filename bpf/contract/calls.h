/* SPDX-License-Identifier: MIT */
/*
 * calls.h: the one table of the helpers and kfuncs a program may call
 * (Floor 0, docs/HACKING.md "bpf/"). One row per call; the loader binds
 * calls by it (loader_link.c), the verifier checks them by it (verifier/calls.c)
 * and names them by it (verifier/vlog.c), and the runtime runs the row's
 * function (helpers.c). Adding a helper or kfunc is one row here plus its
 * function rqbpf_call_<name>() in bpf/src/helpers.c.
 *
 * X(kind, id, name, ret, role, under_lock, progs, arg1, ..., arg5):
 *  - kind: HELPER (src_reg 0, id a BPF_FUNC_* of <linux/bpf.h>) or KFUNC
 *    (src_reg BPF_PSEUDO_KFUNC_CALL, id an enum rqbpf_kfunc_id the table
 *    defines below, bound by the name "bpf_<name>" at link);
 *  - name: the call's name without "bpf_": the kernel's name is "bpf_<name>",
 *    the runtime's function rqbpf_call_<name>();
 *  - ret: what R0 holds after it (enum rqbpf_call_ret, without RQBPF_RET_);
 *  - role: what it does to locks and irq state (enum rqbpf_call_role);
 *  - under_lock: 1 when a program may call it while holding a lock;
 *  - progs: the program types that may call it, a mask of
 *    RQBPF_PROG_BIT(BPF_PROG_TYPE_*), or RQBPF_PROG_ANY;
 *  - arg1..arg5: its arguments (enum rqbpf_call_arg, without RQBPF_ARG_),
 *    NONE past the last.
 */
#ifndef RQBPF_CALLS_H
#define RQBPF_CALLS_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RQBPF_PROG_BIT(t) (1ull << (t))
#define RQBPF_PROG_ANY    (~0ull)
/* The helpers that may sleep: only sleepable programs may call them, and
 * of the types rqbpf knows only BPF_PROG_TYPE_SYSCALL always is one (the
 * verifier's message for the others is the kernel's "might sleep"). */
#define RQBPF_PROG_SLEEPABLE RQBPF_PROG_BIT(BPF_PROG_TYPE_SYSCALL)

// clang-format off
#define RQBPF_CALLS(X)                                                                             \
	X(HELPER, BPF_FUNC_map_lookup_elem, map_lookup_elem, MAP_VALUE_OR_NULL, NONE, 0,           \
	  RQBPF_PROG_ANY, MAP, MAP_KEY, NONE, NONE, NONE)                                          \
	X(HELPER, BPF_FUNC_map_update_elem, map_update_elem, INTEGER, NONE, 0,                     \
	  RQBPF_PROG_ANY, MAP, MAP_KEY, MAP_VALUE, ANYTHING, NONE)                                 \
	X(HELPER, BPF_FUNC_map_delete_elem, map_delete_elem, INTEGER, NONE, 0,                     \
	  RQBPF_PROG_ANY, MAP, MAP_KEY, NONE, NONE, NONE)                                          \
	X(HELPER, BPF_FUNC_ktime_get_ns, ktime_get_ns, INTEGER, NONE, 0,                           \
	  RQBPF_PROG_ANY, NONE, NONE, NONE, NONE, NONE)                                            \
	X(HELPER, BPF_FUNC_trace_printk, trace_printk, INTEGER, NONE, 0,                           \
	  RQBPF_PROG_ANY, MEM, CONST_SIZE, NONE, NONE, NONE)                                       \
	X(HELPER, BPF_FUNC_get_prandom_u32, get_prandom_u32, INTEGER, NONE, 0,                     \
	  RQBPF_PROG_ANY, NONE, NONE, NONE, NONE, NONE)                                            \
	X(HELPER, BPF_FUNC_get_smp_processor_id, get_smp_processor_id, INTEGER, NONE, 0,           \
	  RQBPF_PROG_ANY, NONE, NONE, NONE, NONE, NONE)                                            \
	X(HELPER, BPF_FUNC_get_current_pid_tgid, get_current_pid_tgid, INTEGER, NONE, 0,           \
	  RQBPF_PROG_ANY, NONE, NONE, NONE, NONE, NONE)                                            \
	X(HELPER, BPF_FUNC_get_current_uid_gid, get_current_uid_gid, INTEGER, NONE, 0,             \
	  RQBPF_PROG_ANY, NONE, NONE, NONE, NONE, NONE)                                            \
	X(HELPER, BPF_FUNC_get_current_comm, get_current_comm, INTEGER, NONE, 0,                   \
	  RQBPF_PROG_ANY, UNINIT_MEM, CONST_SIZE, NONE, NONE, NONE)                                \
	X(HELPER, BPF_FUNC_copy_from_user, copy_from_user, INTEGER, NONE, 0,                      \
	  RQBPF_PROG_SLEEPABLE, UNINIT_MEM, CONST_SIZE_OR_ZERO, ANYTHING, NONE, NONE)             \
	X(HELPER, BPF_FUNC_spin_lock, spin_lock, VOID, SPIN_LOCK, 0,                               \
	  RQBPF_PROG_ANY, LOCK, NONE, NONE, NONE, NONE)                                            \
	X(HELPER, BPF_FUNC_spin_unlock, spin_unlock, VOID, SPIN_UNLOCK, 1,                         \
	  RQBPF_PROG_ANY, LOCK, NONE, NONE, NONE, NONE)                                            \
	X(HELPER, BPF_FUNC_map_push_elem, map_push_elem, INTEGER, NONE, 0,                         \
	  RQBPF_PROG_ANY, MAP, MAP_VALUE, ANYTHING, NONE, NONE)                                    \
	X(HELPER, BPF_FUNC_map_pop_elem, map_pop_elem, INTEGER, NONE, 0,                           \
	  RQBPF_PROG_ANY, MAP, MAP_VALUE_UNINIT, NONE, NONE, NONE)                                 \
	X(HELPER, BPF_FUNC_map_peek_elem, map_peek_elem, INTEGER, NONE, 0,                         \
	  RQBPF_PROG_ANY, MAP, MAP_VALUE_UNINIT, NONE, NONE, NONE)                                 \
	X(HELPER, BPF_FUNC_ringbuf_output, ringbuf_output, INTEGER, NONE, 0,                       \
	  RQBPF_PROG_ANY, MAP, MEM, SIZE_OR_ZERO, ANYTHING, NONE)                                  \
	X(HELPER, BPF_FUNC_ringbuf_reserve, ringbuf_reserve, RINGBUF_MEM_OR_NULL, NONE, 0,         \
	  RQBPF_PROG_ANY, MAP, ALLOC_SIZE, ANYTHING, NONE, NONE)                                   \
	X(HELPER, BPF_FUNC_ringbuf_submit, ringbuf_submit, VOID, NONE, 0,                          \
	  RQBPF_PROG_ANY, RINGBUF_MEM, ANYTHING, NONE, NONE, NONE)                                 \
	X(HELPER, BPF_FUNC_ringbuf_discard, ringbuf_discard, VOID, NONE, 0,                        \
	  RQBPF_PROG_ANY, RINGBUF_MEM, ANYTHING, NONE, NONE, NONE)                                 \
	X(HELPER, BPF_FUNC_ringbuf_query, ringbuf_query, INTEGER, NONE, 0,                         \
	  RQBPF_PROG_ANY, MAP, ANYTHING, NONE, NONE, NONE)                                         \
	X(KFUNC, RQBPF_KF_RES_SPIN_LOCK, res_spin_lock, LOCK_RESULT, RES_LOCK, 1,                  \
	  RQBPF_PROG_ANY, LOCK, NONE, NONE, NONE, NONE)                                            \
	X(KFUNC, RQBPF_KF_RES_SPIN_UNLOCK, res_spin_unlock, VOID, RES_UNLOCK, 1,                   \
	  RQBPF_PROG_ANY, LOCK, NONE, NONE, NONE, NONE)                                            \
	X(KFUNC, RQBPF_KF_RES_SPIN_LOCK_IRQSAVE, res_spin_lock_irqsave, LOCK_RESULT,               \
	  RES_LOCK_IRQSAVE, 1, RQBPF_PROG_ANY, LOCK, IRQ_FLAG, NONE, NONE, NONE)                   \
	X(KFUNC, RQBPF_KF_RES_SPIN_UNLOCK_IRQRESTORE, res_spin_unlock_irqrestore, VOID,            \
	  RES_UNLOCK_IRQRESTORE, 1, RQBPF_PROG_ANY, LOCK, IRQ_FLAG, NONE, NONE, NONE)              \
	X(KFUNC, RQBPF_KF_LOCAL_IRQ_SAVE, local_irq_save, VOID, IRQ_SAVE, 0,                       \
	  RQBPF_PROG_ANY, IRQ_FLAG, NONE, NONE, NONE, NONE)                                        \
	X(KFUNC, RQBPF_KF_LOCAL_IRQ_RESTORE, local_irq_restore, VOID, IRQ_RESTORE, 0,              \
	  RQBPF_PROG_ANY, IRQ_FLAG, NONE, NONE, NONE, NONE)                                        \
	X(HELPER, BPF_FUNC_per_cpu_ptr, per_cpu_ptr, INTEGER, NONE, 0,                             \
	  RQBPF_PROG_ANY, PERCPU_BTF_ID, ANYTHING, NONE, NONE, NONE)                               \
	X(HELPER, BPF_FUNC_this_cpu_ptr, this_cpu_ptr, INTEGER, NONE, 0,                           \
	  RQBPF_PROG_ANY, PERCPU_BTF_ID, NONE, NONE, NONE, NONE)                                   \
	X(HELPER, BPF_FUNC_loop, loop, INTEGER, LOOP_CALLBACK, 0,                                  \
	  RQBPF_PROG_ANY, ANYTHING, CALLBACK, STACK_OR_NULL, ANYTHING, NONE)                       \
	X(HELPER, BPF_FUNC_for_each_map_elem, for_each_map_elem, INTEGER, MAP_CALLBACK, 0,         \
	  RQBPF_PROG_ANY, MAP, CALLBACK, STACK_OR_NULL, ANYTHING, NONE)                            \
	X(KFUNC, RQBPF_KF_ITER_NUM_NEW, iter_num_new, INTEGER, ITER_NEW, 1,                        \
	  RQBPF_PROG_ANY, ITER_NUM, ANYTHING, ANYTHING, NONE, NONE)                                \
	X(KFUNC, RQBPF_KF_ITER_NUM_NEXT, iter_num_next, ITER_NUM_OR_NULL, ITER_NEXT, 1,            \
	  RQBPF_PROG_ANY, ITER_NUM, NONE, NONE, NONE, NONE)                                        \
	X(KFUNC, RQBPF_KF_ITER_NUM_DESTROY, iter_num_destroy, VOID, ITER_DESTROY, 1,               \
	  RQBPF_PROG_ANY, ITER_NUM, NONE, NONE, NONE, NONE)                                        \
	X(KFUNC, RQBPF_KF_THROW, throw, VOID, THROW, 0, RQBPF_PROG_ANY, ANYTHING, NONE, NONE, NONE, \
	  NONE)                                                                                    \
	X(KFUNC, RQBPF_KF_COPY_FROM_USER_STR, copy_from_user_str, INTEGER, NONE, 0,                \
	  RQBPF_PROG_SLEEPABLE, UNINIT_MEM, SIZE_OR_ZERO, ANYTHING, ANYTHING, NONE)
// clang-format on

/* The kfuncs' ids (src_reg BPF_PSEUDO_KFUNC_CALL), from the table, from 1. */
#define RQBPF_KFUNC_ID_HELPER(id)
#define RQBPF_KFUNC_ID_KFUNC(id)      id,
#define RQBPF_KFUNC_ID(kind, id, ...) RQBPF_KFUNC_ID_##kind(id)
enum rqbpf_kfunc_id { RQBPF_KF_NONE, RQBPF_CALLS(RQBPF_KFUNC_ID) };
#undef RQBPF_KFUNC_ID

enum rqbpf_call_kind {
	RQBPF_CALL_HELPER, /* src_reg 0 */
	RQBPF_CALL_KFUNC,  /* src_reg BPF_PSEUDO_KFUNC_CALL */
};

/* An argument, as the kernel's bpf_func_proto and kfunc BTF give them. */
enum rqbpf_call_arg {
	RQBPF_ARG_NONE,
	RQBPF_ARG_ANYTHING,   /* any initialised value */
	RQBPF_ARG_MAP,        /* a map (ld_imm64 of BPF_PSEUDO_MAP_FD) */
	RQBPF_ARG_MAP_KEY,    /* key_size readable bytes */
	RQBPF_ARG_MAP_VALUE,  /* value_size readable bytes */
	RQBPF_ARG_MEM,        /* readable bytes, as many as the next argument says */
	RQBPF_ARG_CONST_SIZE, /* the size of the previous argument, a known constant */
	RQBPF_ARG_LOCK,       /* a lock in a map value */
	RQBPF_ARG_IRQ_FLAG,   /* an 8-byte irq flag on the stack */
	/* the size of the previous MEM argument: bounded, 0 allowed */
	RQBPF_ARG_SIZE_OR_ZERO,
	/* the size of the memory the call allocates: a known constant, 0 allowed */
	RQBPF_ARG_ALLOC_SIZE,
	/* a record bpf_ringbuf_reserve returned, which the call releases */
	RQBPF_ARG_RINGBUF_MEM,
	/* value_size bytes the call writes (stack, initialised or not; a map value) */
	RQBPF_ARG_MAP_VALUE_UNINIT,
	RQBPF_ARG_UNINIT_MEM, /* writable bytes the call fills, as many as the next argument says */
	RQBPF_ARG_CONST_SIZE_OR_ZERO, /* as CONST_SIZE, and 0 allowed (no memory then) */
	/* a per-CPU kernel variable (a __ksym): a program run in userspace has
	 * none, so the verifier refuses any argument, with the kernel's message */
	RQBPF_ARG_PERCPU_BTF_ID,
	RQBPF_ARG_ITER_NUM,      /* a struct bpf_iter_num on the stack (8 bytes) */
	RQBPF_ARG_CALLBACK,      /* a static subprogram (ld_imm64 of BPF_PSEUDO_FUNC) */
	RQBPF_ARG_STACK_OR_NULL, /* a pointer to the stack, or 0: the callback's context */
};

/* What R0 holds after the call. */
enum rqbpf_call_ret {
	RQBPF_RET_VOID,              /* nothing: R0 may not be read */
	RQBPF_RET_INTEGER,           /* an unknown scalar */
	RQBPF_RET_MAP_VALUE_OR_NULL, /* a value of the map in R1, or NULL */
	RQBPF_RET_LOCK_RESULT,       /* 0 (lock taken) or -errno (not taken): two paths */
	/* a reserved ring buffer record of the size in R2, or NULL: a reference
	 * the program must release (bpf_ringbuf_submit or _discard) */
	RQBPF_RET_RINGBUF_MEM_OR_NULL,
	/* a pointer to the iterator's next int (read-only), or NULL when drained */
	RQBPF_RET_ITER_NUM_OR_NULL,
};

/* What the call does to the locks and irq state a program holds. */
enum rqbpf_call_role {
	RQBPF_ROLE_NONE,
	RQBPF_ROLE_SPIN_LOCK,             /* takes a bpf_spin_lock */
	RQBPF_ROLE_SPIN_UNLOCK,           /* releases it */
	RQBPF_ROLE_RES_LOCK,              /* takes a bpf_res_spin_lock, or fails */
	RQBPF_ROLE_RES_UNLOCK,            /* releases it */
	RQBPF_ROLE_RES_LOCK_IRQSAVE,      /* saves irq state into a flag, then as RES_LOCK */
	RQBPF_ROLE_RES_UNLOCK_IRQRESTORE, /* RES_UNLOCK, then restores the flag's irq state */
	RQBPF_ROLE_IRQ_SAVE,              /* saves irq state into a flag */
	RQBPF_ROLE_IRQ_RESTORE,           /* restores it */
	RQBPF_ROLE_ITER_NEW,              /* makes the iterator in R1 */
	RQBPF_ROLE_ITER_NEXT,             /* advances it: the loop's head */
	RQBPF_ROLE_ITER_DESTROY,          /* releases it */
	/* calls the callback in R2 R1 times (bpf_loop): callback(index, R3) */
	RQBPF_ROLE_LOOP_CALLBACK,
	/* calls the callback in R2 on each element of the map in R1, while it
	 * returns 0 (bpf_for_each_map_elem): callback(map, key, value, R3) */
	RQBPF_ROLE_MAP_CALLBACK,
	/* ends the program, which returns R1 (bpf_throw, the kernel's default
	 * exception callback) */
	RQBPF_ROLE_THROW,
};

#define RQBPF_CALL_MAX_ARGS 5

/* One row of the table. */
struct rqbpf_call {
	enum rqbpf_call_kind kind;
	int32_t id;
	const char *name; /* the kernel's: "bpf_map_lookup_elem" */
	enum rqbpf_call_ret ret;
	enum rqbpf_call_role role;
	bool under_lock;
	uint64_t progs; /* RQBPF_PROG_BIT()s */
	uint8_t nargs;
	enum rqbpf_call_arg args[RQBPF_CALL_MAX_ARGS];
};

/* The row of call @p id of @p kind, or NULL; its index in the table (the
 * order of RQBPF_CALLS) in *@p index when not NULL. */
const struct rqbpf_call *rqbpf_call_find(enum rqbpf_call_kind kind, int32_t id, size_t *index);
/* Row @p i of the table, NULL past its end. */
const struct rqbpf_call *rqbpf_call_at(size_t i);
/* The row of the call named @p name ("bpf_res_spin_lock") of @p kind, or NULL. */
const struct rqbpf_call *rqbpf_call_by_name(enum rqbpf_call_kind kind, const char *name);
/* The row of the call instruction @p in (src_reg 0 or BPF_PSEUDO_KFUNC_CALL), or NULL. */
const struct rqbpf_call *rqbpf_call_of_insn(const struct bpf_insn *in);
/* Whether program type @p prog_type may call @p c. */
static inline bool rqbpf_call_allowed(const struct rqbpf_call *c, uint32_t prog_type)
{
	return prog_type < 64 ? (c->progs >> prog_type) & 1 : c->progs == RQBPF_PROG_ANY;
}

/* The kernel's name for helper @p id ("bpf_get_current_pid_tgid"), whether
 * rqbpf has it or not; NULL for an id the kernel does not have. */
const char *rqbpf_kernel_helper_name(int32_t id);

#endif /* RQBPF_CALLS_H */
