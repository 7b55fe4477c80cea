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

#endif /* RQBPF_LOADER_BTF_H */
