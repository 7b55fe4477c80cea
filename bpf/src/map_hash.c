/* SPDX-License-Identifier: MIT */
/* map_hash.c: BPF_MAP_TYPE_HASH on rqmap_hash, preallocated, with in-place
 * lookups valid inside the run's read-side section. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

struct hash_map {
	struct rqmap_hash *hash;
	struct rqmap_hash_values values; /* where every value lies */
};

static struct hash_map *hash_of(const struct rqbpf_map *m)
{
	return m->kind;
}

static void hash_destroy(struct rqbpf_map *m)
{
	struct hash_map *h = hash_of(m);

	rqmap_hash_destroy(h->hash);
	free(h);
}

static int hash_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	struct rqmap_hash_attr attr = {
	    .key_size = d->key_size, .value_size = d->value_size, .max_entries = d->max_entries};
	struct hash_map *h;
	int ret;

	h = m->kind = calloc(1, sizeof(*h));
	if (!h)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	rqbpf_map_lock_attr(d, &attr.flags, &attr.lock_off);
	ret = rqmap_hash_create(&attr, &h->hash);
	if (ret)
		return rqbpf_fail(err, ret, "map %s: cannot create the hash map (%s)", m->name,
		                  strerror(-ret));
	ret = rqmap_hash_get_values(h->hash, &h->values);
	return ret ? rqbpf_fail(err, ret, "map %s: hash values not preallocated (%s)", m->name,
	                        strerror(-ret))
	           : 0;
}

/* A value is valid until the run's read-side section ends. */
static void *hash_lookup_value(struct rqbpf_map *m, const void *key)
{
	return rqmap_hash_lookup_elem(hash_of(m)->hash, key);
}

/* The value of the element @p a lies in, if it lies in one: any value of
 * the map, as a verified program only reaches one through a lookup, and
 * elements are recycled, never freed, while the map lives. */
static bool hash_value_at(const struct rqbpf_map *m, uintptr_t a, struct rqbpf_region *out)
{
	const struct rqmap_hash_values *v = &hash_of(m)->values;
	uintptr_t off = a - (uintptr_t)v->base, in;

	if (!v->base || off >= (uintptr_t)v->count * v->stride)
		return false;
	in = off % v->stride;
	if (in < v->value_off || in - v->value_off >= v->value_size)
		return false;
	*out = (struct rqbpf_region){a - (in - v->value_off), v->value_size, true};
	return true;
}

static int hash_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	return rqmap_hash_lookup(hash_of(m)->hash, key, value, 0);
}

static int hash_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	return rqmap_hash_update(hash_of(m)->hash, key, value, flags);
}

static int hash_delete(struct rqbpf_map *m, const void *key)
{
	return rqmap_hash_delete(hash_of(m)->hash, key);
}

static int hash_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	return rqmap_hash_get_next_key(hash_of(m)->hash, key, next_key);
}

const struct rqbpf_map_ops rqbpf_hash_map_ops = {
    .type = BPF_MAP_TYPE_HASH,
    .indexed = false,
    .rcu = true,
    .create = hash_create,
    .destroy = hash_destroy,
    .lookup_value = hash_lookup_value,
    .lookup = hash_lookup,
    .update = hash_update,
    .delete = hash_delete,
    .next_key = hash_next_key,
    .value_at = hash_value_at,
};
