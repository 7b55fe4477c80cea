/* SPDX-License-Identifier: MIT */
/* calls.c: the table of calls (calls.h) as rows, its look-ups, and the
 * kernel's helper names for the calls rqbpf does not have. */
#include <string.h>

#include "calls.h"

#define ROW(kind, id, name, ret, role, under_lock, progs, a1, a2, a3, a4, a5)                      \
	{RQBPF_CALL_##kind,                                                                        \
	 id,                                                                                       \
	 "bpf_" #name,                                                                             \
	 RQBPF_RET_##ret,                                                                          \
	 RQBPF_ROLE_##role,                                                                        \
	 under_lock,                                                                               \
	 progs,                                                                                    \
	 (RQBPF_ARG_##a1 != RQBPF_ARG_NONE) + (RQBPF_ARG_##a2 != RQBPF_ARG_NONE) +                 \
	     (RQBPF_ARG_##a3 != RQBPF_ARG_NONE) + (RQBPF_ARG_##a4 != RQBPF_ARG_NONE) +             \
	     (RQBPF_ARG_##a5 != RQBPF_ARG_NONE),                                                   \
	 {RQBPF_ARG_##a1, RQBPF_ARG_##a2, RQBPF_ARG_##a3, RQBPF_ARG_##a4, RQBPF_ARG_##a5}},
static const struct rqbpf_call calls[] = {RQBPF_CALLS(ROW)};
#undef ROW

#define NCALLS (sizeof(calls) / sizeof(calls[0]))

const struct rqbpf_call *rqbpf_call_find(enum rqbpf_call_kind kind, int32_t id, size_t *index)
{
	for (size_t i = 0; i < NCALLS; i++)
		if (calls[i].kind == kind && calls[i].id == id) {
			if (index)
				*index = i;
			return &calls[i];
		}
	return NULL;
}

const struct rqbpf_call *rqbpf_call_at(size_t i)
{
	return i < NCALLS ? &calls[i] : NULL;
}

const struct rqbpf_call *rqbpf_call_by_name(enum rqbpf_call_kind kind, const char *name)
{
	for (size_t i = 0; i < NCALLS; i++)
		if (calls[i].kind == kind && !strcmp(calls[i].name, name))
			return &calls[i];
	return NULL;
}

const struct rqbpf_call *rqbpf_call_of_insn(const struct bpf_insn *in)
{
	if (in->src_reg == 0)
		return rqbpf_call_find(RQBPF_CALL_HELPER, in->imm, NULL);
	if (in->src_reg == BPF_PSEUDO_KFUNC_CALL)
		return rqbpf_call_find(RQBPF_CALL_KFUNC, in->imm, NULL);
	return NULL;
}

/* The kernel's helper names by id, as its verifier prints them
 * (func_id_name()): those of <linux/bpf.h>, then the two Linux 6.2 added
 * after Debian 12's header ends. The header's mapper puts the commas between
 * entries; the newer one (___BPF_FUNC_MAPPER, explicit ids) leaves them to
 * its FN. */
#ifdef ___BPF_FUNC_MAPPER
#define HELPER_NAME(x, ...) "bpf_" #x,
#else
#define HELPER_NAME(x) "bpf_" #x
#endif
static const char *const helper_names[] = {__BPF_FUNC_MAPPER(HELPER_NAME)};
#undef HELPER_NAME
static const char *const newer_helper_names[] = {"bpf_cgrp_storage_get", "bpf_cgrp_storage_delete"};
#define NEWER_HELPERS_FROM 210

const char *rqbpf_kernel_helper_name(int32_t id)
{
	size_t n = sizeof(helper_names) / sizeof(helper_names[0]);

	if (id >= 0 && (size_t)id < n)
		return helper_names[id];
	if (id >= NEWER_HELPERS_FROM &&
	    id - NEWER_HELPERS_FROM < (int32_t)(sizeof(newer_helper_names) / sizeof(char *)))
		return newer_helper_names[id - NEWER_HELPERS_FROM];
	return NULL;
}
