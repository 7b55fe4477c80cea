/* SPDX-License-Identifier: MIT */
/* maps.c: map storage and the map API. BPF_MAP_TYPE_ARRAY and global data
 * sections: values preallocated, zeroed (data sections: their initial
 * contents), each element 8-byte aligned so that locks and atomics in a
 * value are aligned. Updates leave a lock field in the value alone, as the
 * kernel's copy_map_value() does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_MAP_BYTES (1ull << 30)

static int create_array(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	const struct rqbpf_sec *s;

	if (d->key_size != 4 || d->value_size == 0 || d->max_entries == 0)
		return rqbpf_fail(
		    err, -EINVAL,
		    "map %s: an array needs key_size 4, value_size > 0 and max_entries > 0",
		    m->name);
	m->elem_size = (d->value_size + 7u) & ~7u;
	if ((uint64_t)m->elem_size * d->max_entries > MAX_MAP_BYTES || m->elem_size < d->value_size)
		return rqbpf_fail(err, -E2BIG, "map %s: larger than %llu bytes", m->name,
		                  (unsigned long long)MAX_MAP_BYTES);
	m->values = calloc(d->max_entries, m->elem_size);
	if (!m->values)
		return rqbpf_fail(err, -ENOMEM, "map %s: out of memory", m->name);
	if (!d->global_data)
		return 0;
	s = &m->obj->secs[m->sec_idx];
	if (s->data)
		memcpy(m->values, s->data, d->value_size);
	return 0;
}

int rqbpf_maps_create(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct rqbpf_map *m = &obj->maps[i];
		int ret;

		if (m->desc.type != BPF_MAP_TYPE_ARRAY)
			return rqbpf_fail(err, -ENOTSUP, "map %s: map type %u is not supported",
			                  m->name, m->desc.type);
		ret = create_array(m, err);
		if (ret)
			return ret;
	}
	return 0;
}

void rqbpf_maps_free(struct rqbpf_object *obj)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		free(obj->maps[i].values);
		obj->maps[i].values = NULL;
	}
}

void *rqbpf_map_elem(struct rqbpf_map *m, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= m->desc.max_entries)
		return NULL;
	return m->values + (size_t)idx * m->elem_size;
}

/* Copy a value, leaving the bytes of the lock fields of @p dst as they are. */
static void copy_value(const struct rqbpf_map_desc *d, uint8_t *dst, const uint8_t *src)
{
	int32_t skip[2] = {d->res_lock_off, d->spin_lock_off};
	uint32_t from = 0;

	if (skip[0] > skip[1]) {
		skip[0] = d->spin_lock_off;
		skip[1] = d->res_lock_off;
	}
	for (int i = 0; i < 2; i++) {
		if (skip[i] < 0 || (uint32_t)skip[i] + 4 > d->value_size)
			continue;
		memcpy(dst + from, src + from, (uint32_t)skip[i] - from);
		from = (uint32_t)skip[i] + 4;
	}
	memcpy(dst + from, src + from, d->value_size - from);
}

static int check(const struct rqbpf_map *m, const void *key)
{
	if (!m || !key)
		return -EINVAL;
	return m->values ? 0 : -EPERM;
}

int rqbpf_map_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	const uint8_t *elem;
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	elem = rqbpf_map_elem(m, key);
	if (!elem)
		return -ENOENT;
	memset(value, 0, m->desc.value_size);
	copy_value(&m->desc, value, elem);
	return 0;
}

int rqbpf_map_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	uint8_t *elem;
	int ret = check(m, key);

	if (ret || !value || flags > BPF_EXIST)
		return ret ? ret : -EINVAL;
	elem = rqbpf_map_elem(m, key);
	if (!elem)
		return -E2BIG;
	if (flags == BPF_NOEXIST)
		return -EEXIST;
	copy_value(&m->desc, elem, value);
	return 0;
}

int rqbpf_map_delete(struct rqbpf_map *m, const void *key)
{
	int ret = check(m, key);

	return ret ? ret : -EINVAL;
}

int rqbpf_map_get_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	uint32_t idx = 0;

	if (!m || !next_key)
		return -EINVAL;
	if (!m->values)
		return -EPERM;
	if (key) {
		memcpy(&idx, key, sizeof(idx));
		if (idx + 1 == m->desc.max_entries)
			return -ENOENT;
		idx = idx >= m->desc.max_entries ? 0 : idx + 1;
	}
	memcpy(next_key, &idx, sizeof(idx));
	return 0;
}

int rqbpf_map_get_info(const struct rqbpf_map *m, struct rqbpf_map_info *info)
{
	if (!m || !info)
		return -EINVAL;
	*info = (struct rqbpf_map_info){m->name, m->desc.type, m->desc.key_size, m->desc.value_size,
	                                m->desc.max_entries};
	return 0;
}
