/* SPDX-License-Identifier: MIT */
/*
 * prog.h: a linked BPF program, as the loader hands it to the verifier and
 * to the interpreter, and the limits all three share (Floor 0,
 * docs/HACKING.md "bpf/"). This is the contract between the loader
 * (bpf/src/loader_link.c, which produces it), the verifier (bpf/verifier/) and the
 * runtime (bpf/src/interp.c, which consume it). Nothing here refers to the
 * kernel's BPF syscall.
 *
 * Instruction encoding after linking (the kernel's conventions, so that the
 * same array could be handed to BPF_PROG_LOAD after replacing map indices by
 * file descriptors):
 *  - ld_imm64 of a map:        src_reg = BPF_PSEUDO_MAP_FD,    imm = map index
 *    (index into rqbpf_linked_prog.maps), second half imm = 0;
 *  - ld_imm64 of global data:  src_reg = BPF_PSEUDO_MAP_VALUE, imm = map index,
 *    second half imm = byte offset of the symbol in the section;
 *  - helper call:              src_reg = 0, imm = BPF_FUNC_* id;
 *  - kfunc call:               src_reg = BPF_PSEUDO_KFUNC_CALL,
 *                              imm = enum rqbpf_kfunc_id (calls.h);
 *  - bpf-to-bpf call:          src_reg = BPF_PSEUDO_CALL, imm = relative
 *    target (target = pc + imm + 1). Subprograms from .text that the program
 *    calls are appended after the main program's instructions, as libbpf does.
 */
#ifndef RQBPF_PROG_H
#define RQBPF_PROG_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calls.h"

/* Call frames (the kernel's MAX_CALL_FRAMES) and stack bytes per frame. */
#define RQBPF_MAX_FRAMES 8
#define RQBPF_STACK_SIZE 512
/* Locks and irq regions one path (verifier) or run (runtime) may hold at once. */
#define RQBPF_MAX_HELD 128

/* One map of the object: a BTF-defined map, or a global-data section
 * (.data, .rodata, .bss, .data.*) as a one-element array map. */
struct rqbpf_map_desc {
	const char *name; /* libbpf's name: "counters", or "prog_na.bss" */
	uint32_t type;    /* BPF_MAP_TYPE_*: the kinds of bpf/src/maps.c load; a program
	                   * that uses a map of any other type is refused at link */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	int32_t res_lock_off;  /* offset of struct bpf_res_spin_lock in the value, -1 if none */
	int32_t spin_lock_off; /* offset of struct bpf_spin_lock in the value, -1 if none */
	bool global_data;      /* a data section, not a BTF map */
	bool read_only;        /* .rodata */
	bool no_btf;           /* as the kernel would have it, without BTF: no usable lock */
	bool indexed;          /* keys are u32 indices below max_entries, each present (arrays):
	                        * a lookup of a constant one cannot fail. From the map's kind. */
	/* A map of maps (ARRAY_OF_MAPS, HASH_OF_MAPS): the index in maps of its
	 * inner map template (the kernel's inner_map_meta: a desc past the
	 * object's maps, never created), which a looked-up inner map has;
	 * 0 for other maps (a template comes after its outer map, never first). */
	uint32_t inner_map;
};

/* A global function's argument, from its BTF prototype. */
enum rqbpf_func_arg {
	RQBPF_FARG_SCALAR, /* an integer or enum: any scalar */
	RQBPF_FARG_PTR,    /* a pointer: to the context (ptr_struct names the type's context
	                    * struct), else to ptr_size bytes (ptr_size < 0: size unknown) */
	RQBPF_FARG_OTHER,  /* anything else (a struct by value, ...) */
};

/* A function of the program: the main program first (start 0), then each
 * subprogram where the loader appended it. */
struct rqbpf_func_desc {
	const char *name;
	uint32_t start; /* its first instruction */
	bool global;    /* BTF linkage global: the kernel verifies it on its own, from its
	                 * prototype, after the main program (needs the object's BTF) */
	uint8_t nargs;
	struct {
		uint8_t kind;           /* enum rqbpf_func_arg */
		int64_t ptr_size;       /* RQBPF_FARG_PTR: bytes of the pointee, or < 0 */
		const char *ptr_struct; /* RQBPF_FARG_PTR to a struct: its name, else NULL */
	} args[5];
};

/* A source line, from the object's .BTF.ext line info: it starts at
 * instruction insn of the linked program and lasts until the next one. */
struct rqbpf_line {
	uint32_t insn;
	uint32_t line;    /* line number in file */
	const char *file; /* the source file, as the compiler named it */
	const char *src;  /* the line's text */
};

/* One program, linked and ready to verify or run. Owned by the loader. */
struct rqbpf_linked_prog {
	const char *name;             /* the function's name */
	const char *section;          /* "tc", "?tc", "syscall", ... */
	uint32_t prog_type;           /* enum bpf_prog_type from the section */
	uint32_t attach_type;         /* enum bpf_attach_type libbpf expects from the section */
	const struct bpf_insn *insns; /* main program, then its subprograms */
	size_t insn_cnt;
	const struct rqbpf_map_desc *maps; /* all maps of the object, then inner map templates */
	size_t map_cnt;
	uint32_t ctx_size;                   /* size of the context buffer a run gets */
	const struct rqbpf_func_desc *funcs; /* its functions, by start; NULL: none known */
	size_t func_cnt;
	const struct rqbpf_line *lines; /* by insn; NULL: no line info */
	size_t line_cnt;
};

#endif /* RQBPF_PROG_H */
