/* SPDX-License-Identifier: MIT */
/*
 * dropin.c: an ordinary pthread_spin program, to run under the drop-in
 * (rqspinlock-pthread(7)); it knows nothing of rqspinlock:
 *
 *   LD_PRELOAD=PREFIX/lib/librqspinlock-pthread.so ./dropin       # counts
 *   LD_PRELOAD=... ./dropin aa     # relocks its own lock: reported, aborts
 *   LD_PRELOAD=... RQSPINLOCK_PTHREAD_ON_FAIL=return ./dropin aa
 *                                  # ... or returns EDEADLK to this check
 *
 * With glibc's own pthread_spin_lock() (no LD_PRELOAD) `aa` hangs forever.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_spinlock_t lock;
static long counter;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		pthread_spin_lock(&lock); /* unchecked, as most programs do */
		counter++;
		pthread_spin_unlock(&lock);
	}
	return NULL;
}

static int relock(void)
{
	int err;

	pthread_spin_lock(&lock);
	err = pthread_spin_lock(&lock); /* the bug: an AA deadlock */
	printf("second pthread_spin_lock: %s\n", err ? strerror(err) : "0 (?)");
	pthread_spin_unlock(&lock);
	return err ? 0 : 1;
}

int main(int argc, char **argv)
{
	pthread_t t[4];

	pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
	if (argc > 1 && strcmp(argv[1], "aa") == 0)
		return relock();
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("counter=%ld\n", counter);
	return counter == 400000 ? 0 : 1;
}
