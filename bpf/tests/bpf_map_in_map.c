/* SPDX-License-Identifier: MIT */
/*
 * Maps of maps (progs/map_in_map.bpf.c) through rqbpf's map API: the BTF
 * `values` initialiser's slots, inner maps named by their index in the
 * object, the refused updates (a map that is not there, one unlike the
 * template, flags), deletes, key iteration; and programs on 8 threads
 * counting through an inner map while the main thread swaps the outer
 * slot between two inner maps: every count lands in one of them, and
 * each of them gets counts.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "bpftest.h"

#define THREADS 8

static uint32_t index_of(struct rqbpf_object *obj, const char *name)
{
	struct rqbpf_map *m = rqbpf_object_find_map(obj, name);

	for (uint32_t i = 0; i < rqbpf_object_map_count(obj); i++)
		if (rqbpf_object_map(obj, i) == m)
			return i;
	tu_fail(__FILE__, __LINE__, "no map %s", name);
	return 0;
}

static void check_array_of_maps(struct rqbpf_object *obj)
{
	struct rqbpf_map *outer = rqbpf_object_find_map(obj, "outer");
	uint32_t a0 = index_of(obj, "a0"), a1 = index_of(obj, "a1"), h0 = index_of(obj, "h0");
	uint32_t v, k = 0, next, none = 1000, far = 2;

	CHECK_EQ(rqbpf_map_value_bytes(outer), 4);
	CHECK_EQ(rqbpf_map_lookup(outer, &k, &v), 0); /* the initialiser's */
	CHECK_EQ(v, a0);
	k = 1;
	CHECK_EQ(rqbpf_map_lookup(outer, &k, &v), -ENOENT);
	CHECK_EQ(rqbpf_map_update(outer, &k, &a1, BPF_ANY), 0);
	CHECK_EQ(rqbpf_map_lookup(outer, &k, &v), 0);
	CHECK_EQ(v, a1);
	CHECK_EQ(rqbpf_map_update(outer, &k, &a1, BPF_NOEXIST), -EINVAL);
	CHECK_EQ(rqbpf_map_update(outer, &k, &a1, BPF_EXIST), -EINVAL);
	CHECK_EQ(rqbpf_map_update(outer, &far, &a1, BPF_ANY), -E2BIG);
	CHECK_EQ(rqbpf_map_update(outer, &k, &h0, BPF_ANY), -EINVAL);
	CHECK_EQ(rqbpf_map_update(outer, &k, &none, BPF_ANY), -EBADF);
	/* an outer map is no inner map (maps of maps do not nest) */
	v = index_of(obj, "outer");
	CHECK_EQ(rqbpf_map_update(outer, &k, &v, BPF_ANY), -EINVAL);
	CHECK_EQ(rqbpf_map_get_next_key(outer, NULL, &next), 0);
	CHECK_EQ(next, 0);
	CHECK_EQ(rqbpf_map_get_next_key(outer, &next, &next), 0);
	CHECK_EQ(next, 1);
	CHECK_EQ(rqbpf_map_get_next_key(outer, &next, &next), -ENOENT);
	CHECK_EQ(rqbpf_map_delete(outer, &k), 0);
	CHECK_EQ(rqbpf_map_delete(outer, &k), -ENOENT);
	CHECK_EQ(bt_run_cb(obj, "aom_count", (const uint32_t[5]){1}), (uint32_t)-1);
	CHECK_EQ(bt_run_cb(obj, "aom_count", (const uint32_t[5]){0}), 1);
}

static void check_hash_of_maps(struct rqbpf_object *obj)
{
	struct rqbpf_map *houter = rqbpf_object_find_map(obj, "houter");
	uint32_t h0 = index_of(obj, "h0"), h1 = index_of(obj, "h1"), a0 = index_of(obj, "a0");
	uint32_t v, k = 1, other = 7;
	uint64_t n;
	int key = 3;

	CHECK_EQ(rqbpf_map_lookup(houter, &k, &v), 0);
	CHECK_EQ(v, h0);
	CHECK_EQ(rqbpf_map_update(houter, &other, &h1, BPF_EXIST), -ENOENT);
	CHECK_EQ(rqbpf_map_update(houter, &other, &h1, BPF_NOEXIST), 0);
	CHECK_EQ(rqbpf_map_update(houter, &other, &a0, BPF_ANY), -EINVAL);
	CHECK_EQ(bt_run_cb(obj, "hom_count", (const uint32_t[5]){1, 3}), 1);
	CHECK_EQ(bt_run_cb(obj, "hom_count", (const uint32_t[5]){1, 3}), 2);
	CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "h0"), &key, &n), 0);
	CHECK_EQ(n, 2);
	CHECK_EQ(rqbpf_map_delete(houter, &k), 0);
	CHECK_EQ(bt_run_cb(obj, "hom_count", (const uint32_t[5]){1, 3}), (uint32_t)-1);
}

static void test_map_in_map_api(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("map_in_map", *cc, 0);

		if (!obj)
			continue;
		check_array_of_maps(obj);
		check_hash_of_maps(obj);
		rqbpf_object_close(obj);
	}
}

struct counting {
	struct rqbpf_object *obj;
	atomic_bool stop;
	atomic_long runs;
};

static void *count_runs(void *arg)
{
	struct counting *c = arg;
	const uint32_t cb[5] = {1};

	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		int64_t got = (int32_t)(uint32_t)bt_run_cb(c->obj, "aom_count", cb);

		if (got < 1)
			tu_fail(__FILE__, __LINE__, "aom_count: %lld", (long long)got);
		atomic_fetch_add_explicit(&c->runs, 1, memory_order_relaxed);
	}
	return NULL;
}

/* The inner maps' counts add up to the runs: each run counted once, in the
 * inner map its lookup found, under that map's value lock. */
static void test_map_in_map_swap(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("map_in_map", *cc, 0);
		struct counting c = {obj, false, 0};
		pthread_t t[THREADS];
		uint32_t inner[2], k = 1, zero = 0;
		struct {
			uint32_t lock;
			int data;
		} v[2];

		if (!obj)
			continue;
		inner[0] = index_of(obj, "a0");
		inner[1] = index_of(obj, "a1");
		CHECK_EQ(rqbpf_map_update(rqbpf_object_find_map(obj, "outer"), &k, &inner[1], 0),
		         0);
		for (int i = 0; i < THREADS; i++)
			CHECK_EQ(pthread_create(&t[i], NULL, count_runs, &c), 0);
		for (long i = 0; i < tu_scaled(50); i++) {
			long at = atomic_load(&c.runs);

			CHECK_EQ(rqbpf_map_update(rqbpf_object_find_map(obj, "outer"), &k,
			                          &inner[i & 1], 0),
			         0);
			/* THREADS + 1 runs end after the swap: one began after it */
			while (atomic_load(&c.runs) < at + THREADS + 1)
				sched_yield();
		}
		atomic_store(&c.stop, true);
		for (int i = 0; i < THREADS; i++)
			CHECK_EQ(pthread_join(t[i], NULL), 0);
		CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "a0"), &zero, &v[0]), 0);
		CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "a1"), &zero, &v[1]), 0);
		printf("# %s: %ld runs, %d in a0 and %d in a1\n", *cc, atomic_load(&c.runs),
		       v[0].data, v[1].data);
		CHECK_EQ((long)v[0].data + v[1].data, atomic_load(&c.runs));
		CHECK_GT(v[0].data, 0);
		CHECK_GT(v[1].data, 0);
		rqbpf_object_close(obj);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_map_in_map_api", test_map_in_map_api, 60, 0),
    TU_TEST("bpf_map_in_map_swap", test_map_in_map_swap, 120, 0),
};

TU_MAIN(tests)
