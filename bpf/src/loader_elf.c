/* SPDX-License-Identifier: MIT */
/* loader_elf.c: read an eBPF relocatable object with libelf: its sections,
 * symbol table, relocation tables and function symbols. Nothing is trusted:
 * every offset and size is checked against the section it points into. */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "loader_elf.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

static int check_header(Elf *elf, struct rqbpf_error *err)
{
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return rqbpf_fail(err, -EINVAL, "not an ELF file (%s)", elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return rqbpf_fail(err, -EINVAL, "not a 64-bit little-endian ELF file");
	if (eh.e_machine != EM_BPF)
		return rqbpf_fail(err, -EINVAL, "ELF machine %u is not BPF (%u)", eh.e_machine,
		                  EM_BPF);
	if (eh.e_type != ET_REL)
		return rqbpf_fail(err, -EINVAL, "not a relocatable object (ELF type %u)",
		                  eh.e_type);
	return 0;
}

static int read_section(struct rqbpf_object *obj, Elf_Scn *scn, size_t shstrndx, size_t i,
                        struct rqbpf_error *err)
{
	struct rqbpf_sec *s = &obj->secs[i];
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(scn, &sh))
		return rqbpf_fail(err, -EINVAL, "section %zu: bad header (%s)", i, elf_errmsg(-1));
	s->name = elf_strptr(obj->elf, shstrndx, sh.sh_name);
	if (!s->name)
		return rqbpf_fail(err, -EINVAL, "section %zu: bad name", i);
	s->type = sh.sh_type;
	s->flags = sh.sh_flags;
	s->size = sh.sh_size;
	if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d || (d->d_size && !d->d_buf) || d->d_size != sh.sh_size)
		return rqbpf_fail(err, -EINVAL, "section %s: truncated or unreadable (%s)", s->name,
		                  elf_errmsg(-1));
	s->data = d->d_buf;
	return 0;
}

static int read_sections(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	size_t n, shstrndx;
	Elf_Scn *scn = NULL;
	int ret;

	if (elf_getshdrnum(obj->elf, &n) || elf_getshdrstrndx(obj->elf, &shstrndx))
		return rqbpf_fail(err, -EINVAL, "bad section table (%s)", elf_errmsg(-1));
	obj->secs = calloc(n ? n : 1, sizeof(*obj->secs));
	if (!obj->secs)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	obj->sec_cnt = n;
	obj->secs[0].name = "";
	while ((scn = elf_nextscn(obj->elf, scn))) {
		size_t i = elf_ndxscn(scn);

		if (i == 0 || i >= n)
			return rqbpf_fail(err, -EINVAL, "bad section index %zu", i);
		ret = read_section(obj, scn, shstrndx, i, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int read_symbols(struct rqbpf_object *obj, Elf_Scn *scn, const GElf_Shdr *sh,
                        struct rqbpf_error *err)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (obj->syms)
		return rqbpf_fail(err, -EINVAL, "more than one symbol table");
	if (!d || sh->sh_entsize != sizeof(Elf64_Sym) || d->d_size % sizeof(Elf64_Sym))
		return rqbpf_fail(err, -EINVAL, "bad symbol table (%s)", elf_errmsg(-1));
	n = d->d_size / sizeof(Elf64_Sym);
	obj->syms = calloc(n ? n : 1, sizeof(*obj->syms));
	if (!obj->syms)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	obj->sym_cnt = n;
	for (i = 0; i < n; i++) {
		struct rqbpf_sym *s = &obj->syms[i];
		GElf_Sym sym;

		if (!gelf_getsym(d, (int)i, &sym))
			return rqbpf_fail(err, -EINVAL, "bad symbol %zu", i);
		s->name = elf_strptr(obj->elf, sh->sh_link, sym.st_name);
		if (!s->name)
			s->name = "";
		s->value = sym.st_value;
		s->size = sym.st_size;
		s->shndx = sym.st_shndx;
		s->type = GELF_ST_TYPE(sym.st_info);
		s->bind = GELF_ST_BIND(sym.st_info);
		if (s->shndx >= obj->sec_cnt && s->shndx < SHN_LORESERVE)
			return rqbpf_fail(err, -EINVAL, "symbol %s: bad section index %u", s->name,
			                  s->shndx);
	}
	return 0;
}

static bool is_code(const struct rqbpf_sec *s)
{
	return s->type == SHT_PROGBITS && (s->flags & SHF_EXECINSTR);
}

static int read_relocations(struct rqbpf_object *obj, Elf_Scn *scn, const GElf_Shdr *sh,
                            struct rqbpf_error *err)
{
	struct rqbpf_sec *target;
	Elf_Data *d;

	if (sh->sh_info >= obj->sec_cnt)
		return rqbpf_fail(err, -EINVAL, "relocation section for bad section %u",
		                  (unsigned)sh->sh_info);
	target = &obj->secs[sh->sh_info];
	if (!is_code(target) && strcmp(target->name, ".maps") != 0)
		return 0; /* debug info, BTF: not needed to run (.maps: a map of maps' values) */
	if (sh->sh_type == SHT_RELA)
		return rqbpf_fail(err, -ENOTSUP, "section %s: RELA relocations are not supported",
		                  target->name);
	d = elf_getdata(scn, NULL);
	if (!d || sh->sh_entsize != sizeof(Elf64_Rel) || d->d_size % sizeof(Elf64_Rel))
		return rqbpf_fail(err, -EINVAL, "section %s: bad relocation table", target->name);
	if (target->rel)
		return rqbpf_fail(err, -EINVAL, "section %s: two relocation tables", target->name);
	target->rel = d;
	target->rel_cnt = d->d_size / sizeof(Elf64_Rel);
	return 0;
}

static int read_tables(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	Elf_Scn *scn = NULL;
	int ret = 0;

	while (!ret && (scn = elf_nextscn(obj->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return rqbpf_fail(err, -EINVAL, "bad section header");
		if (sh.sh_type == SHT_SYMTAB)
			ret = read_symbols(obj, scn, &sh, err);
	}
	if (ret)
		return ret;
	if (!obj->syms)
		return rqbpf_fail(err, -EINVAL, "missing section .symtab");
	while (!ret && (scn = elf_nextscn(obj->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return rqbpf_fail(err, -EINVAL, "bad section header");
		if (sh.sh_type == SHT_REL || sh.sh_type == SHT_RELA)
			ret = read_relocations(obj, scn, &sh, err);
	}
	return ret;
}

/* A function symbol in an executable section: a program or a subprogram. */
static int add_func(struct rqbpf_object *obj, const struct rqbpf_sym *s, struct rqbpf_error *err)
{
	const struct rqbpf_sec *sec = &obj->secs[s->shndx];
	const uint64_t insn_sz = sizeof(struct bpf_insn);
	struct rqbpf_func *f = &obj->funcs[obj->func_cnt];

	if (!sec->data || s->value % insn_sz || s->size % insn_sz || s->size == 0 ||
	    s->value > sec->size || s->size > sec->size - s->value)
		return rqbpf_fail(
		    err, -EINVAL, "function %s: bad offset %llu or size %llu in section %s",
		    s->name, (unsigned long long)s->value, (unsigned long long)s->size, sec->name);
	f->name = s->name;
	f->sec_idx = s->shndx;
	f->start = (uint32_t)(s->value / insn_sz);
	f->cnt = (uint32_t)(s->size / insn_sz);
	obj->func_cnt++;
	return 0;
}

static int find_funcs(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	int ret = 0;

	obj->funcs = calloc(obj->sym_cnt ? obj->sym_cnt : 1, sizeof(*obj->funcs));
	if (!obj->funcs)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	for (size_t i = 0; !ret && i < obj->sym_cnt; i++) {
		const struct rqbpf_sym *s = &obj->syms[i];

		if (s->type == STT_FUNC && s->shndx != SHN_UNDEF && s->shndx < obj->sec_cnt &&
		    is_code(&obj->secs[s->shndx]))
			ret = add_func(obj, s, err);
	}
	return ret;
}

int rqbpf_elf_parse(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return rqbpf_fail(err, -EINVAL, "libelf: %s", elf_errmsg(-1));
	obj->elf = elf_memory((char *)obj->image, obj->image_size);
	if (!obj->elf)
		return rqbpf_fail(err, -EINVAL, "not an ELF file (%s)", elf_errmsg(-1));
	ret = check_header(obj->elf, err);
	if (!ret)
		ret = read_sections(obj, err);
	if (!ret)
		ret = read_tables(obj, err);
	if (!ret)
		ret = find_funcs(obj, err);
	return ret;
}
