/* SPDX-License-Identifier: MIT */
/* common.h: what the verifier's test programs share. */
#ifndef RQBPF_VERIFIER_TEST_PROGS_COMMON_H
#define RQBPF_VERIFIER_TEST_PROGS_COMMON_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf_res_spin_lock.h"

#define HIDDEN __attribute__((visibility("hidden")))

struct elem {
	struct bpf_res_spin_lock lock;
};

struct counter {
	__u64 hits;
	struct bpf_res_spin_lock lock;
	__u32 pad;
	__u64 total;
};

/* @name: an array map of 2 values of type @value_type. */
#define ARRAY_OF(name, value_type)                                                                 \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, 2);                                                            \
		__type(key, int);                                                                  \
		__type(value, value_type);                                                         \
	} name SEC(".maps")

/* Program @prog: locks @field of element 0 of @map (values of type @vt),
 * then releases it. */
#define TAKE(prog, map, vt, field)                                                                 \
	SEC("?tc") int prog(struct __sk_buff *ctx)                                                 \
	{                                                                                          \
		int key = 0;                                                                       \
		vt *v = bpf_map_lookup_elem(&map, &key);                                           \
                                                                                                   \
		if (!v)                                                                            \
			return 0;                                                                  \
		if (bpf_res_spin_lock((struct bpf_res_spin_lock *)&v->field))                      \
			return 1;                                                                  \
		bpf_res_spin_unlock((struct bpf_res_spin_lock *)&v->field);                        \
		return 2;                                                                          \
	}

/* Program @prog: locks the global @lock, then releases it. */
#define TAKE_GLOBAL(prog, lock)                                                                    \
	SEC("?tc") int prog(struct __sk_buff *ctx)                                                 \
	{                                                                                          \
		if (bpf_res_spin_lock((struct bpf_res_spin_lock *)&(lock)))                        \
			return 1;                                                                  \
		bpf_res_spin_unlock((struct bpf_res_spin_lock *)&(lock));                          \
		return 2;                                                                          \
	}

#endif
