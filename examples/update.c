/* SPDX-License-Identifier: MIT */
/*
 * update.c: the README's example, as a program. Four threads update one
 * counter under an rqspinlock and handle the lock's errors as a caller must.
 * Built as C and, from the same source, as C++ (examples/CMakeLists.txt).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include <rqspinlock.h>

static rqspinlock_t lock = RQSPINLOCK_INIT; /* or zeroed memory */
static long counter;

static int update(void)
{
	int err = res_spin_lock(&lock);
	if (err)
		return err; /* -EDEADLK or -ETIMEDOUT: we do NOT hold it */
	counter++;
	res_spin_unlock(&lock);
	return 0;
}

static void *worker(void *arg)
{
	long failures = 0;
	(void)arg;
	for (int i = 0; i < 100000; i++)
		if (update() != 0)
			failures++;
	return (void *)failures;
}

int main(void)
{
	pthread_t t[4];
	long failures = 0;
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		failures += (long)r;
	}
	printf("counter=%ld failures=%ld\n", counter, failures);
	return counter + failures == 400000 ? 0 : 1;
}
