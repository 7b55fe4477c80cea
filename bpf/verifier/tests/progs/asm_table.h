/* SPDX-License-Identifier: MIT */
/*
 * asm_table.h: the map and the asm pieces of the verifier programs written
 * in asm (verifier_bounds, verifier_linked): a lookup of tables[0] into R8
 * and a byte load at offset R1 of its value.
 */
#ifndef ASM_TABLE_H
#define ASM_TABLE_H

#include "common.h"

struct table {
	__u64 slot[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct table);
} tables SEC(".maps");

/* R8 = &tables[0], R6 = ctx; a null lookup goes to label 1 (return 0). */
#define LOOKUP_R8                                                                                  \
	"r6 = r1;"                                                                                 \
	"r1 = 0;"                                                                                  \
	"*(u32 *)(r10 - 4) = r1;"                                                                  \
	"r2 = r10;"                                                                                \
	"r2 += -4;"                                                                                \
	"r1 = %[tables] ll;"                                                                       \
	"call %[lookup];"                                                                          \
	"if r0 == 0 goto 1f;"                                                                      \
	"r8 = r0;"
/* A byte of the 64-byte value at offset R1. */
#define LOAD_AT_R1                                                                                 \
	"r8 += r1;"                                                                                \
	"r0 = *(u8 *)(r8 + 0);"                                                                    \
	"exit;"                                                                                    \
	"1: r0 = 0;"                                                                               \
	"exit;"
#define LOOKUP_ARGS [tables] "i"(&tables), [lookup] "i"(bpf_map_lookup_elem)

#endif
