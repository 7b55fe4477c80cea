/* SPDX-License-Identifier: MIT */
/*
 * res_spin_lock_init_shared() through the public API: a marked lock keeps
 * every documented result (trylock, AA, unlock, re-init), takes the
 * test-and-set path (counted in lock_tas), never queues (lock_slowpath and
 * lock_pending stay 0 under contention), and still excludes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "rqspinlock.h"

#define NR_THREADS 4
#define ITERS      20000

static rqspinlock_t lock;
static long count;

static void *worker(void *arg)
{
	for (int i = 0; i < ITERS; i++) {
		if (res_spin_lock(&lock)) {
			*(int *)arg = 1;
			return NULL;
		}
		count++;
		res_spin_unlock(&lock);
	}
	return NULL;
}

static int check(const char *what, long got, long want)
{
	printf("%s: %ld (want %ld)\n", what, got, want);
	return got != want;
}

int main(void)
{
	struct rqspinlock_stats st;
	pthread_t th[NR_THREADS];
	int bad = 0, failed[NR_THREADS] = {0};

	res_spin_lock_init_shared(&lock);
	bad |= check("trylock free", res_spin_trylock(&lock), 0);
	bad |= check("trylock held", res_spin_trylock(&lock), -EBUSY);
	bad |= check("lock held (AA)", res_spin_lock(&lock), -EDEADLK);
	res_spin_unlock(&lock);
	res_spin_reset_stats();
	for (int i = 0; i < NR_THREADS; i++)
		pthread_create(&th[i], NULL, worker, &failed[i]);
	for (int i = 0; i < NR_THREADS; i++) {
		pthread_join(th[i], NULL);
		bad |= failed[i];
	}
	bad |= check("count", count, (long)NR_THREADS * ITERS);
	res_spin_get_stats(&st);
	bad |= check("queued acquisitions", (long)(st.lock_slowpath + st.lock_pending), 0);
	printf("test-and-set entries: %llu\n", (unsigned long long)st.lock_tas);
	bad |= st.lock_tas == 0;
	bad |= check("lock after", res_spin_lock(&lock), 0);
	res_spin_unlock(&lock);
	res_spin_lock_init(&lock); /* back to a private lock: the fast path again */
	bad |= check("private again, lock", res_spin_lock(&lock), 0);
	res_spin_unlock(&lock);
	return bad;
}
