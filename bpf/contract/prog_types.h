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
	uint32_t type;     /* enum bpf_prog_type */
	uint32_t ctx_size; /* bytes of its context */
	/* offsets of the context's packet pointers */
	uint32_t data, data_end, data_meta;
};

/* The row of program type @p type, or NULL. */
const struct rqbpf_prog_type *rqbpf_prog_type_find(uint32_t type);

#endif /* RQBPF_PROG_TYPES_H */
