/* SPDX-License-Identifier: MIT */
/*
 * bpftest.h: shared fixture of the rqbpf tests, on top of tests/testutil.h:
 * the compiled test objects (RQBPF_PROGS names their directory; one object
 * per program source and compiler: NAME.clang14.bpf.o, NAME.clang19.bpf.o),
 * running a program with inputs in __sk_buff.cb, and a tiny ELF writer for
 * hand-assembled programs.
 */
#ifndef RQBPF_BPFTEST_H
#define RQBPF_BPFTEST_H

#include <elf.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <unistd.h>

#include "rqbpf.h"
#include "testutil.h"

static const char *const bt_compilers[] = {"clang14", "clang19", NULL};

/* Path of the object @p prog compiled by @p cc; false when it was not built. */
static inline bool bt_obj_path(char *buf, size_t n, const char *prog, const char *cc)
{
	const char *dir = getenv("RQBPF_PROGS");

	snprintf(buf, n, "%s/%s.%s.bpf.o", dir ? dir : "progs", prog, cc);
	return access(buf, R_OK) == 0;
}

static inline struct rqbpf_object *bt_open(const char *prog, const char *cc)
{
	struct rqbpf_error err;
	struct rqbpf_object *obj;
	char path[512];

	if (!bt_obj_path(path, sizeof(path), prog, cc))
		return NULL;
	if (rqbpf_object_open_file(path, &obj, &err))
		tu_fail(__FILE__, __LINE__, "open %s: %s", path, err.msg);
	return obj;
}

/* Open and load @p prog by @p cc (NULL when that compiler is absent). */
static inline struct rqbpf_object *bt_load(const char *prog, const char *cc, unsigned flags)
{
	struct rqbpf_object *obj = bt_open(prog, cc);
	struct rqbpf_error err;

	if (obj && rqbpf_object_load(obj, flags, &err))
		tu_fail(__FILE__, __LINE__, "load %s (%s): %s", prog, cc, err.msg);
	return obj;
}

static inline struct rqbpf_prog *bt_prog(struct rqbpf_object *obj, const char *name)
{
	struct rqbpf_prog *p = rqbpf_object_find_prog(obj, name);

	if (!p)
		tu_fail(__FILE__, __LINE__, "no program %s", name);
	return p;
}

/* Run @p name with cb[0..4] = @p cb; the run must succeed; returns R0. */
static inline uint64_t bt_run_cb(struct rqbpf_object *obj, const char *name, const uint32_t *cb)
{
	struct __sk_buff ctx;
	struct rqbpf_run_result res;
	int ret;

	memset(&ctx, 0, sizeof(ctx));
	if (cb)
		memcpy(ctx.cb, cb, sizeof(ctx.cb));
	ret = rqbpf_prog_run(bt_prog(obj, name), &ctx, sizeof(ctx), &res);
	if (ret)
		tu_fail(__FILE__, __LINE__, "run %s: %d %s", name, ret, res.msg);
	return res.retval;
}

static inline int64_t bt_run(struct rqbpf_object *obj, const char *name)
{
	return (int32_t)(uint32_t)bt_run_cb(obj, name, NULL);
}

/* Strings @p got and @p want are equal (got NULL fails). */
#define BT_CHECK_STREQ(got, want)                                                                  \
	do {                                                                                       \
		const char *bt_g_ = (got), *bt_w_ = (want);                                        \
		if (!bt_g_ || strcmp(bt_g_, bt_w_) != 0)                                           \
			tu_fail(__FILE__, __LINE__, "'%s' is not '%s'", bt_g_ ? bt_g_ : "(null)",  \
			        bt_w_);                                                            \
	} while (0)

#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* newer than Debian 12's <linux/bpf.h> */
#endif
#ifndef BPF_JMP32
#define BPF_JMP32 0x06
#endif

/* Hand-assembled instructions. */
#define BT_I(c, d, s, o, i)    ((struct bpf_insn){(c), (d), (s), (o), (i)})
#define BT_ALU64_IMM(op, d, i) BT_I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define BT_ALU64_REG(op, d, s) BT_I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define BT_MOV64_IMM(d, i)     BT_ALU64_IMM(BPF_MOV, d, i)
#define BT_LD_IMM64(d, v)                                                                          \
	BT_I(BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, (int32_t)(uint32_t)(v)),                          \
	    BT_I(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))
#define BT_LDX(sz, d, s, o) BT_I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define BT_STX(sz, d, s, o) BT_I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define BT_ST(sz, d, o, i)  BT_I(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define BT_CALL(id)         BT_I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define BT_EXIT             BT_I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* One function of a hand-built object: name and instructions. */
struct bt_func {
	const char *name;
	const struct bpf_insn *insns;
	size_t cnt;
};

/*
 * Write a relocatable BPF ELF with the functions @p f in one section
 * @p secname (each a global FUNC symbol): header, code, .symtab, .strtab
 * (section and symbol names), section headers. Returns the size (<= cap).
 */
static inline size_t bt_build_elf(uint8_t *out, size_t cap, const char *secname,
                                  const struct bt_func *f, size_t nf)
{
	char strtab[512] = "\0.symtab\0.strtab\0";
	size_t strsz = 17, code = 0, off, nsym = nf + 1;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)out;
	Elf64_Shdr sh[4];
	Elf64_Sym sym[16];
	size_t sec_name = strsz;

	CHECK(nf < 16);
	memcpy(strtab + strsz, secname, strlen(secname) + 1);
	strsz += strlen(secname) + 1;
	memset(sym, 0, sizeof(sym));
	memset(sh, 0, sizeof(sh));
	memset(out, 0, cap);
	off = sizeof(*eh);
	for (size_t i = 0; i < nf; i++) {
		sym[i + 1].st_name = (Elf64_Word)strsz;
		memcpy(strtab + strsz, f[i].name, strlen(f[i].name) + 1);
		strsz += strlen(f[i].name) + 1;
		sym[i + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym[i + 1].st_shndx = 1;
		sym[i + 1].st_value = code * sizeof(struct bpf_insn);
		sym[i + 1].st_size = f[i].cnt * sizeof(struct bpf_insn);
		CHECK(off + (code + f[i].cnt) * sizeof(struct bpf_insn) < cap);
		memcpy(out + off + code * sizeof(struct bpf_insn), f[i].insns,
		       f[i].cnt * sizeof(struct bpf_insn));
		code += f[i].cnt;
	}
	sh[1] = (Elf64_Shdr){.sh_name = (Elf64_Word)sec_name,
	                     .sh_type = SHT_PROGBITS,
	                     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
	                     .sh_offset = off,
	                     .sh_size = code * sizeof(struct bpf_insn),
	                     .sh_addralign = 8};
	off += code * sizeof(struct bpf_insn);
	sh[2] = (Elf64_Shdr){.sh_name = 1,
	                     .sh_type = SHT_SYMTAB,
	                     .sh_offset = off,
	                     .sh_size = nsym * sizeof(Elf64_Sym),
	                     .sh_link = 3,
	                     .sh_info = 1,
	                     .sh_addralign = 8,
	                     .sh_entsize = sizeof(Elf64_Sym)};
	CHECK(off + nsym * sizeof(Elf64_Sym) + strsz + sizeof(sh) < cap);
	memcpy(out + off, sym, nsym * sizeof(Elf64_Sym));
	off += nsym * sizeof(Elf64_Sym);
	sh[3] = (Elf64_Shdr){.sh_name = 9,
	                     .sh_type = SHT_STRTAB,
	                     .sh_offset = off,
	                     .sh_size = strsz,
	                     .sh_addralign = 1};
	memcpy(out + off, strtab, strsz);
	off = (off + strsz + 7) & ~(size_t)7;
	memcpy(out + off, sh, sizeof(sh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = 247; /* EM_BPF */
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 4;
	eh->e_shstrndx = 3;
	return off + sizeof(sh);
}

/* Open a hand-built object of one function "prog"; returns the open's result. */
static inline int bt_open_insns(const struct bpf_insn *insns, size_t cnt, struct rqbpf_object **obj,
                                struct rqbpf_error *err)
{
	static uint8_t img[65536];
	struct bt_func f = {"prog", insns, cnt};
	size_t n = bt_build_elf(img, sizeof(img), "tc", &f, 1);

	return rqbpf_object_open_mem(img, n, "hand", obj, err);
}

#endif /* RQBPF_BPFTEST_H */
