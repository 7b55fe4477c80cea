/* SPDX-License-Identifier: MIT */
/*
 * BPF_MAP_TYPE_ARRAY: max_entries values of value_size bytes, preallocated
 * and zeroed at creation, indexed by a u32 key. Nothing is ever inserted or
 * removed, so there is no bucket lock, no freelist and no RCU: an element is
 * valid for the map's lifetime and every operation is async-signal-safe.
 * Copies in and out are word-wise relaxed atomics; RQMAP_F_LOCK serialises
 * them with the value's embedded rqspinlock.
 */
#include "words.h"

#include <rqmap.h>
#include <rqspinlock.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_CREATE_FLAGS RQMAP_F_VALUE_LOCK
/* Largest array in bytes; beyond it creation fails with -E2BIG. */
#define ARRAY_MAX_BYTES (1ULL << 40)

struct rqmap_array {
	rqmap_word_t *values; /* max_entries strides of stride_words words */
	uint32_t value_size, stride_words, max_entries, flags, lock_word;
};

static int check_attr(const struct rqmap_array_attr *a)
{
	uint64_t stride;

	if (!a->value_size || !a->max_entries || (a->flags & ~ARRAY_CREATE_FLAGS))
		return -EINVAL;
	if ((a->flags & RQMAP_F_VALUE_LOCK) && !rqmap_lock_off_ok(a->lock_off, a->value_size))
		return -EINVAL;
	stride = ((uint64_t)a->value_size + 7) & ~7ULL;
	if (a->value_size > RQMAP_MAX_VALUE_SIZE || stride * a->max_entries > ARRAY_MAX_BYTES)
		return -E2BIG;
	return 0;
}

int rqmap_array_create(const struct rqmap_array_attr *a, struct rqmap_array **out)
{
	struct rqmap_array *m;
	size_t bytes;
	int ret;

	if (!a || !out)
		return -EINVAL;
	ret = check_attr(a);
	if (ret)
		return ret;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->value_size = a->value_size;
	/* 8-byte stride, as the kernel's round_up(value_size, 8) */
	m->stride_words = 2 * ((a->value_size + 7) / 8);
	m->max_entries = a->max_entries;
	m->flags = a->flags;
	m->lock_word = a->lock_off / 4;
	bytes = (size_t)m->stride_words * 4 * m->max_entries;
	m->values = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	if (!m->values) {
		free(m);
		return -ENOMEM;
	}
	memset((void *)m->values, 0, bytes); /* zeroed; an all-zero rqspinlock_t is unlocked */
	*out = m;
	return 0;
}

void rqmap_array_destroy(struct rqmap_array *m)
{
	if (!m)
		return;
	free((void *)m->values);
	free(m);
}

/* The value of @key, or NULL when the index is out of range. */
static rqmap_word_t *slot_of(const struct rqmap_array *m, const void *key)
{
	uint32_t index;

	memcpy(&index, key, sizeof(index));
	if (index >= m->max_entries)
		return NULL;
	return m->values + (size_t)index * m->stride_words;
}

static rqspinlock_t *slot_lock(const struct rqmap_array *m, rqmap_word_t *v)
{
	return (rqspinlock_t *)(void *)&v[m->lock_word];
}

void *rqmap_array_lookup_elem(struct rqmap_array *m, const void *key)
{
	if (!m || !key)
		return NULL;
	return slot_of(m, key);
}

/* Copy @value in, leaving an embedded lock word alone (as the kernel's
 * copy_map_value skips special fields). */
static void value_store(const struct rqmap_array *m, rqmap_word_t *v, const void *value)
{
	if (m->flags & RQMAP_F_VALUE_LOCK)
		rqmap_words_store_skip(v, value, m->value_size, m->lock_word);
	else
		rqmap_words_store(v, value, m->value_size);
}

int rqmap_array_update(struct rqmap_array *m, const void *key, const void *value, uint64_t flags)
{
	rqmap_word_t *v;
	int ret;

	if (!m || !key || !value)
		return -EINVAL;
	/* the kernel's checks, in its order */
	if ((flags & ~RQMAP_F_LOCK) > RQMAP_EXIST)
		return -EINVAL;
	v = slot_of(m, key);
	if (!v)
		return -E2BIG;
	if (flags & RQMAP_NOEXIST)
		return -EEXIST;
	if ((flags & RQMAP_F_LOCK) && !(m->flags & RQMAP_F_VALUE_LOCK))
		return -EINVAL;
	if (!(flags & RQMAP_F_LOCK)) {
		value_store(m, v, value);
		return 0;
	}
	ret = res_spin_lock(slot_lock(m, v));
	if (ret)
		return ret;
	value_store(m, v, value);
	res_spin_unlock(slot_lock(m, v));
	return 0;
}

int rqmap_array_lookup(struct rqmap_array *m, const void *key, void *value, uint64_t flags)
{
	rqmap_word_t *v;
	int ret;

	if (!m || !key || !value || (flags & ~RQMAP_F_LOCK))
		return -EINVAL;
	if ((flags & RQMAP_F_LOCK) && !(m->flags & RQMAP_F_VALUE_LOCK))
		return -EINVAL;
	v = slot_of(m, key);
	if (!v)
		return -ENOENT;
	if (!(flags & RQMAP_F_LOCK)) {
		rqmap_words_load(value, v, m->value_size);
	} else {
		ret = res_spin_lock(slot_lock(m, v));
		if (ret)
			return ret;
		rqmap_words_load(value, v, m->value_size);
		res_spin_unlock(slot_lock(m, v));
	}
	/* The caller gets an unlocked lock word, as the kernel zeroes it. */
	if (m->flags & RQMAP_F_VALUE_LOCK)
		memset((char *)value + 4 * (size_t)m->lock_word, 0, sizeof(rqspinlock_t));
	return 0;
}

int rqmap_array_delete(struct rqmap_array *m, const void *key)
{
	(void)m;
	(void)key;
	return -EINVAL;
}

int rqmap_array_get_next_key(struct rqmap_array *m, const void *key, void *next_key)
{
	uint32_t index, next;

	if (!m || !next_key)
		return -EINVAL;
	if (key)
		memcpy(&index, key, sizeof(index));
	/* as the kernel: NULL or out of range restarts at 0 */
	if (!key || index >= m->max_entries)
		next = 0;
	else if (index == m->max_entries - 1)
		return -ENOENT;
	else
		next = index + 1;
	memcpy(next_key, &next, sizeof(next));
	return 0;
}

uint32_t rqmap_array_value_size(const struct rqmap_array *m)
{
	return m ? m->value_size : 0;
}

uint32_t rqmap_array_max_entries(const struct rqmap_array *m)
{
	return m ? m->max_entries : 0;
}
