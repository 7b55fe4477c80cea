/* SPDX-License-Identifier: MIT */
/* loader_link.c: link each program of the object into one instruction array
 * (the encoding prog.h describes): map and global-data relocations, kfuncs
 * bound by name and helper ids checked against the table of calls (calls.h),
 * and the .text subprograms it calls appended after it, as libbpf does.
 * Anything unsupported is an error naming the instruction and what, kept as
 * that program's error (the load names the program). */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_btf.h"
#include "loader_link.h"

#ifndef R_BPF_64_64
#define R_BPF_64_64 1
#endif
#ifndef R_BPF_64_32
#define R_BPF_64_32 10
#endif

#define LD_IMM64 (BPF_LD | BPF_IMM | BPF_DW)
#define CALL     (BPF_JMP | BPF_CALL)

/* A function copied into the program: section, start, length, position. */
struct piece {
	uint32_t sec, start, cnt, pos;
};

struct linker {
	struct rqbpf_object *obj;
	struct rqbpf_prog *prog;
	struct bpf_insn *insns;
	uint8_t *relocated; /* per insn: set by a relocation */
	size_t cnt, cap, rcap;
	struct piece *pieces;
	size_t npieces, piece_cap;
	struct rqbpf_error *err;
	/* The first ld_imm64 of a map rqbpf cannot create, and that map: the
	 * program links (and verifies) but does not load. -1: none. */
	int64_t unsupported_at;
	int unsupported_map;
};

static int link_fail(struct linker *l, size_t insn, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int link_fail(struct linker *l, size_t insn, int code, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return rqbpf_fail(l->err, code, "insn %zu: %s", insn, what);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Append function @p f; returns its position in the program, or < 0. */
static int64_t append_func(struct linker *l, const struct rqbpf_func *f)
{
	const struct rqbpf_sec *s = &l->obj->secs[f->sec_idx];
	struct piece *p;

	for (size_t i = 0; i < l->npieces; i++)
		if (l->pieces[i].sec == f->sec_idx && l->pieces[i].start == f->start)
			return l->pieces[i].pos;
	if (!s->data)
		return link_fail(l, l->cnt, -EINVAL, "section %s has no data", s->name);
	if (l->cnt + f->cnt > (1u << 20))
		return link_fail(l, l->cnt, -E2BIG, "program too large");
	if (grow((void **)&l->insns, &l->cap, l->cnt + f->cnt, sizeof(*l->insns)) ||
	    grow((void **)&l->relocated, &l->rcap, l->cnt + f->cnt, 1) ||
	    grow((void **)&l->pieces, &l->piece_cap, l->npieces + 1, sizeof(*l->pieces)) ||
	    !l->insns || !l->relocated || !l->pieces)
		return rqbpf_fail(l->err, -ENOMEM, "out of memory");
	memcpy(&l->insns[l->cnt], s->data + (size_t)f->start * sizeof(struct bpf_insn),
	       (size_t)f->cnt * sizeof(struct bpf_insn));
	memset(&l->relocated[l->cnt], 0, f->cnt);
	p = &l->pieces[l->npieces++];
	*p = (struct piece){f->sec_idx, f->start, f->cnt, (uint32_t)l->cnt};
	l->cnt += f->cnt;
	return p->pos;
}

static const struct rqbpf_func *func_at(const struct rqbpf_object *obj, uint32_t sec, int64_t idx)
{
	for (size_t i = 0; i < obj->func_cnt; i++)
		if (obj->funcs[i].sec_idx == sec && obj->funcs[i].start == idx)
			return &obj->funcs[i];
	return NULL;
}

/* A bpf-to-bpf call at @p at to instruction @p idx of section @p sec. */
static int link_call(struct linker *l, size_t at, uint32_t sec, int64_t idx)
{
	const struct rqbpf_func *f = func_at(l->obj, sec, idx);
	int64_t pos;

	if (!f)
		return link_fail(l, at, -EINVAL,
		                 "call to instruction %lld of section %s, not a function",
		                 (long long)idx, l->obj->secs[sec].name);
	pos = append_func(l, f);
	if (pos < 0)
		return (int)pos;
	l->insns[at].src_reg = BPF_PSEUDO_CALL;
	l->insns[at].imm = (int32_t)(pos - (int64_t)at - 1);
	return 0;
}

static int map_of_symbol(const struct rqbpf_object *obj, const struct rqbpf_sym *sym)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct rqbpf_map *m = &obj->maps[i];

		if (m->desc.global_data
		        ? m->sec_idx == sym->shndx
		        : ((int)sym->shndx == obj->maps_sec && !strcmp(m->name, sym->name)))
			return (int)i;
	}
	return -1;
}

/* ld_imm64 of code: the address of a function (BPF_PSEUDO_FUNC), which
 * bpf_loop and the other callback helpers take. Named by its symbol, or by
 * the function at the section symbol's value plus the byte offset in imm;
 * appended as a called function is, imm its offset as a call's. */
static int link_func(struct linker *l, size_t at, const struct rqbpf_sym *sym)
{
	int64_t byte = (int64_t)sym->value + l->insns[at].imm;
	const struct rqbpf_func *f =
	    byte % (int64_t)sizeof(struct bpf_insn)
	        ? NULL
	        : func_at(l->obj, sym->shndx, byte / (int64_t)sizeof(struct bpf_insn));
	int64_t pos;

	if (!f)
		return link_fail(l, at, -EINVAL,
		                 "ld_imm64 of byte %lld of section %s, not a function",
		                 (long long)byte, l->obj->secs[sym->shndx].name);
	pos = append_func(l, f);
	if (pos < 0)
		return (int)pos;
	l->insns[at].src_reg = BPF_PSEUDO_FUNC;
	l->insns[at].imm = (int32_t)(pos - (int64_t)at - 1);
	l->insns[at + 1].imm = 0;
	return 0;
}

static int reloc_ld_imm64(struct linker *l, size_t at, const struct rqbpf_sym *sym)
{
	struct bpf_insn *insn = &l->insns[at];
	int map = sym->shndx != SHN_UNDEF ? map_of_symbol(l->obj, sym) : -1;
	int64_t off;

	if (sym->shndx == SHN_UNDEF)
		return link_fail(l, at, -ENOTSUP, "extern variable '%s' is not supported",
		                 sym->name);
	if (map < 0 && sym->shndx < l->obj->sec_cnt &&
	    (l->obj->secs[sym->shndx].flags & SHF_EXECINSTR))
		return link_func(l, at, sym);
	if (map < 0)
		return link_fail(l, at, -ENOTSUP, "ld_imm64 of '%s' in section %s is not supported",
		                 sym->name[0] ? sym->name : "?",
		                 sym->shndx < l->obj->sec_cnt ? l->obj->secs[sym->shndx].name
		                                              : "(reserved index)");
	if (l->obj->maps[map].unsupported[0] && l->unsupported_at < 0) {
		l->unsupported_at = (int64_t)at;
		l->unsupported_map = map;
	}
	if (!l->obj->maps[map].desc.global_data) {
		insn[0].src_reg = BPF_PSEUDO_MAP_FD;
		insn[0].imm = map;
		insn[1].imm = 0;
		return 0;
	}
	off = (int64_t)sym->value + insn[0].imm;
	if (off < 0 || off >= (int64_t)l->obj->maps[map].desc.value_size)
		return link_fail(l, at, -EINVAL, "offset %lld outside section %s", (long long)off,
		                 l->obj->secs[sym->shndx].name);
	insn[0].src_reg = BPF_PSEUDO_MAP_VALUE;
	insn[0].imm = map;
	insn[1].imm = (int32_t)off;
	return 0;
}

static int reloc_call(struct linker *l, size_t at, const struct rqbpf_sym *sym)
{
	struct bpf_insn *insn = &l->insns[at];
	const struct rqbpf_call *kf;

	if (sym->shndx == SHN_UNDEF) {
		/* libbpf resolves an extern by its BTF: a kfunc only inline asm calls
		 * has none, and libbpf refuses the object. */
		if (!l->obj->btf ||
		    btf__find_by_name_kind(l->obj->btf, sym->name, BTF_KIND_FUNC) < 0)
			return link_fail(l, at, -ESRCH, "failed to find BTF for extern '%s'",
			                 sym->name);
		kf = rqbpf_call_by_name(RQBPF_CALL_KFUNC, sym->name);
		if (!kf)
			return link_fail(l, at, -ENOTSUP, "unknown kfunc '%s'", sym->name);
		insn->src_reg = BPF_PSEUDO_KFUNC_CALL;
		insn->imm = kf->id;
		return 0;
	}
	if (insn->src_reg != BPF_PSEUDO_CALL || sym->shndx >= l->obj->sec_cnt)
		return link_fail(l, at, -EINVAL, "bad call relocation against '%s'", sym->name);
	return link_call(l, at, sym->shndx,
	                 (int64_t)(sym->value / sizeof(struct bpf_insn)) + insn->imm + 1);
}

static int apply_reloc(struct linker *l, size_t at, const GElf_Rel *r)
{
	size_t symi = GELF_R_SYM(r->r_info);
	const struct rqbpf_sym *sym;
	const struct bpf_insn *insn = &l->insns[at];

	if (symi == 0 || symi >= l->obj->sym_cnt)
		return link_fail(l, at, -EINVAL, "relocation with bad symbol index %zu", symi);
	sym = &l->obj->syms[symi];
	l->relocated[at] = 1;
	if (insn->code == LD_IMM64 && GELF_R_TYPE(r->r_info) == R_BPF_64_64) {
		if (at + 1 >= l->cnt)
			return link_fail(l, at, -EINVAL, "ld_imm64 without its second half");
		return reloc_ld_imm64(l, at, sym);
	}
	if (insn->code == CALL && GELF_R_TYPE(r->r_info) == R_BPF_64_32)
		return reloc_call(l, at, sym);
	return link_fail(l, at, -EINVAL, "bad relocation (type %u against '%s', opcode 0x%02x)",
	                 (unsigned)GELF_R_TYPE(r->r_info), sym->name, insn->code);
}

static int reloc_piece(struct linker *l, const struct piece *p)
{
	const struct rqbpf_sec *s = &l->obj->secs[p->sec];

	for (size_t i = 0; i < s->rel_cnt; i++) {
		GElf_Rel r;
		uint64_t idx;
		int ret;

		if (!gelf_getrel(s->rel, (int)i, &r))
			return rqbpf_fail(l->err, -EINVAL, "section %s: bad relocation %zu",
			                  s->name, i);
		if (r.r_offset % sizeof(struct bpf_insn))
			return rqbpf_fail(l->err, -EINVAL,
			                  "section %s: misaligned relocation offset %llu", s->name,
			                  (unsigned long long)r.r_offset);
		idx = r.r_offset / sizeof(struct bpf_insn);
		if (idx < p->start || idx >= (uint64_t)p->start + p->cnt)
			continue;
		ret = apply_reloc(l, p->pos + (idx - p->start), &r);
		if (ret)
			return ret;
	}
	return 0;
}

/* Why rqbpf lacks helper @p id, where a reason helps ("" elsewhere). */
static const char *unsupported_why(int32_t id)
{
	switch (id) {
	case BPF_FUNC_trace_vprintk:
		return " (bpf_printk with more than 3 arguments)";
	case BPF_FUNC_probe_read:
	case BPF_FUNC_probe_read_str:
	case BPF_FUNC_probe_read_kernel:
	case BPF_FUNC_probe_read_kernel_str:
		return " (it reads kernel memory, which a program run in userspace has none of)";
	default:
		return "";
	}
}

/* A helper rqbpf does not have, named as the kernel's verifier names it
 * ("bpf_get_current_pid_tgid#14", "unknown#999"). */
static int unsupported_helper(struct linker *l, size_t at, int32_t id)
{
	const char *name = rqbpf_kernel_helper_name(id);

	if (!name)
		return link_fail(l, at, -ENOTSUP, "unknown helper unknown#%d", id);
	return link_fail(l, at, -ENOTSUP, "helper %s#%d is not supported%s", name, id,
	                 unsupported_why(id));
}

/* Calls the relocations did not bind: helpers, and relative calls within a section. */
static int bind_calls(struct linker *l, const struct piece *p)
{
	for (size_t at = p->pos; at < (size_t)p->pos + p->cnt; at++) {
		struct bpf_insn *insn = &l->insns[at];
		int ret;

		if (insn->code != CALL || l->relocated[at])
			continue;
		if (insn->src_reg == 0) {
			if (!rqbpf_call_find(RQBPF_CALL_HELPER, insn->imm, NULL))
				return unsupported_helper(l, at, insn->imm);
			continue;
		}
		if (insn->src_reg != BPF_PSEUDO_CALL)
			return link_fail(l, at, -ENOTSUP,
			                 "call with source register %u and no relocation",
			                 insn->src_reg);
		l->relocated[at] = 1;
		ret = link_call(l, at, p->sec,
		                (int64_t)p->start + (int64_t)(at - p->pos) + insn->imm + 1);
		if (ret)
			return ret;
	}
	return 0;
}

static bool ends_piece(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_EXIT) || insn->code == (BPF_JMP | BPF_JA) ||
	       insn->code == (BPF_JMP32 | BPF_JA);
}

/* Every instruction known, every jump inside the program and not into the
 * middle of an ld_imm64, and no function falling through its end. */
static int validate(struct linker *l)
{
	uint8_t *second = calloc(l->cnt ? l->cnt : 1, 1);
	int ret = 0;

	if (!second)
		return rqbpf_fail(l->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i + 1 < l->cnt; i++)
		if (l->insns[i].code == LD_IMM64 && !second[i])
			second[i + 1] = 1;
	for (size_t i = 0; !ret && i < l->cnt; i++) {
		const struct bpf_insn *insn = &l->insns[i];
		const char *why = second[i] ? NULL : rqbpf_insn_check(l->insns, l->cnt, i);
		int64_t target;

		if (why) {
			ret = link_fail(l, i, -ENOTSUP, "%s", why);
		} else if (!second[i] && rqbpf_insn_target(insn, i, &target) &&
		           (target < 0 || target >= (int64_t)l->cnt || second[target])) {
			ret = link_fail(l, i, -EINVAL, "jump or call to bad instruction %lld",
			                (long long)target);
		} else if (insn->code == LD_IMM64 && insn->src_reg && !l->relocated[i]) {
			ret = link_fail(l, i, -EINVAL, "ld_imm64 with source %u and no relocation",
			                insn->src_reg);
		}
	}
	for (size_t p = 0; !ret && p < l->npieces; p++) {
		size_t last = l->pieces[p].pos + l->pieces[p].cnt - 1;

		if (!ends_piece(&l->insns[last]) || second[last])
			ret = link_fail(l, last, -EINVAL, "function falls through its end");
	}
	free(second);
	return ret;
}

/* The program type from the section name, as the libbpf rqbpf is built
 * with reads it, and its context's size (prog_types.h): a section it does not know is refused, as
 * libbpf refuses to load such a program. */
static int set_type(struct rqbpf_prog *prog, struct rqbpf_error *err)
{
	const char *sec = prog->lp.section;
	enum bpf_attach_type attach;
	enum bpf_prog_type type = BPF_PROG_TYPE_UNSPEC;
	const struct rqbpf_prog_type *t;

	if (libbpf_prog_type_by_name(sec[0] == '?' ? sec + 1 : sec, &type, &attach))
		return rqbpf_fail(err, -EINVAL, "unknown program type for section '%s'", sec);
	prog->lp.prog_type = type;
	prog->lp.attach_type = attach;
	t = rqbpf_prog_type_find(type);
	prog->lp.ctx_size = t ? t->ctx_size : 0;
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct rqbpf_line *)a)->insn, y = ((const struct rqbpf_line *)b)->insn;

	return (x > y) - (x < y);
}

/* The source lines of the program's instructions (.BTF.ext line info),
 * for the verifier's messages and log. */
static int describe_lines(struct linker *l)
{
	struct rqbpf_lines lines = {0};

	for (size_t i = 0; i < l->npieces; i++)
		if (rqbpf_btf_lines(l->obj, l->pieces[i].sec, l->pieces[i].start, l->pieces[i].cnt,
		                    l->pieces[i].pos, &lines)) {
			free(lines.v);
			return rqbpf_fail(l->err, -ENOMEM, "out of memory");
		}
	if (lines.n)
		qsort(lines.v, lines.n, sizeof(*lines.v), line_cmp);
	l->prog->lp.lines = lines.v;
	l->prog->lp.line_cnt = lines.n;
	return 0;
}

/* The program's functions, main first, each where it was appended, with
 * what the BTF says of it (global, arguments). */
static int describe_funcs(struct linker *l)
{
	struct rqbpf_func_desc *d = calloc(l->npieces ? l->npieces : 1, sizeof(*d));

	if (!d)
		return rqbpf_fail(l->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < l->npieces; i++) {
		const struct rqbpf_func *f = func_at(l->obj, l->pieces[i].sec, l->pieces[i].start);

		d[i].name = f ? f->name : "";
		d[i].start = l->pieces[i].pos;
		if (f)
			rqbpf_btf_func(l->obj, f->name, &d[i]);
	}
	d[0].global = false; /* the main program is verified first, as itself */
	l->prog->lp.funcs = d;
	l->prog->lp.func_cnt = l->npieces;
	return describe_lines(l);
}

static int link_one(struct rqbpf_object *obj, struct rqbpf_prog *prog, struct rqbpf_error *err)
{
	struct linker l = {.obj = obj, .prog = prog, .err = err, .unsupported_at = -1};
	int64_t pos = append_func(&l, prog->func);
	int ret = pos < 0 ? (int)pos : 0;

	for (size_t p = 0; !ret && p < l.npieces; p++) {
		struct piece piece = l.pieces[p]; /* copy: appending may move the array */

		ret = reloc_piece(&l, &piece);
		if (!ret)
			ret = bind_calls(&l, &piece);
	}
	if (!ret)
		ret = validate(&l);
	if (!ret)
		ret = describe_funcs(&l);
	free(l.pieces);
	free(l.relocated);
	if (ret) {
		free(l.insns);
		return ret;
	}
	prog->lp.insns = l.insns;
	prog->lp.insn_cnt = l.cnt;
	if (l.unsupported_at < 0)
		return 0;
	prog->verifiable = true;
	return link_fail(&l, (size_t)l.unsupported_at, -ENOTSUP, "%s",
	                 obj->maps[l.unsupported_map].unsupported);
}

int rqbpf_link_progs(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	size_t n = 0;

	for (size_t i = 0; i < obj->func_cnt; i++)
		n += strcmp(obj->secs[obj->funcs[i].sec_idx].name, ".text") != 0;
	obj->progs = calloc(n ? n : 1, sizeof(*obj->progs));
	if (!obj->progs)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < obj->func_cnt; i++) {
		const struct rqbpf_func *f = &obj->funcs[i];
		struct rqbpf_prog *prog;
		int ret;

		if (!strcmp(obj->secs[f->sec_idx].name, ".text"))
			continue;
		prog = &obj->progs[obj->prog_cnt++];
		prog->obj = obj;
		prog->func = f;
		prog->lp.name = f->name;
		prog->lp.section = obj->secs[f->sec_idx].name;
		prog->lp.maps = obj->descs;
		prog->lp.map_cnt = obj->map_cnt + obj->tmpl_cnt; /* templates: maps of maps */
		prog->autoload = prog->lp.section[0] != '?';
		ret = set_type(prog, &prog->link_err);
		if (!ret)
			ret = link_one(obj, prog, &prog->link_err);
		if (ret == -ENOMEM)
			return rqbpf_fail(err, ret, "%s", prog->link_err.msg);
		prog->link_ret = ret;
	}
	return 0;
}
