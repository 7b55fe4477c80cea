/* SPDX-License-Identifier: MIT */
/*
 * For the fast-path programs (inline_pair.c, fastpath_parts.c): did every
 * lock+unlock since @before stay on the fast path (no slow-path counter
 * moved) and leave @lock free? Takes and releases @lock to check.
 */
#ifndef RQ_TESTS_FASTPATH_CHECK_H
#define RQ_TESTS_FASTPATH_CHECK_H

#include <stdbool.h>

#include <rqspinlock.h>

static inline bool fast_path_only_since(const struct rqspinlock_stats *before, rqspinlock_t *lock)
{
	struct rqspinlock_stats after;

	res_spin_get_stats(&after);
	if (after.lock_slowpath != before->lock_slowpath || after.lock_tas != before->lock_tas ||
	    after.unlock_not_held != before->unlock_not_held || res_spin_trylock(lock) != 0)
		return false;
	res_spin_unlock(lock);
	return true;
}

#endif /* RQ_TESTS_FASTPATH_CHECK_H */
