/* SPDX-License-Identifier: MIT */
/*
 * map_percpu.c: BPF_MAP_TYPE_PERCPU_ARRAY and BPF_MAP_TYPE_PERCPU_HASH as
 * the kernel's (kernel/bpf/arraymap.c, hashtab.c), a CPU being a thread's
 * registry slot (res_spin_thread_slot()), as everywhere in this project.
 *
 * Each key has one value per possible CPU, rqbpf_num_possible_cpus() of
 * them, each value_size rounded up to 8 bytes (elem), side by side: a key's
 * values are one block of ncpus * elem bytes, which is also the buffer
 * rqbpf.h's map API reads and writes for it, as bpf(2) and libbpf do. A
 * program's lookup gives the calling thread's value (NULL for a thread
 * whose slot is not below ncpus); a program's update writes that value
 * only (a new hash element's other values zeroed), as the kernel's.
 *
 * The array's blocks are preallocated, zeroed, in one allocation; the
 * hash map is an rqmap_hash whose values are the blocks. Neither holds a
 * lock in its values (the kernel refuses one in a per-CPU map).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rqspinlock.h>

#include "maps.h"

/* The default number of possible CPUs (thread slots with a value). */
#define DEFAULT_POSSIBLE_CPUS 64
/* The kernel's limit on a per-CPU value (PCPU_MIN_UNIT_SIZE). */
#define MAX_PERCPU_VALUE 32768u

struct percpu_map {
	uint32_t elem;  /* value_size rounded up to 8 */
	uint32_t ncpus; /* values per key */
	uint32_t max_entries;
	uint8_t *blocks; /* array: max_entries blocks of ncpus * elem bytes */
	struct rqmap_hash *hash;
	struct rqmap_hash_values hv; /* hash: where every block lies */
	uint8_t *zero;               /* hash: a block of zeros, a new element's */
};

static struct percpu_map *percpu_of(const struct rqbpf_map *m)
{
	return m->kind;
}

/* RQBPF_POSSIBLE_CPUS, when it is a decimal in [1, RQSPINLOCK_MAX_THREADS]. */
static int possible_cpus_from_env(void)
{
	const char *s = getenv("RQBPF_POSSIBLE_CPUS");
	char *end;
	long n;

	if (!s || !*s)
		return DEFAULT_POSSIBLE_CPUS;
	n = strtol(s, &end, 10);
	return *end || n < 1 || n > RQSPINLOCK_MAX_THREADS ? DEFAULT_POSSIBLE_CPUS : (int)n;
}

int rqbpf_num_possible_cpus(void)
{
	static atomic_int cached;
	int n = atomic_load_explicit(&cached, memory_order_relaxed);

	/* relaxed: every thread computes the same value from the environment */
	if (!n) {
		n = possible_cpus_from_env();
		atomic_store_explicit(&cached, n, memory_order_relaxed);
	}
	return n;
}

size_t rqbpf_map_value_bytes(const struct rqbpf_map *m)
{
	if (!m)
		return 0;
	if (m->ops && m->ops->percpu)
		return (size_t)rqbpf_num_possible_cpus() * ((m->desc.value_size + 7u) & ~7u);
	return m->desc.value_size;
}

/* The calling thread's value in @p block, or NULL when its slot has none. */
static uint8_t *this_cpu(const struct percpu_map *p, uint8_t *block)
{
	int slot = res_spin_thread_slot();

	return slot >= 0 && (uint32_t)slot < p->ncpus ? block + (size_t)slot * p->elem : NULL;
}

/* Copies of values the programs write at the same time: 8-byte words,
 * relaxed atomics as the interpreter's own accesses (the kernel's
 * bpf_long_memcpy); @p bytes a multiple of 8, map memory 8-aligned. */
static void words_out(void *dst, const uint8_t *src, size_t bytes)
{
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t w =
		    __atomic_load_n((const uint64_t *)(const void *)(src + i), __ATOMIC_RELAXED);

		memcpy((uint8_t *)dst + i, &w, 8);
	}
}

static void words_in(uint8_t *dst, const void *src, size_t bytes)
{
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t w;

		memcpy(&w, (const uint8_t *)src + i, 8);
		__atomic_store_n((uint64_t *)(void *)(dst + i), w, __ATOMIC_RELAXED);
	}
}

/* A program's value (value_size bytes) into one CPU's: the padding zeroed. */
static void value_in(const struct rqbpf_map *m, uint8_t *dst, const void *src)
{
	uint32_t whole = m->desc.value_size & ~7u, rest = m->desc.value_size - whole;
	uint64_t last = 0;

	words_in(dst, src, whole);
	if (!rest)
		return;
	memcpy(&last, (const uint8_t *)src + whole, rest);
	words_in(dst + whole, &last, 8);
}

static int percpu_check(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	struct percpu_map *p;

	if (!d->value_size || !d->max_entries)
		return rqbpf_fail(err, -EINVAL,
		                  "map %s: a per-CPU map needs a value size and "
		                  "max_entries",
		                  m->name);
	if (d->value_size > MAX_PERCPU_VALUE)
		return rqbpf_fail(err, -E2BIG,
		                  "map %s: a per-CPU value of %u bytes exceeds the "
		                  "kernel's %u",
		                  m->name, d->value_size, MAX_PERCPU_VALUE);
	p = m->kind = calloc(1, sizeof(*p));
	if (!p)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	p->elem = (d->value_size + 7u) & ~7u;
	p->ncpus = (uint32_t)rqbpf_num_possible_cpus();
	p->max_entries = d->max_entries;
	return 0;
}

static size_t block_bytes(const struct percpu_map *p)
{
	return (size_t)p->ncpus * p->elem;
}

/* ---- BPF_MAP_TYPE_PERCPU_ARRAY ---- */

static void parray_destroy(struct rqbpf_map *m)
{
	struct percpu_map *p = percpu_of(m);

	if (p)
		free(p->blocks);
	free(p);
}

static int parray_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	struct percpu_map *p;
	int ret;

	if (m->desc.key_size != 4)
		return rqbpf_fail(err, -EINVAL, "map %s: an array needs key_size 4", m->name);
	ret = percpu_check(m, err);
	if (ret)
		return ret;
	p = percpu_of(m);
	p->blocks = aligned_alloc(8, (size_t)p->max_entries * block_bytes(p));
	if (!p->blocks)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	memset(p->blocks, 0, (size_t)p->max_entries * block_bytes(p));
	return 0;
}

/* Key @p key's block, or NULL past the end. */
static uint8_t *parray_block(const struct percpu_map *p, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	return idx < p->max_entries ? p->blocks + (size_t)idx * block_bytes(p) : NULL;
}

static void *parray_lookup_value(struct rqbpf_map *m, const void *key)
{
	const struct percpu_map *p = percpu_of(m);
	uint8_t *b = parray_block(p, key);

	return b ? this_cpu(p, b) : NULL;
}

/* The value (of one CPU) @p a lies in. */
static bool value_in_blocks(const struct percpu_map *p, const uint8_t *base, size_t size,
                            uintptr_t a, uint32_t value_size, struct rqbpf_region *out)
{
	uintptr_t off = a - (uintptr_t)base;

	if (!base || off >= size || off % p->elem >= value_size)
		return false;
	*out = (struct rqbpf_region){a - off % p->elem, value_size, true};
	return true;
}

static bool parray_value_at(const struct rqbpf_map *m, uintptr_t a, struct rqbpf_region *out)
{
	const struct percpu_map *p = percpu_of(m);

	return value_in_blocks(p, p->blocks, (size_t)p->max_entries * block_bytes(p), a,
	                       m->desc.value_size, out);
}

static int parray_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	const struct percpu_map *p = percpu_of(m);
	const uint8_t *b = parray_block(p, key);

	if (!b)
		return -ENOENT;
	words_out(value, b, block_bytes(p));
	return 0;
}

/* The kernel's checks of an array update, in its order. */
static int parray_update_check(const struct percpu_map *p, const void *key, uint64_t flags)
{
	if (flags > BPF_EXIST)
		return -EINVAL;
	if (!parray_block(p, key))
		return -E2BIG;
	return flags == BPF_NOEXIST ? -EEXIST : 0;
}

static int parray_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	const struct percpu_map *p = percpu_of(m);
	int ret = parray_update_check(p, key, flags);

	if (!ret)
		words_in(parray_block(p, key), value, block_bytes(p));
	return ret;
}

static int parray_update_prog(struct rqbpf_map *m, const void *key, const void *value,
                              uint64_t flags)
{
	const struct percpu_map *p = percpu_of(m);
	int ret = parray_update_check(p, key, flags);
	uint8_t *v;

	if (ret)
		return ret;
	v = this_cpu(p, parray_block(p, key));
	if (!v)
		return -EINVAL; /* no value for this thread's slot */
	value_in(m, v, value);
	return 0;
}

static int parray_delete(struct rqbpf_map *m, const void *key)
{
	(void)m;
	(void)key;
	return -EINVAL;
}

static int parray_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	return rqbpf_index_next_key(percpu_of(m)->max_entries, key, next_key);
}

const struct rqbpf_map_ops rqbpf_percpu_array_map_ops = {
    .type = BPF_MAP_TYPE_PERCPU_ARRAY,
    .indexed = true,
    .rcu = false,
    .percpu = true,
    .create = parray_create,
    .destroy = parray_destroy,
    .lookup_value = parray_lookup_value,
    .lookup = parray_lookup,
    .update = parray_update,
    .update_prog = parray_update_prog,
    .delete = parray_delete,
    .next_key = parray_next_key,
    .value_at = parray_value_at,
};

/* ---- BPF_MAP_TYPE_PERCPU_HASH ---- */

static void phash_destroy(struct rqbpf_map *m)
{
	struct percpu_map *p = percpu_of(m);

	if (p) {
		rqmap_hash_destroy(p->hash);
		free(p->zero);
	}
	free(p);
}

static int phash_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	struct rqmap_hash_attr attr = {.key_size = m->desc.key_size,
	                               .max_entries = m->desc.max_entries};
	struct percpu_map *p;
	int ret = percpu_check(m, err);

	if (ret)
		return ret;
	p = percpu_of(m);
	if (block_bytes(p) > RQMAP_MAX_VALUE_SIZE)
		return rqbpf_fail(err, -E2BIG,
		                  "map %s: %u possible CPUs x %u bytes exceed rqmaps' hash "
		                  "value limit of %u bytes (RQBPF_POSSIBLE_CPUS sets the count)",
		                  m->name, p->ncpus, p->elem, RQMAP_MAX_VALUE_SIZE);
	attr.value_size = (uint32_t)block_bytes(p);
	p->zero = calloc(1, block_bytes(p));
	if (!p->zero)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	ret = rqmap_hash_create(&attr, &p->hash);
	if (ret)
		return rqbpf_fail(err, ret, "map %s: cannot create the hash map (%s)", m->name,
		                  strerror(-ret));
	ret = rqmap_hash_get_values(p->hash, &p->hv);
	return ret ? rqbpf_fail(err, ret, "map %s: hash values not preallocated (%s)", m->name,
	                        strerror(-ret))
	           : 0;
}

/* Valid until the run's read-side section ends (ops.rcu). */
static void *phash_lookup_value(struct rqbpf_map *m, const void *key)
{
	const struct percpu_map *p = percpu_of(m);
	uint8_t *b = rqmap_hash_lookup_elem(p->hash, key);

	return b ? this_cpu(p, b) : NULL;
}

/* Any element's value of one CPU, as hash_value_at() finds any element's. */
static bool phash_value_at(const struct rqbpf_map *m, uintptr_t a, struct rqbpf_region *out)
{
	const struct percpu_map *p = percpu_of(m);
	const struct rqmap_hash_values *v = &p->hv;
	uintptr_t off = a - (uintptr_t)v->base, in;

	if (!v->base || off >= (uintptr_t)v->count * v->stride)
		return false;
	in = off % v->stride;
	if (in < v->value_off)
		return false;
	return value_in_blocks(p, (const uint8_t *)(a - (in - v->value_off)), v->value_size, a,
	                       m->desc.value_size, out);
}

static int phash_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	return rqmap_hash_lookup(percpu_of(m)->hash, key, value, 0);
}

static int phash_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	return rqmap_hash_update(percpu_of(m)->hash, key, value, flags);
}

/* This thread's value of an element present, in place: 0, or -ENOENT when
 * the key is absent. */
static int phash_write_this_cpu(struct rqbpf_map *m, const void *key, const void *value)
{
	const struct percpu_map *p = percpu_of(m);
	uint8_t *b;
	int ret = rqmap_read_lock();

	if (ret)
		return ret;
	b = rqmap_hash_lookup_elem(p->hash, key);
	if (b)
		value_in(m, this_cpu(p, b), value);
	rqmap_read_unlock();
	return b ? 0 : -ENOENT;
}

/*
 * A program's update: this thread's value only. A new element goes in with
 * every value zero (p->zero: no allocation, as a program may run in a
 * signal handler), then this thread's value is written in place; a key
 * deleted in between is inserted again.
 */
static int phash_update_prog(struct rqbpf_map *m, const void *key, const void *value,
                             uint64_t flags)
{
	const struct percpu_map *p = percpu_of(m);
	int ret;

	if (flags > BPF_EXIST)
		return -EINVAL;
	if (!this_cpu(p, p->zero))
		return -EINVAL; /* this thread's slot has no value */
	for (int tries = 0; tries < 8; tries++) {
		if (flags != BPF_NOEXIST) {
			ret = phash_write_this_cpu(m, key, value);
			if (ret != -ENOENT || flags == BPF_EXIST)
				return ret;
		}
		ret = rqmap_hash_update(p->hash, key, p->zero, BPF_NOEXIST);
		if (flags == BPF_NOEXIST && !ret)
			ret = phash_write_this_cpu(m, key, value);
		if (flags == BPF_NOEXIST)
			return ret == -ENOENT ? 0 : ret; /* deleted already: it was inserted */
		if (ret && ret != -EEXIST)
			return ret;
	}
	return -EBUSY; /* inserted and deleted by others each time */
}

static int phash_delete(struct rqbpf_map *m, const void *key)
{
	return rqmap_hash_delete(percpu_of(m)->hash, key);
}

static int phash_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	return rqmap_hash_get_next_key(percpu_of(m)->hash, key, next_key);
}

const struct rqbpf_map_ops rqbpf_percpu_hash_map_ops = {
    .type = BPF_MAP_TYPE_PERCPU_HASH,
    .indexed = false,
    .rcu = true,
    .percpu = true,
    .create = phash_create,
    .destroy = phash_destroy,
    .lookup_value = phash_lookup_value,
    .lookup = phash_lookup,
    .update = phash_update,
    .update_prog = phash_update_prog,
    .delete = phash_delete,
    .next_key = phash_next_key,
    .value_at = phash_value_at,
};
