/* SPDX-License-Identifier: MIT */
/*
 * Array map semantics (the kernel's BPF_MAP_TYPE_ARRAY results), RQMAP_F_LOCK
 * copies and in-place increments under the embedded lock, and the in-place
 * hash lookup's read-side rule (a replaced element keeps its old value until
 * the section ends), with and without preallocation.
 */
#include "testutil.h"

#include <rqmap.h>
#include <rqspinlock.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A value with an embedded lock in the middle, as a BPF value would have. */
struct lval {
	uint32_t a;
	rqspinlock_t lock;
	uint64_t b, c;
};

static struct rqmap_array *make_array(uint32_t value_size, uint32_t max, uint32_t flags,
                                      uint32_t lock_off)
{
	struct rqmap_array_attr a = {
	    .value_size = value_size, .max_entries = max, .flags = flags, .lock_off = lock_off};
	struct rqmap_array *m = NULL;

	CHECK_EQ(rqmap_array_create(&a, &m), 0);
	return m;
}

static void test_create_errors(void)
{
	struct rqmap_array_attr a = {.value_size = 8, .max_entries = 4};
	struct rqmap_array *m = NULL;

	a.value_size = 0;
	CHECK_EQ(rqmap_array_create(&a, &m), -EINVAL);
	a.value_size = RQMAP_MAX_VALUE_SIZE + 1;
	CHECK_EQ(rqmap_array_create(&a, &m), -E2BIG);
	a.value_size = 8;
	a.max_entries = 0;
	CHECK_EQ(rqmap_array_create(&a, &m), -EINVAL);
	a.max_entries = 4;
	a.flags = RQMAP_F_NO_PREALLOC; /* arrays are always preallocated */
	CHECK_EQ(rqmap_array_create(&a, &m), -EINVAL);
	a.flags = RQMAP_F_VALUE_LOCK;
	a.lock_off = 2;
	CHECK_EQ(rqmap_array_create(&a, &m), -EINVAL);
	a.lock_off = 8; /* past the value */
	CHECK_EQ(rqmap_array_create(&a, &m), -EINVAL);
	a.flags = 0;
	a.value_size = RQMAP_MAX_VALUE_SIZE;
	a.max_entries = UINT32_MAX; /* 256 TiB */
	CHECK_EQ(rqmap_array_create(&a, &m), -E2BIG);
	CHECK_EQ(rqmap_array_create(NULL, &m), -EINVAL);
	CHECK(m == NULL);
	rqmap_array_destroy(NULL);
}

static void test_semantics(void)
{
	struct rqmap_array *m = make_array(12, 8, 0, 0);
	uint32_t v[3] = {1, 2, 3}, out[3], k, next;
	char *p0, *p1;

	CHECK_EQ(rqmap_array_value_size(m), 12);
	CHECK_EQ(rqmap_array_max_entries(m), 8);
	for (k = 0; k < 8; k++) { /* preallocated and zeroed */
		memset(out, 0xff, sizeof(out));
		CHECK_EQ(rqmap_array_lookup(m, &k, out, 0), 0);
		CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0);
	}
	k = 3;
	CHECK_EQ(rqmap_array_update(m, &k, v, RQMAP_ANY), 0);
	CHECK_EQ(rqmap_array_lookup(m, &k, out, 0), 0);
	CHECK(memcmp(out, v, sizeof(v)) == 0);
	v[0] = 9;
	CHECK_EQ(rqmap_array_update(m, &k, v, RQMAP_EXIST), 0);
	CHECK_EQ(rqmap_array_update(m, &k, v, RQMAP_NOEXIST), -EEXIST);
	CHECK_EQ(rqmap_array_update(m, &k, v, 3), -EINVAL);
	CHECK_EQ(rqmap_array_update(m, &k, v, 8), -EINVAL);
	CHECK_EQ(rqmap_array_update(m, &k, v, RQMAP_F_LOCK), -EINVAL); /* no value lock */
	CHECK_EQ(rqmap_array_lookup(m, &k, out, RQMAP_F_LOCK), -EINVAL);
	CHECK_EQ(rqmap_array_lookup(m, &k, out, 1), -EINVAL);
	CHECK_EQ(rqmap_array_delete(m, &k), -EINVAL);
	CHECK_EQ(rqmap_array_lookup(m, &k, out, 0), 0);
	CHECK_EQ(out[0], 9);
	k = 8; /* out of range: the kernel's codes, range checked before NOEXIST */
	CHECK_EQ(rqmap_array_update(m, &k, v, RQMAP_ANY), -E2BIG);
	CHECK_EQ(rqmap_array_update(m, &k, v, RQMAP_NOEXIST), -E2BIG);
	CHECK_EQ(rqmap_array_lookup(m, &k, out, 0), -ENOENT);
	CHECK(rqmap_array_lookup_elem(m, &k) == NULL);
	k = UINT32_MAX;
	CHECK(rqmap_array_lookup_elem(m, &k) == NULL);
	CHECK_EQ(rqmap_array_update(m, NULL, v, 0), -EINVAL);
	CHECK_EQ(rqmap_array_lookup(m, &k, NULL, 0), -EINVAL);
	/* in place: 8-byte stride, same pointer every time, writes visible */
	k = 0;
	p0 = rqmap_array_lookup_elem(m, &k);
	k = 1;
	p1 = rqmap_array_lookup_elem(m, &k);
	CHECK(p0 && p1 && p1 - p0 == 16 && (uintptr_t)p0 % 8 == 0);
	CHECK(rqmap_array_lookup_elem(m, &k) == p1);
	memcpy(p1, v, sizeof(v));
	CHECK_EQ(rqmap_array_lookup(m, &k, out, 0), 0);
	CHECK(memcmp(out, v, sizeof(v)) == 0);
	/* iteration: kernel order */
	CHECK_EQ(rqmap_array_get_next_key(m, NULL, &next), 0);
	CHECK_EQ(next, 0);
	k = 6;
	CHECK_EQ(rqmap_array_get_next_key(m, &k, &next), 0);
	CHECK_EQ(next, 7);
	k = 7;
	CHECK_EQ(rqmap_array_get_next_key(m, &k, &next), -ENOENT);
	k = 100;
	CHECK_EQ(rqmap_array_get_next_key(m, &k, &next), 0);
	CHECK_EQ(next, 0);
	rqmap_array_destroy(m);
}

/* The lock word is never copied in, and always reads back as zero. */
static void test_lock_word(void)
{
	struct rqmap_array *m =
	    make_array(sizeof(struct lval), 2, RQMAP_F_VALUE_LOCK, offsetof(struct lval, lock));
	struct lval v, out;
	uint32_t k = 1, raw;
	char *p = rqmap_array_lookup_elem(m, &k);

	memset(&v, 0xab, sizeof(v));
	CHECK_EQ(rqmap_array_update(m, &k, &v, RQMAP_ANY), 0);
	memcpy(&raw, p + offsetof(struct lval, lock), 4);
	CHECK_EQ(raw, 0);
	CHECK_EQ(rqmap_array_update(m, &k, &v, RQMAP_F_LOCK), 0);
	memcpy(&raw, p + offsetof(struct lval, lock), 4);
	CHECK_EQ(raw, 0);
	for (uint64_t f = 0; f <= RQMAP_F_LOCK; f += RQMAP_F_LOCK) {
		memset(&out, 0x11, sizeof(out));
		CHECK_EQ(rqmap_array_lookup(m, &k, &out, f), 0);
		CHECK_EQ(out.a, 0xababababU);
		CHECK(out.b == 0xababababababababULL && out.c == out.b);
		memcpy(&raw, &out.lock, 4);
		CHECK_EQ(raw, 0);
	}
	/* held by this context: the value lock reports the AA deadlock */
	CHECK_EQ(res_spin_lock((rqspinlock_t *)(void *)(p + offsetof(struct lval, lock))), 0);
	CHECK_EQ(rqmap_array_update(m, &k, &v, RQMAP_F_LOCK), -EDEADLK);
	CHECK_EQ(rqmap_array_lookup(m, &k, &out, RQMAP_F_LOCK), -EDEADLK);
	res_spin_unlock((rqspinlock_t *)(void *)(p + offsetof(struct lval, lock)));
	rqmap_array_destroy(m);
}

/* Threads mix F_LOCK copies (a == b == c) with in-place increments of c
 * under the embedded lock; copies under the lock are never torn, and every
 * increment lands. */
struct lock_ctx {
	struct rqmap_array *m;
	long iters;
	atomic_long torn, incs;
};

static void *lock_worker(void *arg)
{
	struct lock_ctx *c = arg;
	uint32_t k = 0;
	struct lval *p = rqmap_array_lookup_elem(c->m, &k);
	uint64_t seed = (uintptr_t)&k | 1;

	for (long i = 0; i < c->iters; i++) {
		struct lval v;

		switch (tu_rand(&seed) % 3) {
		case 0:
			CHECK_EQ(rqmap_array_lookup(c->m, &k, &v, RQMAP_F_LOCK), 0);
			if (v.b != v.a || v.c < v.b)
				atomic_fetch_add(&c->torn, 1);
			break;
		case 1: /* a copy resets a == b == c to the value's current c */
			CHECK_EQ(res_spin_lock(&p->lock), 0);
			p->c++;
			p->a = (uint32_t)p->c;
			p->b = (uint32_t)p->c;
			res_spin_unlock(&p->lock);
			atomic_fetch_add(&c->incs, 1);
			break;
		default:
			CHECK_EQ(res_spin_lock(&p->lock), 0);
			p->c++;
			res_spin_unlock(&p->lock);
			atomic_fetch_add(&c->incs, 1);
			break;
		}
	}
	return NULL;
}

static void test_lock_concurrent(void)
{
	struct lock_ctx c = {.m = make_array(sizeof(struct lval), 1, RQMAP_F_VALUE_LOCK,
	                                     offsetof(struct lval, lock)),
	                     .iters = tu_scaled(40000)};
	pthread_t t[4];
	struct lval out;
	uint32_t k = 0;

	for (int i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, lock_worker, &c), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&c.torn), 0);
	CHECK_EQ(rqmap_array_lookup(c.m, &k, &out, RQMAP_F_LOCK), 0);
	CHECK_EQ(out.c, atomic_load(&c.incs));
	rqmap_array_destroy(c.m);
}

/* ---- in-place hash lookups */

#define HV_WORDS 4

static struct rqmap_hash *make_hash(uint32_t flags)
{
	struct rqmap_hash_attr a = {
	    .key_size = 4, .value_size = 4 * HV_WORDS, .max_entries = 64, .flags = flags};
	struct rqmap_hash *m = NULL;

	CHECK_EQ(rqmap_hash_create(&a, &m), 0);
	return m;
}

static void fill(uint32_t *v, uint32_t x)
{
	for (int i = 0; i < HV_WORDS; i++)
		v[i] = x;
}

static void test_hash_in_place(uint32_t flags)
{
	struct rqmap_hash *m = make_hash(flags);
	uint32_t k = 5, v[HV_WORDS], out[HV_WORDS], *p, *q;

	CHECK_EQ(rqmap_read_lock(), 0);
	CHECK(rqmap_hash_lookup_elem(m, &k) == NULL);
	CHECK(rqmap_hash_lookup_elem(NULL, &k) == NULL);
	fill(v, 1);
	CHECK_EQ(rqmap_hash_update(m, &k, v, RQMAP_ANY), 0);
	p = rqmap_hash_lookup_elem(m, &k);
	CHECK(p && p[0] == 1 && p[HV_WORDS - 1] == 1 && (uintptr_t)p % 4 == 0);
	/* an update inside the section replaces the element: p keeps the old value */
	fill(v, 2);
	CHECK_EQ(rqmap_hash_update(m, &k, v, RQMAP_ANY), 0);
	CHECK_EQ(rqmap_read_lock(), 0); /* nested */
	q = rqmap_hash_lookup_elem(m, &k);
	CHECK(q && q != p && q[0] == 2);
	rqmap_read_unlock();
	CHECK_EQ(p[0], 1);
	/* a write through the pointer lands in the live element */
	q[1] = 7;
	CHECK_EQ(rqmap_hash_lookup(m, &k, out, 0), 0);
	CHECK(out[0] == 2 && out[1] == 7);
	/* delete: the old pointer still reads the deleted element's value */
	CHECK_EQ(rqmap_hash_delete(m, &k), 0);
	CHECK(rqmap_hash_lookup_elem(m, &k) == NULL);
	CHECK(q[0] == 2 && q[1] == 7);
	rqmap_read_unlock();
	rqmap_quiesce();
	rqmap_hash_destroy(m);
}

/* In-place hash values are 8-byte aligned whatever the key size. */
static void test_hash_value_alignment(void)
{
	for (uint32_t key_size = 1; key_size <= 13; key_size += 3) {
		struct rqmap_hash_attr a = {
		    .key_size = key_size, .value_size = 8, .max_entries = 4};
		struct rqmap_hash *m = NULL;
		unsigned char key[16] = {1, 2, 3};
		uint64_t v = 5;
		void *p;

		CHECK_EQ(rqmap_hash_create(&a, &m), 0);
		CHECK_EQ(rqmap_hash_update(m, key, &v, RQMAP_ANY), 0);
		CHECK_EQ(rqmap_read_lock(), 0);
		p = rqmap_hash_lookup_elem(m, key);
		CHECK(p && (uintptr_t)p % 8 == 0 && *(uint64_t *)p == 5);
		rqmap_read_unlock();
		rqmap_hash_destroy(m);
	}
}

/* Readers hold in-place pointers across a section while writers replace the
 * same keys (every word of a value equal): the words a reader sees never
 * change under it, so its element was not recycled. */
struct inplace_ctx {
	struct rqmap_hash *m;
	atomic_bool stop;
	atomic_long changed, seen;
};

static void *inplace_reader(void *arg)
{
	struct inplace_ctx *c = arg;
	uint64_t seed = (uintptr_t)&seed | 1;

	CHECK_EQ(rqmap_thread_init(), 0);
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		uint32_t k = (uint32_t)(tu_rand(&seed) % 8), first[HV_WORDS], again[HV_WORDS];
		const uint32_t *p;

		CHECK_EQ(rqmap_read_lock(), 0);
		p = rqmap_hash_lookup_elem(c->m, &k);
		if (p) {
			memcpy(first, p, sizeof(first));
			for (int spin = 0; spin < 200; spin++)
				atomic_signal_fence(memory_order_seq_cst);
			memcpy(again, p, sizeof(again));
			if (memcmp(first, again, sizeof(first)) != 0 ||
			    first[0] != first[HV_WORDS - 1])
				atomic_fetch_add(&c->changed, 1);
			atomic_fetch_add_explicit(&c->seen, 1, memory_order_relaxed);
		}
		rqmap_read_unlock();
	}
	return NULL;
}

static void *inplace_writer(void *arg)
{
	struct inplace_ctx *c = arg;
	uint64_t seed = (uintptr_t)&seed | 1;
	uint32_t v[HV_WORDS];

	CHECK_EQ(rqmap_thread_init(), 0);
	for (long i = 0; i < tu_scaled(100000); i++) {
		uint32_t k = (uint32_t)(tu_rand(&seed) % 8);

		fill(v, (uint32_t)tu_rand(&seed));
		if (i % 16 == 15) {
			int ret = rqmap_hash_delete(c->m, &k);

			CHECK(ret == 0 || ret == -ENOENT);
		} else {
			CHECK_EQ(rqmap_hash_update(c->m, &k, v, RQMAP_ANY), 0);
		}
	}
	return NULL;
}

static void test_hash_in_place_concurrent(uint32_t flags)
{
	struct inplace_ctx c = {.m = make_hash(flags)};
	pthread_t r[2], w[2];

	for (int i = 0; i < 2; i++) {
		CHECK_EQ(pthread_create(&r[i], NULL, inplace_reader, &c), 0);
		CHECK_EQ(pthread_create(&w[i], NULL, inplace_writer, &c), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	atomic_store(&c.stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	CHECK_EQ(atomic_load(&c.changed), 0);
	CHECK(atomic_load(&c.seen) > 0);
	rqmap_hash_destroy(c.m);
}

static void test_maps_array(void)
{
	CHECK_EQ(rqmap_thread_init(), 0);
	test_create_errors();
	test_semantics();
	test_lock_word();
	test_lock_concurrent();
	test_hash_in_place(0);
	test_hash_in_place(RQMAP_F_NO_PREALLOC);
	test_hash_value_alignment();
	test_hash_in_place_concurrent(0);
	test_hash_in_place_concurrent(RQMAP_F_NO_PREALLOC);
}

static const struct tu_test tests[] = {
    TU_TEST("maps_array", test_maps_array, 60, 0),
};

TU_MAIN(tests)
