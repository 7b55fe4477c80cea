/* SPDX-License-Identifier: MIT */
/* error.h: bpf/src/'s lowest floor (Floor 2, docs/HACKING.md "bpf/"):
 * formatting an error into the caller's struct rqbpf_error, as libbpf's
 * libbpf_internal.h does for libbpf. Every file of bpf/src/ may call it; it
 * calls nothing of theirs. */
#ifndef RQBPF_ERROR_H
#define RQBPF_ERROR_H

#include "../include/rqbpf.h"

/* Format into @p err (NULL allowed); returns @p code. */
int rqbpf_fail(struct rqbpf_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* RQBPF_ERROR_H */
