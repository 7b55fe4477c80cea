/* SPDX-License-Identifier: MIT */
/*
 * cli_btf.h: map keys and values printed with their BTF types, as
 * `bpftool map dump` does: struct and union members by name, enums by
 * name, integers in decimal, as JSON (-j) or as a C initializer. The types
 * come from libbpf's reading of the object's .BTF section.
 */
#ifndef RQBPF_CLI_BTF_H
#define RQBPF_CLI_BTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cli_btf;

/* The object's BTF, or NULL where it has none libbpf can read. */
struct cli_btf *cli_btf_open(const char *path);
void cli_btf_close(struct cli_btf *b);
/* The BTF type ids of map @map's key and value, each 0 where it has none
 * of exactly @key_size / @value_size bytes. */
void cli_btf_map_types(const struct cli_btf *b, const char *map, size_t key_size, size_t value_size,
                       uint32_t *key_id, uint32_t *value_id);
/* @data, of type @id and @size bytes, on @f: JSON when @json, else a C
 * initializer ({.a = 1, .b = {2, 3}}). Returns 0, or -1 (nothing written)
 * when the type is not one it can print. */
int cli_btf_print(const struct cli_btf *b, uint32_t id, const void *data, size_t size, bool json,
                  FILE *f);

#endif
