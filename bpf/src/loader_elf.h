/* SPDX-License-Identifier: MIT */
/* loader_elf.h: the loader's first step (loader_elf.c): sections, symbols,
 * relocation tables, functions of the object's ELF image. */
#ifndef RQBPF_LOADER_ELF_H
#define RQBPF_LOADER_ELF_H

#include "object.h"

int rqbpf_elf_parse(struct rqbpf_object *obj, struct rqbpf_error *err);

#endif /* RQBPF_LOADER_ELF_H */
