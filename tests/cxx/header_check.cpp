// SPDX-License-Identifier: MIT
// Compiled once per C++ standard (tests/cxx/CMakeLists.txt): the public
// headers must compile as C++11 through C++23, with the C layout.
#include <rqspinlock.h>
#include <rqspinlock/qspinlock.h>

#include <cstddef>

static_assert(sizeof(rqspinlock_t) == 4, "same size as in C");
static_assert(alignof(rqspinlock_t) == 4, "same alignment as in C");
static_assert(offsetof(rqspinlock_t, val) == 0, "the word is the whole lock");
static_assert(sizeof(ql_spinlock_t) == 4, "same size as in C");

rqspinlock_t rq_header_check_static = RQSPINLOCK_INIT;
ql_spinlock_t rq_header_check_ql = QL_SPINLOCK_INIT;
