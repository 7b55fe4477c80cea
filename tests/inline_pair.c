/* SPDX-License-Identifier: MIT */
/*
 * Uncontended lock+unlock pairs through two out-of-line wrappers, built
 * twice: against the exported functions and with RQSPINLOCK_INLINE. The
 * wrappers are what callgrind's --toggle-collect='lkop_*' counts
 * (docs/BENCHMARKS.md, "Fast path"); rqtorture's wrappers look the same.
 * As a test: every pair succeeds on the fast path (no slow-path counter
 * moves) and leaves the table empty (an AA on a released lock would fail).
 *
 * Usage: inline_pair [PAIRS] (default 100000); exit status 0 on success.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rqspinlock.h>

#include "fastpath_check.h"

static __attribute__((noinline)) int lkop_pair_lock(rqspinlock_t *lock)
{
	return res_spin_lock(lock);
}

static __attribute__((noinline)) void lkop_pair_unlock(rqspinlock_t *lock)
{
	res_spin_unlock(lock);
}

static rqspinlock_t the_lock = RQSPINLOCK_INIT;
/* volatile: the wrappers get the lock as an unknown argument, as in rqtorture */
static rqspinlock_t *volatile lockp = &the_lock;

int main(int argc, char **argv)
{
	struct rqspinlock_stats before;
	long pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;

	/* the first call registers the thread (slow entry): not counted */
	if (res_spin_lock(&the_lock) != 0)
		return 1;
	res_spin_unlock(&the_lock);
	res_spin_get_stats(&before);
	for (long i = 0; i < pairs; i++) {
		if (lkop_pair_lock(lockp) != 0) {
			fprintf(stderr, "inline_pair: lock failed at pair %ld\n", i);
			return 1;
		}
		lkop_pair_unlock(lockp);
	}
	if (!fast_path_only_since(&before, &the_lock)) {
		fprintf(stderr, "inline_pair: a pair left the fast path or the lock taken\n");
		return 1;
	}
	printf("ok - %ld pairs\n", pairs);
	return 0;
}
