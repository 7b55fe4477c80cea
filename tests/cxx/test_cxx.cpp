// SPDX-License-Identifier: MIT
//
// test_cxx: the library from C++ with std::thread. Each named test is run as
// `test_cxx NAME`; `test_cxx --list` lists them (CTest registers the list).
// It checks that a lock declared in C++ is the lock the C library expects
// (layout, zero initialisation, static and heap storage), that mutual
// exclusion holds for std::thread workers, and that errors reach C++ code
// through a small RAII guard.
#include <rqspinlock.h>
#include <rqspinlock/qspinlock.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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

// A scoped holder: owns the lock only when error() is 0.
class res_spin_guard
{
      public:
	explicit res_spin_guard(rqspinlock_t &lock) : lock_(lock), err_(res_spin_lock(&lock))
	{
	}
	~res_spin_guard()
	{
		if (err_ == 0)
			res_spin_unlock(&lock_);
	}
	res_spin_guard(const res_spin_guard &) = delete;
	res_spin_guard &operator=(const res_spin_guard &) = delete;
	int error() const
	{
		return err_;
	}
	explicit operator bool() const
	{
		return err_ == 0;
	}

      private:
	rqspinlock_t &lock_;
	int err_;
};

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

struct test_case {
	const char *name;
	void (*fn)();
};

const test_case tests[] = {
    {"cxx_layout", test_layout},
    {"cxx_threads", test_threads},
    {"cxx_guard_errors", test_guard_errors},
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
