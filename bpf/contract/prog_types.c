/* SPDX-License-Identifier: MIT */
/* prog_types.c: the table of program types (prog_types.h) as rows. */
#include <stddef.h>

#include "prog_types.h"

#define ROW(type, ctx)                                                                             \
	{type, sizeof(ctx), offsetof(ctx, data), offsetof(ctx, data_end), offsetof(ctx, data_meta)},
static const struct rqbpf_prog_type types[] = {RQBPF_PROG_TYPES(ROW)};
#undef ROW

const struct rqbpf_prog_type *rqbpf_prog_type_find(uint32_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return &types[i];
	return NULL;
}
