/* SPDX-License-Identifier: MIT */
/*
 * map_of_maps.c: BPF_MAP_TYPE_ARRAY_OF_MAPS and BPF_MAP_TYPE_HASH_OF_MAPS as
 * the kernel's (kernel/bpf/arraymap.c, hashtab.c, map_in_map.c): each value
 * is an inner map of the same object, compatible with the outer map's inner
 * map template (desc.inner_map, from __array(values, struct inner)): the
 * same type, key and value sizes, flags and lock fields, and max_entries
 * unless the template has BPF_F_INNER_MAP.
 *
 * A program's lookup gives the inner map itself (the verifier types it as
 * a map after the NULL check, the kernel's CONST_PTR_TO_MAP), which it
 * passes to the map helpers. The map API's value is a u32 that names the
 * inner map by its index in the object (rqbpf_object_map()): the index
 * stands for the kernel's file descriptor on update and map id on lookup.
 * The BTF `values` initialiser (.values = { [1] = &inner }) fills the
 * slots at load.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

struct of_maps {
	uint32_t max_entries;
	uintptr_t *slots;        /* array: a struct rqbpf_map * each, 0 when empty */
	struct rqmap_hash *hash; /* hash: key to a struct rqbpf_map * (8 bytes) */
};

static struct of_maps *of_maps_of(const struct rqbpf_map *m)
{
	return m->kind;
}

/* The map of @p m's object that @p value (a u32 index) names, if it may be
 * an inner map of @p m: *@p out; 0, -EBADF (no such map), -EINVAL (one
 * that does not match the template). */
static int inner_of_value(const struct rqbpf_map *m, const void *value, struct rqbpf_map **out)
{
	const struct rqbpf_object *obj = m->obj;
	const struct rqbpf_map *t = &obj->maps[m->desc.inner_map];
	const struct rqbpf_map_desc *a, *b = &t->desc;
	uint32_t idx;

	memcpy(&idx, value, sizeof(idx));
	if (idx >= obj->map_cnt || !obj->maps[idx].kind)
		return -EBADF;
	a = &obj->maps[idx].desc;
	if (a->type != b->type || a->key_size != b->key_size || a->value_size != b->value_size ||
	    obj->maps[idx].map_flags != t->map_flags || a->res_lock_off != b->res_lock_off ||
	    a->spin_lock_off != b->spin_lock_off || a->inner_map || a->global_data ||
	    (!(t->map_flags & BPF_F_INNER_MAP) && a->max_entries != b->max_entries))
		return -EINVAL;
	*out = &obj->maps[idx];
	return 0;
}

/* The u32 the map API gives for inner map @p inner. */
static void value_of_inner(const struct rqbpf_map *inner, void *value)
{
	uint32_t idx = (uint32_t)(inner - inner->obj->maps);

	memcpy(value, &idx, sizeof(idx));
}

/* The initial inner maps: each relocation of .maps inside this map's
 * values[] names the map in one slot; the key is the slot's index. */
static int of_maps_link(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_object *obj = m->obj;
	const struct rqbpf_sec *s = &obj->secs[obj->maps_sec];
	uint64_t end = m->values_off + 8ull * m->desc.max_entries;

	if (!m->inner_def)
		return 0;
	for (size_t i = 0; i < s->rel_cnt; i++) {
		const struct rqbpf_sym *sym;
		uint32_t key, idx;
		GElf_Rel r;
		int ret = -EINVAL;

		if (!gelf_getrel(s->rel, (int)i, &r))
			return rqbpf_fail(err, -EINVAL, "section .maps: bad relocation %zu", i);
		if (r.r_offset < m->values_off || r.r_offset >= end)
			continue;
		if (m->desc.key_size != sizeof(key))
			return rqbpf_fail(err, -EINVAL, "map %s: values[] needs key_size 4",
			                  m->name);
		key = (uint32_t)((r.r_offset - m->values_off) / 8);
		sym = GELF_R_SYM(r.r_info) < obj->sym_cnt ? &obj->syms[GELF_R_SYM(r.r_info)] : NULL;
		for (idx = 0; sym && idx < obj->map_cnt; idx++)
			if (!obj->maps[idx].desc.global_data && (int)sym->shndx == obj->maps_sec &&
			    !strcmp(obj->maps[idx].name, sym->name))
				break;
		if (sym && idx < obj->map_cnt && (r.r_offset - m->values_off) % 8 == 0)
			ret = m->ops->update(m, &key, &idx, BPF_ANY);
		if (ret)
			return rqbpf_fail(err, ret,
			                  "map %s: values[%u]: %s is not a map it can hold",
			                  m->name, key, sym ? sym->name : "?");
	}
	return 0;
}

static bool of_maps_value_at(const struct rqbpf_map *m, uintptr_t a, struct rqbpf_region *out)
{
	(void)m;
	(void)a;
	(void)out;
	return false; /* its values are maps, which a program does not access */
}

/* Updates from programs: the verifier refuses them, as the kernel's. */
static int of_maps_update_prog(struct rqbpf_map *m, const void *key, const void *value,
                               uint64_t flags)
{
	(void)m;
	(void)key;
	(void)value;
	(void)flags;
	return -EOPNOTSUPP;
}

/* ---- BPF_MAP_TYPE_ARRAY_OF_MAPS ---- */

static void aom_destroy(struct rqbpf_map *m)
{
	struct of_maps *o = of_maps_of(m);

	if (o)
		free(o->slots);
	free(o);
}

static int aom_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	struct of_maps *o;

	if (m->desc.key_size != 4 || !m->desc.max_entries)
		return rqbpf_fail(err, -EINVAL, "map %s: an array needs key_size 4 and max_entries",
		                  m->name);
	o = m->kind = calloc(1, sizeof(*o));
	if (!o)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	o->max_entries = m->desc.max_entries;
	o->slots = calloc(o->max_entries, sizeof(*o->slots));
	return o->slots ? 0 : rqbpf_fail(err, -ENOMEM, "out of memory");
}

static uintptr_t *aom_slot(const struct of_maps *o, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	return idx < o->max_entries ? &o->slots[idx] : NULL;
}

static void *aom_lookup_value(struct rqbpf_map *m, const void *key)
{
	const uintptr_t *s = aom_slot(of_maps_of(m), key);

	/* acquire: pairs with aom_update's release (the inner map's state) */
	return s ? (void *)__atomic_load_n(s, __ATOMIC_ACQUIRE) : NULL;
}

static int aom_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	const struct rqbpf_map *inner = aom_lookup_value(m, key);

	if (!inner)
		return -ENOENT;
	value_of_inner(inner, value);
	return 0;
}

/* As the kernel's fd arrays: BPF_ANY only. */
static int aom_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	uintptr_t *s = aom_slot(of_maps_of(m), key);
	struct rqbpf_map *inner;
	int ret;

	if (flags != BPF_ANY)
		return -EINVAL;
	if (!s)
		return -E2BIG;
	ret = inner_of_value(m, value, &inner);
	if (!ret) /* release: pairs with aom_lookup_value's acquire */
		__atomic_store_n(s, (uintptr_t)inner, __ATOMIC_RELEASE);
	return ret;
}

static int aom_delete(struct rqbpf_map *m, const void *key)
{
	uintptr_t *s = aom_slot(of_maps_of(m), key);

	if (!s)
		return -E2BIG;
	/* relaxed: the empty slot publishes nothing */
	return __atomic_exchange_n(s, 0, __ATOMIC_RELAXED) ? 0 : -ENOENT;
}

static int aom_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	return rqbpf_index_next_key(of_maps_of(m)->max_entries, key, next_key);
}

const struct rqbpf_map_ops rqbpf_array_of_maps_map_ops = {
    .type = BPF_MAP_TYPE_ARRAY_OF_MAPS,
    .indexed = false,
    .rcu = false,
    .create = aom_create,
    .link = of_maps_link,
    .destroy = aom_destroy,
    .lookup_value = aom_lookup_value,
    .lookup = aom_lookup,
    .update = aom_update,
    .update_prog = of_maps_update_prog,
    .delete = aom_delete,
    .next_key = aom_next_key,
    .value_at = of_maps_value_at,
};

/* ---- BPF_MAP_TYPE_HASH_OF_MAPS ---- */

static void hom_destroy(struct rqbpf_map *m)
{
	struct of_maps *o = of_maps_of(m);

	if (o)
		rqmap_hash_destroy(o->hash);
	free(o);
}

static int hom_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	struct rqmap_hash_attr attr = {.key_size = m->desc.key_size,
	                               .value_size = sizeof(uintptr_t),
	                               .max_entries = m->desc.max_entries};
	struct of_maps *o = m->kind = calloc(1, sizeof(struct of_maps));
	int ret;

	if (!o)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	ret = rqmap_hash_create(&attr, &o->hash);
	return ret ? rqbpf_fail(err, ret, "map %s: cannot create the hash map (%s)", m->name,
	                        strerror(-ret))
	           : 0;
}

/* Inside the run's read-side section (ops.rcu). */
static void *hom_lookup_value(struct rqbpf_map *m, const void *key)
{
	const uintptr_t *v = rqmap_hash_lookup_elem(of_maps_of(m)->hash, key);

	/* relaxed: the element's publication in the map orders its value */
	return v ? (void *)__atomic_load_n(v, __ATOMIC_RELAXED) : NULL;
}

static int hom_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	uintptr_t inner;
	int ret = rqmap_hash_lookup(of_maps_of(m)->hash, key, &inner, 0);

	if (!ret)
		value_of_inner((const struct rqbpf_map *)inner, value);
	return ret;
}

static int hom_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	struct rqbpf_map *inner;
	int ret = flags > BPF_EXIST ? -EINVAL : inner_of_value(m, value, &inner);
	uintptr_t v;

	if (ret)
		return ret;
	v = (uintptr_t)inner;
	return rqmap_hash_update(of_maps_of(m)->hash, key, &v, flags);
}

static int hom_delete(struct rqbpf_map *m, const void *key)
{
	return rqmap_hash_delete(of_maps_of(m)->hash, key);
}

static int hom_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	return rqmap_hash_get_next_key(of_maps_of(m)->hash, key, next_key);
}

const struct rqbpf_map_ops rqbpf_hash_of_maps_map_ops = {
    .type = BPF_MAP_TYPE_HASH_OF_MAPS,
    .indexed = false,
    .rcu = true,
    .create = hom_create,
    .link = of_maps_link,
    .destroy = hom_destroy,
    .lookup_value = hom_lookup_value,
    .lookup = hom_lookup,
    .update = hom_update,
    .update_prog = of_maps_update_prog,
    .delete = hom_delete,
    .next_key = hom_next_key,
    .value_at = of_maps_value_at,
};
