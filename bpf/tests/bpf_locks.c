/* SPDX-License-Identifier: MIT */
/*
 * The res-lock scenarios of the kernel's selftests, as this project's own
 * programs (progs/res_lock.bpf.c, progs/irqsave.bpf.c, progs/counter.bpf.c)
 * run by rqbpf, for every compiler the build found: AA on one array element,
 * AB on 16 threads against BA, more locks than the held-lock table, the
 * irqsave variants, runs from a SIGALRM handler (the NMI analogue), and one
 * program on many threads; the bpf_spin_lock helpers (progs/spin_lock.bpf.c)
 * on many threads and against a signal handler; bpf_local_irq_save/restore
 * (progs/local_irq.bpf.c) the same way.
 */
#include <sys/time.h>

#include "bpftest.h"
#include "maps.h"

#define EDEADLK_   (-35)
#define ETIMEDOUT_ (-110)

static void test_aa(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("res_lock", *cc, 0);

		if (!obj)
			continue;
		for (int i = 0; i < 100; i++)
			CHECK_EQ(bt_run(obj, "same_element_twice"), 0);
		rqbpf_object_close(obj);
	}
}

struct ab_arg {
	struct rqbpf_object *obj;
	atomic_int *stop;
	long runs;
};

static void *ab_thread(void *p)
{
	struct ab_arg *a = p;

	while (!atomic_load_explicit(a->stop, memory_order_relaxed)) {
		CHECK_EQ(bt_run(a->obj, "order_ab"), 0);
		a->runs++;
	}
	return NULL;
}

/* 16 threads take A then B; this thread takes B then A until its inner
 * acquisition fails with -EDEADLK (an ABBA the library detects). */
static void test_abba(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("res_lock", *cc, 0);
		atomic_int stop = 0;
		struct ab_arg args[16];
		pthread_t t[16];
		uint64_t end = rqu_now_ns() + tu_slack_ns(20 * TU_NS_PER_S);
		int64_t r = 0;
		long ba_runs = 0, timeouts = 0;

		if (!obj)
			continue;
		for (int i = 0; i < 16; i++) {
			args[i] = (struct ab_arg){obj, &stop, 0};
			tu_thread_start(&t[i], ab_thread, &args[i]);
		}
		while (r != EDEADLK_ && rqu_now_ns() < end) {
			r = bt_run(obj, "order_ba");
			CHECK(r == 0 || r == EDEADLK_ || r == ETIMEDOUT_);
			timeouts += r == ETIMEDOUT_;
			ba_runs++;
		}
		atomic_store_explicit(&stop, 1, memory_order_relaxed);
		for (int i = 0; i < 16; i++)
			tu_thread_join(t[i]);
		printf("# %s: BA saw %lld after %ld runs (%ld timeouts)\n", *cc, (long long)r,
		       ba_runs, timeouts);
		CHECK_EQ(r, EDEADLK_);
		rqbpf_object_close(obj);
	}
}

static void test_held_max(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("res_lock", *cc, 0);
		uint64_t t0 = rqu_now_ns();

		if (!obj)
			continue;
		/* The kernel's lock times out here (it tracks 31 locks and
		 * nothing else); the lock word names this thread. */
		CHECK_EQ(bt_run(obj, "beyond_held_table"), EDEADLK_);
		CHECK_LT(rqu_now_ns() - t0, RQSPINLOCK_DEFAULT_TIMEOUT_NS);
		rqbpf_object_close(obj);
	}
}

static bool alarm_blocked(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, SIGALRM) == 1;
}

static void test_irqsave(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("irqsave", *cc, 0);

		if (!obj)
			continue;
		CHECK(!alarm_blocked());
		CHECK_EQ(bt_run(obj, "irqsave_nested"), 0);
		CHECK(!alarm_blocked());
		CHECK_EQ(bt_run(obj, "irqsave_aa"), 0);
		CHECK(!alarm_blocked());
		rqbpf_object_close(obj);
	}
}

/* Signal-handler runs: results counted by kind (async-signal-safe atomics). */
static struct rqbpf_object *sig_obj;
static atomic_long sig_ok, sig_deadlock, sig_other;

static void on_alarm(int sig)
{
	struct __sk_buff ctx;
	struct rqbpf_run_result res;
	int saved = errno;

	(void)sig;
	memset(&ctx, 0, sizeof(ctx));
	if (rqbpf_prog_run(rqbpf_object_find_prog(sig_obj, "handler_take"), &ctx, sizeof(ctx),
	                   &res) != 0)
		res.retval = 1; /* counted as "other" */
	if (res.retval == 0)
		atomic_fetch_add_explicit(&sig_ok, 1, memory_order_relaxed);
	else if ((int32_t)res.retval == EDEADLK_)
		atomic_fetch_add_explicit(&sig_deadlock, 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&sig_other, 1, memory_order_relaxed);
	errno = saved;
}

static uint64_t elem0_count(struct rqbpf_object *obj)
{
	uint8_t v[16];
	uint32_t key = 0;

	CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "elems"), &key, v), 0);
	return *(uint64_t *)(v + 8);
}

/* The main thread runs @p prog (a long critical section on element 0's
 * lock) while SIGALRM fires every 200 us and its handler runs handler_take
 * on the same lock. */
static void signal_runs(const char *cc, const char *prog, long *main_runs)
{
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval it = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
	long n = tu_scaled(400);

	sig_obj = bt_load("irqsave", cc, 0);
	atomic_store(&sig_ok, 0);
	atomic_store(&sig_deadlock, 0);
	atomic_store(&sig_other, 0);
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	for (*main_runs = 0; *main_runs < n; (*main_runs)++)
		CHECK_GE(bt_run(sig_obj, prog), 0);
	CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	printf("# %s %s: %ld runs; handler: %ld ok, %ld -EDEADLK, %ld other\n", cc, prog,
	       *main_runs, atomic_load(&sig_ok), atomic_load(&sig_deadlock),
	       atomic_load(&sig_other));
	CHECK_EQ(atomic_load(&sig_other), 0);
	/* Mutual exclusion and bookkeeping: every successful section counted once. */
	CHECK_EQ(elem0_count(sig_obj), *main_runs + atomic_load(&sig_ok));
}

static void test_signal_nested(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		long runs;
		char path[512];

		if (!bt_obj_path(path, sizeof(path), "irqsave", *cc))
			continue;
		signal_runs(*cc, "hold_long", &runs);
		/* The handler interrupted the section often: it must have seen AA. */
		CHECK_GT(atomic_load(&sig_deadlock), 0);
		rqbpf_object_close(sig_obj);
	}
}

static void test_signal_irqsave(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		long runs;
		char path[512];

		if (!bt_obj_path(path, sizeof(path), "irqsave", *cc))
			continue;
		signal_runs(*cc, "hold_long_irqsave", &runs);
		/* Signals are blocked while the lock is held: never an AA. */
		CHECK_EQ(atomic_load(&sig_deadlock), 0);
		CHECK_GT(atomic_load(&sig_ok), 0);
		CHECK(!alarm_blocked());
		rqbpf_object_close(sig_obj);
	}
}

struct count_arg {
	struct rqbpf_object *obj;
	long runs;
};

static void *count_thread(void *p)
{
	struct count_arg *a = p;

	for (long i = 0; i < a->runs; i++)
		CHECK_EQ(bt_run(a->obj, "count"), 0);
	return NULL;
}

/* One loaded program on 8 threads: the counter under the value lock is exact. */
static void test_threads(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("counter", *cc, 0);
		struct count_arg arg;
		pthread_t t[8];
		uint8_t v[16];
		uint32_t key = 0;

		if (!obj)
			continue;
		arg = (struct count_arg){obj, tu_scaled(20000)};
		for (int i = 0; i < 8; i++)
			tu_thread_start(&t[i], count_thread, &arg);
		for (int i = 0; i < 8; i++)
			tu_thread_join(t[i]);
		CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "counters"), &key, v), 0);
		CHECK_EQ(*(uint64_t *)(v + 8), 8 * arg.runs);
		rqbpf_object_close(obj);
	}
}

struct hash_arg {
	struct rqbpf_object *obj;
	long runs;
	uint32_t key;
};

static void *hash_thread(void *p)
{
	struct hash_arg *a = p;
	uint32_t cb[5] = {a->key};

	for (long i = 0; i < a->runs; i++)
		CHECK_GT((int32_t)bt_run_cb(a->obj, "hash_count", cb), 0);
	return NULL;
}

/* A hash map on rqmaps: exact counts from 8 threads on 4 keys, AA on one
 * element, and a value that stays readable after its delete. */
static void test_hash(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("hash", *cc, 0);
		struct hash_arg args[8];
		pthread_t t[8];
		uint8_t v[16];

		if (!obj)
			continue;
		for (int i = 0; i < 8; i++) {
			args[i] = (struct hash_arg){obj, tu_scaled(5000), (uint32_t)i % 4};
			tu_thread_start(&t[i], hash_thread, &args[i]);
		}
		for (int i = 0; i < 8; i++)
			tu_thread_join(t[i]);
		for (uint32_t k = 0; k < 4; k++) {
			uint32_t cb[5] = {k};

			CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "table"), &k, v), 0);
			CHECK_EQ(*(uint64_t *)(v + 8), 2 * args[0].runs);
			CHECK_EQ((int32_t)bt_run_cb(obj, "hash_delete", cb), 2 * args[0].runs);
			CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "table"), &k, v),
			         -ENOENT);
		}
		CHECK_EQ(bt_run(obj, "hash_aa"), 0);
		/* 41 values looked up in one run, the first written last. */
		CHECK_EQ(bt_run(obj, "hash_many_lookups"), 6);
		rqbpf_object_close(obj);
	}
}

/*
 * BPF_F_LOCK copies under a bpf_spin_lock only: on values whose lock is a
 * bpf_res_spin_lock the update fails with -EINVAL, from a program after the
 * map's own checks (an array's index, BPF_NOEXIST), from the C API first,
 * as the kernel's helper and bpf(2) command do.
 */
static void test_f_lock(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *arr = bt_load("res_lock", *cc, 0),
		                    *hash = bt_load("hash", *cc, 0);
		uint8_t zero[16] = {0};

		if (!arr || !hash) {
			CHECK(!arr && !hash);
			continue;
		}
		CHECK_EQ(bt_run(arr, "array_update_f_lock"), 220717);
		CHECK_EQ(rqbpf_map_update(rqbpf_object_find_map(arr, "slots"), &(uint32_t){1000},
		                          zero, BPF_F_LOCK),
		         -EINVAL);
		CHECK_EQ(bt_run(hash, "hash_update_f_lock"), -EINVAL);
		CHECK_EQ(rqbpf_map_update(rqbpf_object_find_map(hash, "table"), &(uint32_t){3},
		                          zero, BPF_F_LOCK),
		         -EINVAL);
		rqbpf_object_close(hash);
		rqbpf_object_close(arr);
	}
}

struct spin_arg {
	struct rqbpf_object *obj;
	long runs;
	uint32_t key;
};

static void *spin_thread(void *p)
{
	struct spin_arg *a = p;
	uint32_t cb[5] = {a->key};

	for (long i = 0; i < a->runs; i++) {
		CHECK_GT((int32_t)bt_run_cb(a->obj, "spin_count", cb), 0);
		CHECK_GT((int32_t)bt_run_cb(a->obj, "spin_global", cb), 0);
		CHECK_GT((int32_t)bt_run_cb(a->obj, "spin_hash_count", cb), 0);
	}
	CHECK(!alarm_blocked());
	return NULL;
}

static uint64_t spin_hits(struct rqbpf_object *obj, const char *map, uint32_t key)
{
	uint8_t v[16];

	CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, map), &key, v), 0);
	return *(uint64_t *)(v + 8);
}

/* bpf_spin_lock on 8 threads: exact counts in an array value, a global and
 * two hash values (four threads per key). */
static void test_spin_threads(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("spin_lock", *cc, 0);
		struct spin_arg args[8];
		pthread_t t[8];

		if (!obj)
			continue;
		for (int i = 0; i < 8; i++) {
			args[i] = (struct spin_arg){obj, tu_scaled(5000), (uint32_t)i % 2};
			tu_thread_start(&t[i], spin_thread, &args[i]);
		}
		for (int i = 0; i < 8; i++)
			tu_thread_join(t[i]);
		CHECK_EQ(spin_hits(obj, "spins", 0), 8 * args[0].runs);
		CHECK_EQ(spin_hits(obj, "hspins", 0), 4 * args[0].runs);
		CHECK_EQ(spin_hits(obj, "hspins", 1), 4 * args[0].runs);
		CHECK_EQ(spin_hits(obj, ".data.G", 0), 8 * args[0].runs);
		rqbpf_object_close(obj);
	}
}

static atomic_long spin_sig_runs, spin_sig_faults, spin_sig_other;

/* Runs spin_count; counts the runs, the faults that are the AA on the lock
 * the interrupted thread holds (-EDEADLK), and any other outcome. */
static void on_alarm_spin(int sig)
{
	struct __sk_buff ctx;
	struct rqbpf_run_result res;
	int saved = errno, ret;

	(void)sig;
	memset(&ctx, 0, sizeof(ctx));
	ret =
	    rqbpf_prog_run(rqbpf_object_find_prog(sig_obj, "spin_count"), &ctx, sizeof(ctx), &res);
	if (ret == 0)
		atomic_fetch_add_explicit(&spin_sig_runs, 1, memory_order_relaxed);
	else if (ret == -EFAULT && strstr(res.msg, "spin_lock: not acquired (-EDEADLK"))
		atomic_fetch_add_explicit(&spin_sig_faults, 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&spin_sig_other, 1, memory_order_relaxed);
	errno = saved;
}

/* SIGALRM every 200 us runs spin_count on the lock the main thread's long
 * section holds. bpf_spin_lock blocks no signals: a handler that meets its
 * own thread's lock is an AA, its run faults (-EDEADLK) without touching the
 * count, and the interrupted section goes on; the others count. */
static void test_spin_signal(void)
{
	struct sigaction sa = {.sa_handler = on_alarm_spin};
	struct itimerval it = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		long n = tu_scaled(2000), runs;

		if (!(sig_obj = bt_load("spin_lock", *cc, 0)))
			continue;
		atomic_store(&spin_sig_runs, 0);
		atomic_store(&spin_sig_faults, 0);
		atomic_store(&spin_sig_other, 0);
		sigemptyset(&sa.sa_mask);
		CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
		CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
		for (runs = 0; runs < n; runs++)
			CHECK_GT(bt_run(sig_obj, "spin_hold_long"), 0);
		CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
		printf("# %s: %ld runs; handler: %ld runs, %ld -EDEADLK faults\n", *cc, runs,
		       atomic_load(&spin_sig_runs), atomic_load(&spin_sig_faults));
		CHECK_EQ(atomic_load(&spin_sig_other), 0);
		CHECK_GT(atomic_load(&spin_sig_runs) + atomic_load(&spin_sig_faults), 0);
		CHECK(!alarm_blocked());
		CHECK_EQ(spin_hits(sig_obj, "spins", 0), 500 * runs + atomic_load(&spin_sig_runs));
		rqbpf_object_close(sig_obj);
	}
}

/* The same AA made certain: the main thread holds the value's lock (the
 * word bpf_spin_lock takes) and raises SIGALRM; the handler's run faults
 * with -EDEADLK at once, and after the unlock a run counts again. */
static void test_spin_signal_aa(void)
{
	struct sigaction sa = {.sa_handler = on_alarm_spin};
	uint32_t key = 0;

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_map *m;
		rqspinlock_t *lock;

		if (!(sig_obj = bt_load("spin_lock", *cc, 0)))
			continue;
		m = rqbpf_object_find_map(sig_obj, "spins");
		lock = m->ops->lookup_value(m, &key);
		atomic_store(&spin_sig_runs, 0);
		atomic_store(&spin_sig_faults, 0);
		atomic_store(&spin_sig_other, 0);
		sigemptyset(&sa.sa_mask);
		CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
		CHECK_EQ(res_spin_lock(lock), 0);
		CHECK_EQ(raise(SIGALRM), 0);
		res_spin_unlock(lock);
		CHECK_EQ(atomic_load(&spin_sig_faults), 1);
		CHECK_EQ(atomic_load(&spin_sig_runs), 0);
		CHECK_EQ(raise(SIGALRM), 0);
		CHECK_EQ(atomic_load(&spin_sig_runs), 1);
		CHECK_EQ(atomic_load(&spin_sig_other), 0);
		CHECK_EQ(spin_hits(sig_obj, "spins", 0), 1);
		rqbpf_object_close(sig_obj);
	}
}

static void *irq_thread(void *p)
{
	struct spin_arg *a = p;
	uint32_t cb[5] = {a->key};

	for (long i = 0; i < a->runs; i++) {
		CHECK_EQ(bt_run_cb(a->obj, "irq_count", cb), (uint64_t)i + 1);
		CHECK_EQ(bt_run_cb(a->obj, "irq_hash_count", cb), (uint64_t)i + 1);
		CHECK_GT((int32_t)bt_run_cb(a->obj, "irq_with_res_lock", cb), 0);
	}
	CHECK_EQ(bt_run(a->obj, "irq_nested"), 0);
	CHECK(!alarm_blocked());
	return NULL;
}

/* bpf_local_irq_save around map updates on 8 threads, a key each (an irq
 * region excludes signal handlers, not other threads): exact counts. */
static void test_irq_threads(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("local_irq", *cc, 0);
		struct spin_arg args[8];
		pthread_t t[8];

		if (!obj)
			continue;
		for (int i = 0; i < 8; i++) {
			args[i] = (struct spin_arg){obj, tu_scaled(5000), (uint32_t)i};
			tu_thread_start(&t[i], irq_thread, &args[i]);
		}
		for (int i = 0; i < 8; i++)
			tu_thread_join(t[i]);
		for (uint32_t k = 0; k < 8; k++) {
			uint64_t v;

			CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "hcounts"), &k, &v),
			         0);
			CHECK_EQ(v, (uint64_t)args[0].runs);
		}
		CHECK_EQ(spin_hits(obj, ".data.L", 0), 8 * args[0].runs);
		rqbpf_object_close(obj);
	}
}

static atomic_long irq_sig_runs, irq_sig_inside;

/* Runs irq_peek: counts the runs that found slot 0 busy. */
static void on_alarm_irq(int sig)
{
	struct __sk_buff ctx;
	struct rqbpf_run_result res;
	int saved = errno;

	(void)sig;
	memset(&ctx, 0, sizeof(ctx));
	if (rqbpf_prog_run(rqbpf_object_find_prog(sig_obj, "irq_peek"), &ctx, sizeof(ctx), &res))
		res.retval = 2; /* counted as inside: the check must fail */
	atomic_fetch_add_explicit(&irq_sig_runs, 1, memory_order_relaxed);
	if (res.retval != 0)
		atomic_fetch_add_explicit(&irq_sig_inside, 1, memory_order_relaxed);
	errno = saved;
}

/* The main thread runs @p prog (slot 0 marked busy across a long loop)
 * while SIGALRM fires every 200 us; returns the handler runs that found it
 * busy. */
static long irq_signal_runs(const char *cc, const char *prog)
{
	struct sigaction sa = {.sa_handler = on_alarm_irq};
	struct itimerval it = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
	long n = tu_scaled(400), runs;

	sig_obj = bt_load("local_irq", cc, 0);
	atomic_store(&irq_sig_runs, 0);
	atomic_store(&irq_sig_inside, 0);
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	for (runs = 0; runs < n; runs++)
		CHECK_GT(bt_run(sig_obj, prog), 0);
	CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	printf("# %s %s: %ld runs; handler: %ld runs, %ld inside the section\n", cc, prog, runs,
	       atomic_load(&irq_sig_runs), atomic_load(&irq_sig_inside));
	CHECK_GT(atomic_load(&irq_sig_runs), 0);
	CHECK(!alarm_blocked());
	rqbpf_object_close(sig_obj);
	return atomic_load(&irq_sig_inside);
}

/* A handler never runs inside a bpf_local_irq_save region; without the
 * region (noirq_hold_long, same section) it does. */
static void test_irq_signal(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		char path[512];

		if (!bt_obj_path(path, sizeof(path), "local_irq", *cc))
			continue;
		CHECK_EQ(irq_signal_runs(*cc, "irq_hold_long"), 0);
		CHECK_GT(irq_signal_runs(*cc, "noirq_hold_long"), 0);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_aa", test_aa, 120, 0),
    TU_TEST("bpf_abba", test_abba, 120, 0),
    TU_TEST("bpf_held_max", test_held_max, 120, 0),
    TU_TEST("bpf_irqsave", test_irqsave, 120, 0),
    TU_TEST("bpf_signal_nested", test_signal_nested, 120, 0),
    TU_TEST("bpf_signal_irqsave", test_signal_irqsave, 120, 0),
    TU_TEST("bpf_threads", test_threads, 120, 0),
    TU_TEST("bpf_hash", test_hash, 120, 0),
    TU_TEST("bpf_f_lock", test_f_lock, 60, 0),
    TU_TEST("bpf_spin_threads", test_spin_threads, 120, 0),
    TU_TEST("bpf_spin_signal", test_spin_signal, 120, 0),
    TU_TEST("bpf_spin_signal_aa", test_spin_signal_aa, 60, 0),
    TU_TEST("bpf_irq_threads", test_irq_threads, 120, 0),
    TU_TEST("bpf_irq_signal", test_irq_signal, 120, 0),
};

TU_MAIN(tests)
