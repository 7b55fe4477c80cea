/* SPDX-License-Identifier: MIT */
/*
 * Hash map semantics (the kernel's BPF_MAP_TYPE_HASH results), iteration,
 * batches, RQMAP_F_LOCK, no-prealloc, and a concurrent lookup/update/delete
 * stress whose readers check that they never see a recycled or torn value.
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

static struct rqmap_hash *make(uint32_t max, uint32_t n_buckets, uint32_t flags)
{
	struct rqmap_hash_attr a = {.key_size = 4,
	                            .value_size = 8,
	                            .max_entries = max,
	                            .n_buckets = n_buckets,
	                            .flags = flags};
	struct rqmap_hash *m = NULL;

	CHECK_EQ(rqmap_hash_create(&a, &m), 0);
	return m;
}

static void test_create_errors(void)
{
	struct rqmap_hash_attr a = {.key_size = 4, .value_size = 8, .max_entries = 4};
	struct rqmap_hash *m = NULL;

	a.key_size = 0;
	CHECK_EQ(rqmap_hash_create(&a, &m), -EINVAL);
	a.key_size = RQMAP_MAX_KEY_SIZE + 1;
	CHECK_EQ(rqmap_hash_create(&a, &m), -E2BIG);
	a.key_size = 4;
	a.n_buckets = 3;
	CHECK_EQ(rqmap_hash_create(&a, &m), -EINVAL);
	a.n_buckets = 0;
	a.flags = RQMAP_F_VALUE_LOCK;
	a.lock_off = 6;
	CHECK_EQ(rqmap_hash_create(&a, &m), -EINVAL);
	a.lock_off = 8; /* past the value */
	CHECK_EQ(rqmap_hash_create(&a, &m), -EINVAL);
	a.flags = 0x100;
	CHECK_EQ(rqmap_hash_create(&a, &m), -EINVAL);
	a.flags = 0;
	a.max_entries = 0;
	CHECK_EQ(rqmap_hash_create(&a, &m), -EINVAL);
	CHECK_EQ(rqmap_hash_create(NULL, &m), -EINVAL);
	CHECK(m == NULL);
	rqmap_hash_destroy(NULL);
}

static void test_update_flags(uint32_t create_flags)
{
	struct rqmap_hash *m = make(8, 0, create_flags);
	uint64_t v;
	uint32_t k;

	for (k = 0; k < 8; k++) {
		v = (uint64_t)k * 10;
		CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_NOEXIST), 0);
	}
	v = 99;
	CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_ANY), -E2BIG); /* k == 8: full */
	CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_EXIST), -ENOENT);
	k = 3;
	CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_NOEXIST), -EEXIST);
	CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_ANY), 0); /* replace in a full map */
	CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_EXIST), 0);
	CHECK_EQ(rqmap_hash_update(m, &k, &v, 3), -EINVAL);
	CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_F_LOCK), -EINVAL); /* no value lock */
	CHECK_EQ(rqmap_hash_lookup(m, &k, &v, 0), 0);
	CHECK_EQ(v, 99);
	k = 5;
	CHECK_EQ(rqmap_hash_lookup(m, &k, &v, 0), 0);
	CHECK_EQ(v, 50);
	CHECK_EQ(rqmap_hash_delete(m, &k), 0);
	CHECK_EQ(rqmap_hash_delete(m, &k), -ENOENT);
	CHECK_EQ(rqmap_hash_lookup(m, &k, &v, 0), -ENOENT);
	k = 6;
	CHECK_EQ(rqmap_hash_lookup_and_delete(m, &k, &v, 0), 0);
	CHECK_EQ(v, 60);
	CHECK_EQ(rqmap_hash_lookup_and_delete(m, &k, &v, 0), -ENOENT);
	k = 100;
	CHECK_EQ(rqmap_hash_update(m, &k, &v, RQMAP_ANY), 0); /* room again */
	CHECK_EQ(rqmap_hash_update(m, NULL, &v, 0), -EINVAL);
	CHECK_EQ(rqmap_hash_lookup(m, &k, NULL, 0), -EINVAL);
	rqmap_hash_destroy(m);
}

/* Every key exactly once; a vanished key restarts the walk (kernel rule). */
static void test_get_next_key(void)
{
	struct rqmap_hash *m = make(64, 16, 0);
	bool seen[64] = {false};
	uint32_t k, next, first, n = 0;
	uint64_t v = 1;
	const uint32_t *prev = NULL;

	CHECK_EQ(rqmap_hash_get_next_key(m, NULL, &next), -ENOENT);
	for (k = 0; k < 40; k++)
		CHECK_EQ(rqmap_hash_update(m, &k, &v, 0), 0);
	while (rqmap_hash_get_next_key(m, prev, &next) == 0) {
		CHECK(next < 40 && !seen[next]);
		seen[next] = true;
		n++;
		k = next;
		prev = &k;
	}
	CHECK_EQ(n, 40);
	CHECK_EQ(rqmap_hash_get_next_key(m, NULL, &first), 0);
	k = 1000; /* not in the map */
	CHECK_EQ(rqmap_hash_get_next_key(m, &k, &next), 0);
	CHECK_EQ(next, first);
	rqmap_hash_destroy(m);
}

static void test_batch(void)
{
	struct rqmap_hash *m = make(128, 16, 0);
	uint32_t keys[128], cursor = 0, count, total = 0, k;
	uint64_t vals[128], v;
	bool seen[100] = {false};
	int ret;

	for (k = 0; k < 100; k++) {
		v = k + 1000;
		CHECK_EQ(rqmap_hash_update(m, &k, &v, 0), 0);
	}
	do {
		count = 24;
		ret = rqmap_hash_lookup_batch(m, &cursor, keys, vals, &count, 0);
		CHECK(ret == 0 || ret == -ENOENT);
		for (uint32_t i = 0; i < count; i++) {
			CHECK(keys[i] < 100 && !seen[keys[i]]);
			CHECK_EQ(vals[i], keys[i] + 1000);
			seen[keys[i]] = true;
		}
		total += count;
	} while (ret == 0);
	CHECK_EQ(total, 100);
	count = 0;
	cursor = 0;
	CHECK_EQ(rqmap_hash_lookup_batch(m, &cursor, keys, vals, &count, 0), -ENOSPC);
	cursor = 0;
	total = 0;
	do {
		count = 128;
		ret = rqmap_hash_lookup_and_delete_batch(m, &cursor, keys, vals, &count, 0);
		total += count;
	} while (ret == 0);
	CHECK_EQ(ret, -ENOENT);
	CHECK_EQ(total, 100);
	CHECK_EQ(rqmap_hash_get_next_key(m, NULL, &k), -ENOENT);
	rqmap_hash_destroy(m);
}

/* A value with an embedded lock, as a BPF value with a bpf_spin_lock. */
struct locked_val {
	rqspinlock_t lock;
	uint32_t a;
	uint64_t b;
};

struct flock_ctx {
	struct rqmap_hash *m;
	atomic_bool stop;
	atomic_long torn;
};

static void *flock_writer(void *arg)
{
	struct flock_ctx *c = arg;
	uint32_t k = 7;

	rqmap_thread_init();
	for (uint32_t i = 1; i < (uint32_t)tu_scaled(20000); i++) {
		struct locked_val v = {.a = i, .b = i};

		CHECK_EQ(rqmap_hash_update(c->m, &k, &v, RQMAP_EXIST | RQMAP_F_LOCK), 0);
	}
	atomic_store(&c->stop, true);
	return NULL;
}

static void test_f_lock(void)
{
	struct rqmap_hash_attr a = {.key_size = 4,
	                            .value_size = sizeof(struct locked_val),
	                            .max_entries = 4,
	                            .flags = RQMAP_F_VALUE_LOCK,
	                            .lock_off = 0};
	struct flock_ctx c = {0};
	struct locked_val v = {.a = 0, .b = 0};
	uint32_t k = 7;
	pthread_t th;

	CHECK_EQ(rqmap_hash_create(&a, &c.m), 0);
	CHECK_EQ(rqmap_hash_update(c.m, &k, &v, RQMAP_EXIST | RQMAP_F_LOCK), -ENOENT);
	CHECK_EQ(rqmap_hash_update(c.m, &k, &v, RQMAP_F_LOCK), 0); /* inserts */
	CHECK_EQ(pthread_create(&th, NULL, flock_writer, &c), 0);
	while (!atomic_load(&c.stop)) {
		CHECK_EQ(rqmap_hash_lookup(c.m, &k, &v, RQMAP_F_LOCK), 0);
		CHECK_EQ(v.lock.val, 0); /* the copy has an unlocked lock word */
		if (v.a != v.b)
			atomic_fetch_add(&c.torn, 1);
	}
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&c.torn), 0);
	CHECK_EQ(rqmap_hash_lookup(c.m, &k, &v, RQMAP_F_LOCK), 0);
	CHECK_EQ(v.a, tu_scaled(20000) - 1);
	rqmap_hash_destroy(c.m);
}

/* ---- concurrent stress: readers verify every value they see */

#define STRESS_KEYS    256
#define STRESS_THREADS 4

struct stress_val {
	uint64_t key;
	uint64_t seq;
	uint64_t check; /* key * K ^ seq: a torn or recycled value fails it */
};

static uint64_t check_of(uint64_t key, uint64_t seq)
{
	return (key * 0x9e3779b97f4a7c15ULL) ^ seq;
}

struct stress_ctx {
	struct rqmap_hash *m;
	atomic_long bad, errors, ops, nomem;
	long iters;
};

static void stress_op(struct stress_ctx *c, uint64_t *rs, uint64_t *seq)
{
	uint64_t r = tu_rand(rs);
	uint32_t k = (uint32_t)(r % STRESS_KEYS);
	struct stress_val v;
	int ret;

	switch ((r >> 32) % 8) {
	case 0:
		ret = rqmap_hash_delete(c->m, &k);
		break;
	case 1:
	case 2:
		v = (struct stress_val){k, ++*seq, check_of(k, *seq)};
		ret = rqmap_hash_update(c->m, &k, &v, 0);
		break;
	default:
		ret = rqmap_hash_lookup(c->m, &k, &v, 0);
		if (ret == 0 && (v.key != k || v.check != check_of(k, v.seq)))
			atomic_fetch_add(&c->bad, 1);
	}
	/* -ENOMEM: every spare element waits for a grace period (documented,
	 * transient; possible when the machine is overloaded) */
	if (ret == -ENOMEM)
		atomic_fetch_add(&c->nomem, 1);
	else if (ret && ret != -ENOENT && atomic_fetch_add(&c->errors, 1) < 5)
		fprintf(stderr, "stress: op error %d\n", ret);
}

static void *stress_thread(void *arg)
{
	struct stress_ctx *c = arg;
	uint64_t rs = (uint64_t)(uintptr_t)&rs | 1;
	uint64_t seq = 0;

	rqmap_thread_init();
	for (long i = 0; i < c->iters; i++)
		stress_op(c, &rs, &seq);
	atomic_fetch_add(&c->ops, c->iters);
	return NULL;
}

static void test_stress(uint32_t flags)
{
	struct stress_ctx c = {.iters = tu_scaled(200000)};
	/* spare: room for the elements retired during a slow (sanitizer) grace
	 * period, so that -ENOMEM does not occur */
	struct rqmap_hash_attr a = {.key_size = 4,
	                            .value_size = sizeof(struct stress_val),
	                            .max_entries = STRESS_KEYS,
	                            .flags = flags,
	                            .spare = 1 << 16};
	struct rqmap_hash_info info;
	pthread_t th[STRESS_THREADS];

	CHECK_EQ(rqmap_hash_create(&a, &c.m), 0);
	for (int i = 0; i < STRESS_THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, stress_thread, &c), 0);
	for (int i = 0; i < STRESS_THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(atomic_load(&c.bad), 0);
	CHECK_EQ(atomic_load(&c.errors), 0);
	rqmap_quiesce();
	CHECK_EQ(rqmap_hash_info(c.m, &info), 0);
	if (!(flags & RQMAP_F_NO_PREALLOC))
		CHECK_EQ(info.count + info.free, info.capacity);
	printf("stress flags=%u: %ld ops, %u live, %ld transient -ENOMEM\n", flags,
	       atomic_load(&c.ops), info.count, atomic_load(&c.nomem));
	rqmap_hash_destroy(c.m);
}

/*
 * rqmap_hash_get_values(): every pointer an in-place lookup returns is the value
 * of an element of the pool it describes, at its value offset.
 */
static void test_values(void)
{
	struct rqmap_hash *m = make(64, 0, 0), *np = make(4, 0, RQMAP_F_NO_PREALLOC);
	struct rqmap_hash_values v;

	CHECK_EQ(rqmap_hash_get_values(NULL, &v), -EINVAL);
	CHECK_EQ(rqmap_hash_get_values(m, NULL), -EINVAL);
	CHECK_EQ(rqmap_hash_get_values(np, &v), -ENOTSUP);
	CHECK_EQ(rqmap_hash_get_values(m, &v), 0);
	CHECK(v.base != NULL);
	CHECK_GE(v.count, 64);
	CHECK_EQ(v.value_size, 8);
	CHECK_EQ(v.value_off % 8, 0);
	CHECK_GE(v.stride, v.value_off + v.value_size);
	for (uint32_t k = 0; k < 64; k++) {
		uint64_t val = 1000 + k;

		CHECK_EQ(rqmap_hash_update(m, &k, &val, RQMAP_ANY), 0);
	}
	CHECK_EQ(rqmap_read_lock(), 0);
	for (uint32_t k = 0; k < 64; k++) {
		const char *p = rqmap_hash_lookup_elem(m, &k);
		size_t off;

		CHECK(p != NULL);
		CHECK(p >= (const char *)v.base + v.value_off);
		off = (size_t)(p - (const char *)v.base) - v.value_off;
		CHECK_EQ(off % v.stride, 0);
		CHECK_LT(off / v.stride, v.count);
		CHECK_EQ(*(const uint64_t *)(const void *)p, 1000 + k);
	}
	rqmap_read_unlock();
	rqmap_hash_destroy(np);
	rqmap_hash_destroy(m);
}

static void test_maps_hash(void)
{
	rqmap_thread_init();
	test_create_errors();
	test_update_flags(0);
	test_update_flags(RQMAP_F_NO_PREALLOC);
	test_get_next_key();
	test_batch();
	test_f_lock();
	test_values();
	test_stress(0);
	test_stress(RQMAP_F_NO_PREALLOC);
}

static const struct tu_test tests[] = {
    TU_TEST("maps_hash", test_maps_hash, 60, 0),
};

TU_MAIN(tests)
