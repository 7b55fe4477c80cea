// SPDX-License-Identifier: MIT
// Compiled once per C++ standard (tests/cxx/CMakeLists.txt): the public
// headers must compile as C++11 through C++23, with the C layout.
#include <rqspinlock.h>
#include <rqspinlock/guard.hpp>
#include <rqspinlock/qspinlock.h>

#include <cstddef>

static_assert(sizeof(rqspinlock_t) == 4, "same size as in C");
static_assert(alignof(rqspinlock_t) == 4, "same alignment as in C");
static_assert(offsetof(rqspinlock_t, val) == 0, "the word is the whole lock");
static_assert(sizeof(ql_spinlock_t) == 4, "same size as in C");

rqspinlock_t rq_header_check_static = RQSPINLOCK_INIT;
ql_spinlock_t rq_header_check_ql = QL_SPINLOCK_INIT;

// The holders of <rqspinlock/guard.hpp>, used as a caller would (and, in the
// -fno-exceptions object, without lockable).
int rq_header_check_guard(rqspinlock_t &lock);
int rq_header_check_guard(rqspinlock_t &lock)
{
	res_spin_guard g(lock);
	if (!g)
		return g.error();
	res_spin_guard t(lock, res_spin_try_to_lock);
	return t.error();
}
#ifdef RQSPINLOCK_GUARD_THROWS
void rq_header_check_lockable(rqspinlock_t &lock);
void rq_header_check_lockable(rqspinlock_t &lock)
{
	res_spin_lockable l(lock);
	l.lock();
	l.unlock();
}
#endif
