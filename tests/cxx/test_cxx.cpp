// SPDX-License-Identifier: MIT
//
// test_cxx: the library from C++ with std::thread. Each named test is run as
// `test_cxx NAME`; `test_cxx --list` lists them (CTest registers the list).
// It checks that a lock declared in C++ is the lock the C library expects
// (layout, zero initialisation, static and heap storage), that mutual
// exclusion holds for std::thread workers, and that errors reach C++ code
// through the public holders of <rqspinlock/guard.hpp>: res_spin_guard
// and res_spin_irqsave_guard return them, res_spin_lockable throws them.
#include <rqspinlock.h>
#include <rqspinlock/guard.hpp>
#include <rqspinlock/qspinlock.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <csignal>
#include <system_error>
#include <string>
#include <thread>
#include <vector>

namespace
{

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,      \
			             #cond);                                                       \
			std::exit(1);                                                              \
		}                                                                                  \
	} while (0)

rqspinlock_t static_lock = RQSPINLOCK_INIT;
rqspinlock_t zero_lock; // static storage: zero-initialised

void test_layout()
{
	rqspinlock_t value_init{};
	CHECK(std::memcmp(&value_init, "\0\0\0\0", 4) == 0);
	rqspinlock_t braced = RQSPINLOCK_INIT;
	CHECK(std::memcmp(&braced, "\0\0\0\0", 4) == 0);
	// calloc'd memory is an unlocked lock, as in C.
	void *mem = std::calloc(1, sizeof(rqspinlock_t));
	CHECK(mem != nullptr);
	rqspinlock_t *heap = static_cast<rqspinlock_t *>(mem);
	CHECK(res_spin_lock(heap) == 0);
	res_spin_unlock(heap);
	std::free(mem);
	CHECK(res_spin_lock(&zero_lock) == 0);
	res_spin_unlock(&zero_lock);
}

// Runs @p increment (which bumps *counter under some lock and returns the
// lock's error) @p iters times on each of @p nthreads std::threads.
template <typename Increment> long hammer(int nthreads, int iters, Increment increment)
{
	long counter = 0;
	std::atomic<long> failures{0};
	std::vector<std::thread> threads;
	for (int t = 0; t < nthreads; t++)
		threads.emplace_back([&] {
			for (int i = 0; i < iters; i++)
				if (increment(&counter) != 0)
					failures.fetch_add(1, std::memory_order_relaxed);
		});
	for (auto &th : threads)
		th.join();
	CHECK(failures.load() == 0);
	return counter;
}

int scaled(int n)
{
	const char *s = std::getenv("RQ_TEST_SCALE");
	double f = s ? std::atof(s) : 1.0;
	int v = static_cast<int>(n * (f > 0 ? f : 1.0));
	return v > 100 ? v : 100;
}

void test_threads()
{
	const int iters = scaled(50000);
	res_spin_set_timeout_ns(2000000000ULL); // a mutual-exclusion test, not a timeout test
	long n = hammer(4, iters, [](long *counter) {
		res_spin_guard g(static_lock);
		if (g)
			++*counter;
		return g.error();
	});
	CHECK(n == 4L * iters);
	ql_spinlock_t ql = QL_SPINLOCK_INIT;
	n = hammer(4, iters, [&ql](long *counter) {
		ql_spin_lock(&ql);
		++*counter;
		ql_spin_unlock(&ql);
		return 0;
	});
	CHECK(n == 4L * iters);
	res_spin_set_timeout_ns(0);
}

void test_guard_errors()
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	res_spin_guard outer(lock);
	CHECK(outer);
	{
		res_spin_guard inner(lock); // AA: reported, not a hang
		CHECK(!inner);
		CHECK(inner.error() == -EDEADLK);
	}
	CHECK(res_spin_trylock(&lock) == -EBUSY); // still held by outer
}

// res_spin_guard: a moved guard hands the lock over once; unlock() releases early
// and only once; the try_to_lock form reports -EBUSY without waiting.
void test_guard_move_unlock()
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	{
		res_spin_guard a(lock);
		CHECK(a.owns_lock());
		res_spin_guard b(std::move(a));
		CHECK(!a.owns_lock() && b.owns_lock() && a.error() == 0);
		res_spin_guard busy(lock, res_spin_try_to_lock);
		CHECK(!busy && busy.error() == -EBUSY);
		b.unlock();
		CHECK(!b.owns_lock());
		res_spin_guard again(lock, res_spin_try_to_lock);
		CHECK(again);
		b.unlock(); // already released: must not release `again`'s hold
		CHECK(res_spin_trylock(&lock) == -EBUSY);
	}
	CHECK(res_spin_trylock(&lock) == 0); // every guard released it
	res_spin_unlock(&lock);
}

// res_spin_irqsave_guard: signals are blocked while it holds the lock, and the
// mask is back at unlock; on failure the mask is untouched.
bool usr1_blocked()
{
	sigset_t now;
	CHECK(pthread_sigmask(SIG_SETMASK, nullptr, &now) == 0);
	return sigismember(&now, SIGUSR1) == 1;
}

void test_irqsave_guard()
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	CHECK(!usr1_blocked());
	{
		res_spin_irqsave_guard g(lock);
		CHECK(g && usr1_blocked());
		{
			res_spin_irqsave_guard aa(lock);
			CHECK(!aa && aa.error() == -EDEADLK);
		}
		CHECK(usr1_blocked()); // the failed one restored nothing of ours
	}
	CHECK(!usr1_blocked());
	CHECK(res_spin_trylock(&lock) == 0);
	res_spin_unlock(&lock);
}

// res_spin_lockable: the standard holders take the lock; an AA throws
// std::system_error with the errno as a generic_category() code, and the
// lock is not held by the throwing attempt.
void test_lockable()
{
	rqspinlock_t lock = RQSPINLOCK_INIT;
	res_spin_lockable l(lock);
	long n = 0;
	{
		std::lock_guard<res_spin_lockable> g(l);
		++n;
		bool threw = false;
		try {
			std::unique_lock<res_spin_lockable> aa(l);
		} catch (const std::system_error &e) {
			threw = e.code() == std::errc::resource_deadlock_would_occur;
		}
		CHECK(threw);
		CHECK(!l.try_lock());
	}
	CHECK(n == 1 && l.try_lock());
	l.unlock();
	CHECK(l.native_handle() == &lock);
}

struct test_case {
	const char *name;
	void (*fn)();
};

const test_case tests[] = {
    {"cxx_layout", test_layout},
    {"cxx_threads", test_threads},
    {"cxx_guard_errors", test_guard_errors},
    {"cxx_guard_move_unlock", test_guard_move_unlock},
    {"cxx_irqsave_guard", test_irqsave_guard},
    {"cxx_lockable", test_lockable},
};

} // namespace

int main(int argc, char **argv)
{
	if (argc == 2 && std::string(argv[1]) == "--list") {
		for (const auto &t : tests)
			std::printf("%s\n", t.name);
		return 0;
	}
	if (argc != 2) {
		std::fprintf(stderr, "usage: %s --list | NAME\n", argv[0]);
		return 2;
	}
	for (const auto &t : tests)
		if (std::string(argv[1]) == t.name) {
			t.fn();
			std::printf("ok - %s\n", t.name);
			return 0;
		}
	std::fprintf(stderr, "unknown test %s\n", argv[1]);
	return 2;
}
