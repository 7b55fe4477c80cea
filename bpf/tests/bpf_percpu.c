/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU maps (progs/percpu.bpf.c), a CPU being a thread's registry slot:
 * the map API's buffers (one value per possible CPU, each rounded up to 8
 * bytes, slot 0's first) and their flags' results; a value the API writes
 * is what a program on that slot reads; 8 threads bump their own counters
 * with plain increments and each slot ends with exactly its thread's count.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <rqspinlock.h>

#include "bpftest.h"

#define THREADS 8
#define VALUE   16 /* struct counter: 12 bytes, rounded up to 8 */

struct counter {
	uint64_t hits;
	uint32_t last, pad;
};

static struct counter *values(void)
{
	struct counter *v = calloc((size_t)rqbpf_num_possible_cpus(), sizeof(*v));

	CHECK(v != NULL);
	return v;
}

/* The array through the map API: every CPU's value written, read back, and
 * each read by a program run on the slot that owns it (this thread's). */
static void check_array_api(struct rqbpf_object *obj)
{
	struct rqbpf_map *m = rqbpf_object_find_map(obj, "pcpu_array");
	int ncpus = rqbpf_num_possible_cpus(), slot = res_spin_thread_slot();
	struct counter *v = values(), *back = values();
	uint32_t k = 2, far = 4, next;
	const uint32_t cb[5] = {2};

	CHECK_EQ(rqbpf_map_value_bytes(m), (size_t)ncpus * VALUE);
	for (int c = 0; c < ncpus; c++)
		v[c] = (struct counter){.hits = 100u + (uint32_t)c, .last = (uint32_t)c};
	CHECK_EQ(rqbpf_map_update(m, &k, v, BPF_ANY), 0);
	CHECK_EQ(rqbpf_map_update(m, &k, v, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(rqbpf_map_update(m, &far, v, BPF_ANY), -E2BIG);
	CHECK_EQ(rqbpf_map_update(m, &k, v, 4), -EINVAL);
	CHECK_EQ(rqbpf_map_update(m, &k, v, BPF_F_LOCK), -EINVAL); /* no bpf_spin_lock */
	CHECK_EQ(rqbpf_map_lookup(m, &k, back), 0);
	CHECK(memcmp(v, back, (size_t)ncpus * VALUE) == 0);
	CHECK_EQ(rqbpf_map_lookup(m, &far, back), -ENOENT);
	CHECK_EQ(rqbpf_map_delete(m, &k), -EINVAL);
	CHECK_GE(slot, 0);
	CHECK_LT(slot, ncpus);
	CHECK_EQ(bt_run_cb(obj, "pa_read", cb), 100u + (uint32_t)slot);
	/* keys in order, then -ENOENT */
	CHECK_EQ(rqbpf_map_get_next_key(m, NULL, &next), 0);
	CHECK_EQ(next, 0);
	CHECK_EQ(rqbpf_map_get_next_key(m, &k, &next), 0);
	CHECK_EQ(next, 3);
	CHECK_EQ(rqbpf_map_get_next_key(m, &next, &next), -ENOENT);
	free(v);
	free(back);
}

/* The hash through the map API: an element a program inserted holds its
 * value at the program's slot only; the API's update sets every CPU's. */
static void check_hash_api(struct rqbpf_object *obj)
{
	struct rqbpf_map *m = rqbpf_object_find_map(obj, "pcpu_hash");
	int ncpus = rqbpf_num_possible_cpus(), slot = res_spin_thread_slot();
	struct counter *v = values();
	const uint32_t cb[5] = {3, 77};
	uint32_t k = 3, other = 2;

	CHECK_EQ(bt_run_cb(obj, "ph_count", cb), 1);
	CHECK_EQ(rqbpf_map_lookup(m, &k, v), 0);
	for (int c = 0; c < ncpus; c++) {
		CHECK_EQ(v[c].hits, c == slot ? 1u : 0u);
		CHECK_EQ(v[c].last, c == slot ? 77u : 0u);
	}
	CHECK_EQ(rqbpf_map_lookup(m, &other, v), -ENOENT);
	CHECK_EQ(rqbpf_map_update(m, &other, v, BPF_EXIST), -ENOENT);
	for (int c = 0; c < ncpus; c++)
		v[c].hits = 1000;
	CHECK_EQ(rqbpf_map_update(m, &other, v, BPF_NOEXIST), 0);
	CHECK_EQ(rqbpf_map_update(m, &other, v, BPF_NOEXIST), -EEXIST);
	/* this slot's value bumped in place, the others unchanged */
	CHECK_EQ(bt_run_cb(obj, "ph_count", (const uint32_t[5]){other}), 1001);
	CHECK_EQ(rqbpf_map_lookup(m, &other, v), 0);
	for (int c = 0; c < ncpus; c++)
		CHECK_EQ(v[c].hits, c == slot ? 1001u : 1000u);
	free(v);
}

static void test_percpu_api(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("percpu", *cc, 0);

		if (!obj)
			continue;
		check_array_api(obj);
		check_hash_api(obj);
		rqbpf_object_close(obj);
	}
}

struct worker {
	struct rqbpf_object *obj;
	pthread_barrier_t *start, *end;
	long runs;
	int slot;
};

/* All threads are alive from the first run to the last check, so their
 * slots are distinct. */
static void *bump(void *arg)
{
	struct worker *w = arg;
	const uint32_t cb[5] = {1, 0};

	w->slot = res_spin_thread_slot();
	pthread_barrier_wait(w->start);
	for (long i = 0; i < w->runs; i++) {
		if ((long)bt_run_cb(w->obj, "pa_count", cb) != i + 1)
			tu_fail(__FILE__, __LINE__, "slot %d: pa_count's count is not %ld", w->slot,
			        i + 1);
		if ((long)bt_run_cb(w->obj, "ph_count", cb) != i + 1)
			tu_fail(__FILE__, __LINE__, "slot %d: ph_count's count is not %ld", w->slot,
			        i + 1);
	}
	pthread_barrier_wait(w->end);
	return NULL;
}

/* Each slot's counters hold exactly its own thread's runs, in both maps. */
static void check_slots(struct rqbpf_object *obj, const struct worker *w)
{
	static const char *const maps[] = {"pcpu_array", "pcpu_hash"};
	struct counter *v = values();
	uint32_t k = 1;

	for (int m = 0; m < 2; m++) {
		uint64_t sum = 0;

		CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, maps[m]), &k, v), 0);
		for (int i = 0; i < THREADS; i++)
			CHECK_EQ(v[w[i].slot].hits, (uint64_t)w[i].runs);
		for (int c = 0; c < rqbpf_num_possible_cpus(); c++)
			sum += v[c].hits;
		CHECK_EQ(sum, (uint64_t)THREADS * (uint64_t)w[0].runs);
	}
	free(v);
}

static void test_percpu_threads(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("percpu", *cc, 0);
		pthread_barrier_t start, end;
		struct worker w[THREADS];
		pthread_t t[THREADS];

		struct counter *zero;
		uint32_t k = 1;

		if (!obj)
			continue;
		zero = values();
		/* the hash's element exists: no thread's insert races another's */
		CHECK_EQ(rqbpf_map_update(rqbpf_object_find_map(obj, "pcpu_hash"), &k, zero,
		                          BPF_NOEXIST),
		         0);
		free(zero);
		pthread_barrier_init(&start, NULL, THREADS);
		pthread_barrier_init(&end, NULL, THREADS + 1);
		for (int i = 0; i < THREADS; i++) {
			w[i] = (struct worker){obj, &start, &end, tu_scaled(20000), -1};
			CHECK_EQ(pthread_create(&t[i], NULL, bump, &w[i]), 0);
		}
		pthread_barrier_wait(&end);
		for (int i = 0; i < THREADS; i++)
			CHECK_EQ(pthread_join(t[i], NULL), 0);
		for (int i = 0; i < THREADS; i++)
			for (int j = 0; j < i; j++)
				CHECK(w[i].slot != w[j].slot);
		check_slots(obj, w);
		printf("# %s: %d threads x %ld runs, each slot its own count\n", *cc, THREADS,
		       w[0].runs);
		pthread_barrier_destroy(&start);
		pthread_barrier_destroy(&end);
		rqbpf_object_close(obj);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_percpu_api", test_percpu_api, 60, 0),
    TU_TEST("bpf_percpu_threads", test_percpu_threads, 120, 0),
};

TU_MAIN(tests)
