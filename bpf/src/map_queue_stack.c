/* SPDX-License-Identifier: MIT */
/*
 * map_queue_stack.c: BPF_MAP_TYPE_QUEUE and BPF_MAP_TYPE_STACK as the
 * kernel's (kernel/bpf/queue_stack_maps.c since 6.15), on rqspinlock: a
 * ring of max_entries + 1 value slots, head and tail, under a res lock.
 * Push with BPF_EXIST overwrites the oldest value when full (else -E2BIG);
 * pop and peek of an empty map zero the value and return -ENOENT; a lock
 * that fails (a deadlock, as a program run from a signal handler that
 * interrupted an operation of its own thread on the map; or a timeout)
 * makes the operation return -EBUSY, as the kernel's does. The map API:
 * lookup is peek, update is push, rqbpf_map_lookup_and_delete() is pop;
 * delete and get_next_key return -EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rqspinlock.h>

#include "maps.h"

struct qs {
	rqspinlock_t lock;
	uint32_t head, tail, size; /* size: max_entries + 1 */
	uint32_t value_size;
	uint8_t *elements;
};

static struct qs *qs_of(const struct rqbpf_map *m)
{
	return m->kind;
}

static void qs_destroy(struct rqbpf_map *m)
{
	struct qs *q = qs_of(m);

	free(q->elements);
	free(q);
}

static int qs_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	struct qs *q;

	if (d->key_size || !d->value_size || !d->max_entries || d->max_entries == UINT32_MAX)
		return rqbpf_fail(err, -EINVAL,
		                  "map %s: a queue or stack needs key size 0, a value size and "
		                  "max_entries",
		                  m->name);
	q = m->kind = calloc(1, sizeof(*q));
	if (!q)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	res_spin_lock_init(&q->lock);
	q->size = d->max_entries + 1;
	q->value_size = d->value_size;
	q->elements = calloc(q->size, d->value_size);
	return q->elements ? 0 : rqbpf_fail(err, -ENOMEM, "out of memory");
}

static bool qs_empty(const struct qs *q)
{
	return q->head == q->tail;
}

static bool qs_full(const struct qs *q)
{
	return (q->head + 1 == q->size ? 0 : q->head + 1) == q->tail;
}

static uint32_t next(const struct qs *q, uint32_t i)
{
	return i + 1 >= q->size ? 0 : i + 1;
}

/* The value the kernel's __queue_map_get() (@p stack false) or
 * __stack_map_get() reads, removed when @p delete. */
static int qs_get(struct rqbpf_map *m, void *value, bool stack, bool delete)
{
	struct qs *q = qs_of(m);
	uint32_t i;

	if (res_spin_lock(&q->lock))
		return -EBUSY;
	if (qs_empty(q)) {
		memset(value, 0, q->value_size);
		res_spin_unlock(&q->lock);
		return -ENOENT;
	}
	i = stack ? (q->head ? q->head - 1 : q->size - 1) : q->tail;
	memcpy(value, q->elements + (size_t)i * q->value_size, q->value_size);
	if (delete &&stack)
		q->head = i;
	else if (delete)
		q->tail = next(q, q->tail);
	res_spin_unlock(&q->lock);
	return 0;
}

/* The kernel's queue_stack_map_push_elem(). */
static int qs_push(struct rqbpf_map *m, const void *value, uint64_t flags)
{
	struct qs *q = qs_of(m);

	if ((flags & BPF_NOEXIST) || flags > BPF_EXIST)
		return -EINVAL;
	if (res_spin_lock(&q->lock))
		return -EBUSY;
	if (qs_full(q)) {
		if (!(flags & BPF_EXIST)) {
			res_spin_unlock(&q->lock);
			return -E2BIG;
		}
		q->tail = next(q, q->tail); /* overwrite the oldest */
	}
	memcpy(q->elements + (size_t)q->head * q->value_size, value, q->value_size);
	q->head = next(q, q->head);
	res_spin_unlock(&q->lock);
	return 0;
}

static int queue_pop(struct rqbpf_map *m, void *value)
{
	return qs_get(m, value, false, true);
}

static int queue_peek(struct rqbpf_map *m, void *value)
{
	return qs_get(m, value, false, false);
}

static int stack_pop(struct rqbpf_map *m, void *value)
{
	return qs_get(m, value, true, true);
}

static int stack_peek(struct rqbpf_map *m, void *value)
{
	return qs_get(m, value, true, false);
}

/* Values are copied in and out, never looked up in place. */
static void *qs_lookup_value(struct rqbpf_map *m, const void *key)
{
	(void)m;
	(void)key;
	return NULL;
}

static int queue_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	(void)key;
	return queue_peek(m, value);
}

static int stack_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	(void)key;
	return stack_peek(m, value);
}

static int qs_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	(void)key;
	return qs_push(m, value, flags);
}

static int qs_delete(struct rqbpf_map *m, const void *key)
{
	(void)m;
	(void)key;
	return -EINVAL;
}

static int qs_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	(void)next_key;
	return qs_delete(m, key);
}

static bool qs_value_at(const struct rqbpf_map *m, uintptr_t addr, struct rqbpf_region *out)
{
	(void)m;
	(void)addr;
	(void)out;
	return false;
}

#define QS_OPS(kind, TYPE)                                                                         \
	const struct rqbpf_map_ops rqbpf_##kind##_map_ops = {                                      \
	    .type = BPF_MAP_TYPE_##TYPE,                                                           \
	    .indexed = false,                                                                      \
	    .rcu = false,                                                                          \
	    .create = qs_create,                                                                   \
	    .destroy = qs_destroy,                                                                 \
	    .lookup_value = qs_lookup_value,                                                       \
	    .lookup = kind##_lookup,                                                               \
	    .update = qs_update,                                                                   \
	    .delete = qs_delete,                                                                   \
	    .next_key = qs_next_key,                                                               \
	    .value_at = qs_value_at,                                                               \
	    .push = qs_push,                                                                       \
	    .pop = kind##_pop,                                                                     \
	    .peek = kind##_peek,                                                                   \
	};
QS_OPS(queue, QUEUE)
QS_OPS(stack, STACK)
