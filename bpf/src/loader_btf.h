/* SPDX-License-Identifier: MIT */
/* loader_btf.h: the loader's second step (loader_btf.c): BTF-defined maps
 * and their lock offsets, data-section maps, each map's kind (maps.h). */
#ifndef RQBPF_LOADER_BTF_H
#define RQBPF_LOADER_BTF_H

#include "object.h"

int rqbpf_btf_maps(struct rqbpf_object *obj, struct rqbpf_error *err);
/* What the object's BTF says of function @p name (linkage, arguments) into
 * @p d; nothing when the kernel would load the object without BTF. */
void rqbpf_btf_func(const struct rqbpf_object *obj, const char *name, struct rqbpf_func_desc *d);

/* A growing array of source lines. */
struct rqbpf_lines {
	struct rqbpf_line *v;
	size_t n, cap;
};
/* Appends to @p out the .BTF.ext line info of instructions [@p start,
 * @p start + @p cnt) of section @p sec, renumbered from @p pos of the
 * linked program; nothing when the kernel would load the object without
 * BTF, or the line info is malformed. -ENOMEM, else 0. */
int rqbpf_btf_lines(const struct rqbpf_object *obj, uint32_t sec, uint32_t start, uint32_t cnt,
                    uint32_t pos, struct rqbpf_lines *out);

#endif /* RQBPF_LOADER_BTF_H */
