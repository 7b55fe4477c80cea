/* SPDX-License-Identifier: MIT */
/*
 * The thread registry: slots are recycled when threads exit, and threads
 * that find it full still lock correctly (through the TAS slow path).
 */
#include <stdbool.h>

#include "testutil.h"

/* ---- 4,000 short-lived threads ---- */

/* Far above the threads alive at once here, and far below the threads
 * started: without recycling the highest slot would pass it long before
 * the end. */
#define SLOT_SMALL_BOUND 64

struct shortlived {
	rqspinlock_t lock;
	long counter; /* protected by lock */
	atomic_int max_slot;
	atomic_long errors;
};

static void *shortlived_fn(void *arg)
{
	struct shortlived *s = arg;
	int slot = res_spin_thread_slot();
	int seen = atomic_load_explicit(&s->max_slot, memory_order_relaxed);

	while (slot > seen &&
	       !atomic_compare_exchange_weak_explicit(&s->max_slot, &seen, slot,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
	if (slot < 0 || res_spin_lock(&s->lock) != 0) {
		atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
		return NULL;
	}
	s->counter++;
	res_spin_unlock(&s->lock);
	return NULL;
}

static void test_slot_recycling(void)
{
	enum { BATCH = 4 };
	struct shortlived s = {.lock = RQSPINLOCK_INIT};
	long n = tu_scaled(4000) / BATCH * BATCH;
	pthread_t t[BATCH];

	atomic_init(&s.max_slot, -1);
	for (long i = 0; i < n; i += BATCH) {
		for (int j = 0; j < BATCH; j++)
			tu_thread_start(&t[j], shortlived_fn, &s);
		for (int j = 0; j < BATCH; j++)
			tu_thread_join(t[j]);
		if (i % 200 == 0)
			CHECK_LT(res_spin_thread_slot_bound(), SLOT_SMALL_BOUND);
	}
	printf("# %ld threads, highest slot %d, slot bound %d\n", n, atomic_load(&s.max_slot),
	       res_spin_thread_slot_bound());
	CHECK_EQ(atomic_load(&s.errors), 0);
	CHECK_EQ(s.counter, n);
	CHECK_GE(atomic_load(&s.max_slot), 0);
	CHECK_LT(atomic_load(&s.max_slot), SLOT_SMALL_BOUND);
	CHECK_LE(res_spin_thread_slot_bound(), SLOT_SMALL_BOUND);
	CHECK_GT(res_spin_thread_slot_bound(), atomic_load(&s.max_slot));
	/* This thread gets a slot too, and keeps it. */
	CHECK_GE(res_spin_thread_slot(), 0);
	CHECK_EQ(res_spin_thread_slot(), res_spin_thread_slot());
	CHECK_EQ(tu_word(&s.lock), 0);
}

/* ---- more live threads than slots (run with RQSPINLOCK_SLOTS=4) ---- */

#define FULL_THREADS 12
#define FULL_SLOTS   4

struct full_registry {
	rqspinlock_t lock;
	struct tu_cs cs; /* protected by lock */
	long iters;
	uint64_t pace_ns;        /* pause after each critical section (0: none) */
	int slots[FULL_THREADS]; /* each written by its thread, read after join */
	atomic_int next_index;
	atomic_long acquired, errors, broken, deadlocks, slotless_errors;
	atomic_int stop;
	pthread_barrier_t all_alive;
};

static void *full_worker(void *arg)
{
	struct full_registry *s = arg;
	int me = atomic_fetch_add_explicit(&s->next_index, 1, memory_order_relaxed);

	s->slots[me] = res_spin_thread_slot();
	/* Every thread is alive (and holds its slot, if any) before anyone locks. */
	long done = 0;

	pthread_barrier_wait(&s->all_alive);
	for (long i = 0; tu_keep_going(i, s->iters, &s->stop); i++) {
		int r = res_spin_lock(&s->lock);

		if (r != 0) {
			atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&s->deadlocks, r == -EDEADLK,
			                          memory_order_relaxed);
			atomic_fetch_add_explicit(&s->slotless_errors, s->slots[me] < 0,
			                          memory_order_relaxed);
			continue;
		}
		if (!tu_cs_update(&s->cs))
			atomic_fetch_add_explicit(&s->broken, 1, memory_order_relaxed);
		res_spin_unlock(&s->lock);
		done++;
		if (s->pace_ns)
			tu_sleep_ns(s->pace_ns);
	}
	atomic_fetch_add_explicit(&s->acquired, done, memory_order_relaxed);
	/* A thread without a slot still has none. */
	if (s->slots[me] == -ENOSPC && res_spin_thread_slot() != -ENOSPC)
		atomic_fetch_add_explicit(&s->broken, 1000000, memory_order_relaxed);
	return NULL;
}

static void full_registry_test(long iters, uint64_t pace_ns, unsigned max_ms)
{
	struct full_registry s = {.lock = RQSPINLOCK_INIT, .iters = iters, .pace_ns = pace_ns};
	struct rqspinlock_stats st;
	int with_slot = 0, without = 0;

	const char *slots_env = getenv("RQSPINLOCK_SLOTS");

	CHECK(slots_env && atoi(slots_env) == FULL_SLOTS);
	/* Long timeout: TAS waiters may wait for the queue to drain; no false timeouts. */
	res_spin_set_timeout_ns(5 * TU_NS_PER_S);
	pthread_barrier_init(&s.all_alive, NULL, FULL_THREADS);
	tu_run_threads(FULL_THREADS, full_worker, &s, max_ms, &s.stop);
	pthread_barrier_destroy(&s.all_alive);
	for (int i = 0; i < FULL_THREADS; i++) {
		if (s.slots[i] == -ENOSPC) {
			without++;
			continue;
		}
		CHECK_GE(s.slots[i], 0);
		CHECK_LT(s.slots[i], FULL_SLOTS);
		with_slot++;
	}
	tu_stats(&st);
	printf("# %d threads with a slot, %d without; no_slot %llu, lock_tas %llu; errors %ld "
	       "(%ld -EDEADLK, %ld in slot-less threads)\n",
	       with_slot, without, (unsigned long long)st.no_slot, (unsigned long long)st.lock_tas,
	       atomic_load(&s.errors), atomic_load(&s.deadlocks), atomic_load(&s.slotless_errors));
	CHECK_LE(with_slot, FULL_SLOTS);
	CHECK_GE(without, FULL_THREADS - FULL_SLOTS);
	CHECK_GT(st.no_slot, 0);
	CHECK_EQ(atomic_load(&s.errors), 0);
	CHECK_EQ(atomic_load(&s.broken), 0);
	CHECK_GT(atomic_load(&s.acquired), 0);
	tu_cs_check(&s.cs, atomic_load(&s.acquired));
	CHECK_EQ(tu_word(&s.lock), 0);
	res_spin_set_timeout_ns(0);
}

/*
 * Sustained contention by all 12 threads. The window (12 s) exceeds a TAS
 * waiter's 2 x 5 s limit, so starvation shows up as -ETIMEDOUT.
 */
static void test_registry_full(void)
{
	full_registry_test(tu_scaled(40000), 0, 12000);
}

/* Each thread pauses 20 us after each critical section: the queue drains often. */
static void test_registry_full_paced(void)
{
	full_registry_test(tu_scaled(10000), 20000, 3000);
}

/* ---- counters of threads without a slot (run with RQSPINLOCK_SLOTS=1) ---- */

#define SLOTLESS_EVENTS 1000

struct slotless {
	atomic_int counted, go;
	int slot; /* the thread's res_spin_thread_slot(), read after join */
};

static uint64_t unlocks_not_held(void)
{
	struct rqspinlock_stats st;

	tu_stats(&st);
	return st.unlock_not_held;
}

/* Counts SLOTLESS_EVENTS events (unlocks of NULL), then waits for go. */
static void *slotless_fn(void *arg)
{
	struct slotless *s = arg;

	s->slot = res_spin_thread_slot();
	for (int i = 0; i < SLOTLESS_EVENTS; i++)
		res_spin_unlock(NULL);
	atomic_store(&s->counted, 1);
	TU_WAIT_UNTIL(atomic_load(&s->go), TU_SETUP_MS);
	return NULL;
}

/* A thread-specific-data destructor that runs after the library's own
 * (its key is newer): the thread has left its slot, and still counts. */
static void late_destructor(void *arg)
{
	(void)arg;
	res_spin_unlock(NULL);
}

static void *late_fn(void *arg)
{
	pthread_setspecific(*(pthread_key_t *)arg, arg);
	return NULL;
}

/*
 * Events of a thread without a slot are seen by every reader while it runs,
 * go with a reset like any other, and do not come back when it exits; an
 * event counted after the library's exit destructor is not lost.
 */
static void test_stats_slotless(void)
{
	struct slotless s = {.slot = 0};
	pthread_key_t key;
	pthread_t t;

	CHECK_EQ(res_spin_thread_slot(), 0); /* the only slot is ours */
	res_spin_reset_stats();
	tu_thread_start(&t, slotless_fn, &s);
	TU_WAIT_UNTIL(atomic_load(&s.counted), TU_SETUP_MS);
	CHECK_EQ(unlocks_not_held(), SLOTLESS_EVENTS);
	res_spin_reset_stats();
	CHECK_EQ(unlocks_not_held(), 0);
	atomic_store(&s.go, 1);
	tu_thread_join(t);
	CHECK_EQ(s.slot, -ENOSPC);
	CHECK_EQ(unlocks_not_held(), 0);

	CHECK_EQ(pthread_key_create(&key, late_destructor), 0);
	tu_thread_start(&t, late_fn, &key);
	tu_thread_join(t);
	CHECK_EQ(unlocks_not_held(), 1);
	CHECK_EQ(pthread_key_delete(key), 0);
}

/* ---- resets while threads leave their slots ---- */

#define LEAVING_THREADS 4

struct leaving {
	atomic_int counted, go;
};

static void *leaving_fn(void *arg)
{
	struct leaving *s = arg;

	for (int i = 0; i < SLOTLESS_EVENTS; i++)
		res_spin_unlock(NULL);
	atomic_fetch_add(&s->counted, 1);
	TU_WAIT_UNTIL(atomic_load(&s->go), TU_SETUP_MS);
	return NULL; /* the exit moves this slot's counters */
}

/*
 * Every event is counted before the resets start, so every reset must take
 * all of them, wherever they are while the threads leave their slots: no
 * read after a reset may show any.
 */
static void test_stats_reset_while_leaving(void)
{
	long rounds = tu_scaled(300), resets = 0;

	for (long r = 0; r < rounds; r++) {
		struct leaving s = {0};
		pthread_t t[LEAVING_THREADS];
		bool joined[LEAVING_THREADS] = {false};
		int left = LEAVING_THREADS;

		for (int i = 0; i < LEAVING_THREADS; i++)
			tu_thread_start(&t[i], leaving_fn, &s);
		TU_WAIT_UNTIL(atomic_load(&s.counted) == LEAVING_THREADS, TU_SETUP_MS);
		atomic_store(&s.go, 1);
		while (left) {
			res_spin_reset_stats();
			resets++;
			CHECK_EQ(unlocks_not_held(), 0);
			for (int i = 0; i < LEAVING_THREADS; i++)
				if (!joined[i] && pthread_tryjoin_np(t[i], NULL) == 0) {
					joined[i] = true;
					left--;
				}
		}
		CHECK_EQ(unlocks_not_held(), 0);
	}
	printf("# %ld rounds of %d leaving threads, %ld resets\n", rounds, LEAVING_THREADS, resets);
}

/* ---- owner ids: the locked byte names the owner's slot ---- */

/* More threads alive at once than there are owner ids (254). */
#define ID_THREADS 260

struct owner_ids {
	rqspinlock_t locks[ID_THREADS];
	int slot[ID_THREADS];
	uint32_t byte[ID_THREADS];
	int aa[ID_THREADS]; /* a second lock of its own lock: -EDEADLK */
	atomic_int next;
	pthread_barrier_t all_hold;
};

static void *owner_id_fn(void *arg)
{
	struct owner_ids *s = arg;
	int i = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);

	s->slot[i] = res_spin_thread_slot();
	CHECK_EQ(res_spin_lock(&s->locks[i]), 0);
	s->byte[i] = TU_LOCKED(tu_word(&s->locks[i]));
	s->aa[i] = res_spin_lock(&s->locks[i]);
	/* all alive at once, so that the slots run past the last id */
	pthread_barrier_wait(&s->all_hold);
	res_spin_unlock(&s->locks[i]);
	return NULL;
}

/*
 * Slots 0..253 write their id, 2 + slot; slots from 254 on write 1, which
 * names nobody. Both kinds still find their own AA (from their tables).
 */
static void test_owner_ids(void)
{
	static struct owner_ids s;
	pthread_t t[ID_THREADS];
	int named = 0, anon = 0;

	memset(&s, 0, sizeof(s));
	pthread_barrier_init(&s.all_hold, NULL, ID_THREADS);
	for (int i = 0; i < ID_THREADS; i++)
		tu_thread_start(&t[i], owner_id_fn, &s);
	for (int i = 0; i < ID_THREADS; i++)
		tu_thread_join(t[i]);
	pthread_barrier_destroy(&s.all_hold);
	for (int i = 0; i < ID_THREADS; i++) {
		CHECK_GE(s.slot[i], 0);
		CHECK_EQ(s.byte[i], s.slot[i] < 254 ? (uint32_t)s.slot[i] + 2 : 1u);
		CHECK_EQ(s.aa[i], -EDEADLK);
		CHECK_EQ(tu_word(&s.locks[i]), 0);
		named += s.slot[i] < 254;
		anon += s.slot[i] >= 254;
	}
	printf("# %d threads: %d named owners, %d anonymous\n", ID_THREADS, named, anon);
	CHECK_GT(anon, 0);
}

static void *slotless_owner_fn(void *arg)
{
	rqspinlock_t *l = arg;
	uintptr_t byte;

	CHECK_EQ(res_spin_thread_slot(), -ENOSPC);
	CHECK_EQ(res_spin_lock(l), 0);
	byte = TU_LOCKED(tu_word(l));
	res_spin_unlock(l);
	return (void *)byte;
}

/* A thread without a slot writes 1 (RQSPINLOCK_SLOTS=1: the main thread
 * has the only slot). */
static void test_owner_slotless(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	pthread_t t;
	void *byte;

	CHECK_EQ(res_spin_thread_slot(), 0);
	CHECK_EQ(tu_owner(), 2);
	CHECK_EQ(pthread_create(&t, NULL, slotless_owner_fn, &l), 0);
	CHECK_EQ(pthread_join(t, &byte), 0);
	CHECK_EQ((uintptr_t)byte, 1);
	CHECK_EQ(tu_word(&l), 0);
}

static const struct tu_test tests[] = {
    TU_TEST("core_slot_recycling", test_slot_recycling, 60, TU_TAS),
    TU_TEST("core_registry_full", test_registry_full, 50, TU_TAS | TU_INLINE,
            .env = "RQSPINLOCK_SLOTS=4"),
    TU_TEST("core_registry_full_paced", test_registry_full_paced, 50, TU_TAS,
            .env = "RQSPINLOCK_SLOTS=4"),
    TU_TEST("core_stats_slotless", test_stats_slotless, 20, 0, .env = "RQSPINLOCK_SLOTS=1"),
    TU_TEST("core_stats_reset_while_leaving", test_stats_reset_while_leaving, 40, 0),
    TU_TEST("core_owner_ids", test_owner_ids, 30, TU_TAS),
    TU_TEST("core_owner_slotless", test_owner_slotless, 20, 0, .env = "RQSPINLOCK_SLOTS=1"),
};

TU_MAIN(tests)
