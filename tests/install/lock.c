/* SPDX-License-Identifier: MIT */
/* Built against an installed librqspinlock: the README's lock, an AA that
 * is refused, and the version the program runs with. */
#include <rqspinlock.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

static rqspinlock_t lock = RQSPINLOCK_INIT;

int main(void)
{
	if (strcmp(rqspinlock_version(), RQSPINLOCK_VERSION) != 0)
		return 1;
	if (res_spin_lock(&lock))
		return 2;
	if (res_spin_lock(&lock) != -EDEADLK) /* AA: refused, not a hang */
		return 3;
	res_spin_unlock(&lock);
	printf("lock consumer: rqspinlock %s OK\n", rqspinlock_version());
	return 0;
}
