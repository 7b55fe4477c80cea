/* SPDX-License-Identifier: MIT */
/*
 * BPF_MAP_TYPE_HASH on rqspinlock: one lock per bucket for writers, lock-free
 * RCU lookups, preallocated elements recycled through the per-thread freelist
 * after a grace period.
 *
 * Update copies the new value into a fresh element, links it at the head of
 * the bucket and then unlinks the old one (as the kernel does), so a lookup
 * sees either value, never a mix; the old element is retired (reused after an RCU grace period).
 */
#include "freelist.h"
#include "hash_internal.h"
#include "readers.h"
#include "reclaim.h"
#include "words.h"

#include <rqmap.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define UPDATE_FLAGS_MASK (RQMAP_NOEXIST | RQMAP_EXIST | RQMAP_F_LOCK)
#define CREATE_FLAGS_MASK (RQMAP_F_NO_PREALLOC | RQMAP_F_VALUE_LOCK | RQMAP_F_ZERO_SEED)
#define MAX_ENTRIES_LIMIT (1U << 28)

struct htab_elem {
	union {
		struct rqmap_retire rt; /* while waiting for a grace period */
		struct rqfl_node fl;    /* while in the freelist */
	};
	_Atomic(struct htab_elem *) next; /* bucket chain */
	_Atomic uint32_t hash;
	/* key words, then value words from value_off: values are 8-byte aligned,
	 * as the kernel's, for in-place 64-bit (and atomic) accesses */
	rqmap_word_t data[] __attribute__((aligned(8)));
};

static inline rqmap_word_t *elem_value(const struct rqmap_hash *m, struct htab_elem *e)
{
	return e->data + m->value_off;
}

static inline rqspinlock_t *value_lock(const struct rqmap_hash *m, rqmap_word_t *value)
{
	return (rqspinlock_t *)(void *)&value[m->lock_word];
}

/* ---- bucket locks: the comparison variants sit behind one predictable branch */

static inline int bucket_lock(struct rqmap_hash *m, struct rqmap_bucket *b)
{
	if (RQMAP_LIKELY(m->lock_kind == RQMAP_LOCK_RQSPIN))
		return res_spin_lock(&b->lock.rq);
	if (m->lock_kind == RQMAP_LOCK_PTHREAD_SPIN)
		return -pthread_spin_lock(&b->lock.ps);
	return 0; /* RQMAP_LOCK_GLOBAL: the whole operation holds m->global */
}

static inline void bucket_unlock(struct rqmap_hash *m, struct rqmap_bucket *b)
{
	if (RQMAP_LIKELY(m->lock_kind == RQMAP_LOCK_RQSPIN))
		res_spin_unlock(&b->lock.rq);
	else if (m->lock_kind == RQMAP_LOCK_PTHREAD_SPIN)
		pthread_spin_unlock(&b->lock.ps);
}

/* The global-lock baseline holds its one lock around every whole operation
 * (element allocation, copies and recycling included), as userspace eBPF
 * runtimes do; the other kinds take nothing here. */
static inline void op_lock(struct rqmap_hash *m)
{
	if (RQMAP_UNLIKELY(m->lock_kind == RQMAP_LOCK_GLOBAL))
		pthread_spin_lock(&m->global);
}

static inline void op_unlock(struct rqmap_hash *m)
{
	if (RQMAP_UNLIKELY(m->lock_kind == RQMAP_LOCK_GLOBAL))
		pthread_spin_unlock(&m->global);
}

/* ---- hashing (murmur3-style mixing of the zero-padded key words) */

static inline uint32_t rotl32(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

static uint32_t hash_words(const uint32_t *w, uint32_t n, uint32_t seed)
{
	uint32_t h = seed ^ (n * 0x9e3779b9U);

	for (uint32_t i = 0; i < n; i++) {
		h ^= rotl32(w[i] * 0xcc9e2d51U, 15) * 0x1b873593U;
		h = rotl32(h, 13) * 5 + 0xe6546b64U;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bU;
	h ^= h >> 13;
	h *= 0xc2b2ae35U;
	return h ^ (h >> 16);
}

struct keyref {
	uint32_t w[RQMAP_MAX_KEY_SIZE / 4];
	uint32_t hash;
	struct rqmap_bucket *b;
};

static void key_prepare(const struct rqmap_hash *m, const void *key, struct keyref *k)
{
	k->w[m->key_words - 1] = 0;
	memcpy(k->w, key, m->key_size);
	k->hash = hash_words(k->w, m->key_words, m->seed);
	k->b = &m->buckets[k->hash & (m->n_buckets - 1)];
}

/* ---- chains */

static struct htab_elem *bucket_find(const struct rqmap_hash *m, const struct keyref *k)
{
	struct htab_elem *e;

	/* acquire: pairs with the release stores of link_elem()/unlink_elem(),
	 * so the element's key and value words are visible. */
	for (e = atomic_load_explicit(&k->b->first, memory_order_acquire); e;
	     e = atomic_load_explicit(&e->next, memory_order_acquire))
		if (atomic_load_explicit(&e->hash, memory_order_relaxed) == k->hash &&
		    rqmap_words_equal(e->data, k->w, m->key_words))
			return e;
	return NULL;
}

static void link_elem(struct rqmap_bucket *b, struct htab_elem *e)
{
	atomic_store_explicit(&e->next, atomic_load_explicit(&b->first, memory_order_relaxed),
	                      memory_order_relaxed);
	/* release: publishes the filled element; pairs with bucket_find() */
	atomic_store_explicit(&b->first, e, memory_order_release);
}

static void unlink_elem(struct rqmap_bucket *b, struct htab_elem *victim)
{
	_Atomic(struct htab_elem *) *pp = &b->first;
	struct htab_elem *e;

	while ((e = atomic_load_explicit(pp, memory_order_relaxed)) != victim)
		pp = &e->next;
	/* release: a reader that loads the successor through this pointer must
	 * see it initialised; pairs with bucket_find(). The victim keeps its own
	 * next pointer so readers standing on it can go on. */
	atomic_store_explicit(pp, atomic_load_explicit(&victim->next, memory_order_relaxed),
	                      memory_order_release);
}

/* ---- element life cycle */

static struct htab_elem *elem_alloc(struct rqmap_hash *m, bool wait)
{
	struct htab_elem *e;

	if (m->flags & RQMAP_F_NO_PREALLOC) {
		e = malloc(m->elem_size);
		return e;
	}
	struct rqfl_node *n = wait ? rqmap_pop_or_wait(&m->fl) : rqmap_pop(&m->fl);

	return n ? caa_container_of(n, struct htab_elem, fl) : NULL;
}

/* Give back an element no reader has seen (never linked). */
static void elem_free_now(struct rqmap_hash *m, struct htab_elem *e)
{
	if (m->flags & RQMAP_F_NO_PREALLOC)
		free(e);
	else
		rqfl_push(&m->fl, &e->fl, rqfl_home(&m->fl));
}

/* Hand an unlinked element to RCU: it is reused after the grace period. */
static void elem_retire(struct rqmap_hash *m, struct htab_elem *e)
{
	if (m->flags & RQMAP_F_NO_PREALLOC)
		rqmap_retire(&e->rt, NULL, 0);
	else
		rqmap_retire(&e->rt, &m->fl, rqfl_home(&m->fl));
}

static void elem_fill(struct rqmap_hash *m, struct htab_elem *e, const struct keyref *k,
                      const void *value)
{
	rqmap_word_t *v = elem_value(m, e);

	atomic_store_explicit(&e->hash, k->hash, memory_order_relaxed);
	for (uint32_t i = 0; i < m->key_words; i++)
		atomic_store_explicit(&e->data[i], k->w[i], memory_order_relaxed);
	if (m->flags & RQMAP_F_VALUE_LOCK) {
		rqmap_words_store_skip(v, value, m->value_size, m->lock_word);
		atomic_store_explicit(&v[m->lock_word], 0, memory_order_relaxed);
	} else {
		rqmap_words_store(v, value, m->value_size);
	}
}

/* ---- value copies under the embedded lock (RQMAP_F_LOCK) */

static int value_store_locked(struct rqmap_hash *m, struct htab_elem *e, const void *value)
{
	rqmap_word_t *v = elem_value(m, e);
	int ret = res_spin_lock(value_lock(m, v));

	if (ret)
		return ret;
	rqmap_words_store_skip(v, value, m->value_size, m->lock_word);
	res_spin_unlock(value_lock(m, v));
	return 0;
}

static int value_load(struct rqmap_hash *m, struct htab_elem *e, void *value, uint64_t flags)
{
	rqmap_word_t *v = elem_value(m, e);
	int ret;

	if (!(flags & RQMAP_F_LOCK)) {
		rqmap_words_load(value, v, m->value_size);
		return 0;
	}
	ret = res_spin_lock(value_lock(m, v));
	if (ret)
		return ret;
	rqmap_words_load(value, v, m->value_size);
	res_spin_unlock(value_lock(m, v));
	/* The caller gets an unlocked lock word, as the kernel zeroes it. */
	memset((char *)value + 4 * (size_t)m->lock_word, 0, sizeof(rqspinlock_t));
	return 0;
}

/* ---- argument checks */

static int check_update_flags(const struct rqmap_hash *m, uint64_t flags)
{
	if ((flags & ~UPDATE_FLAGS_MASK) || (flags & 3) == 3)
		return -EINVAL;
	if ((flags & RQMAP_F_LOCK) && !(m->flags & RQMAP_F_VALUE_LOCK))
		return -EINVAL;
	return 0;
}

static int check_read_flags(const struct rqmap_hash *m, uint64_t flags)
{
	if (flags & ~RQMAP_F_LOCK)
		return -EINVAL;
	if ((flags & RQMAP_F_LOCK) && !(m->flags & RQMAP_F_VALUE_LOCK))
		return -EINVAL;
	return 0;
}

static int check_exist(const struct htab_elem *old, uint64_t flags)
{
	if (old && (flags & 3) == RQMAP_NOEXIST)
		return -EEXIST;
	if (!old && (flags & 3) == RQMAP_EXIST)
		return -ENOENT;
	return 0;
}

/* Reserve room for one more live element (kernel: inc_elem_count). */
static bool count_reserve(struct rqmap_hash *m)
{
	if (atomic_fetch_add_explicit(&m->count, 1, memory_order_relaxed) < m->max_entries)
		return true;
	atomic_fetch_sub_explicit(&m->count, 1, memory_order_relaxed);
	return false;
}

static void count_release(struct rqmap_hash *m, uint32_t n)
{
	atomic_fetch_sub_explicit(&m->count, n, memory_order_relaxed);
}

/* ---- operations */

/* RQMAP_F_LOCK on an existing element: in place, under its lock only. */
static int update_in_place(struct rqmap_hash *m, const struct keyref *k, const void *value,
                           uint64_t flags)
{
	struct htab_elem *old;
	int ret;

	rqmap_rcu_lock();
	old = bucket_find(m, k);
	ret = check_exist(old, flags);
	if (!ret)
		ret = old ? value_store_locked(m, old, value) : -EAGAIN;
	rqmap_rcu_unlock();
	return ret;
}

/* The common start of a keyed operation whose arguments were checked: the
 * flags' verdict @flags_ret, this thread's registration, the key's digest. */
static int keyed_op_start(struct rqmap_hash *m, const void *key, int flags_ret, struct keyref *k)
{
	int ret = flags_ret ? flags_ret : rqmap_thread_ensure();

	if (!ret)
		key_prepare(m, key, k);
	return ret;
}

static int rqmap_hash_update_impl(struct rqmap_hash *m, const void *key, const void *value,
                                  uint64_t flags)
{
	struct htab_elem *old, *e;
	bool waited = false;
	struct keyref k;
	int ret;

	if (!m || !key || !value)
		return -EINVAL;
	ret = keyed_op_start(m, key, check_update_flags(m, flags), &k);
	if (ret)
		return ret;
	if (flags & RQMAP_F_LOCK) {
		ret = update_in_place(m, &k, value, flags);
		if (ret != -EAGAIN)
			return ret;
	}
	/* Fill the new element before taking the lock: short critical section.
	 * Only when one is really needed and none is free, wait for recycling
	 * (outside the lock) and go round once more. */
	e = elem_alloc(m, false);
retry:
	if (e)
		elem_fill(m, e, &k, value);
	ret = bucket_lock(m, k.b);
	if (ret)
		goto out_free;
	old = bucket_find(m, &k);
	ret = check_exist(old, flags);
	if (ret)
		goto out_unlock;
	if (old && (flags & RQMAP_F_LOCK)) {
		ret = value_store_locked(m, old, value);
		goto out_unlock;
	}
	if (!old && !count_reserve(m)) {
		ret = -E2BIG;
		goto out_unlock;
	}
	if (!e) {
		if (!old)
			count_release(m, 1);
		bucket_unlock(m, k.b);
		if (waited)
			return -ENOMEM;
		waited = true;
		e = elem_alloc(m, true);
		goto retry;
	}
	link_elem(k.b, e);
	if (old)
		unlink_elem(k.b, old);
	bucket_unlock(m, k.b);
	if (old)
		elem_retire(m, old);
	return 0;
out_unlock:
	bucket_unlock(m, k.b);
out_free:
	if (e)
		elem_free_now(m, e);
	return ret;
}

static __attribute__((noinline)) int update_global(struct rqmap_hash *m, const void *key,
                                                   const void *value, uint64_t flags)
{
	int ret;

	op_lock(m);
	ret = rqmap_hash_update_impl(m, key, value, flags);
	op_unlock(m);
	return ret;
}

int rqmap_hash_update(struct rqmap_hash *m, const void *key, const void *value, uint64_t flags)
{
	int ret;

	rqmap_enter();
	if (RQMAP_UNLIKELY(m && m->lock_kind == RQMAP_LOCK_GLOBAL))
		ret = update_global(m, key, value, flags);
	else
		ret = rqmap_hash_update_impl(m, key, value, flags);
	rqmap_leave();
	return ret;
}

int rqmap_hash_lookup(struct rqmap_hash *m, const void *key, void *value, uint64_t flags)
{
	struct htab_elem *e;
	struct keyref k;
	int ret;

	if (!m || !key || !value)
		return -EINVAL;
	ret = keyed_op_start(m, key, check_read_flags(m, flags), &k);
	if (ret)
		return ret;
	if (RQMAP_UNLIKELY(m->lock_kind == RQMAP_LOCK_GLOBAL)) {
		/* the baseline design: every operation under the map's lock */
		op_lock(m);
		e = bucket_find(m, &k);
		ret = e ? value_load(m, e, value, flags) : -ENOENT;
		op_unlock(m);
		return ret;
	}
	rqmap_rcu_lock();
	e = bucket_find(m, &k);
	ret = e ? value_load(m, e, value, flags) : -ENOENT;
	rqmap_rcu_unlock();
	return ret;
}

void *rqmap_hash_lookup_elem(struct rqmap_hash *m, const void *key)
{
	struct htab_elem *e;
	struct keyref k;

	if (!m || !key)
		return NULL;
	key_prepare(m, key, &k);
	/* The caller's read-side section keeps the element from being recycled
	 * (any lock kind: this walk is the lock-free one). */
	e = bucket_find(m, &k);
	return e ? (void *)elem_value(m, e) : NULL;
}

int rqmap_hash_get_values(const struct rqmap_hash *m, struct rqmap_hash_values *out)
{
	if (!m || !out)
		return -EINVAL;
	if (m->flags & RQMAP_F_NO_PREALLOC)
		return -ENOTSUP;
	*out = (struct rqmap_hash_values){
	    .base = m->pool,
	    .count = m->capacity,
	    .stride = m->elem_size,
	    .value_off =
	        (uint32_t)(offsetof(struct htab_elem, data) + sizeof(rqmap_word_t) * m->value_off),
	    .value_size = m->value_size,
	};
	return 0;
}

static int delete_common_impl(struct rqmap_hash *m, const void *key, void *value, uint64_t flags)
{
	struct htab_elem *e;
	struct keyref k;
	int ret = keyed_op_start(m, key, 0, &k);

	if (ret)
		return ret;
	ret = bucket_lock(m, k.b);
	if (ret)
		return ret;
	e = bucket_find(m, &k);
	ret = e ? 0 : -ENOENT;
	if (e && value)
		ret = value_load(m, e, value, flags);
	if (!ret) {
		unlink_elem(k.b, e);
		count_release(m, 1);
	}
	bucket_unlock(m, k.b);
	if (!ret)
		elem_retire(m, e);
	return ret;
}

static int delete_common(struct rqmap_hash *m, const void *key, void *value, uint64_t flags)
{
	int ret;

	rqmap_enter();
	op_lock(m);
	ret = delete_common_impl(m, key, value, flags);
	op_unlock(m);
	rqmap_leave();
	return ret;
}

int rqmap_hash_delete(struct rqmap_hash *m, const void *key)
{
	if (!m || !key)
		return -EINVAL;
	return delete_common(m, key, NULL, 0);
}

int rqmap_hash_lookup_and_delete(struct rqmap_hash *m, const void *key, void *value, uint64_t flags)
{
	int ret;

	if (!m || !key || !value)
		return -EINVAL;
	ret = check_read_flags(m, flags);
	return ret ? ret : delete_common(m, key, value, flags);
}

static void key_copy_out(const struct rqmap_hash *m, struct htab_elem *e, void *key)
{
	rqmap_words_load(key, e->data, m->key_size);
}

int rqmap_hash_get_next_key(struct rqmap_hash *m, const void *key, void *next_key)
{
	struct htab_elem *e = NULL;
	uint32_t i = 0;
	struct keyref k;
	int ret;

	if (!m || !next_key)
		return -EINVAL;
	ret = rqmap_thread_ensure();
	if (ret)
		return ret;
	rqmap_rcu_lock();
	if (key) {
		key_prepare(m, key, &k);
		e = bucket_find(m, &k);
		/* Not found (deleted meanwhile): restart from the first key, as the
		 * kernel does, rather than fail. */
		if (e) {
			i = (uint32_t)(k.b - m->buckets) + 1;
			/* acquire: pairs with link_elem()/unlink_elem() */
			e = atomic_load_explicit(&e->next, memory_order_acquire);
		}
	}
	for (; !e && i < m->n_buckets; i++)
		/* acquire: pairs with link_elem()/unlink_elem() */
		e = atomic_load_explicit(&m->buckets[i].first, memory_order_acquire);
	if (e)
		key_copy_out(m, e, next_key);
	rqmap_rcu_unlock();
	return e ? 0 : -ENOENT;
}

/* ---- batch operations, one bucket at a time under its lock */

struct batch {
	char *keys, *values;
	uint32_t done, want;
	uint64_t flags;
	bool del;
};

static uint32_t chain_len(struct rqmap_bucket *b)
{
	uint32_t n = 0;

	for (struct htab_elem *e = atomic_load_explicit(&b->first, memory_order_relaxed); e;
	     e = atomic_load_explicit(&e->next, memory_order_relaxed))
		n++;
	return n;
}

/* Copy the bucket (locked by the caller) into the batch. */
static int batch_copy_bucket(struct rqmap_hash *m, struct rqmap_bucket *b, struct batch *bt)
{
	uint32_t i = bt->done;

	for (struct htab_elem *e = atomic_load_explicit(&b->first, memory_order_relaxed); e;
	     e = atomic_load_explicit(&e->next, memory_order_relaxed), i++) {
		int ret = value_load(m, e, bt->values + (size_t)i * m->value_size, bt->flags);

		if (ret)
			return ret;
		key_copy_out(m, e, bt->keys + (size_t)i * m->key_size);
	}
	return 0;
}

/* Retire a detached chain: read each next pointer before retiring. */
static void retire_chain(struct rqmap_hash *m, struct htab_elem *e)
{
	while (e) {
		struct htab_elem *next = atomic_load_explicit(&e->next, memory_order_relaxed);

		elem_retire(m, e);
		e = next;
	}
}

/* 1: bucket copied; 0: it does not fit; <0: error, bucket untouched. */
static int batch_bucket(struct rqmap_hash *m, struct rqmap_bucket *b, struct batch *bt)
{
	struct htab_elem *chain = NULL;
	uint32_t n;
	int ret = bucket_lock(m, b);

	if (ret)
		return ret;
	n = chain_len(b);
	if (bt->done + n > bt->want) {
		bucket_unlock(m, b);
		return bt->done ? 0 : -ENOSPC;
	}
	ret = batch_copy_bucket(m, b, bt);
	if (!ret && bt->del) {
		chain = atomic_load_explicit(&b->first, memory_order_relaxed);
		/* release: pairs with bucket_find(), like unlink_elem() */
		atomic_store_explicit(&b->first, NULL, memory_order_release);
		count_release(m, n);
	}
	bucket_unlock(m, b);
	if (ret)
		return ret;
	retire_chain(m, chain);
	bt->done += n;
	return 1;
}

static int hash_batch_impl(struct rqmap_hash *m, uint32_t *cursor, void *keys, void *values,
                           uint32_t *count, uint64_t flags, bool del)
{
	struct batch bt = {.keys = keys, .values = values, .flags = flags, .del = del};
	uint32_t i;
	int ret;

	if (!m || !cursor || !count || (*count && (!keys || !values)))
		return -EINVAL;
	ret = check_read_flags(m, flags);
	if (!ret)
		ret = rqmap_thread_ensure();
	if (ret)
		return ret;
	bt.want = *count;
	for (i = *cursor; i < m->n_buckets; i++) {
		struct rqmap_bucket *b = &m->buckets[i];

		/* Empty buckets need no lock (the kernel skips them the same way). */
		if (!atomic_load_explicit(&b->first, memory_order_relaxed))
			continue;
		ret = batch_bucket(m, b, &bt);
		if (ret <= 0)
			break;
		ret = 0;
	}
	*count = bt.done;
	*cursor = i < m->n_buckets ? i : m->n_buckets;
	if (!ret && i >= m->n_buckets)
		ret = -ENOENT;
	return ret;
}

static int hash_batch(struct rqmap_hash *m, uint32_t *cursor, void *keys, void *values,
                      uint32_t *count, uint64_t flags, bool del)
{
	int ret;

	if (!m)
		return -EINVAL;
	rqmap_enter();
	op_lock(m);
	ret = hash_batch_impl(m, cursor, keys, values, count, flags, del);
	op_unlock(m);
	rqmap_leave();
	return ret;
}

int rqmap_hash_lookup_batch(struct rqmap_hash *m, uint32_t *cursor, void *keys, void *values,
                            uint32_t *count, uint64_t flags)
{
	return hash_batch(m, cursor, keys, values, count, flags, false);
}

int rqmap_hash_lookup_and_delete_batch(struct rqmap_hash *m, uint32_t *cursor, void *keys,
                                       void *values, uint32_t *count, uint64_t flags)
{
	return hash_batch(m, cursor, keys, values, count, flags, true);
}

/* ---- creation */

static int check_attr(const struct rqmap_hash_attr *a)
{
	if (!a->key_size || !a->value_size || !a->max_entries || (a->flags & ~CREATE_FLAGS_MASK))
		return -EINVAL;
	if ((unsigned)a->lock_kind > RQMAP_LOCK_GLOBAL)
		return -EINVAL;
	if (a->n_buckets & (a->n_buckets - 1))
		return -EINVAL;
	if ((a->flags & RQMAP_F_VALUE_LOCK) && !rqmap_lock_off_ok(a->lock_off, a->value_size))
		return -EINVAL;
	if (a->key_size > RQMAP_MAX_KEY_SIZE || a->value_size > RQMAP_MAX_VALUE_SIZE ||
	    a->max_entries > MAX_ENTRIES_LIMIT || a->spare > MAX_ENTRIES_LIMIT ||
	    a->n_buckets > MAX_ENTRIES_LIMIT)
		return -E2BIG;
	return 0;
}

static uint32_t roundup_pow2(uint32_t x)
{
	uint32_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

static int alloc_buckets(struct rqmap_hash *m)
{
	m->buckets = calloc(m->n_buckets, sizeof(*m->buckets));
	if (!m->buckets)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->n_buckets; i++) {
		if (m->lock_kind == RQMAP_LOCK_PTHREAD_SPIN)
			pthread_spin_init(&m->buckets[i].lock.ps, PTHREAD_PROCESS_PRIVATE);
		else
			res_spin_lock_init(&m->buckets[i].lock.rq);
		atomic_init(&m->buckets[i].first, NULL);
	}
	return 0;
}

static int alloc_pool(struct rqmap_hash *m)
{
	int ret = rqfl_init(&m->fl, 0);

	if (ret || (m->flags & RQMAP_F_NO_PREALLOC))
		return ret;
	m->fl.help_above = (m->capacity - m->max_entries) / RQMAP_HELP_DIVISOR;
	m->pool = calloc(m->capacity, m->elem_size);
	if (!m->pool)
		return -ENOMEM;
	rqfl_populate(&m->fl, m->pool, m->elem_size, m->capacity);
	return 0;
}

static void init_geometry(struct rqmap_hash *m, const struct rqmap_hash_attr *a)
{
	uint32_t spare = a->spare ? a->spare : (a->max_entries > 1024 ? a->max_entries : 1024);

	m->key_size = a->key_size;
	m->value_size = a->value_size;
	m->key_words = rqmap_words(a->key_size);
	m->value_off = (m->key_words + 1) & ~1U;
	m->value_words = rqmap_words(a->value_size);
	m->elem_size = (uint32_t)((sizeof(struct htab_elem) +
	                           4 * (size_t)(m->value_off + m->value_words) + 7) &
	                          ~(size_t)7);
	m->max_entries = a->max_entries;
	m->capacity = (m->flags & RQMAP_F_NO_PREALLOC) ? a->max_entries : a->max_entries + spare;
	m->lock_word = a->lock_off / 4;
	m->n_buckets = a->n_buckets ? a->n_buckets : roundup_pow2(a->max_entries);
}

int rqmap_hash_create(const struct rqmap_hash_attr *a, struct rqmap_hash **out)
{
	struct rqmap_hash *m;
	int ret;

	if (!a || !out)
		return -EINVAL;
	ret = check_attr(a);
	if (ret)
		return ret;
	ret = rqmap_thread_ensure();
	if (ret)
		return ret;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->flags = a->flags;
	m->lock_kind = a->lock_kind;
	init_geometry(m, a);
	if (!(a->flags & RQMAP_F_ZERO_SEED) && getrandom(&m->seed, sizeof(m->seed), 0) < 0)
		m->seed = (uint32_t)(uintptr_t)m;
	pthread_spin_init(&m->global, PTHREAD_PROCESS_PRIVATE);
	ret = alloc_buckets(m);
	if (!ret)
		ret = alloc_pool(m);
	if (ret) {
		rqmap_hash_destroy(m);
		return ret;
	}
	ret = rqmap_reclaim_start();
	if (ret) {
		rqmap_hash_destroy(m);
		return ret;
	}
	*out = m;
	return 0;
}

void rqmap_hash_destroy(struct rqmap_hash *m)
{
	if (!m)
		return;
	/* Pending callbacks push into this map's freelist: let them finish. */
	rqmap_quiesce();
	if ((m->flags & RQMAP_F_NO_PREALLOC) && m->buckets)
		for (uint32_t i = 0; i < m->n_buckets; i++) {
			struct htab_elem *e =
			    atomic_load_explicit(&m->buckets[i].first, memory_order_relaxed);

			while (e) {
				struct htab_elem *next =
				    atomic_load_explicit(&e->next, memory_order_relaxed);

				free(e);
				e = next;
			}
		}
	if (m->fl.lists)
		rqfl_destroy(&m->fl);
	free(m->pool);
	free(m->buckets);
	pthread_spin_destroy(&m->global);
	free(m);
}

int rqmap_hash_info(struct rqmap_hash *m, struct rqmap_hash_info *info)
{
	if (!m || !info)
		return -EINVAL;
	info->max_entries = m->max_entries;
	info->capacity = m->capacity;
	info->count = atomic_load_explicit(&m->count, memory_order_relaxed);
	info->free = (uint32_t)rqfl_count(&m->fl);
	info->n_buckets = m->n_buckets;
	return 0;
}

struct rqmap_bucket *rqmap_hash_bucket_of(struct rqmap_hash *m, const void *key)
{
	struct keyref k;

	key_prepare(m, key, &k);
	return k.b;
}
