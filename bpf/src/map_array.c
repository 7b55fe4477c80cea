/* SPDX-License-Identifier: MIT */
/* map_array.c: BPF_MAP_TYPE_ARRAY and the global data sections on
 * rqmap_array: values preallocated, zeroed and contiguous (8-byte strides,
 * one region for the run-time checks), data sections filled with their
 * initial contents. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

struct array_map {
	uint8_t *values;    /* max_entries * elem_size bytes */
	uint32_t elem_size; /* value_size rounded up to 8 */
	uint32_t max_entries;
	struct rqmap_array *array;
};

static struct array_map *array_of(const struct rqbpf_map *m)
{
	return m->kind;
}

static void array_destroy(struct rqbpf_map *m)
{
	struct array_map *a = array_of(m);

	rqmap_array_destroy(a->array);
	free(a);
}

static int array_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	struct rqmap_array_attr attr = {.value_size = d->value_size, .max_entries = d->max_entries};
	uint32_t first = 0, last = d->max_entries - 1;
	const struct rqbpf_sec *s;
	struct array_map *a;
	int ret;

	if (d->key_size != 4)
		return rqbpf_fail(err, -EINVAL, "map %s: an array needs key_size 4", m->name);
	a = m->kind = calloc(1, sizeof(*a));
	if (!a)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	rqbpf_map_lock_attr(d, &attr.flags, &attr.lock_off);
	ret = rqmap_array_create(&attr, &a->array);
	if (ret)
		return rqbpf_fail(err, ret, "map %s: cannot create the array (%s)", m->name,
		                  strerror(-ret));
	a->elem_size = (d->value_size + 7u) & ~7u;
	a->values = rqmap_array_lookup_elem(a->array, &first);
	if ((uint8_t *)rqmap_array_lookup_elem(a->array, &last) !=
	    a->values + (size_t)last * a->elem_size)
		return rqbpf_fail(err, -EINVAL, "map %s: array values are not contiguous", m->name);
	a->max_entries = d->max_entries;
	m->all_values = (struct rqbpf_region){(uintptr_t)a->values,
	                                      (size_t)a->elem_size * d->max_entries, !d->read_only};
	if (!d->global_data)
		return 0;
	s = &m->obj->secs[m->sec_idx];
	return s->data ? rqmap_array_update(a->array, &first, s->data, RQMAP_ANY) : 0;
}

/* Contiguous values (m->all_values): indexed here. */
static void *array_lookup_value(struct rqbpf_map *m, const void *key)
{
	const struct array_map *a = array_of(m);
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	return idx < a->max_entries ? a->values + (size_t)idx * a->elem_size : NULL;
}

static bool array_value_at(const struct rqbpf_map *m, uintptr_t addr, struct rqbpf_region *out)
{
	if (!m->all_values.base || addr - m->all_values.base >= m->all_values.size)
		return false;
	*out = m->all_values;
	return true;
}

static int array_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	return rqmap_array_lookup(array_of(m)->array, key, value, 0);
}

static int array_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	return rqmap_array_update(array_of(m)->array, key, value, flags);
}

static int array_delete(struct rqbpf_map *m, const void *key)
{
	return rqmap_array_delete(array_of(m)->array, key);
}

static int array_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	return rqmap_array_get_next_key(array_of(m)->array, key, next_key);
}

const struct rqbpf_map_ops rqbpf_array_map_ops = {
    .type = BPF_MAP_TYPE_ARRAY,
    .indexed = true,
    .rcu = false,
    .create = array_create,
    .destroy = array_destroy,
    .lookup_value = array_lookup_value,
    .lookup = array_lookup,
    .update = array_update,
    .delete = array_delete,
    .next_key = array_next_key,
    .value_at = array_value_at,
};
