/* SPDX-License-Identifier: MIT */
/* maps.c: the object's maps on rqmaps (maps/): BPF_MAP_TYPE_ARRAY and the
 * global data sections on rqmap_array (values preallocated and zeroed, data
 * sections filled with their initial contents), BPF_MAP_TYPE_HASH on
 * rqmap_hash. A lock in the value (bpf_res_spin_lock or bpf_spin_lock) is
 * the maps' value lock: copies leave it alone, as the kernel's do. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int lock_attr(const struct rqbpf_map_desc *d, uint32_t *flags, uint32_t *off)
{
	int32_t lock = d->res_lock_off >= 0 ? d->res_lock_off : d->spin_lock_off;

	*flags = lock >= 0 ? RQMAP_F_VALUE_LOCK : 0;
	*off = lock >= 0 ? (uint32_t)lock : 0;
	return 0;
}

static int create_array(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	struct rqmap_array_attr a = {.value_size = d->value_size, .max_entries = d->max_entries};
	uint32_t first = 0, last = d->max_entries - 1;
	const struct rqbpf_sec *s;
	int ret;

	if (d->key_size != 4)
		return rqbpf_fail(err, -EINVAL, "map %s: an array needs key_size 4", m->name);
	lock_attr(d, &a.flags, &a.lock_off);
	ret = rqmap_array_create(&a, &m->array);
	if (ret)
		return rqbpf_fail(err, ret, "map %s: cannot create the array (%s)", m->name,
		                  strerror(-ret));
	/* Values are contiguous, 8-byte strides: one region for the run-time checks. */
	m->elem_size = (d->value_size + 7u) & ~7u;
	m->values = rqmap_array_lookup_elem(m->array, &first);
	if ((uint8_t *)rqmap_array_lookup_elem(m->array, &last) !=
	    m->values + (size_t)last * m->elem_size)
		return rqbpf_fail(err, -EINVAL, "map %s: array values are not contiguous", m->name);
	if (!d->global_data)
		return 0;
	s = &m->obj->secs[m->sec_idx];
	return s->data ? rqmap_array_update(m->array, &first, s->data, RQMAP_ANY) : 0;
}

static int create_hash(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	struct rqmap_hash_attr a = {
	    .key_size = d->key_size, .value_size = d->value_size, .max_entries = d->max_entries};
	int ret;

	lock_attr(d, &a.flags, &a.lock_off);
	ret = rqmap_hash_create(&a, &m->hash);
	if (ret)
		return rqbpf_fail(err, ret, "map %s: cannot create the hash map (%s)", m->name,
		                  strerror(-ret));
	m->obj->has_hash = true;
	ret = rqmap_hash_get_values(m->hash, &m->hash_values);
	return ret ? rqbpf_fail(err, ret, "map %s: hash values not preallocated (%s)", m->name,
	                        strerror(-ret))
	           : 0;
}

/* Memory one map may preallocate for its keys and values: an object's sizes
 * are untrusted input, and every map here is preallocated at load. */
#define RQBPF_MAX_MAP_BYTES (256ull << 20)

static uint64_t map_bytes(const struct rqbpf_map_desc *d)
{
	return (uint64_t)d->max_entries *
	       (((uint64_t)d->key_size + 7u) / 8u * 8u + ((uint64_t)d->value_size + 7u) / 8u * 8u);
}

/* A map type rqbpf does not have, by libbpf's name for it where it has one. */
static int unsupported_type(const struct rqbpf_map *m, struct rqbpf_error *err)
{
	const char *name = libbpf_bpf_map_type_str((enum bpf_map_type)m->desc.type);

	if (!name)
		return rqbpf_fail(err, -ENOTSUP, "map %s: map type %u is not supported", m->name,
		                  m->desc.type);
	return rqbpf_fail(err, -ENOTSUP, "map %s: map type %s (%u) is not supported", m->name, name,
	                  m->desc.type);
}

int rqbpf_maps_create(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct rqbpf_map *m = &obj->maps[i];
		int ret;

		if (map_bytes(&m->desc) > RQBPF_MAX_MAP_BYTES)
			ret = rqbpf_fail(err, -E2BIG,
			                 "map %s: %llu bytes of keys and values exceed "
			                 "rqbpf's limit of %llu MiB per map",
			                 m->name, (unsigned long long)map_bytes(&m->desc),
			                 RQBPF_MAX_MAP_BYTES >> 20);
		else if (m->desc.type == BPF_MAP_TYPE_ARRAY)
			ret = create_array(m, err);
		else if (m->desc.type == BPF_MAP_TYPE_HASH)
			ret = create_hash(m, err);
		else
			ret = unsupported_type(m, err);
		if (ret)
			return ret;
	}
	return 0;
}

void rqbpf_maps_free(struct rqbpf_object *obj)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		rqmap_array_destroy(obj->maps[i].array);
		rqmap_hash_destroy(obj->maps[i].hash);
		obj->maps[i].array = NULL;
		obj->maps[i].hash = NULL;
		obj->maps[i].values = NULL;
	}
}

void *rqbpf_map_elem(struct rqbpf_map *m, const void *key)
{
	return m->array ? rqmap_array_lookup_elem(m->array, key)
	                : rqmap_hash_lookup_elem(m->hash, key);
}

static int check(const struct rqbpf_map *m, const void *key)
{
	if (!m || !key)
		return -EINVAL;
	return m->array || m->hash ? 0 : -EPERM;
}

int rqbpf_map_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	return m->array ? rqmap_array_lookup(m->array, key, value, 0)
	                : rqmap_hash_lookup(m->hash, key, value, 0);
}

/* BPF_F_LOCK copies under a bpf_spin_lock only: a value whose lock is a
 * bpf_res_spin_lock (or that has none) refuses it, as the kernel's do. */
static bool f_lock_refused(const struct rqbpf_map *m, uint64_t flags)
{
	return (flags & BPF_F_LOCK) && m->desc.spin_lock_off < 0;
}

/* The error of a refused BPF_F_LOCK update from a program: the kernel's
 * map code checks the flags, and an array's index and BPF_NOEXIST, first. */
static int f_lock_refused_in_map(const struct rqbpf_map *m, const void *key, uint64_t flags)
{
	uint32_t idx;

	if ((flags & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST || !m->array)
		return -EINVAL;
	memcpy(&idx, key, sizeof(idx));
	if (idx >= m->desc.max_entries)
		return -E2BIG;
	return flags & BPF_NOEXIST ? -EEXIST : -EINVAL;
}

static int update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	return m->array ? rqmap_array_update(m->array, key, value, flags)
	                : rqmap_hash_update(m->hash, key, value, flags);
}

/* The bpf(2) command's order: BPF_F_LOCK is checked before the map's. */
int rqbpf_map_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	return f_lock_refused(m, flags) ? -EINVAL : update(m, key, value, flags);
}

int rqbpf_map_update_helper(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	return f_lock_refused(m, flags) ? f_lock_refused_in_map(m, key, flags)
	                                : update(m, key, value, flags);
}

int rqbpf_map_delete(struct rqbpf_map *m, const void *key)
{
	int ret = check(m, key);

	if (ret)
		return ret;
	return m->array ? rqmap_array_delete(m->array, key) : rqmap_hash_delete(m->hash, key);
}

int rqbpf_map_get_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	if (!m || !next_key)
		return -EINVAL;
	if (!m->array && !m->hash)
		return -EPERM;
	return m->array ? rqmap_array_get_next_key(m->array, key, next_key)
	                : rqmap_hash_get_next_key(m->hash, key, next_key);
}

int rqbpf_map_get_info(const struct rqbpf_map *m, struct rqbpf_map_info *info)
{
	if (!m || !info)
		return -EINVAL;
	*info = (struct rqbpf_map_info){m->name, m->desc.type, m->desc.key_size, m->desc.value_size,
	                                m->desc.max_entries};
	return 0;
}
