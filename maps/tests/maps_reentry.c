/* SPDX-License-Identifier: MIT */
/*
 * Re-entrancy, the point of the exercise: a map operation that needs a bucket
 * lock its own thread already holds (a signal handler that interrupted an
 * update) fails at once with -EDEADLK and leaves the map as it was.
 *  1. deterministic: hold a bucket lock, run every writer path on it, also
 *     from a handler delivered with raise();
 *  2. under load: SIGPROF from setitimer at a high rate while several
 *     threads update/delete/look up; each thread's keys keep exact values,
 *     no -ETIMEDOUT (nothing waited), and nothing leaks.
 */
#include "reentry_common.h"

#include <pthread.h>
#include <unistd.h>

static void check_counts(struct rqmap_hash *m, uint32_t count)
{
	struct rqmap_hash_info info;

	rqmap_quiesce();
	CHECK_EQ(rqmap_hash_info(m, &info), 0);
	CHECK_EQ(info.count, count);
	CHECK_EQ(info.count + info.free, info.capacity);
}

static void test_held_bucket(void)
{
	struct rqmap_hash *m = reentry_make_map(RQMAP_LOCK_RQSPIN, 1);
	uint32_t k = 1, k2 = 2, keys[4], cursor = 0, count = 4;
	uint64_t v = 10, got, vals[4];
	struct rqmap_bucket *b = rqmap_hash_bucket_of(m, &k);

	CHECK_EQ(rqmap_hash_update(m, &k, &v, 0), 0);
	CHECK_EQ(res_spin_lock(&b->lock.rq), 0);
	v = 11;
	CHECK_EQ(rqmap_hash_update(m, &k, &v, 0), -EDEADLK);
	CHECK_EQ(rqmap_hash_update(m, &k2, &v, 0), -EDEADLK);
	CHECK_EQ(rqmap_hash_delete(m, &k), -EDEADLK);
	CHECK_EQ(rqmap_hash_lookup_and_delete(m, &k, &got, 0), -EDEADLK);
	CHECK_EQ(rqmap_hash_lookup_and_delete_batch(m, &cursor, keys, vals, &count, 0), -EDEADLK);
	CHECK_EQ(count, 0);
	CHECK_EQ(cursor, 0);
	CHECK_EQ(rqmap_hash_lookup(m, &k, &got, 0), 0); /* lookups take no lock */
	CHECK_EQ(got, 10);
	CHECK_EQ(rqmap_hash_lookup(m, &k2, &got, 0), -ENOENT);
	res_spin_unlock(&b->lock.rq);
	check_counts(m, 1);
	CHECK_EQ(rqmap_hash_update(m, &k, &v, 0), 0);
	CHECK_EQ(rqmap_hash_lookup(m, &k, &got, 0), 0);
	CHECK_EQ(got, 11);
	rqmap_hash_destroy(m);
}

/* raise() inside a held bucket lock: the handler's update gets -EDEADLK. */
static void test_raise_in_lock(void)
{
	static struct reentry_thread rt;
	struct rqmap_bucket *b;
	uint32_t k;

	re_map = reentry_make_map(RQMAP_LOCK_RQSPIN, 4);
	reentry_thread_setup(&rt, 0);
	k = main_key(0, 3);
	b = rqmap_hash_bucket_of(re_map, &k);
	install_handler();
	atomic_store(&rt.cur, 3);
	CHECK_EQ(res_spin_lock(&b->lock.rq), 0);
	raise(SIGPROF);
	res_spin_unlock(&b->lock.rq);
	CHECK_EQ(rt.n_deadlk, 1);
	CHECK_EQ(rt.n_bad_lookup, 0);
	raise(SIGPROF); /* lock free now: succeeds */
	CHECK_EQ(rt.n_ok, 1);
	re_self = NULL;
	check_counts(re_map, 1);
	rqmap_hash_destroy(re_map);
	re_map = NULL;
}

struct worker {
	struct reentry_thread rt;
	uint32_t t;
	long iters, bad;
	double end;
};

static void verify_own_keys(struct worker *w)
{
	for (uint32_t i = 0; i < MAIN_KEYS; i++) {
		uint32_t k = main_key(w->t, i);
		uint64_t got;
		int ret = rqmap_hash_lookup(re_map, &k, &got, 0);

		if (w->rt.main_val[i] == NO_VALUE ? ret != -ENOENT
		                                  : (ret || got != w->rt.main_val[i]))
			w->bad++;
	}
	for (uint32_t j = 0; j < HKEYS; j++) {
		uint32_t k = handler_key(w->t, j);
		uint64_t got;
		int ret = rqmap_hash_lookup(re_map, &k, &got, 0);

		if (w->rt.hval[j] == NO_VALUE ? ret != -ENOENT : (ret || got != w->rt.hval[j]))
			w->bad++;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t rs = 0x9e3779b97f4a7c15ULL * (w->t + 1);

	timer_t tm;

	rqmap_thread_init(); /* before the first handler can run a map op here */
	reentry_thread_setup(&w->rt, w->t);
	tm = thread_prof_timer(100);
	while (tu_now_s() < w->end && !atomic_load_explicit(&re_abort, memory_order_relaxed)) {
		for (int i = 0; i < 16; i++, w->iters++)
			if (!reentry_main_op(&w->rt, w->t, tu_rand(&rs)))
				w->bad++;
	}
	block_sigprof();
	timer_delete(tm);
	re_self = NULL;
	verify_own_keys(w);
	return NULL;
}

static void test_sigprof_load(int nthreads)
{
	struct worker w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	long deadlk = 0, nomem = 0, ok = 0, other = 0, timedout = 0, slow = 0, bad = 0, iters = 0;
	double secs = 0.4 * (double)tu_scaled(10) / 10.0 + 0.3;

	re_map = reentry_make_map(RQMAP_LOCK_RQSPIN, 16);
	install_handler();
	for (int t = 0; t < nthreads; t++) {
		w[t] = (struct worker){.t = (uint32_t)t, .end = tu_now_s() + secs};
		CHECK_EQ(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
	}
	set_prof_timer(50); /* plus the process profiling timer (tick rate) */
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	set_prof_timer(0);
	for (int t = 0; t < nthreads; t++) {
		deadlk += w[t].rt.n_deadlk;
		nomem += w[t].rt.n_nomem;
		ok += w[t].rt.n_ok;
		other += w[t].rt.n_other;
		timedout += w[t].rt.n_timedout;
		slow += w[t].rt.n_slow;
		if (w[t].bad)
			printf("thread %d: %ld wrong results, last main error %d\n", t, w[t].bad,
			       w[t].rt.main_err);
		if (w[t].rt.n_other)
			printf("thread %d: handler error %d\n", t, w[t].rt.last_other);
		bad += w[t].bad + w[t].rt.n_bad_lookup;
		iters += w[t].iters;
	}
	printf(
	    "sigprof %d threads: %ld ops, handler updates ok %ld, -EDEADLK %ld, -ENOMEM %ld, "
	    "-ETIMEDOUT %ld, other %ld, slower than 1 s %ld; library timeouts %ld (own lock %ld)\n",
	    nthreads, iters, ok, deadlk, nomem, timedout, other, slow, atomic_load(&re_timeouts),
	    atomic_load(&re_own_timeouts));
	CHECK_EQ(bad, 0);
	CHECK_EQ(other, 0);
	/* Never a wait for a lock the waiting thread holds itself. */
	CHECK_EQ(atomic_load(&re_own_timeouts), 0);
	CHECK(timedout <= atomic_load(&re_timeouts));
	CHECK(ok + deadlk > 0); /* the timer did interrupt map operations */
	/* Nothing leaks: empty the map, every element returns to the freelist. */
	for (int t = 0; t < nthreads; t++) {
		for (uint32_t i = 0; i < MAIN_KEYS; i++) {
			uint32_t k = main_key((uint32_t)t, i);

			(void)rqmap_hash_delete(re_map, &k);
		}
		for (uint32_t j = 0; j < HKEYS; j++) {
			uint32_t k = handler_key((uint32_t)t, j);

			(void)rqmap_hash_delete(re_map, &k);
		}
	}
	check_counts(re_map, 0);
	rqmap_hash_destroy(re_map);
	re_map = NULL;
	return;
}

static void test_maps_reentry(void)
{
	rqmap_thread_init();
	test_held_bucket();
	test_raise_in_lock();
	test_sigprof_load(1);
	test_sigprof_load(3);
}

static const struct tu_test tests[] = {
    TU_TEST("maps_reentry", test_maps_reentry, 60, 0),
};

TU_MAIN(tests)
