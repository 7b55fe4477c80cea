/* SPDX-License-Identifier: MIT */
/*
 * Locks whose memory the program releases after their last use, while
 * other threads' deadlock detection still finds their addresses in wait
 * records and held tables. Such a program is correct: no thread uses the
 * lock any more. The library must never read it (rqspinlock.h, "Memory the
 * library reads").
 *
 * The shape (a worker pool): a worker takes the table lock A, then an
 * object's lock B, which a second thread holds for a moment, so that the
 * worker waits for B while holding A; it releases both and at once
 * releases the object's memory. Two more threads each take a private lock
 * and then A: they wait behind the worker, and their cycle check follows
 * A's holder to the lock it waits for, B. Hundreds of idle threads take
 * the first registry slots, so that the workers' locked bytes name nobody
 * and a check scans every slot between reading the worker's wait record
 * and looking further (the widest window).
 *
 * "Releases" is mprotect(PROT_NONE) of the object's page in a plain build
 * (a read through a stale address faults: SIGSEGV) and free() under the
 * sanitizers (AddressSanitizer reports a heap-use-after-free read).
 */
#include <stdbool.h>
#include <sys/mman.h>

#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__) || TU_TSAN
#define TF_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TF_MALLOC 1
#endif
#endif
#ifndef TF_MALLOC
#define TF_MALLOC 0
#endif

/* Idle threads: more than the 254 owner ids, and enough that a check's scan
 * of every slot takes microseconds (fewer under ThreadSanitizer, which
 * keeps a few thousand threads at most). */
#if TU_TSAN
#define TF_IDLE 300
#else
#define TF_IDLE 4000
#endif
#define TF_PAGES   8 /* objects cycled through (plain build) */
#define TF_WAITERS 2

struct tf_object {
	rqspinlock_t lock;
	uint32_t uses;
};

static struct {
	rqspinlock_t table;
	_Atomic(struct tf_object *) obj; /* the round's object, for the holder */
	atomic_int phase;                /* of the round: TF_HELD, TF_TABLE_TAKEN */
	atomic_int queued;               /* waiters about to wait, then done */
	int nwaiters;
	atomic_int round, stop;
	pthread_mutex_t idle_mu; /* idle threads sleep until idle_go */
	pthread_cond_t idle_cv;
	int idle_go, idle_ready;
	atomic_ulong waits, errors;
	atomic_int error; /* the last failed call's result */
	long page;
	char *pages;
} tf = {.idle_mu = PTHREAD_MUTEX_INITIALIZER, .idle_cv = PTHREAD_COND_INITIALIZER};

static void *idle_fn(void *arg)
{
	rqspinlock_t mine = RQSPINLOCK_INIT;

	(void)arg;
	CHECK_EQ(res_spin_lock(&mine), 0); /* takes a registry slot */
	res_spin_unlock(&mine);
	pthread_mutex_lock(&tf.idle_mu);
	tf.idle_ready++;
	while (!tf.idle_go)
		pthread_cond_wait(&tf.idle_cv, &tf.idle_mu);
	pthread_mutex_unlock(&tf.idle_mu);
	return NULL;
}

static struct tf_object *object_new(int round)
{
	struct tf_object *o;

	if (TF_MALLOC) {
		o = calloc(1, sizeof(*o));
		CHECK(o != NULL);
		return o;
	}
	o = (struct tf_object *)(void *)(tf.pages + (round % TF_PAGES) * tf.page);
	CHECK_EQ(mprotect(o, (size_t)tf.page, PROT_READ | PROT_WRITE), 0);
	res_spin_lock_init(&o->lock);
	o->uses = 0;
	return o;
}

/* The object's last use is over: its memory goes away. */
static void object_release(struct tf_object *o)
{
	if (TF_MALLOC)
		free(o);
	else
		CHECK_EQ(mprotect(o, (size_t)tf.page, PROT_NONE), 0);
}

/*
 * One round: the worker takes the table lock and waits for the object's
 * lock, which the holder holds; the waiters, holding their private locks,
 * start waiting for the table lock (their first check walks from the worker
 * to the object's lock at once); the holder then releases, and the worker
 * releases both and the object's memory while the waiters' walks may still
 * be going on.
 */
enum { TF_IDLE_PHASE, TF_HELD, TF_TABLE_TAKEN };

static void spin_until_phase(int phase)
{
	for (unsigned i = 0; atomic_load_explicit(&tf.phase, memory_order_acquire) < phase &&
	                     !atomic_load_explicit(&tf.stop, memory_order_relaxed);
	     i++)
		if (i % 64 == 63)
			sched_yield();
}

/* Both waiters wait for the table lock (one holds its pending bit, the
 * other its queue's tail), or 2 ms passed (TAS mode has no queue). */
static bool table_waited(uint64_t since)
{
	uint32_t w = tu_word(&tf.table);

	if (rqu_now_ns() - since > 2 * TU_NS_PER_MS ||
	    atomic_load_explicit(&tf.stop, memory_order_relaxed))
		return true;
	return atomic_load_explicit(&tf.queued, memory_order_acquire) >= tf.nwaiters &&
	       TU_PENDING(w) && TU_TAIL(w);
}

static void *holder_fn(void *arg)
{
	int seen = 0;

	(void)arg;
	while (!atomic_load_explicit(&tf.stop, memory_order_relaxed)) {
		struct tf_object *o;

		if (atomic_load_explicit(&tf.round, memory_order_acquire) == seen) {
			sched_yield();
			continue;
		}
		seen++;
		o = atomic_load_explicit(&tf.obj, memory_order_relaxed);
		CHECK_EQ(res_spin_lock(&o->lock), 0);
		atomic_store_explicit(&tf.phase, TF_HELD, memory_order_release);
		/* until the waiters wait for the table lock behind the worker:
		 * their first checks start as they begin to wait */
		for (uint64_t since = rqu_now_ns(); !table_waited(since);)
			sched_yield();
		tu_busy_ns(3000);
		o->uses++;
		res_spin_unlock(&o->lock);
	}
	return NULL;
}

static void *worker_fn(void *arg)
{
	/* Not scaled: a race is looked for, the same time in every build. */
	uint64_t end = rqu_now_ns() + 2000 * TU_NS_PER_MS;
	int round = 0;

	(void)arg;
	while (rqu_now_ns() < end) {
		struct tf_object *o = object_new(round);

		atomic_store_explicit(&tf.queued, 0, memory_order_relaxed);
		atomic_store_explicit(&tf.phase, TF_IDLE_PHASE, memory_order_relaxed);
		atomic_store_explicit(&tf.obj, o, memory_order_relaxed);
		atomic_store_explicit(&tf.round, ++round, memory_order_release);
		spin_until_phase(TF_HELD);
		CHECK_EQ(res_spin_lock(&tf.table), 0);
		atomic_store_explicit(&tf.phase, TF_TABLE_TAKEN, memory_order_release);
		CHECK_EQ(res_spin_lock(&o->lock), 0); /* waits, holding the table lock */
		o->uses++;
		res_spin_unlock(&o->lock);
		res_spin_unlock(&tf.table);
		CHECK_EQ(o->uses, 2u);
		object_release(o); /* nobody uses it any more */
		/* the waiters took the table lock, or gave up: next round */
		while (atomic_load_explicit(&tf.queued, memory_order_acquire) < 2 * tf.nwaiters)
			sched_yield();
	}
	atomic_store(&tf.stop, 1);
	return NULL;
}

/* Takes a private lock, then the table lock: its checks walk to the object. */
static void *waiter_fn(void *arg)
{
	rqspinlock_t mine = RQSPINLOCK_INIT;
	int seen = 0;

	(void)arg;
	while (!atomic_load_explicit(&tf.stop, memory_order_relaxed)) {
		int err;

		if (atomic_load_explicit(&tf.round, memory_order_acquire) == seen) {
			sched_yield();
			continue;
		}
		seen++;
		spin_until_phase(TF_TABLE_TAKEN);
		CHECK_EQ(res_spin_lock(&mine), 0);
		atomic_fetch_add_explicit(&tf.queued, 1, memory_order_release);
		err = res_spin_lock(&tf.table);
		if (err == 0)
			res_spin_unlock(&tf.table);
		else
			atomic_store(&tf.error, err), atomic_fetch_add(&tf.errors, 1);
		res_spin_unlock(&mine);
		atomic_fetch_add_explicit(&tf.waits, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&tf.queued, 1, memory_order_release);
	}
	return NULL;
}

static void test_freed_object(void)
{
	pthread_t idle[TF_IDLE], holder, worker, waiters[TF_WAITERS];
	pthread_attr_t small;
	int nw;

	tf.page = sysconf(_SC_PAGESIZE);
	if (!TF_MALLOC) {
		tf.pages = mmap(NULL, (size_t)(TF_PAGES * tf.page), PROT_NONE,
		                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(tf.pages != MAP_FAILED);
	}
	CHECK_EQ(pthread_attr_init(&small), 0);
	CHECK_EQ(pthread_attr_setstacksize(&small, (size_t)128 * 1024), 0);
	for (int i = 0; i < TF_IDLE; i++)
		CHECK_EQ(pthread_create(&idle[i], &small, idle_fn, NULL), 0);
	for (int ready = 0; ready < TF_IDLE; tu_sleep_ms(1)) {
		pthread_mutex_lock(&tf.idle_mu);
		ready = tf.idle_ready;
		pthread_mutex_unlock(&tf.idle_mu);
	}
	tu_thread_start(&holder, holder_fn, NULL);
	nw = tf.nwaiters = TF_WAITERS;
	for (int i = 0; i < nw; i++)
		tu_thread_start(&waiters[i], waiter_fn, NULL);
	tu_thread_start(&worker, worker_fn, NULL);
	tu_thread_join(worker);
	tu_thread_join(holder);
	for (int i = 0; i < nw; i++)
		tu_thread_join(waiters[i]);
	pthread_mutex_lock(&tf.idle_mu);
	tf.idle_go = 1;
	pthread_cond_broadcast(&tf.idle_cv);
	pthread_mutex_unlock(&tf.idle_mu);
	for (int i = 0; i < TF_IDLE; i++)
		tu_thread_join(idle[i]);
	pthread_attr_destroy(&small);
	printf("# rounds %d, table-lock waits %lu, failed %lu (last: %d)\n", atomic_load(&tf.round),
	       atomic_load(&tf.waits), atomic_load(&tf.errors), atomic_load(&tf.error));
	/* No deadlock exists: every call succeeds. */
	CHECK_EQ(atomic_load(&tf.errors), 0ul);
	CHECK_GT(atomic_load(&tf.round), 10);
}

static const struct tu_test tests[] = {
    TU_TEST("freed_object_lock", test_freed_object, 60, TU_TAS),
};

TU_MAIN(tests)
