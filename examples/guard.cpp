// SPDX-License-Identifier: MIT
//
// guard.cpp: <rqspinlock/guard.hpp> in a transfer between two accounts, each
// with its own lock, taken in the order the caller names them, so two
// threads moving money in opposite directions form an ABBA deadlock.
// res_spin_guard turns it into an error the transfer retries (return
// policy); res_spin_lockable gives the same lock to std::lock_guard and
// throws instead (throw policy).
#include <rqspinlock.h>
#include <rqspinlock/guard.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <thread>

namespace
{

struct account {
	rqspinlock_t lock = RQSPINLOCK_INIT;
	long balance = 1000;
};

std::atomic<long> retries{0};

// Moves `amount` from `from` to `to`; 0, or the error that stopped it (then
// nothing moved).
int transfer(account &from, account &to, long amount)
{
	res_spin_guard a(from.lock);
	if (!a)
		return a.error();
	res_spin_guard b(to.lock); // ABBA with a transfer the other way
	if (!b)
		return b.error(); // -EDEADLK: `a` is released on return
	from.balance -= amount;
	to.balance += amount;
	return 0;
}

void mover(account &from, account &to, int rounds)
{
	for (int i = 0; i < rounds; i++)
		while (transfer(from, to, 1) != 0)
			retries.fetch_add(1, std::memory_order_relaxed);
}

// The balance as the standard holders see it: lock() throws on failure.
long balance(account &acc)
{
	res_spin_lockable l(acc.lock);
	std::lock_guard<res_spin_lockable> g(l);
	return acc.balance;
}

} // namespace

int main()
{
	account x, y;
	std::thread t1(mover, std::ref(x), std::ref(y), 100000);
	std::thread t2(mover, std::ref(y), std::ref(x), 100000);
	t1.join();
	t2.join();
	try {
		long total = balance(x) + balance(y);
		std::printf("total=%ld (x=%ld y=%ld), %ld transfers retried after an error\n",
		            total, x.balance, y.balance, retries.load());
		return total == 2000 ? 0 : 1;
	} catch (const std::system_error &e) {
		std::fprintf(stderr, "%s\n", e.what());
		return 1;
	}
}
