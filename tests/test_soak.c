/* SPDX-License-Identifier: MIT */
/*
 * False-positive soak: threads take up to 4 of 64 locks at random, always in
 * ascending index order (one global order: no deadlock is possible), with the
 * default timeout. Any error is a false positive (or a false timeout).
 *
 *   test_soak deadlock_soak                  short run for CTest (~1-2 s)
 *   test_soak --acquisitions N [--threads T] [--timeout-ms M]
 *                                            long run (scripts/soak.sh),
 *                                            default timeout (250 ms) unless M
 */
#include "testutil.h"

#define SOAK_LOCKS   64
#define SOAK_NEST    4
#define SOAK_THREADS 4

struct soak {
	rqspinlock_t locks[SOAK_LOCKS];
	long counters[SOAK_LOCKS]; /* counters[i] protected by locks[i] */
	long per_thread;           /* acquisitions each thread makes */
	atomic_long attempts, errors, deadlocks, timeouts;
	atomic_int next_seed;
};

/* Picks 1..SOAK_NEST distinct lock indices in ascending order. */
static int soak_pick(uint64_t *rng, int idx[SOAK_NEST])
{
	int n = 1 + (int)(tu_rand(rng) % SOAK_NEST), k = 0;
	uint64_t chosen = 0;

	while (k < n) {
		int i = (int)(tu_rand(rng) % SOAK_LOCKS);

		if (chosen & (1ULL << i))
			continue;
		chosen |= 1ULL << i;
		k++;
	}
	k = 0;
	for (int i = 0; i < SOAK_LOCKS; i++)
		if (chosen & (1ULL << i))
			idx[k++] = i;
	return n;
}

static void soak_count_error(struct soak *s, int r)
{
	atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
	if (r == -EDEADLK)
		atomic_fetch_add_explicit(&s->deadlocks, 1, memory_order_relaxed);
	else if (r == -ETIMEDOUT)
		atomic_fetch_add_explicit(&s->timeouts, 1, memory_order_relaxed);
}

static void *soak_worker(void *arg)
{
	struct soak *s = arg;
	uint64_t rng = 0x2545f4914f6cdd1dULL +
	               (uint64_t)atomic_fetch_add_explicit(&s->next_seed, 1, memory_order_relaxed);
	long done = 0;

	while (done < s->per_thread) {
		int idx[SOAK_NEST], n = soak_pick(&rng, idx), got = 0;

		for (; got < n; got++) {
			int r = res_spin_lock(&s->locks[idx[got]]);

			if (r != 0) {
				soak_count_error(s, r);
				break;
			}
			s->counters[idx[got]]++;
		}
		done += got + (got < n); /* a failure counts as an attempt */
		/* Release in a random order: out-of-order unlock is allowed. */
		while (got > 0) {
			int k = (int)(tu_rand(&rng) % (uint64_t)got);

			res_spin_unlock(&s->locks[idx[k]]);
			idx[k] = idx[--got];
		}
	}
	atomic_fetch_add_explicit(&s->attempts, done, memory_order_relaxed);
	return NULL;
}

/* Runs the soak; returns the number of errors. */
static long soak_run(long total, int nthreads)
{
	struct soak *s = calloc(1, sizeof(*s));
	pthread_t t[64];
	uint64_t t0 = rqu_now_ns();
	struct rqspinlock_stats st;
	long sum = 0, errors;
	double secs;

	CHECK(s != NULL);
	CHECK(nthreads >= 1 && nthreads <= 64);
	s->per_thread = total / nthreads + 1;
	for (int i = 0; i < nthreads; i++)
		tu_thread_start(&t[i], soak_worker, s);
	for (int i = 0; i < nthreads; i++)
		tu_thread_join(t[i]);
	secs = (double)(rqu_now_ns() - t0) / 1e9;
	for (int i = 0; i < SOAK_LOCKS; i++) {
		sum += s->counters[i];
		CHECK_EQ(tu_word(&s->locks[i]), 0);
	}
	errors = atomic_load(&s->errors);
	printf("# soak (%s mode, timeout %.0f ms): %d threads, %ld acquisitions in %.2f s, "
	       "%ld errors (%ld -EDEADLK, %ld -ETIMEDOUT)\n",
	       tu_is_tas() ? "tas" : "queued", (double)res_spin_get_timeout_ns() / 1e6, nthreads,
	       sum, secs, errors, atomic_load(&s->deadlocks), atomic_load(&s->timeouts));
	/* Each successful acquisition incremented exactly one counter. */
	CHECK_EQ(sum + errors, atomic_load(&s->attempts));
	tu_stats(&st);
	printf("# contended: %llu pending, %llu queued, %llu tas slow-path acquisitions\n",
	       (unsigned long long)st.lock_pending, (unsigned long long)st.lock_slowpath,
	       (unsigned long long)st.lock_tas);
	free(s);
	return errors;
}

static void test_soak_short(void)
{
	res_spin_set_timeout_ns(TU_MUTEX_TIMEOUT_NS);
	CHECK_EQ(soak_run(tu_scaled(400000), SOAK_THREADS), 0);
}

static const struct tu_test tests[] = {
    TU_TEST("deadlock_soak", test_soak_short, 60, TU_TAS),
};

int main(int argc, char **argv)
{
	long total = 0;
	int nthreads = SOAK_THREADS;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--acquisitions") == 0)
			total = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--threads") == 0)
			nthreads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--timeout-ms") == 0)
			res_spin_set_timeout_ns((uint64_t)atol(argv[i + 1]) * TU_NS_PER_MS);
	}
	if (total <= 0)
		return tu_main(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
	setvbuf(stdout, NULL, _IONBF, 0);
	tu_check_mode();
	/* Generous watchdog: ~1 s per million acquisitions is typical. */
	tu_start_watchdog((unsigned)(600 + total / 100000));
	total = soak_run(total, nthreads);
	tu_stop_watchdog();
	return total == 0 ? 0 : 1;
}
