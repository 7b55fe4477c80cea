/* SPDX-License-Identifier: MIT */
/* object.h: rqbpf's object, program and map structures (what object.c
 * opens, loads and closes), shared by the loader (loader_elf.c,
 * loader_btf.c, loader_link.c: the steps of object.c's open), the maps
 * (maps.h), the runtime (runtime.h) and the public API (object.c). */
#ifndef RQBPF_OBJECT_H
#define RQBPF_OBJECT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "rqmap.h"
#include "calls.h"
#include "isa.h"
#include "prog.h"
#include "prog_types.h"

struct btf;
struct rqbpf_map_ops;

/* Instructions one run may execute before it is stopped (-E2BIG). The
 * loader's fuzz target builds with a smaller limit so that a mutated
 * program's long loop stays within libFuzzer's per-input timeout. */
#ifndef RQBPF_INSN_LIMIT
#define RQBPF_INSN_LIMIT (1ull << 30)
#endif

/* A readable (and maybe writable) byte range a program may access. */
struct rqbpf_region {
	uintptr_t base;
	size_t size;
	bool writable;
};

/* A map at run time. The BPF program sees its address (ld_imm64 of a map). */
struct rqbpf_map {
	struct rqbpf_map_desc desc; /* desc.name points into name[] */
	char name[64];
	struct rqbpf_object *obj;
	const struct rqbpf_map_ops *ops; /* its kind (maps.h), NULL for a type rqbpf lacks */
	void *kind;                      /* the kind's state, once created (at load) */
	/* Every value, for a kind that keeps them in one region (arrays): the
	 * accesses after a lookup may use any of them. Size 0 otherwise. */
	struct rqbpf_region all_values;
	uint32_t sec_idx;   /* data maps: the ELF section */
	uint32_t btf_value; /* BTF maps: the value type id, 0 if unknown */
	uint32_t map_flags; /* BTF maps: map_flags (BPF_F_*) */
	/* A map of maps: the BTF id of its inner map's definition
	 * (__array(values, struct inner)), 0 if none; the offset in .maps of
	 * values[0], whose relocations name its initial inner maps. */
	uint32_t inner_def;
	uint64_t values_off;
	/* Why rqbpf cannot create this map ("map devs: map type devmap (14)
	 * is not supported"), empty when it can: a program that uses it
	 * is refused with this message (its link error); the object's other
	 * programs open, load and run, and the map is never created. */
	char unsupported[128];
};

/* One piece of ELF code: a function symbol in an executable section. */
struct rqbpf_func {
	const char *name;
	uint32_t sec_idx;
	uint32_t start; /* instruction index in the section */
	uint32_t cnt;
};

struct rqbpf_run;
/* A helper or kfunc: reads its arguments from reg[1..5], sets reg[0];
 * returns 0, or a fault (< 0). */
typedef int (*rqbpf_call_fn)(struct rqbpf_run *r, uint64_t *reg);

/* A decoded instruction: its handler in the interpreter, the fields unpacked,
 * and for helper and kfunc calls the function. */
struct rqbpf_op {
	const void *handler;
	rqbpf_call_fn fn;
	uint8_t code, dst, src;
	int16_t off;
	int32_t imm;
};

struct rqbpf_prog {
	struct rqbpf_linked_prog lp; /* insns: linked (post-link encoding) */
	struct rqbpf_object *obj;
	const struct rqbpf_func *func;
	uint64_t *imm64;      /* per insn: resolved ld_imm64 values (after load) */
	struct rqbpf_op *ops; /* decoded instructions (after load) */
	/* Why the program could not be linked (link_ret < 0): the program's own
	 * error, returned when it is loaded or verified, so that the object's
	 * other programs still open, load and run (as libbpf reports such a
	 * program only when it loads it). */
	int link_ret;
	struct rqbpf_error link_err;
	/* link_ret is only that the program uses a map rqbpf cannot create
	 * (rqbpf_map.unsupported): it is linked in full, and the verifier
	 * gives its verdict on it, but it does not load. */
	bool verifiable;
	bool autoload;
	bool loaded;
};

/* An ELF section the loader keeps. */
struct rqbpf_sec {
	const char *name;
	uint32_t type;       /* SHT_* */
	uint64_t flags;      /* SHF_* */
	const uint8_t *data; /* NULL for SHT_NOBITS */
	size_t size;
	/* For executable sections: its relocation table (SHT_REL), if any. */
	void *rel; /* Elf_Data * */
	size_t rel_cnt;
};

struct rqbpf_sym {
	const char *name;
	uint64_t value;
	uint64_t size;
	uint32_t shndx;
	uint8_t type; /* STT_* */
	uint8_t bind; /* STB_* */
};

struct rqbpf_object {
	char name[64];
	uint8_t *image; /* the ELF file, owned */
	size_t image_size;
	void *elf; /* Elf * over image */
	struct rqbpf_sec *secs;
	size_t sec_cnt;
	struct rqbpf_sym *syms;
	size_t sym_cnt;
	struct rqbpf_func *funcs;
	size_t func_cnt;
	struct btf *btf;
	bool btf_ok;  /* the kernel would take this BTF (else libbpf loads without it) */
	int maps_sec; /* index of ".maps", or -1 */
	struct rqbpf_map *maps;
	size_t map_cnt;
	/* Inner map templates of the maps of maps (their desc.inner_map):
	 * maps[map_cnt .. map_cnt + tmpl_cnt), never created. */
	size_t tmpl_cnt;
	struct rqbpf_map_desc *descs; /* maps[i].desc, contiguous for prog.h */
	struct rqbpf_prog *progs;
	size_t prog_cnt;
	bool loaded;
};

/* The linked form of @p prog, for the verifier and tests. */
const struct rqbpf_linked_prog *rqbpf_prog_linked(const struct rqbpf_prog *prog);

#endif /* RQBPF_OBJECT_H */
