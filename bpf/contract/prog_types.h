/* SPDX-License-Identifier: MIT */
/*
 * prog_types.h: the program types whose context rqbpf knows (Floor 0,
 * docs/HACKING.md "bpf/"): one row each, the context's struct. The loader
 * sizes a run's context by it (loader_link.c), the verifier finds the
 * context's packet pointers by it (verifier/mem.c). A section libbpf maps
 * to a type without a row still loads, with no context (ctx_size 0).
 */
#ifndef RQBPF_PROG_TYPES_H
#define RQBPF_PROG_TYPES_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>

/* X(type, context struct); the struct has the packet pointers data,
 * data_end and data_meta (32-bit fields), which rqbpf refuses to read. */
#define RQBPF_PROG_TYPES(X)                                                                        \
	X(BPF_PROG_TYPE_SCHED_CLS, struct __sk_buff)                                               \
	X(BPF_PROG_TYPE_SCHED_ACT, struct __sk_buff)                                               \
	X(BPF_PROG_TYPE_SOCKET_FILTER, struct __sk_buff)                                           \
	X(BPF_PROG_TYPE_CGROUP_SKB, struct __sk_buff)                                              \
	X(BPF_PROG_TYPE_XDP, struct xdp_md)

struct rqbpf_prog_type {
	uint32_t type;          /* enum bpf_prog_type */
	const char *ctx_struct; /* the context's struct: "__sk_buff" */
	uint32_t ctx_size;      /* bytes of its context */
	/* offsets of the context's packet pointers */
	uint32_t data, data_end, data_meta;
};

/* The row of program type @p type, or NULL. */
const struct rqbpf_prog_type *rqbpf_prog_type_find(uint32_t type);

/*
 * The kernel's per-type rules (6.18) that the verifier applies, as data
 * (prog_types.c): which types may not use a map whose value holds a lock
 * (check_map_prog_compatibility()), the return values a type's main
 * program may give (check_return_code()), and which context fields a type
 * may read or write, at which sizes (the <type>_is_valid_access() of the
 * kernel, tabulated field by field for __sk_buff and xdp_md).
 */

/* How a program type may access one context field. */
enum rqbpf_ctx_access {
	RQBPF_CTX_NONE,  /* not at all */
	RQBPF_CTX_READ,  /* read 1, 2 or 4 bytes at an offset aligned to the size */
	RQBPF_CTX_RW,    /* as READ, and write the whole 4 bytes */
	RQBPF_CTX_READ1, /* read exactly 1 byte */
	RQBPF_CTX_READ4, /* read exactly 4 bytes (each 4 of a wider field) */
	RQBPF_CTX_READ8, /* read exactly 8 bytes */
	RQBPF_CTX_RW8,   /* read or write exactly 8 bytes */
	RQBPF_CTX_ANY, /* read or write 1, 2, 4 or 8 bytes aligned to the size, inside the field */
	RQBPF_CTX_PACKET, /* a packet pointer: read exactly 4 bytes */
};

/* The message the kernel refuses a program of type @p type with when it
 * uses a map whose value holds a bpf_spin_lock or bpf_res_spin_lock
 * ("tracing progs cannot use bpf_spin_lock yet"), or NULL: it may. */
const char *rqbpf_prog_type_lock_refusal(uint32_t type);

/* Whether the main program of type @p type, attached as @p attach (enum
 * bpf_attach_type), must return a value in [*min, *max]; false: any
 * scalar goes. */
bool rqbpf_prog_type_ret_range(uint32_t type, uint32_t attach, int32_t *min, int32_t *max);

/* Whether type @p type may read (or, @p write, write) @p size bytes of its
 * context at @p off, as the kernel allows. A type whose context has no
 * field table here may access nothing. */
bool rqbpf_ctx_access_ok(uint32_t type, int off, int size, bool write);

#endif /* RQBPF_PROG_TYPES_H */
