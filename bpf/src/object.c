/* SPDX-License-Identifier: MIT */
/* object.c: the public object API: open (parse and link), load (create the
 * maps, verify, resolve ld_imm64 values), find programs and maps, close. A
 * program that could not be linked fails the load only when it is autoloaded. */
#include <bpf/btf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_btf.h"
#include "loader_elf.h"
#include "loader_link.h"
#include "maps.h"
#include "runtime.h"
#include "verifier.h"

#define MAX_OBJECT_BYTES (256u << 20)

/* libbpf's object name: the file's base name up to its first '.'. */
static void set_name(struct rqbpf_object *obj, const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t len;

	base = base ? base + 1 : (path ? path : "obj");
	len = strcspn(base, ".");
	snprintf(obj->name, sizeof(obj->name), "%.*s", (int)len, base);
}

static int open_image(struct rqbpf_object *obj, struct rqbpf_object **out, struct rqbpf_error *err)
{
	int ret = rqbpf_elf_parse(obj, err);

	if (!ret)
		ret = rqbpf_btf_maps(obj, err);
	if (!ret)
		ret = rqbpf_link_progs(obj, err);
	if (ret) {
		rqbpf_object_close(obj);
		return ret;
	}
	*out = obj;
	return 0;
}

int rqbpf_object_open_mem(const void *buf, size_t size, const char *name, struct rqbpf_object **out,
                          struct rqbpf_error *err)
{
	struct rqbpf_object *obj;

	if (err)
		err->msg[0] = 0;
	if (!out || (!buf && size))
		return rqbpf_fail(err, -EINVAL, "bad arguments");
	if (size > MAX_OBJECT_BYTES)
		return rqbpf_fail(err, -E2BIG, "object larger than %u bytes", MAX_OBJECT_BYTES);
	obj = calloc(1, sizeof(*obj));
	if (!obj || !(obj->image = malloc(size ? size : 1))) {
		free(obj);
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	}
	if (size)
		memcpy(obj->image, buf, size);
	obj->image_size = size;
	obj->maps_sec = -1;
	set_name(obj, name ? name : "obj");
	return open_image(obj, out, err);
}

int rqbpf_object_open_file(const char *path, struct rqbpf_object **out, struct rqbpf_error *err)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0;
	int ret;

	if (!f)
		return rqbpf_fail(err, path ? -errno : -EINVAL, "%s: %s", path ? path : "(null)",
		                  strerror(path ? errno : EINVAL));
	for (;;) {
		size_t n;

		if (size == cap) {
			uint8_t *p =
			    cap >= MAX_OBJECT_BYTES ? NULL : realloc(buf, cap ? 2 * cap : 65536);

			if (!p) {
				free(buf);
				fclose(f);
				return rqbpf_fail(err, cap ? -E2BIG : -ENOMEM, "%s: too large",
				                  path);
			}
			buf = p;
			cap = cap ? 2 * cap : 65536;
		}
		n = fread(buf + size, 1, cap - size, f);
		size += n;
		if (n == 0)
			break;
	}
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	if (ret) {
		free(buf);
		return rqbpf_fail(err, ret, "%s: read error", path);
	}
	ret = rqbpf_object_open_mem(buf, size, path, out, err);
	free(buf);
	return ret;
}

void rqbpf_object_close(struct rqbpf_object *obj)
{
	if (!obj)
		return;
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		free((void *)obj->progs[i].lp.insns);
		free((void *)obj->progs[i].lp.funcs);
		free((void *)obj->progs[i].lp.lines);
		free(obj->progs[i].imm64);
		free(obj->progs[i].ops);
	}
	free(obj->progs);
	rqbpf_maps_free(obj);
	free(obj->maps);
	free(obj->descs);
	btf__free(obj->btf);
	free(obj->funcs);
	free(obj->syms);
	free(obj->secs);
	if (obj->elf)
		elf_end(obj->elf);
	free(obj->image);
	free(obj);
}

/* ld_imm64 values: constants, map addresses, global-data addresses, and
 * callbacks (their instruction's index, which bpf_loop and
 * bpf_for_each_map_elem take: the verifier lets a program do nothing else
 * with one). */
static int resolve_imm64(struct rqbpf_prog *prog, struct rqbpf_error *err)
{
	const struct bpf_insn *in = prog->lp.insns;

	prog->imm64 = calloc(prog->lp.insn_cnt ? prog->lp.insn_cnt : 1, sizeof(*prog->imm64));
	if (!prog->imm64)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i + 1 < prog->lp.insn_cnt; i++) {
		static const uint32_t first = 0;
		struct rqbpf_map *m;

		if (in[i].code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (in[i].src_reg == BPF_PSEUDO_FUNC) { /* a callback: its first instruction */
			prog->imm64[i] = (uint64_t)((int64_t)i + in[i].imm + 1);
			i++;
			continue;
		}
		m = in[i].src_reg ? &prog->obj->maps[in[i].imm] : NULL;
		if (!m)
			prog->imm64[i] = (uint32_t)in[i].imm | (uint64_t)(uint32_t)in[i + 1].imm
			                                           << 32;
		else if (in[i].src_reg == BPF_PSEUDO_MAP_FD)
			prog->imm64[i] = (uintptr_t)m;
		else
			prog->imm64[i] =
			    (uintptr_t)m->ops->lookup_value(m, &first) + (uint32_t)in[i + 1].imm;
		i++;
	}
	return 0;
}

int rqbpf_prog_verify(const struct rqbpf_prog *prog, FILE *log, uint64_t *insns_processed,
                      struct rqbpf_error *err)
{
	struct rqbpf_verdict v;
	int ret;

	if (!prog)
		return rqbpf_fail(err, -EINVAL, "bad arguments");
	if (prog->link_ret && !prog->verifiable)
		return rqbpf_fail(err, prog->link_ret, "%s", prog->link_err.msg);
	ret = rqbpf_verify(&prog->lp, &v, log);
	if (insns_processed)
		*insns_processed = v.insns_processed;
	if (ret == -EACCES || (!ret && !v.accepted))
		return rqbpf_fail(err, -EACCES, "%s (insn %u)%s%s", v.msg, v.insn,
		                  v.line[0] ? "\n  " : "", v.line);
	if (ret)
		return rqbpf_fail(err, ret, "verifier error %d", ret);
	return 0;
}

int rqbpf_object_load(struct rqbpf_object *obj, unsigned flags, struct rqbpf_error *err)
{
	int ret;

	if (err)
		err->msg[0] = 0;
	if (!obj)
		return rqbpf_fail(err, -EINVAL, "bad arguments");
	if (obj->loaded)
		return rqbpf_fail(err, -EALREADY, "object already loaded");
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct rqbpf_prog *prog = &obj->progs[i];

		if (prog->autoload && prog->link_ret)
			return rqbpf_fail(err, prog->link_ret, "%s: %s", prog->lp.name,
			                  prog->link_err.msg);
		if (!prog->autoload || (flags & RQBPF_LOAD_NO_VERIFY))
			continue;
		ret = rqbpf_prog_verify(prog, NULL, NULL, err);
		if (ret) {
			char why[sizeof(err->msg)];

			snprintf(why, sizeof(why), "%s", err ? err->msg : "");
			return rqbpf_fail(err, ret, "%s: rejected: %s", prog->lp.name, why);
		}
	}
	ret = rqbpf_maps_create(obj, err);
	for (size_t i = 0; !ret && i < obj->prog_cnt; i++)
		if (obj->progs[i].autoload) {
			ret = resolve_imm64(&obj->progs[i], err);
			if (!ret && rqbpf_decode(&obj->progs[i]))
				ret = rqbpf_fail(err, -ENOMEM, "out of memory");
		}
	if (ret) {
		rqbpf_maps_free(obj);
		return ret;
	}
	for (size_t i = 0; i < obj->prog_cnt; i++)
		obj->progs[i].loaded = obj->progs[i].autoload;
	obj->loaded = true;
	return 0;
}

size_t rqbpf_object_prog_count(const struct rqbpf_object *obj)
{
	return obj ? obj->prog_cnt : 0;
}

struct rqbpf_prog *rqbpf_object_prog(const struct rqbpf_object *obj, size_t i)
{
	return obj && i < obj->prog_cnt ? &obj->progs[i] : NULL;
}

struct rqbpf_prog *rqbpf_object_find_prog(const struct rqbpf_object *obj, const char *name)
{
	for (size_t i = 0; obj && name && i < obj->prog_cnt; i++)
		if (!strcmp(obj->progs[i].lp.name, name))
			return &obj->progs[i];
	return NULL;
}

const char *rqbpf_prog_name(const struct rqbpf_prog *prog)
{
	return prog ? prog->lp.name : NULL;
}

const char *rqbpf_prog_section(const struct rqbpf_prog *prog)
{
	return prog ? prog->lp.section : NULL;
}

size_t rqbpf_prog_insn_count(const struct rqbpf_prog *prog)
{
	return prog ? prog->lp.insn_cnt : 0;
}

const char *rqbpf_prog_error(const struct rqbpf_prog *prog)
{
	return prog && prog->link_ret ? prog->link_err.msg : NULL;
}

size_t rqbpf_prog_ctx_size(const struct rqbpf_prog *prog)
{
	return prog ? prog->lp.ctx_size : 0;
}

int rqbpf_prog_set_autoload(struct rqbpf_prog *prog, int autoload)
{
	if (!prog)
		return -EINVAL;
	if (prog->obj->loaded)
		return -EBUSY;
	prog->autoload = autoload != 0;
	return 0;
}

const struct rqbpf_linked_prog *rqbpf_prog_linked(const struct rqbpf_prog *prog)
{
	return prog ? &prog->lp : NULL;
}

size_t rqbpf_object_map_count(const struct rqbpf_object *obj)
{
	return obj ? obj->map_cnt : 0;
}

struct rqbpf_map *rqbpf_object_map(const struct rqbpf_object *obj, size_t i)
{
	return obj && i < obj->map_cnt ? &obj->maps[i] : NULL;
}

struct rqbpf_map *rqbpf_object_find_map(const struct rqbpf_object *obj, const char *name)
{
	for (size_t i = 0; obj && name && i < obj->map_cnt; i++)
		if (!strcmp(obj->maps[i].name, name))
			return &obj->maps[i];
	return NULL;
}
