/* SPDX-License-Identifier: MIT */
/* loader_btf.h: the loader's second step (loader_btf.c): BTF-defined maps
 * and their lock offsets, data-section maps, each map's kind (maps.h). */
#ifndef RQBPF_LOADER_BTF_H
#define RQBPF_LOADER_BTF_H

#include "object.h"

int rqbpf_btf_maps(struct rqbpf_object *obj, struct rqbpf_error *err);

#endif /* RQBPF_LOADER_BTF_H */
