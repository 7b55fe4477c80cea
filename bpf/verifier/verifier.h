/* SPDX-License-Identifier: MIT */
/*
 * verifier.h: rqbpf's static verifier. It proves, before a program may run,
 * that every path takes and releases its bpf_res_spin_locks by the kernel's
 * rules, and that every memory access stays in bounds. Verdict messages are
 * the kernel verifier's texts, which tools grep for.
 */
#ifndef RQBPF_VERIFIER_H
#define RQBPF_VERIFIER_H

#include <stdint.h>
#include <stdio.h>

#include "prog.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The verdict on one program. */
struct rqbpf_verdict {
	int accepted;             /**< 1 accepted, 0 rejected */
	uint32_t insn;            /**< rejected: index of the offending instruction */
	uint64_t insns_processed; /**< instructions the abstract interpreter processed */
	char msg[256];            /**< rejected: the kernel's message text */
	char line[256];           /**< rejected: "; <source line> @ FILE:LINE" of insn, as the
	                           *   kernel's log shows it (.BTF.ext line info), or "" */
};

/**
 * @brief Verify @p prog.
 * @param vlog NULL, or a stream for a kernel-style log of every instruction
 *  with its register states (`rqbpf verify -v`).
 * @return 0 when accepted, -EACCES when rejected (out->msg, out->insn say
 *  why), -EINVAL for bad arguments, -ENOMEM.
 */
int rqbpf_verify(const struct rqbpf_linked_prog *prog, struct rqbpf_verdict *out, FILE *vlog);

#ifdef __cplusplus
}
#endif

#endif /* RQBPF_VERIFIER_H */
