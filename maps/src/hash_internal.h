/* SPDX-License-Identifier: MIT */
/* Hash map internals shared with the tests (white-box re-entry checks). */
#ifndef RQMAP_HASH_INTERNAL_H
#define RQMAP_HASH_INTERNAL_H

#include "freelist.h"

#include <rqmap.h>
#include <rqspinlock.h>

#include <pthread.h>
#include <stdatomic.h>

struct htab_elem;

union rqmap_bucket_lock {
	rqspinlock_t rq;
	pthread_spinlock_t ps;
};
_Static_assert(sizeof(union rqmap_bucket_lock) == 4, "bucket lock must stay 4 bytes");

struct rqmap_bucket {
	union rqmap_bucket_lock lock;
	_Atomic(struct htab_elem *) first;
};

struct rqmap_hash {
	struct rqmap_bucket *buckets;
	uint32_t n_buckets;
	uint32_t key_size, value_size, key_words, value_off, value_words, elem_size;
	uint32_t max_entries, capacity, flags, lock_word, seed;
	enum rqmap_lock_kind lock_kind;
	pthread_spinlock_t global;
	_Atomic uint32_t count;
	struct rqfl fl;
	char *pool;
};

/* The bucket @key hashes to (tests hold its lock to force re-entry). */
struct rqmap_bucket *rqmap_hash_bucket_of(struct rqmap_hash *m, const void *key);

#endif /* RQMAP_HASH_INTERNAL_H */
