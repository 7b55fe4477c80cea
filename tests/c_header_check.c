/* SPDX-License-Identifier: MIT */
/*
 * Compiled once per C standard in strict ISO mode, -pedantic, with no
 * feature-test macro (tests/CMakeLists.txt): the public headers must not
 * depend on the _GNU_SOURCE the project itself builds with. (The irqsave
 * pair, which takes a POSIX sigset_t, is left out there: rqspinlock.h.)
 */
#include <rqspinlock.h>
#include <rqspinlock/qspinlock.h>

_Static_assert(sizeof(rqspinlock_t) == 4, "the lock is one 4-byte word");

rqspinlock_t rq_c_header_check_static = RQSPINLOCK_INIT;
ql_spinlock_t rq_c_header_check_ql = QL_SPINLOCK_INIT;

int rq_c_header_check_pair(rqspinlock_t *lock);

int rq_c_header_check_pair(rqspinlock_t *lock)
{
	int err = res_spin_lock(lock);

	if (!err)
		res_spin_unlock(lock);
	return err;
}
