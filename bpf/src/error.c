/* SPDX-License-Identifier: MIT */
/* error.c: the error formatter every floor of bpf/src/ reports through. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

int rqbpf_fail(struct rqbpf_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}
