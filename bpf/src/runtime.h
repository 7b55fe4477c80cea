/* SPDX-License-Identifier: MIT */
/* runtime.h: the state of one program run (registers live in the
 * interpreter's loop; this is the rest), shared by the interpreter and the
 * helpers, and the run-time services of runtime.c: faults and the memory
 * check. */
#ifndef RQBPF_RUNTIME_H
#define RQBPF_RUNTIME_H

#include <rqspinlock.h>

#include "maps.h"

/* How a held lock was taken: its unlock must be of the same kind, and a run
 * that ends holding it releases it as that unlock would. */
enum rqbpf_held_kind {
	RQBPF_HELD_RES,     /* bpf_res_spin_lock */
	RQBPF_HELD_RES_IRQ, /* bpf_res_spin_lock_irqsave: the flag holds a copy of the mask */
	RQBPF_HELD_SPIN,    /* bpf_spin_lock helper: no signals blocked */
	RQBPF_HELD_IRQ,     /* bpf_local_irq_save: no lock; the flag holds token */
};

/* A lock the run holds, or an open bpf_local_irq_save region (no lock). */
struct rqbpf_held {
	rqspinlock_t *lock; /* NULL for RQBPF_HELD_IRQ */
	enum rqbpf_held_kind kind;
	uint64_t sigmask; /* RES_IRQ, IRQ: the mask before, signals 1..64 as bits */
	uint64_t token;   /* IRQ: the value bpf_local_irq_save stored in the flag */
};

/* A ring buffer record the run reserved and has not submitted or discarded:
 * the run may access its bytes, and one still reserved at the end is
 * discarded (a verified program releases each). */
struct rqbpf_record {
	struct rqbpf_map *map;
	uint8_t *data;
	uint32_t size;
};

/*
 * A run's packet (rqbpf_prog_test_run(), test_run.c). Its bytes lie at host
 * address buf; the program sees them at RQBPF_PKT_VA onwards: the context's
 * 32-bit data, data_end and data_meta fields hold those addresses, which lie
 * below the lowest address Linux maps (vm.mmap_min_addr, 64 KiB by default),
 * so no host region overlaps them and rqbpf_mem() translates them.
 */
#define RQBPF_PKT_VA 0x1000u

struct rqbpf_packet {
	uint8_t *buf;
	uint32_t size; /* bytes at buf */
	bool writable; /* the program type may write to its packet */
	/* LD_ABS/IND: skb->data, the mac and the network header, as offsets in buf */
	uint32_t data, mac, net;
};

/* The largest key bpf_for_each_map_elem passes a callback: larger ones fault. */
#define RQBPF_CB_KEY_MAX 64

struct rqbpf_run {
	const struct rqbpf_prog *prog;
	uintptr_t ctx;
	size_t ctx_size;
	const struct rqbpf_packet *pkt; /* NULL: no packet */
	const struct rqbpf_op *at;      /* the instruction being run, for fault messages */
	char *msg;                      /* fault message buffer */
	size_t msg_size;
	int nheld;
	uint32_t irq_seq; /* bpf_local_irq_save calls so far: makes each token unique */
	struct rqbpf_held held[RQBPF_MAX_HELD];
	struct rqbpf_region last; /* the region the last slow check found */
	bool rcu;                 /* a read-side section is open (in-place hash lookups) */
	int nrec;
	struct rqbpf_record rec[RQBPF_MAX_HELD];
	uint64_t cb_insns; /* instructions the run's callbacks ran */
	uint64_t cookie;   /* bpf_throw's, which the run returns (RQBPF_THROWN) */
	/* The keys bpf_for_each_map_elem passes its callbacks (read-only to
	 * the program), one per frame that may be a callback's. */
	_Alignas(8) uint8_t cb_key[RQBPF_MAX_FRAMES][RQBPF_CB_KEY_MAX];
	_Alignas(16) uint8_t stack[RQBPF_MAX_FRAMES * RQBPF_STACK_SIZE];
};

/* A call's result that ends the run at once, which returns r->cookie
 * (bpf_throw): not an error. */
#define RQBPF_THROWN 1

/* Record a fault; returns -EFAULT. */
int rqbpf_fault(struct rqbpf_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Host address of [addr, addr + size) if the run may access it, else NULL. */
void *rqbpf_mem_slow(struct rqbpf_run *r, uint64_t addr, size_t size, bool write);

static inline void *rqbpf_mem(struct rqbpf_run *r, uint64_t addr, size_t size, bool write)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)r->stack;

	/* size first: sizeof(r->stack) - size must not wrap (a map value
	 * larger than the stack, from an untrusted object's BTF) */
	if (size <= sizeof(r->stack) && off <= sizeof(r->stack) - size)
		return (void *)(uintptr_t)addr;
	off = (uintptr_t)addr - r->last.base;
	if (off < r->last.size && size <= r->last.size - off && (!write || r->last.writable))
		return (void *)(uintptr_t)addr;
	if (r->pkt) { /* the packet, at its addresses (RQBPF_PKT_VA) */
		off = (uintptr_t)addr - RQBPF_PKT_VA;
		if (off < r->pkt->size && size <= r->pkt->size - off &&
		    (!write || r->pkt->writable))
			return r->pkt->buf + off;
	}
	return rqbpf_mem_slow(r, addr, size, write);
}

/* interp.c: decode a linked program for the interpreter (at load). */
int rqbpf_decode(struct rqbpf_prog *prog);
/* interp.c: run the callback at instruction @p target with R1-R5 @p args in
 * a frame below the caller's (frame pointer @p caller_fp); R0 in *@p ret.
 * 0, or the fault's -errno. */
int rqbpf_run_callback(struct rqbpf_run *r, uint64_t target, uint64_t caller_fp,
                       const uint64_t *args, uint64_t *ret);

/* interp.c: rqbpf_prog_run() with a packet (@p pkt, NULL: none). */
int rqbpf_run_packet(const struct rqbpf_prog *prog, void *ctx, size_t ctx_size,
                     const struct rqbpf_packet *pkt, struct rqbpf_run_result *res);

/* interp.c: the bytes an LD_ABS/IND of @p size at offset @p k loads (big
 * endian), into *@p v; false when they lie outside the packet, which ends
 * the function with 0 as in the kernel. */
bool rqbpf_ld_abs(const struct rqbpf_packet *pkt, int32_t k, int size, uint64_t *v);

/* helpers.c: the table's runtime functions, rqbpf_call_<name>() for each
 * row of RQBPF_CALLS (calls.h). */
#define RQBPF_CALL_DECLARE(kind, id, name, ...)                                                    \
	int rqbpf_call_##name(struct rqbpf_run *r, uint64_t *reg);
RQBPF_CALLS(RQBPF_CALL_DECLARE)
#undef RQBPF_CALL_DECLARE

/* helpers.c: the helper (src 0) or kfunc (src BPF_PSEUDO_KFUNC_CALL) @p id,
 * or NULL; and the release of what a run still holds at its end (locks, irq
 * regions: blocked signals; ring buffer records: discarded). */
rqbpf_call_fn rqbpf_call_target(uint8_t src, int32_t id);
/* helpers.c, for helpers_loop.c: the map a helper's argument @p v names, or
 * NULL; the value of @p key in @p m, or NULL, in *@p value, as
 * bpf_map_lookup_elem finds it (0, or a fault's -errno). */
struct rqbpf_map *rqbpf_helper_map(struct rqbpf_run *r, uint64_t v);
int rqbpf_helper_lookup(struct rqbpf_run *r, struct rqbpf_map *m, const void *key, void **value);
int rqbpf_release_all(struct rqbpf_run *r);

#endif /* RQBPF_RUNTIME_H */
