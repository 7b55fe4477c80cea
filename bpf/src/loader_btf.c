/* SPDX-License-Identifier: MIT */
/* loader_btf.c: the object's maps. BTF-defined maps from the .maps section
 * (type, key and value size, max_entries, and where a struct
 * bpf_res_spin_lock or bpf_spin_lock sits in the value), then global data
 * sections (.data, .rodata, .bss, .data.*, .rodata.*) as one-element array
 * maps named as libbpf names them. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_btf.h"
#include "maps.h"

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

/*
 * The locks of a map value or data section, found as the kernel's BTF field
 * parser finds them (btf_parse_fields()), since which layouts hold a usable
 * lock is part of the interface:
 *  - a lock is a member (or data-section variable) whose type is exactly
 *    struct bpf_res_spin_lock or struct bpf_spin_lock (4 bytes), or an
 *    array of one element of it, at a 4-byte aligned offset in its struct:
 *    a const, volatile or typedef'd lock is no lock, nor is a misaligned
 *    one;
 *  - members that are structs (or one-element arrays of them, again with
 *    no modifier) are searched in turn; unions are not;
 *  - two locks of one kind among the members of one struct, an array of
 *    more than one, or both kinds anywhere in the value make the value's
 *    fields invalid: it has no valid lock of either kind;
 *  - of several locks of one kind in different nested structs, the last
 *    one (in member order) counts;
 *  - a member at an offset that is not a whole byte makes the fields
 *    invalid (no C compiler emits one).
 * Offsets are summed in 64 bits: an object's BTF is untrusted input, and a
 * lock that does not lie inside the value is taken as invalid.
 */
enum lock_kind { LOCK_NONE = 0, LOCK_RES = 1, LOCK_SPIN = 2 };

struct lock_fields {
	int64_t res_off;  /* the bpf_res_spin_lock that counts, -1: none */
	int64_t spin_off; /* the bpf_spin_lock that counts, -1: none */
	bool bad;         /* the fields are invalid: no valid lock */
	uint32_t *budget; /* members left to visit; none left: invalid */
};

/* Members one search may visit: nested structs multiply, and a crafted
 * BTF could otherwise make the walk take forever. Far more than any real
 * value has. */
#define LOCK_MEMBER_BUDGET  (1u << 16)
#define LOCK_FIELDS_NONE(b) ((struct lock_fields){-1, -1, false, (b)})
/* Nested structs searched; deeper ones are taken to hold no lock. */
#define LOCK_MAX_DEPTH 8

static enum lock_kind lock_kind_of(const struct btf *btf, const struct btf_type *t)
{
	const char *name;

	if (!btf_is_struct(t) || t->size != 4)
		return LOCK_NONE;
	name = btf_name(btf, t->name_off);
	if (!strcmp(name, "bpf_res_spin_lock"))
		return LOCK_RES;
	return !strcmp(name, "bpf_spin_lock") ? LOCK_SPIN : LOCK_NONE;
}

/* Type @p id through its array dimensions (modifiers are not skipped);
 * @p nelems: the number of elements, 0, 1, or 2 for more (an untrusted
 * BTF's dimensions could overflow any product). */
static const struct btf_type *array_elem(const struct btf *btf, uint32_t id, uint64_t *nelems)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	*nelems = 1;
	for (int depth = 0; t && btf_is_array(t) && depth < 32; depth++) {
		*nelems *= btf_array(t)->nelems;
		if (*nelems > 2)
			*nelems = 2;
		t = btf__type_by_id(btf, btf_array(t)->type);
	}
	return t && btf_is_array(t) ? NULL : t;
}

static void note_lock(struct lock_fields *f, enum lock_kind k, int64_t off)
{
	if (k == LOCK_RES)
		f->res_off = off;
	else
		f->spin_off = off;
}

static void struct_locks(const struct btf *btf, const struct btf_type *t, int64_t base,
                         struct lock_fields *f, int depth);

/* A member or variable of type @p id at @p off in the value, @p rel in its
 * struct (or section), among siblings that so far hold the lock kinds in
 * @p seen. */
static void field_locks(const struct btf *btf, uint32_t id, int64_t off, int64_t rel,
                        unsigned *seen, struct lock_fields *f, int depth)
{
	uint64_t n;
	const struct btf_type *t = array_elem(btf, id, &n);
	enum lock_kind k;

	if (!t || n == 0)
		return;
	k = lock_kind_of(btf, t);
	if (k != LOCK_NONE && rel % 4 == 0) {
		f->bad |= n != 1 || (*seen & k);
		*seen |= k;
		note_lock(f, k, off);
	} else if (k == LOCK_NONE && btf_is_struct(t) && depth < LOCK_MAX_DEPTH) {
		struct lock_fields sub = LOCK_FIELDS_NONE(f->budget);

		struct_locks(btf, t, off, &sub, depth + 1);
		f->bad |= sub.bad || (n != 1 && (sub.res_off >= 0 || sub.spin_off >= 0));
		if (sub.res_off >= 0)
			note_lock(f, LOCK_RES, sub.res_off);
		if (sub.spin_off >= 0)
			note_lock(f, LOCK_SPIN, sub.spin_off);
	}
}

static void struct_locks(const struct btf *btf, const struct btf_type *t, int64_t base,
                         struct lock_fields *f, int depth)
{
	const struct btf_member *m = btf_members(t);
	unsigned seen = 0;

	for (uint16_t i = 0; i < btf_vlen(t) && !f->bad; i++) {
		uint32_t bits = btf_member_bit_offset(t, i);

		if (!*f->budget) {
			f->bad = true;
			return;
		}
		--*f->budget;
		f->bad |= bits % 8 != 0;
		field_locks(btf, m[i].type, base + bits / 8, bits / 8, &seen, f, depth);
	}
}

static bool lock_outside(const struct rqbpf_map_desc *d, int64_t off)
{
	return off >= 0 && (off > INT32_MAX - 4 || off + 4 > (int64_t)d->value_size);
}

/* The map's lock offsets from @p f: none when the fields are invalid. */
static void set_locks(struct rqbpf_map_desc *d, const struct lock_fields *f)
{
	bool bad = f->bad || (f->res_off >= 0 && f->spin_off >= 0) || lock_outside(d, f->res_off) ||
	           lock_outside(d, f->spin_off);

	d->res_lock_off = bad ? -1 : (int32_t)f->res_off;
	d->spin_lock_off = bad ? -1 : (int32_t)f->spin_off;
}

/* A BTF map's value type (modifiers and typedefs at the top are skipped,
 * as the kernel's btf_type_id_size() does; a value that is a lock or a
 * union holds none). */
static void value_locks(const struct btf *btf, uint32_t id, struct rqbpf_map_desc *d)
{
	const struct btf_type *t = skip_mods(btf, id, NULL);
	uint32_t budget = LOCK_MEMBER_BUDGET;
	struct lock_fields f = LOCK_FIELDS_NONE(&budget);

	if (t && btf_is_struct(t))
		struct_locks(btf, t, 0, &f, 0);
	set_locks(d, &f);
}

/*
 * Would the kernel load this BTF? It parses the fields of every struct
 * with a member of type exactly struct bpf_spin_lock (the kernel's
 * allocatable-object check) and refuses the whole BTF when they are
 * invalid; libbpf then loads the object without BTF, and no map has a
 * usable lock. A BTF that exhausts the search's budget is taken as
 * refused.
 */
static bool btf_loadable(const struct btf *btf)
{
	uint32_t budget = 16 * LOCK_MEMBER_BUDGET;

	for (uint32_t id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_member *m;
		struct lock_fields f = LOCK_FIELDS_NONE(&budget);
		bool spin_member = false;

		if (!btf_is_struct(t))
			continue;
		m = btf_members(t);
		for (uint16_t i = 0; i < btf_vlen(t) && !spin_member; i++) {
			const struct btf_type *mt = btf__type_by_id(btf, m[i].type);

			spin_member = mt && lock_kind_of(btf, mt) == LOCK_SPIN;
		}
		if (!spin_member)
			continue;
		struct_locks(btf, t, 0, &f, 0);
		if (f.bad || (f.res_off >= 0 && f.spin_off >= 0))
			return false;
	}
	return true;
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

/* __array(values, struct inner) is `struct inner *values[]`: the id of
 * the inner map's definition. Pointers to anything else (a program
 * array's functions) are a field rqbpf does not support (-2). */
static int values_member(const struct btf *btf, uint32_t id, uint32_t *inner_def)
{
	const struct btf_type *t = btf__type_by_id(btf, id), *p, *def;

	if (!t || !btf_is_array(t))
		return -1;
	p = skip_mods(btf, btf_array(t)->type, NULL);
	if (!p || !btf_is_ptr(p))
		return -1;
	def = skip_mods(btf, p->type, inner_def);
	if (def && btf_is_struct(def))
		return 0;
	*inner_def = 0;
	return -2;
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
	if (!strcmp(field, "map_flags"))
		return uint_member(btf, type, &m->map_flags);
	if (!strcmp(field, "numa_node") || !strcmp(field, "pinning"))
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
		int r = strcmp(field, "values") ? map_member(btf, field, mem[i].type, m)
		                                : values_member(btf, mem[i].type, &m->inner_def);

		if (r == -2 && !m->unsupported[0])
			snprintf(m->unsupported, sizeof(m->unsupported),
			         "map %s: unsupported field '%s'", m->name, field);
		else if (r && r != -2)
			return rqbpf_fail(err, -EINVAL, "map %s: bad field '%s'", m->name, field);
	}
	if (m->btf_value)
		value_locks(btf, m->btf_value, &m->desc);
	return 0;
}

static const struct btf_type *find_datasec(const struct btf *btf, const char *name)
{
	int32_t id = btf__find_by_name_kind(btf, name, BTF_KIND_DATASEC);

	return id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
}

/* The byte offset of member "values" in map definition @p var_type, 0 if none. */
static uint64_t values_offset(const struct btf *btf, uint32_t var_type)
{
	const struct btf_type *t = skip_mods(btf, var_type, NULL);
	const struct btf_member *mem;

	if (!t || !btf_is_struct(t))
		return 0;
	mem = btf_members(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf_name(btf, mem[i].name_off), "values"))
			return btf_member_bit_offset(t, i) / 8;
	return 0;
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

		if (var && btf_is_var(var) &&
		    !strcmp(btf_name(obj->btf, var->name_off), sym->name)) {
			m->values_off = sym->value + values_offset(obj->btf, var->type);
			return parse_map_def(obj->btf, var->type, m, err);
		}
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

/* A section's locks: its variables are the members of one level. */
static void data_locks(const struct rqbpf_object *obj, struct rqbpf_map *m)
{
	const struct btf_type *sec =
	    obj->btf ? find_datasec(obj->btf, obj->secs[m->sec_idx].name) : NULL;
	const struct btf_var_secinfo *vi;
	uint32_t budget = LOCK_MEMBER_BUDGET;
	struct lock_fields f = LOCK_FIELDS_NONE(&budget);
	unsigned seen = 0;

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
		field_locks(obj->btf, var->type, off, off, &seen, &f, 0);
	}
	set_locks(&m->desc, &f);
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

/*
 * Maps the kernel would end up creating without BTF, as libbpf retries
 * without it: all of them when it refuses the object's BTF (or there is
 * none), and one whose lock it refuses (in a read-only section, or in a
 * kind of map that takes no lock). Their locks cannot be used.
 */
static void drop_btf(struct rqbpf_map_desc *d, bool btf_ok)
{
	bool lock = d->res_lock_off >= 0 || d->spin_lock_off >= 0;
	bool lock_ok =
	    !d->read_only && (d->type == BPF_MAP_TYPE_ARRAY || d->type == BPF_MAP_TYPE_HASH);

	if (btf_ok && (!lock || lock_ok))
		return;
	d->no_btf = true;
	d->res_lock_off = -1;
	d->spin_lock_off = -1;
}

/* A map type rqbpf does not have, by libbpf's name for it where it has one:
 * the map's reason, ahead of an unsupported field's. */
static void unsupported_type(struct rqbpf_map *m)
{
	const char *name = libbpf_bpf_map_type_str((enum bpf_map_type)m->desc.type);

	if (!name)
		snprintf(m->unsupported, sizeof(m->unsupported),
		         "map %s: map type %u is not supported", m->name, m->desc.type);
	else
		snprintf(m->unsupported, sizeof(m->unsupported),
		         "map %s: map type %s (%u) is not supported", m->name, name, m->desc.type);
}

static bool is_map_of_maps(uint32_t type)
{
	return type == BPF_MAP_TYPE_ARRAY_OF_MAPS || type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

/* Map @p m of maps: its inner map template, made from its definition's
 * __array(values, ...) into the next free entry (libbpf's "<outer>.inner");
 * its value is the inner map (4 bytes, as libbpf has it). */
static int inner_template(struct rqbpf_object *obj, struct rqbpf_map *m, struct rqbpf_error *err)
{
	struct rqbpf_map *t = &obj->maps[obj->map_cnt + obj->tmpl_cnt];
	char name[sizeof(t->name)];

	if (!m->desc.value_size)
		m->desc.value_size = 4;
	if (m->desc.value_size != 4)
		return rqbpf_fail(err, -EINVAL, "map %s: conflicting value size %u != 4", m->name,
		                  m->desc.value_size);
	if (!m->inner_def) {
		snprintf(m->unsupported, sizeof(m->unsupported),
		         "map %.48s: no inner map definition (__array(values, ...))", m->name);
		return 0;
	}
	snprintf(name, sizeof(name), "%.48s.inner", m->name);
	memcpy(t->name, name, sizeof(name));
	m->desc.inner_map = (uint32_t)(obj->map_cnt + obj->tmpl_cnt++);
	return parse_map_def(obj->btf, m->inner_def, t, err);
}

/* What a map's kind and its template's make of it: its ops, or why not. */
static void finish_map(struct rqbpf_object *obj, struct rqbpf_map *m)
{
	const struct rqbpf_map *t = m->desc.inner_map ? &obj->maps[m->desc.inner_map] : NULL;

	drop_btf(&m->desc, obj->btf_ok);
	m->desc.name = m->name;
	m->ops = rqbpf_map_kind(m->desc.type);
	if (!m->ops)
		unsupported_type(m);
	else if (t && (!rqbpf_map_kind(t->desc.type) || is_map_of_maps(t->desc.type)))
		snprintf(m->unsupported, sizeof(m->unsupported),
		         "map %.64s: inner map type %u is not supported", m->name, t->desc.type);
	m->desc.indexed = m->ops && m->ops->indexed;
}

int rqbpf_btf_maps(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	int ret = open_btf(obj, err);
	size_t n;

	if (ret)
		return ret;
	n = (size_t)count_maps(obj);
	/* room for an inner map template per map */
	obj->maps = calloc(n ? 2 * n : 1, sizeof(*obj->maps));
	obj->descs = calloc(n ? 2 * n : 1, sizeof(*obj->descs));
	if (!obj->maps || !obj->descs)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < 2 * n; i++) {
		obj->maps[i].obj = obj;
		obj->maps[i].desc.res_lock_off = -1;
		obj->maps[i].desc.spin_lock_off = -1;
	}
	ret = fill_maps(obj, err);
	for (size_t i = 0; !ret && i < obj->map_cnt; i++)
		if (is_map_of_maps(obj->maps[i].desc.type))
			ret = inner_template(obj, &obj->maps[i], err);
	obj->btf_ok = obj->btf && btf_loadable(obj->btf);
	for (size_t i = obj->map_cnt + obj->tmpl_cnt; i-- > 0;) {
		finish_map(obj, &obj->maps[i]); /* templates first: their maps read them */
		obj->descs[i] = obj->maps[i].desc;
	}
	return ret;
}

/* Argument @i of a global function: an integer or enum is a scalar, a
 * pointer points to bytes of its pointee's size (a struct by name, which
 * may be the context), anything else the kernel does not support. */
static void func_arg(const struct btf *btf, uint32_t type, struct rqbpf_func_desc *d, int i)
{
	const struct btf_type *t = skip_mods(btf, type, NULL), *pointee;
	uint32_t pid;

	d->args[i].kind = RQBPF_FARG_OTHER;
	if (t && (btf_is_int(t) || btf_is_any_enum(t))) {
		d->args[i].kind = RQBPF_FARG_SCALAR;
	} else if (t && btf_is_ptr(t)) {
		d->args[i].kind = RQBPF_FARG_PTR;
		pointee = skip_mods(btf, t->type, &pid);
		d->args[i].ptr_size = pointee ? btf__resolve_size(btf, pid) : -1;
		if (pointee && btf_is_struct(pointee))
			d->args[i].ptr_struct = btf_name(btf, pointee->name_off);
	}
}

void rqbpf_btf_func(const struct rqbpf_object *obj, const char *name, struct rqbpf_func_desc *d)
{
	const struct btf_type *fn, *proto;
	const struct btf_param *p;
	int id;

	if (!obj->btf || !obj->btf_ok)
		return;
	id = btf__find_by_name_kind(obj->btf, name, BTF_KIND_FUNC);
	fn = id > 0 ? btf__type_by_id(obj->btf, (uint32_t)id) : NULL;
	proto = fn ? btf__type_by_id(obj->btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return;
	d->global = btf_vlen(fn) == BTF_FUNC_GLOBAL; /* a FUNC keeps its linkage in vlen */
	d->nargs = (uint8_t)(btf_vlen(proto) < 5 ? btf_vlen(proto) : 5);
	p = btf_params(proto);
	for (int i = 0; i < d->nargs; i++)
		func_arg(obj->btf, p[i].type, d, i);
}

/* The .BTF.ext header's fields this reads (all little-endian on the hosts
 * rqbpf runs on, as the object is). */
struct btf_ext_hdr {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len;
	uint32_t func_info_off, func_info_len;
	uint32_t line_info_off, line_info_len;
};

struct line_rec {
	uint32_t insn_off, file_name_off, line_off, line_col;
};

static const struct rqbpf_sec *sec_named(const struct rqbpf_object *obj, const char *name)
{
	for (size_t i = 0; i < obj->sec_cnt; i++)
		if (obj->secs[i].data && !strcmp(obj->secs[i].name, name))
			return &obj->secs[i];
	return NULL;
}

static int push_line(struct rqbpf_lines *out, const struct rqbpf_line *l)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 64;
		struct rqbpf_line *v = realloc(out->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = *l;
	return 0;
}

/* One section's records: those of [start, start + cnt), renumbered. */
static int section_lines(const struct rqbpf_object *obj, const uint8_t *recs, uint32_t num,
                         uint32_t rec_size, uint32_t start, uint32_t cnt, uint32_t pos,
                         struct rqbpf_lines *out)
{
	for (uint32_t i = 0; i < num; i++) {
		struct line_rec r;
		struct rqbpf_line l;
		uint32_t insn;

		memcpy(&r, recs + (size_t)i * rec_size, sizeof(r));
		insn = r.insn_off / 8;
		if (r.insn_off % 8 || insn < start || insn - start >= cnt)
			continue;
		l.insn = pos + (insn - start);
		l.line = r.line_col >> 10;
		l.file = btf_name(obj->btf, r.file_name_off);
		l.src = btf_name(obj->btf, r.line_off);
		if (push_line(out, &l))
			return -ENOMEM;
	}
	return 0;
}

int rqbpf_btf_lines(const struct rqbpf_object *obj, uint32_t sec, uint32_t start, uint32_t cnt,
                    uint32_t pos, struct rqbpf_lines *out)
{
	const struct rqbpf_sec *ext = obj->btf && obj->btf_ok ? sec_named(obj, ".BTF.ext") : NULL;
	struct btf_ext_hdr h;
	size_t at, end;
	uint32_t rec_size;

	if (!ext || ext->size < sizeof(h))
		return 0;
	memcpy(&h, ext->data, sizeof(h));
	if (h.magic != 0xeB9F || h.hdr_len < sizeof(h) || h.hdr_len > ext->size ||
	    h.line_info_len < 4 || h.line_info_off > ext->size - h.hdr_len ||
	    h.line_info_len > ext->size - h.hdr_len - h.line_info_off)
		return 0;
	at = (size_t)h.hdr_len + h.line_info_off;
	end = at + h.line_info_len;
	memcpy(&rec_size, ext->data + at, 4);
	if (rec_size < sizeof(struct line_rec) || rec_size > 256)
		return 0;
	for (at += 4; at + 8 <= end;) {
		uint32_t name_off, num;

		memcpy(&name_off, ext->data + at, 4);
		memcpy(&num, ext->data + at + 4, 4);
		at += 8;
		if (num > (end - at) / rec_size)
			return 0;
		if (!strcmp(btf_name(obj->btf, name_off), obj->secs[sec].name) &&
		    section_lines(obj, ext->data + at, num, rec_size, start, cnt, pos, out))
			return -ENOMEM;
		at += (size_t)num * rec_size;
	}
	return 0;
}
