// Relacy (weak-memory) check of the C11 orders of the queued slow path.
//
// Mirrors src/qhelpers.h and src/slowpath.c with the same memory orders:
// fast-path CAS (acquire), node init (relaxed), xchg_tail (acq_rel), link
// behind prev (release), node spin (acquire), head wait on the word
// (acquire), claim CAS / set_locked (relaxed), wait for next (acquire),
// signal next (release), unlock (release), and the head's timeout teardown
// (try_clear_tail relaxed, signal TIMEOUT release). Three threads each take
// the lock twice and update plain data inside; Relacy reports any data race
// (a missing happens-before between critical sections) or a lost update.
// The lock word's byte-wide unlock store is modelled as a release
// fetch_and on the word (Relacy has no mixed-size accesses); it is at least
// as strong for the release, and no RMW in the protocol relies on the
// store not being an RMW.
//
// Usage: rq_relacy [weak]   "weak" makes the queue head's wait on the word a
// relaxed load (src/: acquire) and must produce an error (a data race on the
// protected data: proves the harness can fail); CTest runs both.
#include <relacy/relacy.hpp>

#include <cstdio>
#include <cstring>

namespace {

const unsigned kThreads = 3;
const unsigned kLocked = 1, kTailShift = 16;
const unsigned kWait = 0, kHead = 1, kTimeout = 2;
bool g_weak = false;

struct Node {
	rl::atomic<Node *> next;
	rl::atomic<unsigned> locked;
};

struct SlowPath : rl::test_suite<SlowPath, kThreads> {
	rl::atomic<unsigned> word;
	Node nodes[kThreads];
	rl::var<int> data;
	int acquired;

	void before()
	{
		word($).store(0, rl::mo_relaxed);
		data($) = 0;
		acquired = 0;
	}

	void after() { RL_ASSERT(data($) == acquired); }

	static unsigned tail_of(unsigned i) { return (i + 1) << kTailShift; }
	Node *decode(unsigned w) { return &nodes[(w >> kTailShift) - 1]; }

	bool try_lock()
	{
		unsigned seen = 0;
		return word($).compare_exchange_strong(seen, kLocked, rl::mo_acquire,
		                                       rl::mo_relaxed);
	}

	unsigned xchg_tail(unsigned tail)
	{
		unsigned old = word($).load(rl::mo_relaxed);
		while (!word($).compare_exchange_weak(old, (old & 0xffffu) | tail,
		                                      rl::mo_acq_rel, rl::mo_relaxed))
			;
		return old;
	}

	bool try_clear_tail(unsigned tail)
	{
		unsigned old = word($).load(rl::mo_relaxed);
		while ((old & ~0xffffu) == tail)
			if (word($).compare_exchange_weak(old, old & 0xffffu, rl::mo_relaxed,
			                                  rl::mo_relaxed))
				return true;
		return false;
	}

	Node *wait_next(Node *n)
	{
		Node *next;
		while (!(next = n->next($).load(rl::mo_acquire)))
			rl::yield(1, $);
		return next;
	}

	void leave_queue(Node *n, unsigned tail, unsigned how)
	{
		if (try_clear_tail(tail))
			return;
		wait_next(n)->locked($).store(how, rl::mo_release);
	}

	// Returns true when the lock is held; false on (simulated) timeout.
	bool lock(unsigned me, bool may_time_out)
	{
		if (try_lock())
			return true;
		Node *n = &nodes[me];
		n->locked($).store(kWait, rl::mo_relaxed);
		n->next($).store(nullptr, rl::mo_relaxed);
		unsigned tail = tail_of(me);
		unsigned old = xchg_tail(tail);
		if (old & ~0xffffu) {
			decode(old)->next($).store(n, rl::mo_release);
			unsigned st;
			while ((st = n->locked($).load(rl::mo_acquire)) == kWait)
				rl::yield(1, $);
			if (st == kTimeout) {
				leave_queue(n, tail, kTimeout);
				return false;
			}
		}
		unsigned val;
		int spins = 0;
		while ((val = word($).load(g_weak ? rl::mo_relaxed : rl::mo_acquire)) & kLocked) {
			if (may_time_out && ++spins > 2) {
				leave_queue(n, tail, kTimeout);
				return false;
			}
			rl::yield(1, $);
		}
		if ((val & ~0xffffu) == tail &&
		    word($).compare_exchange_strong(val, kLocked, rl::mo_relaxed, rl::mo_relaxed))
			return true;
		word($).fetch_or(kLocked, rl::mo_relaxed);
		wait_next(n)->locked($).store(kHead, rl::mo_release);
		return true;
	}

	void unlock() { word($).fetch_and(~kLocked, rl::mo_release); }

	void thread(unsigned me)
	{
		for (int round = 0; round < 2; round++) {
			if (!lock(me, me == 0))
				continue;
			data($) = data($) + 1;
			acquired++; // plain int: Relacy runs threads one at a time
			unlock();
		}
	}
};

} // namespace

int main(int argc, char **argv)
{
	g_weak = argc > 1 && std::strcmp(argv[1], "weak") == 0;
	rl::test_params p;
	p.search_type = rl::sched_random;
	p.iteration_count = 300000;
	bool ok = rl::simulate<SlowPath>(p);
	std::printf("relacy %s orders: %s\n", g_weak ? "weakened" : "src/",
	            ok ? "no error" : "error found");
	if (g_weak)
		return ok ? 1 : 0; // the weakened model must fail
	return ok ? 0 : 1;
}
