/* SPDX-License-Identifier: MIT */
/* loader_link.h: the loader's last step (loader_link.c): link every program;
 * a program's own link error stays with it (rqbpf_prog.link_ret), only
 * running out of memory fails the call. */
#ifndef RQBPF_LOADER_LINK_H
#define RQBPF_LOADER_LINK_H

#include "object.h"

int rqbpf_link_progs(struct rqbpf_object *obj, struct rqbpf_error *err);

#endif /* RQBPF_LOADER_LINK_H */
