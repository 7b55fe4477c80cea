/* SPDX-License-Identifier: MIT */
/* maps.c: the object's maps on rqmaps (maps/), each of a kind in the table
 * below (map_array.c, map_hash.c: their struct rqbpf_map_ops), and the map
 * API of rqbpf.h on top of it. A lock in the value (bpf_res_spin_lock or
 * bpf_spin_lock) is the maps' value lock: copies leave it alone, as the
 * kernel's do. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

/* The map kinds: one row each, its ops in its own file (map_<kind>.c). */
#define RQBPF_MAP_KINDS(X)                                                                         \
	X(array)                                                                                   \
	X(hash)                                                                                    \
	X(ringbuf)                                                                                 \
	X(queue)                                                                                   \
	X(stack)                                                                                   \
	X(percpu_array)                                                                            \
	X(percpu_hash)                                                                             \
	X(array_of_maps)                                                                           \
	X(hash_of_maps)

#define DECLARE_KIND(kind) extern const struct rqbpf_map_ops rqbpf_##kind##_map_ops;
RQBPF_MAP_KINDS(DECLARE_KIND)
#undef DECLARE_KIND
#define KIND_ROW(kind) &rqbpf_##kind##_map_ops,
static const struct rqbpf_map_ops *const kinds[] = {RQBPF_MAP_KINDS(KIND_ROW)};
#undef KIND_ROW

const struct rqbpf_map_ops *rqbpf_map_kind(uint32_t type)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i]->type == type)
			return kinds[i];
	return NULL;
}

int rqbpf_index_next_key(uint32_t max_entries, const void *key, void *next_key)
{
	uint32_t idx = UINT32_MAX, next;

	if (key)
		memcpy(&idx, key, sizeof(idx));
	if (idx >= max_entries)
		next = 0;
	else if (idx == max_entries - 1)
		return -ENOENT;
	else
		next = idx + 1;
	memcpy(next_key, &next, sizeof(next));
	return 0;
}

void rqbpf_map_lock_attr(const struct rqbpf_map_desc *d, uint32_t *flags, uint32_t *off)
{
	int32_t lock = d->res_lock_off >= 0 ? d->res_lock_off : d->spin_lock_off;

	*flags = lock >= 0 ? RQMAP_F_VALUE_LOCK : 0;
	*off = lock >= 0 ? (uint32_t)lock : 0;
}

/* Memory one map may preallocate for its keys and values: an object's sizes
 * are untrusted input, and every map here is preallocated at load. */
#define RQBPF_MAX_MAP_BYTES (256ull << 20)

static uint64_t map_bytes(const struct rqbpf_map *m)
{
	const struct rqbpf_map_desc *d = &m->desc;
	uint64_t values = m->ops->percpu ? (uint64_t)rqbpf_num_possible_cpus() : 1;

	return (uint64_t)d->max_entries * (((uint64_t)d->key_size + 7u) / 8u * 8u +
	                                   values * (((uint64_t)d->value_size + 7u) / 8u * 8u));
}

int rqbpf_maps_create(struct rqbpf_object *obj, struct rqbpf_error *err)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct rqbpf_map *m = &obj->maps[i];
		int ret;

		if (m->unsupported[0])
			continue; /* its programs are refused (loader_link.c) */
		if (map_bytes(m) > RQBPF_MAX_MAP_BYTES)
			ret = rqbpf_fail(err, -E2BIG,
			                 "map %s: %llu bytes of keys and values exceed "
			                 "rqbpf's limit of %llu MiB per map",
			                 m->name, (unsigned long long)map_bytes(m),
			                 RQBPF_MAX_MAP_BYTES >> 20);
		else
			ret = m->ops->create(m, err);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct rqbpf_map *m = &obj->maps[i];
		int ret = m->kind && m->ops->link ? m->ops->link(m, err) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

void rqbpf_maps_free(struct rqbpf_object *obj)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct rqbpf_map *m = &obj->maps[i];

		if (m->kind)
			m->ops->destroy(m);
		m->kind = NULL;
		m->all_values = (struct rqbpf_region){0, 0, false};
	}
}

/* A map whose key size is 0 (a queue, a stack) takes a NULL key. */
static int check(const struct rqbpf_map *m, const void *key)
{
	if (!m || (!key && m->desc.key_size))
		return -EINVAL;
	return m->kind ? 0 : -EPERM;
}

int rqbpf_map_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	return m->ops->lookup(m, key, value);
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

	if ((flags & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST || !m->ops->indexed)
		return -EINVAL;
	memcpy(&idx, key, sizeof(idx));
	if (idx >= m->desc.max_entries)
		return -E2BIG;
	return flags & BPF_NOEXIST ? -EEXIST : -EINVAL;
}

/* The bpf(2) command's order: BPF_F_LOCK is checked before the map's. */
int rqbpf_map_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	return f_lock_refused(m, flags) ? -EINVAL : m->ops->update(m, key, value, flags);
}

int rqbpf_map_update_helper(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	if (f_lock_refused(m, flags))
		return f_lock_refused_in_map(m, key, flags);
	return m->ops->update_prog ? m->ops->update_prog(m, key, value, flags)
	                           : m->ops->update(m, key, value, flags);
}

int rqbpf_map_lookup_and_delete(struct rqbpf_map *m, const void *key, void *value)
{
	int ret = check(m, key);

	if (ret || !value)
		return ret ? ret : -EINVAL;
	return m->ops->pop ? m->ops->pop(m, value) : -ENOTSUP;
}

int rqbpf_map_delete(struct rqbpf_map *m, const void *key)
{
	int ret = check(m, key);

	if (ret)
		return ret;
	return m->ops->delete (m, key);
}

int rqbpf_map_get_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	if (!m || !next_key)
		return -EINVAL;
	if (!m->kind)
		return -EPERM;
	return m->ops->next_key(m, key, next_key);
}

int rqbpf_map_get_info(const struct rqbpf_map *m, struct rqbpf_map_info *info)
{
	if (!m || !info)
		return -EINVAL;
	*info = (struct rqbpf_map_info){m->name, m->desc.type, m->desc.key_size, m->desc.value_size,
	                                m->desc.max_entries};
	return 0;
}
