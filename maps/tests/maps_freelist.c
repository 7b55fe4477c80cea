/* SPDX-License-Identifier: MIT */
/*
 * Per-thread freelist: elements are never lost, and a pop finds a free one.
 *  0. a pop whose free element moves, while it waits for a lock, into a list
 *     it has already passed still finds it (a pass over the lists is no
 *     snapshot);
 *  1. the freelist alone: threads pop and push concurrently, no pop comes back
 *     empty (at most 32 of 1000 are out); at the end every element is back
 *     exactly once;
 *  2. through the map: threads churn a small key space (insert, replace,
 *     delete, batch delete); at every quiescent point (threads joined,
 *     rqmap_quiesce()) elements in the map + elements in the freelist ==
 *     the preallocated capacity.
 * Registered twice in CTest, once with RQSPINLOCK_SLOTS=2 so that most
 * threads have no registry slot (-ENOSPC path: their locks take the TAS slow
 * path, their home lists are handed out round-robin).
 */
#include "freelist.h"
#include "readers.h"
#include "testutil.h"

#include <rqmap.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NTHREADS 4
#define NELEMS   1000

struct behind_ctx {
	struct rqfl fl;
	_Atomic uint32_t home; /* the popper's list; UINT32_MAX until known */
	atomic_bool go;
	struct rqfl_node *got;
};

static void *behind_popper(void *arg)
{
	struct behind_ctx *c = arg;

	atomic_store(&c->home, rqfl_home(&c->fl));
	while (!atomic_load(&c->go))
		sched_yield();
	c->got = rqfl_pop(&c->fl);
	return NULL;
}

/* Wait until someone else waits for @lock, which we hold: a waiting lock
 * shows in the lock word (pending bit or queue tail), a trylock does not.
 * White-box: the word is private to the library. */
static void wait_for_waiter(rqspinlock_t *lock)
{
	uint32_t held = atomic_load_explicit(&lock->val, memory_order_relaxed);
	double deadline = tu_now_s() + 10;

	while (atomic_load_explicit(&lock->val, memory_order_relaxed) == held &&
	       tu_now_s() < deadline)
		sched_yield();
	CHECK(atomic_load_explicit(&lock->val, memory_order_relaxed) != held);
}

static void test_pop_behind_scan(void)
{
	static struct rqfl_node node;
	struct behind_ctx c = {.home = UINT32_MAX};
	struct rqfl_head *last;
	uint32_t home;
	pthread_t th;

	CHECK_EQ(rqfl_init(&c.fl, 4), 0);
	CHECK_EQ(pthread_create(&th, NULL, behind_popper, &c), 0);
	while ((home = atomic_load(&c.home)) == UINT32_MAX)
		sched_yield();
	/* The only element in the popper's last list, whose lock we hold: its
	 * trylock fails, it passes every other list, then waits there. */
	last = &c.fl.lists[(home + c.fl.nr_lists) % (c.fl.nr_lists + 1)];
	rqfl_push_chain_at(&c.fl, &node, &node, 1, (uint32_t)(last - c.fl.lists));
	CHECK_EQ(res_spin_lock(&last->lock), 0);
	atomic_store(&c.go, true);
	wait_for_waiter(&last->lock);
	/* Meanwhile other threads pop the element and push it into the popper's
	 * own list, which it has passed. */
	atomic_store_explicit(&last->first, NULL, memory_order_relaxed);
	atomic_store_explicit(&last->n, 0, memory_order_relaxed);
	rqfl_push_chain_at(&c.fl, &node, &node, 1, home);
	res_spin_unlock(&last->lock);
	pthread_join(th, NULL);
	CHECK(c.got == &node);
	CHECK_EQ(rqfl_count(&c.fl), 0);
	rqfl_destroy(&c.fl);
}

/* A nested pop (a handler over a map operation) never waits for a list lock:
 * its home list is held by another thread (as if by the context the handler
 * interrupted), and a free element sits in another list. It must take that
 * one without waiting on the home list; the holder watches the lock word
 * for a waiter (and then lets go, so that a waiting pop ends). */
struct nested_ctx {
	rqspinlock_t *lock;
	atomic_bool held, done, waited;
};

static void *nested_holder(void *arg)
{
	struct nested_ctx *c = arg;
	uint32_t word;

	CHECK_EQ(res_spin_lock(c->lock), 0);
	word = atomic_load_explicit(&c->lock->val, memory_order_relaxed);
	atomic_store(&c->held, true);
	while (!atomic_load(&c->done)) {
		if (atomic_load_explicit(&c->lock->val, memory_order_relaxed) != word) {
			atomic_store(&c->waited, true);
			break;
		}
		sched_yield();
	}
	res_spin_unlock(c->lock);
	return NULL;
}

static void test_nested_pop_never_waits(void)
{
	static struct rqfl_node in_home, elsewhere;
	struct nested_ctx c = {0};
	struct rqfl fl;
	struct rqfl_node *got;
	uint32_t home;
	pthread_t th;

	CHECK_EQ(rqfl_init(&fl, 4), 0);
	home = rqfl_home(&fl);
	rqfl_push_chain_at(&fl, &in_home, &in_home, 1, home);
	rqfl_push_chain_at(&fl, &elsewhere, &elsewhere, 1, (home + 2) % (fl.nr_lists + 1));
	c.lock = &fl.lists[home].lock;
	CHECK_EQ(pthread_create(&th, NULL, nested_holder, &c), 0);
	while (!atomic_load(&c.held))
		sched_yield();
	rqmap_tls_depth = 2; /* as in a handler over a map operation */
	got = rqfl_pop(&fl);
	rqmap_tls_depth = 0;
	atomic_store(&c.done, true);
	pthread_join(th, NULL);
	CHECK(!atomic_load(&c.waited));
	CHECK(got == &elsewhere);
	CHECK_EQ(rqfl_count(&fl), 1);
	rqfl_destroy(&fl);
}

struct fl_ctx {
	struct rqfl fl;
	long iters;
	atomic_long empty;
};

static void *fl_thread(void *arg)
{
	struct fl_ctx *c = arg;
	struct rqfl_node *held[8];

	for (long i = 0; i < c->iters; i++) {
		int n = 0;

		for (; n < 8; n++) {
			held[n] = rqfl_pop(&c->fl);
			if (!held[n])
				break;
		}
		if (n < 8)
			atomic_fetch_add(&c->empty, 1);
		while (n > 0)
			rqfl_push(&c->fl, held[--n], rqfl_home(&c->fl));
	}
	return NULL;
}

static void test_freelist_alone(void)
{
	static struct rqfl_node nodes[NELEMS];
	static unsigned char seen[NELEMS];
	struct fl_ctx c = {.iters = tu_scaled(50000)};
	pthread_t th[NTHREADS];
	struct rqfl_node *n;
	uint32_t count = 0;

	CHECK_EQ(rqfl_init(&c.fl, 4), 0);
	rqfl_populate(&c.fl, nodes, sizeof(nodes[0]), NELEMS);
	CHECK_EQ(rqfl_count(&c.fl), NELEMS);
	for (int i = 0; i < NTHREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, fl_thread, &c), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(rqfl_count(&c.fl), NELEMS);
	memset(seen, 0, sizeof(seen));
	while ((n = rqfl_pop(&c.fl))) {
		long idx = n - nodes;

		CHECK(idx >= 0 && idx < NELEMS && !seen[idx]);
		seen[idx] = 1;
		count++;
	}
	CHECK_EQ(count, NELEMS);
	/* 32 taken at most, 1000 there: no pop comes back empty (with lock
	 * timeouts of 5 s no lock fails here) */
	CHECK_EQ(atomic_load(&c.empty), 0);
	rqfl_destroy(&c.fl);
}

struct churn_ctx {
	struct rqmap_hash *m;
	long iters;
	atomic_long errors, nomem;
};

static void *churn_thread(void *arg)
{
	struct churn_ctx *c = arg;
	uint64_t rs = (uint64_t)(uintptr_t)&rs | 1;
	uint32_t keys[64], cursor, count;
	uint64_t vals[64];

	rqmap_thread_init();
	for (long i = 0; i < c->iters; i++) {
		uint64_t r = tu_rand(&rs);
		uint32_t k = (uint32_t)(r % 200);
		uint64_t v = r;
		int ret;

		switch ((r >> 40) % 16) {
		case 0:
			cursor = (uint32_t)((r >> 8) % 64);
			count = 64;
			ret = rqmap_hash_lookup_and_delete_batch(c->m, &cursor, keys, vals, &count,
			                                         0);
			ret = ret == -ENOENT ? 0 : ret;
			break;
		case 1:
		case 2:
		case 3:
			ret = rqmap_hash_delete(c->m, &k);
			break;
		default:
			ret = rqmap_hash_update(c->m, &k, &v, RQMAP_ANY);
		}
		/* -E2BIG: the map is full (200 keys, max_entries 128); -ENOMEM: the
		 * spare elements all wait for a grace period (documented, transient;
		 * this test is about conservation) */
		if (ret == -ENOMEM)
			atomic_fetch_add(&c->nomem, 1);
		else if (ret && ret != -ENOENT && ret != -E2BIG && ret != -ENOSPC &&
		         atomic_fetch_add(&c->errors, 1) < 5)
			fprintf(stderr, "churn: error %d\n", ret);
	}
	return NULL;
}

static void check_conservation(struct rqmap_hash *m, const char *when)
{
	struct rqmap_hash_info info;

	rqmap_quiesce();
	CHECK_EQ(rqmap_hash_info(m, &info), 0);
	printf("%s: count %u + free %u = capacity %u\n", when, info.count, info.free,
	       info.capacity);
	CHECK(info.count <= info.max_entries);
	CHECK_EQ(info.count + info.free, info.capacity);
}

static void test_map_conservation(void)
{
	struct rqmap_hash_attr a = {
	    .key_size = 4, .value_size = 8, .max_entries = 128, .n_buckets = 64};
	struct churn_ctx c = {.iters = tu_scaled(100000)};
	pthread_t th[NTHREADS];

	CHECK_EQ(rqmap_hash_create(&a, &c.m), 0);
	check_conservation(c.m, "created");
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < NTHREADS; i++)
			CHECK_EQ(pthread_create(&th[i], NULL, churn_thread, &c), 0);
		for (int i = 0; i < NTHREADS; i++)
			pthread_join(th[i], NULL);
		check_conservation(c.m, "after churn");
	}
	printf("transient -ENOMEM: %ld\n", atomic_load(&c.nomem));
	CHECK_EQ(atomic_load(&c.errors), 0);
	rqmap_hash_destroy(c.m);
}

static void test_maps_freelist(void)
{
	/* Threads without a registry slot (the _noslot run) take the lock
	 * through the unfair TAS path; under a sanitizer on 2 cores one can
	 * be starved past the default 250 ms, and a pop that times out finds
	 * nothing. Such timeouts are the lock's contract, not a lost element. */
	res_spin_set_timeout_ns(5ull * 1000 * 1000 * 1000);
	rqmap_thread_init();
	test_pop_behind_scan();
	test_nested_pop_never_waits();
	test_freelist_alone();
	test_map_conservation();
}

static const struct tu_test tests[] = {
    TU_TEST("maps_freelist", test_maps_freelist, 60, 0),
    /* Threads beyond the lock registry use the shared freelist. */
    TU_TEST("maps_freelist_noslot", test_maps_freelist, 60, 0, .env = "RQSPINLOCK_SLOTS=2"),
};

TU_MAIN(tests)
