/* SPDX-License-Identifier: MIT */
/*
 * Queues and stacks (progs/queue_stack.bpf.c): the order, capacity,
 * BPF_EXIST overwrite and empty results of the helpers and of the map API,
 * and pushes and pops on 8 threads that lose and duplicate nothing.
 */
#include <errno.h>
#include <pthread.h>

#include "bpftest.h"

#define THREADS 8

static void test_queue_order(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("queue_stack", *cc, 0);
		struct rqbpf_map *q, *arr;
		uint64_t v = 0;

		if (!obj)
			continue;
		/* fill: 4 pushed, the 5th -E2BIG; BPF_EXIST drops the oldest */
		CHECK_EQ(bt_run(obj, "q_fill"), 11112);
		CHECK_EQ(bt_run(obj, "q_overwrite"), 144);
		/* peek 2, pops 2 3 4 6, then -ENOENT with the value zeroed */
		CHECK_EQ(bt_run(obj, "q_drain"), 223463131);
		CHECK_EQ(bt_run(obj, "s_fill"), 11112);
		CHECK_EQ(bt_run(obj, "s_overwrite"), 144);
		CHECK_EQ(bt_run(obj, "s_drain"), 664323131);
		/* the map API: update pushes, lookup peeks, lookup_and_delete pops */
		q = rqbpf_object_find_map(obj, "q");
		for (v = 10; v < 14; v++)
			CHECK_EQ(rqbpf_map_update(q, NULL, &v, 0), 0);
		CHECK_EQ(rqbpf_map_update(q, NULL, &v, 0), -E2BIG);
		CHECK_EQ(rqbpf_map_update(q, NULL, &v, BPF_NOEXIST), -EINVAL);
		CHECK_EQ(rqbpf_map_update(q, NULL, &v, BPF_EXIST), 0);
		CHECK_EQ(rqbpf_map_lookup(q, NULL, &v), 0);
		CHECK_EQ(v, 11);
		for (uint64_t want = 11; want <= 14; want++) {
			CHECK_EQ(rqbpf_map_lookup_and_delete(q, NULL, &v), 0);
			CHECK_EQ(v, want);
		}
		CHECK_EQ(rqbpf_map_lookup_and_delete(q, NULL, &v), -ENOENT);
		CHECK_EQ(v, 0);
		CHECK_EQ(rqbpf_map_delete(q, NULL), -EINVAL);
		CHECK_EQ(rqbpf_map_get_next_key(q, NULL, &v), -EINVAL);
		CHECK_EQ(rqbpf_map_lookup_and_delete(q, NULL, NULL), -EINVAL);
		arr = rqbpf_object_find_map(obj, "queue_st.bss");
		CHECK(arr == NULL || rqbpf_map_lookup_and_delete(arr, &v, &v) == -ENOTSUP);
		rqbpf_object_close(obj);
	}
}

struct worker {
	struct rqbpf_object *obj;
	uint32_t id;
	long runs;
	uint64_t pushed_sum, popped_sum;
	long popped;
};

static void *push_pop(void *arg)
{
	struct worker *w = arg;
	struct rqbpf_prog *p = bt_prog(w->obj, "push_pop");

	for (long i = 0; i < w->runs; i++) {
		struct __sk_buff ctx = {.cb = {w->id << 20 | (uint32_t)i}};
		struct rqbpf_run_result res;

		if (rqbpf_prog_run(p, &ctx, sizeof(ctx), &res))
			tu_fail(__FILE__, __LINE__, "push_pop: %s", res.msg);
		if ((int32_t)res.retval < 0)
			tu_fail(__FILE__, __LINE__, "push_pop: push failed");
		w->pushed_sum += ctx.cb[0];
		if (res.retval) {
			w->popped_sum += (uint32_t)res.retval - 1;
			w->popped++;
		}
	}
	return NULL;
}

/* Each run pushes a value and pops one: no value is lost or popped twice
 * (sums and counts, with what is left in the queue at the end). */
static void test_queue_threads(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct worker w[THREADS];
		pthread_t t[THREADS];
		uint64_t pushed = 0, popped = 0, v;
		long npopped = 0, runs = tu_scaled(20000);
		struct rqbpf_object *obj = bt_load("queue_stack", *cc, 0);

		if (!obj)
			continue;
		for (uint32_t i = 0; i < THREADS; i++) {
			w[i] = (struct worker){obj, i, runs, 0, 0, 0};
			CHECK_EQ(pthread_create(&t[i], NULL, push_pop, &w[i]), 0);
		}
		for (int i = 0; i < THREADS; i++) {
			CHECK_EQ(pthread_join(t[i], NULL), 0);
			pushed += w[i].pushed_sum;
			popped += w[i].popped_sum;
			npopped += w[i].popped;
		}
		while (rqbpf_map_lookup_and_delete(rqbpf_object_find_map(obj, "shared"), NULL,
		                                   &v) == 0) {
			popped += v;
			npopped++;
		}
		printf("# %s: %ld pushes, %ld pops\n", *cc, THREADS * runs, npopped);
		CHECK_EQ(npopped, THREADS * runs);
		CHECK_EQ(popped, pushed);
		rqbpf_object_close(obj);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_queue_order", test_queue_order, 60, 0),
    TU_TEST("bpf_queue_threads", test_queue_threads, 120, 0),
};

TU_MAIN(tests)
