/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor uses pthread spin locks. Under LD_PRELOAD its
 * constructor runs before the drop-in's (a preloaded library is initialized
 * after the libraries the program links), so it exercises calls into the
 * drop-in before the drop-in's own start-up ran. It also owns a thread-
 * specific data key, which the lock library must not disturb.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

int early_results[4];

static int marker;

__attribute__((constructor)) static void early_locker(void)
{
	pthread_key_t key;
	pthread_spinlock_t l;

	pthread_key_create(&key, NULL);
	pthread_setspecific(key, &marker);
	pthread_spin_init(&l, PTHREAD_PROCESS_PRIVATE);
	early_results[0] = pthread_spin_lock(&l);
	printf("waiting: lock again, in a constructor\n");
	fflush(stdout);
	early_results[1] = pthread_spin_lock(&l); /* AA */
	early_results[2] = pthread_spin_unlock(&l);
	early_results[3] = pthread_getspecific(key) == &marker ? 0 : EINVAL;
}
