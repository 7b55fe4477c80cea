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

#endif
