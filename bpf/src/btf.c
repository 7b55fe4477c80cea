/* SPDX-License-Identifier: MIT */
/* btf.c: the object's maps. BTF-defined maps from the .maps section (type,
 * key and value size, max_entries, and where a struct bpf_res_spin_lock or
 * bpf_spin_lock sits in the value), then global data sections (.data,
 * .rodata, .bss, .data.*, .rodata.*) as one-element array maps named as
 * libbpf names them. */
#include <bpf/btf.h>
#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define OBJ_NAME_LEN 16 /* the kernel's BPF_OBJ_NAME_LEN */

static bool has_prefix(const char *s, const char *pfx)
{
	return strncmp(s, pfx, strlen(pfx)) == 0;
}

static bool is_data_section(const struct rqbpf_sec *s)
{
	if (s->size == 0 || (s->type != SHT_PROGBITS && s->type != SHT_NOBITS) ||
	    (s->flags & SHF_EXECINSTR))
		return false;
	return !strcmp(s->name, ".data") || !strcmp(s->name, ".rodata") ||
	       !strcmp(s->name, ".bss") || has_prefix(s->name, ".data.") ||
	       has_prefix(s->name, ".rodata.");
}

/* libbpf's internal map name: a prefix of the object name and the section
 * name, or the section name alone for custom sections (.data.A). */
static void data_map_name(const struct rqbpf_object *obj, const char *sec, char *out, size_t len)
{
	size_t sfx = strlen(sec) > 7 ? strlen(sec) : 7;
	int pfx = 0;

	if (!strchr(sec + 1, '.')) {
		size_t room = sfx < OBJ_NAME_LEN - 1 ? OBJ_NAME_LEN - sfx - 1 : 0;

		pfx = (int)(strlen(obj->name) < room ? strlen(obj->name) : room);
	}
	snprintf(out, len < OBJ_NAME_LEN ? len : OBJ_NAME_LEN, "%.*s%s", pfx, obj->name, sec);
	for (char *p = out; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.')
			*p = '_';
}

static const char *btf_name(const struct btf *btf, uint32_t off)
{
	const char *s = btf__name_by_offset(btf, off);

	return s ? s : "";
}

static const struct btf_type *skip_mods(const struct btf *btf, uint32_t id, uint32_t *res_id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	for (int depth = 0; t && depth < 32; depth++) {
		if (!btf_is_mod(t) && !btf_is_typedef(t))
			break;
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (res_id)
		*res_id = id;
	return t;
}

/* Byte offset of a struct named @p want inside type @p id, or -1. */
static int32_t find_struct(const struct btf *btf, uint32_t id, const char *want, int depth)
{
	const struct btf_type *t = skip_mods(btf, id, &id);
	const struct btf_member *m;

	if (!t || depth > 8 || !(btf_is_struct(t) || btf_is_union(t)))
		return -1;
	if (btf_is_struct(t) && !strcmp(btf_name(btf, t->name_off), want))
		return 0;
	m = btf_members(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		int32_t sub = find_struct(btf, m[i].type, want, depth + 1);

		if (sub >= 0)
			return (int32_t)(btf_member_bit_offset(t, i) / 8) + sub;
	}
	return -1;
}

static void find_locks(const struct btf *btf, uint32_t id, int32_t base, struct rqbpf_map_desc *d)
{
	int32_t res = find_struct(btf, id, "bpf_res_spin_lock", 0);
	int32_t spin = find_struct(btf, id, "bpf_spin_lock", 0);

	if (res >= 0 && d->res_lock_off < 0)
		d->res_lock_off = base + res;
	if (spin >= 0 && d->spin_lock_off < 0)
		d->spin_lock_off = base + spin;
}

/* __uint(name, N) is `int (*name)[N]`. */
static int uint_member(const struct btf *btf, uint32_t id, uint32_t *out)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_type *arr = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;

	if (!arr || !btf_is_array(arr))
		return -1;
	*out = btf_array(arr)->nelems;
	return 0;
}

/* __type(name, T) is `T *name`: the size of T. */
static int type_member(const struct btf *btf, uint32_t id, uint32_t *size, uint32_t *type)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	long long sz;

	if (!t || !btf_is_ptr(t))
		return -1;
	sz = btf__resolve_size(btf, t->type);
	if (sz <= 0 || sz > UINT32_MAX)
		return -1;
	*size = (uint32_t)sz;
	*type = t->type;
	return 0;
}

static int map_member(const struct btf *btf, const char *field, uint32_t type, struct rqbpf_map *m)
{
	struct rqbpf_map_desc *d = &m->desc;
	uint32_t ignored;

	if (!strcmp(field, "type"))
		return uint_member(btf, type, &d->type);
	if (!strcmp(field, "max_entries"))
		return uint_member(btf, type, &d->max_entries);
	if (!strcmp(field, "key_size"))
		return uint_member(btf, type, &d->key_size);
	if (!strcmp(field, "value_size"))
		return uint_member(btf, type, &d->value_size);
	if (!strcmp(field, "map_flags") || !strcmp(field, "numa_node") || !strcmp(field, "pinning"))
		return uint_member(btf, type, &ignored);
	if (!strcmp(field, "key"))
		return type_member(btf, type, &d->key_size, &ignored);
	if (!strcmp(field, "value"))
		return type_member(btf, type, &d->value_size, &m->btf_value);
	return -2;
}

static int parse_map_def(const struct btf *btf, uint32_t var_type, struct rqbpf_map *m,
                         struct rqbpf_error *err)
{
	const struct btf_type *t = skip_mods(btf, var_type, NULL);
	const struct btf_member *mem;

	if (!t || !btf_is_struct(t))
		return rqbpf_fail(err, -EINVAL, "map %s: definition is not a struct", m->name);
	mem = btf_members(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		const char *field = btf_name(btf, mem[i].name_off);
		int r = map_member(btf, field, mem[i].type, m);

		if (r == -2)
			return rqbpf_fail(err, -ENOTSUP, "map %s: unsupported field '%s'", m->name,
			                  field);
		if (r)
			return rqbpf_fail(err, -EINVAL, "map %s: bad field '%s'", m->name, field);
	}
	if (m->btf_value)
		find_locks(btf, m->btf_value, 0, &m->desc);
	return 0;
}

static const struct btf_type *find_datasec(const struct btf *btf, const char *name)
{
	int32_t id = btf__find_by_name_kind(btf, name, BTF_KIND_DATASEC);

	return id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
}

static int btf_map(struct rqbpf_object *obj, const struct rqbpf_sym *sym, struct rqbpf_map *m,
                   struct rqbpf_error *err)
{
	const struct btf_type *sec = obj->btf ? find_datasec(obj->btf, ".maps") : NULL;
	const struct btf_var_secinfo *vi;

	snprintf(m->name, sizeof(m->name), "%s", sym->name);
	if (!obj->btf)
		return rqbpf_fail(err, -EINVAL, "map %s: missing section .BTF", m->name);
	if (!sec)
		return rqbpf_fail(err, -EINVAL, "map %s: no .maps in BTF", m->name);
	vi = btf_var_secinfos(sec);
	for (uint16_t i = 0; i < btf_vlen(sec); i++) {
		const struct btf_type *var = btf__type_by_id(obj->btf, vi[i].type);

		if (var && btf_is_var(var) && !strcmp(btf_name(obj->btf, var->name_off), sym->name))
			return parse_map_def(obj->btf, var->type, m, err);
	}
	return rqbpf_fail(err, -EINVAL, "map %s: no BTF definition", m->name);
}

/* Offset of global variable @p name in section @p shndx, from the symbol table. */
static int64_t var_offset(const struct rqbpf_object *obj, uint32_t shndx, const char *name)
{
	for (size_t i = 0; i < obj->sym_cnt; i++)
		if (obj->syms[i].shndx == shndx && !strcmp(obj->syms[i].name, name))
			return (int64_t)obj->syms[i].value;
	return -1;
}

/* A section's locks: as in the kernel, a value holds at most one lock of
 * each kind, so a section with two variables holding one has none. */
static void data_locks(const struct rqbpf_object *obj, struct rqbpf_map *m)
{
	const struct btf_type *sec =
	    obj->btf ? find_datasec(obj->btf, obj->secs[m->sec_idx].name) : NULL;
	const struct btf_var_secinfo *vi;
	int nres = 0, nspin = 0;

	if (!sec)
		return;
	vi = btf_var_secinfos(sec);
	for (uint16_t i = 0; i < btf_vlen(sec); i++) {
		const struct btf_type *var = btf__type_by_id(obj->btf, vi[i].type);
		int64_t off;

		if (!var || !btf_is_var(var))
			continue;
		off = var_offset(obj, m->sec_idx, btf_name(obj->btf, var->name_off));
		if (off < 0)
			off = vi[i].offset;
		if (off < 0 || off >= (int64_t)m->desc.value_size)
			continue;
		nres += find_struct(obj->btf, var->type, "bpf_res_spin_lock", 0) >= 0;
		nspin += find_struct(obj->btf, var->type, "bpf_spin_lock", 0) >= 0;
		find_locks(obj->btf, var->type, (int32_t)off, &m->desc);
	}
	if (nres > 1)
		m->desc.res_lock_off = -1;
	if (nspin > 1)
		m->desc.spin_lock_off = -1;
}

static void data_map(struct rqbpf_object *obj, uint32_t shndx, struct rqbpf_map *m)
{
	const struct rqbpf_sec *s = &obj->secs[shndx];

	data_map_name(obj, s->name, m->name, sizeof(m->name));
	m->sec_idx = shndx;
	m->desc.type = BPF_MAP_TYPE_ARRAY;
	m->desc.key_size = 4;
	m->desc.value_size = (uint32_t)s->size;
	m->desc.max_entries = 1;
	m->desc.global_data = true;
	m->desc.read_only = !(s->flags & SHF_WRITE) || has_prefix(s->name, ".rodata");
	data_locks(obj, m);
}

static bool is_map_symbol(const struct rqbpf_object *obj, const struct rqbpf_sym *s)
{
	return obj->maps_sec >= 0 && s->shndx == (uint32_t)obj->maps_sec &&
	       (s->type == STT_OBJECT || (s->type == STT_NOTYPE && s->bind == STB_GLOBAL));
}

static int open_btf(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	obj->maps_sec = -1;
	for (size_t i = 1; i < obj->sec_cnt; i++) {
		const struct rqbpf_sec *s = &obj->secs[i];

		if (!strcmp(s->name, ".maps"))
			obj->maps_sec = (int)i;
		else if (!strcmp(s->name, "maps"))
			return rqbpf_fail(err, -ENOTSUP,
			                  "legacy 'maps' section is not supported (use BTF .maps)");
		else if (!strcmp(s->name, ".BTF") && s->data && !obj->btf) {
			if (s->size > UINT32_MAX ||
			    !(obj->btf = btf__new(s->data, (uint32_t)s->size)))
				return rqbpf_fail(err, -EINVAL, "bad .BTF section (%s)",
				                  strerror(errno));
		}
	}
	return 0;
}

static int count_maps(const struct rqbpf_object *obj)
{
	size_t n = 0;

	for (size_t i = 0; i < obj->sym_cnt; i++)
		n += is_map_symbol(obj, &obj->syms[i]);
	for (size_t i = 1; i < obj->sec_cnt; i++)
		n += is_data_section(&obj->secs[i]);
	return (int)n;
}

static int fill_maps(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < obj->sym_cnt; i++)
		if (is_map_symbol(obj, &obj->syms[i]))
			ret = btf_map(obj, &obj->syms[i], &obj->maps[obj->map_cnt++], err);
	for (size_t i = 1; !ret && i < obj->sec_cnt; i++)
		if (is_data_section(&obj->secs[i]))
			data_map(obj, (uint32_t)i, &obj->maps[obj->map_cnt++]);
	return ret;
}

int rqbpf_btf_maps(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	int ret = open_btf(obj, err);
	size_t n;

	if (ret)
		return ret;
	n = (size_t)count_maps(obj);
	obj->maps = calloc(n ? n : 1, sizeof(*obj->maps));
	obj->descs = calloc(n ? n : 1, sizeof(*obj->descs));
	if (!obj->maps || !obj->descs)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		obj->maps[i].obj = obj;
		obj->maps[i].desc.res_lock_off = -1;
		obj->maps[i].desc.spin_lock_off = -1;
	}
	ret = fill_maps(obj, err);
	for (size_t i = 0; i < obj->map_cnt; i++) {
		obj->maps[i].desc.name = obj->maps[i].name;
		obj->descs[i] = obj->maps[i].desc;
	}
	return ret;
}
