/* SPDX-License-Identifier: MIT */
/*
 * fork() while other threads hammer a hash map, then the child uses the map
 * (docs/MAPS.md, rule 5). The parent's updaters and reclaim thread spend
 * much of their time inside urcu_memb_synchronize_rcu() and its readers
 * inside read-side sections; without the fork gate (maps/src/fork_gate.c), fork()
 * copied liburcu's grace-period mutex held by one of them, or a reader
 * record inside a section, into the child, whose first grace-period wait
 * (an update helping, the reclaim thread, rqmap_quiesce()) then hung for
 * ever. Each child replaces its own keys from the forking thread and from a
 * new thread (so it recycles elements through grace periods of its own, and
 * registers a thread), checks every value, and quiesces; update results
 * are 0, -ETIMEDOUT (a bucket lock that a parent thread held at the fork
 * stays held in the child, as rqspinlock.h documents) or -ENOMEM (see
 * child_updates()). Not under TSan (fork() of a threaded process).
 */
#include "testutil.h"

#include <rqmap.h>
#include <rqspinlock.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PARENT_KEYS 1000
#define CHILD_KEYS  256
#define CHILD_OPS   4000 /* by the forking thread, on the first half of the keys */
#define THREAD_OPS  256  /* by a new thread of the child, on the second half */
/* A child that has not exited after HUNG_S is hung (one takes well under a
 * second, a few seconds when locks that parent threads held at the fork
 * slow it down); MAX_HUNG of them end the test. */
#define HUNG_S   30
#define MAX_HUNG 2

static struct rqmap_hash *map;
static atomic_int stop;

static void *hammer(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg, rnd = id * 7919 + 1;

	CHECK_EQ(rqmap_thread_init(), 0);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint32_t key = (uint32_t)(id * PARENT_KEYS + tu_rand(&rnd) % PARENT_KEYS);
		uint64_t value = key;

		if (id % 2) {
			(void)rqmap_hash_lookup(map, &key, &value, 0);
		} else {
			(void)rqmap_hash_update(map, &key, &value, RQMAP_ANY);
			if (tu_rand(&rnd) % 4 == 0)
				(void)rqmap_hash_delete(map, &key);
		}
	}
	return NULL;
}

/* Child: replace keys [first, first + CHILD_KEYS / 2), @ops updates in all;
 * the last value written to each goes to last[]. Returns the errors. */
static uint64_t last[CHILD_KEYS];
static atomic_int child_nomem;

static int child_updates(uint32_t first, uint32_t ops)
{
	int bad = 0;

	/* -ENOMEM is no error here: free elements in a freelist list that a
	 * parent thread held locked at the fork are out of the child's reach
	 * (each such update costs a 50 ms wait, so stop after a few). */
	for (uint32_t i = 0; i < ops && atomic_load(&child_nomem) < 8; i++) {
		uint32_t k = first + i % (CHILD_KEYS / 2), key = 1000000 + k;
		uint64_t value = i + 1;
		int ret = rqmap_hash_update(map, &key, &value, RQMAP_ANY);

		if (ret == 0)
			last[k] = value;
		else if (ret == -ENOMEM)
			atomic_fetch_add(&child_nomem, 1);
		else if (ret != -ETIMEDOUT && bad++ < 3)
			fprintf(stderr, "child: update %u: %d\n", i, ret);
	}
	return bad;
}

static void *child_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)child_updates(CHILD_KEYS / 2, THREAD_OPS);
}

static void child_run(uint32_t ops)
{
	pthread_t t;
	void *thread_bad;
	int bad;

	/* Short: each wait on a lock that a parent thread held at the fork
	 * costs up to two timeouts. A new thread takes a dead parent thread's
	 * registry slot, and with it a home freelist list that thread may have
	 * held locked: its pops then pay those two timeouts every time. */
	res_spin_set_timeout_ns(TU_NS_PER_MS);
	/* The new thread registers: glibc gives it the stack and TLS of a parent
	 * thread, whose urcu reader record was in urcu's registry. */
	tu_thread_start(&t, child_thread, NULL);
	bad = child_updates(0, ops);
	CHECK_EQ(pthread_join(t, &thread_bad), 0);
	bad += (int)(intptr_t)thread_bad;
	for (uint32_t i = 0; i < CHILD_KEYS; i++) {
		uint32_t key = 1000000 + i;
		uint64_t value = 0;
		int ret = rqmap_hash_lookup(map, &key, &value, 0);

		if (last[i] && (ret != 0 || value != last[i]) && bad++ < 6)
			fprintf(stderr, "child: key %u: %d, %llu != %llu\n", key, ret,
			        (unsigned long long)value, (unsigned long long)last[i]);
	}
	rqmap_quiesce(); /* no reclaim thread in the child until this starts one */
	_exit(bad ? 1 : atomic_load(&child_nomem) ? 2 : 0);
}

static void test_maps_fork_child_uses_map(void)
{
	struct rqmap_hash_attr attr = {
	    .key_size = 4, .value_size = 8, .max_entries = 4096, .spare = 256};
	int forks = (int)tu_scaled(12), done = 0, hung = 0, failed = 0, nomem = 0;
	uint64_t slowest = 0;
	pthread_t t[4];

	if (TU_TSAN) {
		printf("# fork() of a threaded process: not under TSan\n");
		return;
	}
	CHECK_EQ(rqmap_hash_create(&attr, &map), 0);
	for (uintptr_t i = 0; i < 4; i++)
		tu_thread_start(&t[i], hammer, (void *)i);
	tu_sleep_ms(50);
	for (int f = 0; f < forks && hung < MAX_HUNG; f++, done++) {
		uint64_t start = rqu_now_ns(), took;
		int status = 0;
		pid_t pid = fork(), r;

		CHECK(pid >= 0);
		if (pid == 0)
			child_run(CHILD_OPS);
		while ((r = waitpid(pid, &status, WNOHANG)) == 0 &&
		       rqu_now_ns() - start < HUNG_S * TU_NS_PER_S)
			tu_sleep_ms(5);
		took = rqu_now_ns() - start;
		if (r != 0 && took > slowest)
			slowest = took;
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			hung++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
			nomem++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			failed++;
			fprintf(stderr, "child %d: status 0x%x\n", f, status);
		}
		tu_sleep_ms(10);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		tu_thread_join(t[i]);
	printf("%d forks: %d children hung (killed after %d s), %d failed, %d saw -ENOMEM; "
	       "slowest child %llu ms\n",
	       done, hung, HUNG_S, failed, nomem, (unsigned long long)(slowest / TU_NS_PER_MS));
	CHECK_EQ(hung, 0);
	CHECK_EQ(failed, 0);
	rqmap_hash_destroy(map);
}

/*
 * The prepare handler's wait is bounded: a parent thread stalls inside a
 * read-side section while the reclaim thread waits for a grace period, so
 * the call in flight never ends before the fork. fork() returns after about
 * four lock timeouts; the child then never uses urcu's update side (its
 * mutexes may be held): quiesce returns, updates give 0 or -ENOMEM, a new
 * thread cannot register (-ENOMEM), and it exits promptly.
 */
static atomic_int reader_stalled, reader_release;

static void *stalled_reader(void *arg)
{
	(void)arg;
	CHECK_EQ(rqmap_read_lock(), 0);
	atomic_store(&reader_stalled, 1);
	while (!atomic_load(&reader_release))
		tu_sleep_ms(1);
	rqmap_read_unlock();
	return NULL;
}

/*
 * Start @fn, a reader that stalls inside a read-side section, then replace
 * keys of `map`: fewer replacements than make an update help, so the
 * reclaim thread takes them and waits for a grace period that the stalled
 * reader holds up.
 */
static void stall_reclaimer(pthread_t *reader, void *(*fn)(void *))
{
	tu_thread_start(reader, fn, NULL);
	while (!atomic_load(&reader_stalled))
		tu_sleep_ms(1);
	for (uint32_t i = 0; i < 16; i++) {
		uint32_t key = i % 4;
		uint64_t value = i;

		CHECK_EQ(rqmap_hash_update(map, &key, &value, RQMAP_ANY), 0);
	}
	tu_sleep_ms(20);
}

static void *child_register(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)rqmap_thread_init();
}

static void stalled_child_run(void)
{
	int nomem = 0, bad = 0, status = 0;
	pid_t grandchild;
	void *reg;
	pthread_t t;

	rqmap_quiesce();
	for (uint32_t i = 0; i < 64 && nomem < 4; i++) {
		uint32_t key = i % 8;
		uint64_t value = i;
		int ret = rqmap_hash_update(map, &key, &value, RQMAP_ANY);

		if (ret == -ENOMEM)
			nomem++;
		else if (ret != 0 && ret != -ETIMEDOUT && bad++ < 3)
			fprintf(stderr, "stalled child: update %u: %d\n", i, ret);
	}
	tu_thread_start(&t, child_register, NULL);
	CHECK_EQ(pthread_join(t, &reg), 0);
	if (reg != 0 && (intptr_t)reg != -ENOMEM && bad++ < 4)
		fprintf(stderr, "stalled child: register: %d\n", (int)(intptr_t)reg);
	rqmap_quiesce();
	/* Destroyed here, the map's pool is unmapped while the elements this
	 * child retired stay on the retire stacks (never recycled here): a
	 * grandchild must not read them (it crashed). */
	rqmap_hash_destroy(map);
	grandchild = fork();
	if (grandchild == 0)
		_exit(0);
	if ((grandchild < 0 || waitpid(grandchild, &status, 0) != grandchild || status != 0) &&
	    bad++ < 5)
		fprintf(stderr, "stalled child: grandchild status 0x%x\n", status);
	/* 3: registration refused, as after a fork() whose wait gave up */
	_exit(bad ? 1 : (intptr_t)reg == -ENOMEM ? 3 : 0);
}

static void test_maps_fork_stalled_reader(void)
{
	/* Large enough that its pool is mmap()ed, so the child's free unmaps it. */
	struct rqmap_hash_attr attr = {
	    .key_size = 4, .value_size = 8, .max_entries = 65536, .spare = 256};
	uint64_t bound = 4 * res_spin_get_timeout_ns(), start, forked;
	int status = 0;
	pthread_t reader;
	pid_t pid, r;

	if (TU_TSAN) {
		printf("# fork() of a threaded process: not under TSan\n");
		return;
	}
	CHECK_EQ(rqmap_hash_create(&attr, &map), 0);
	stall_reclaimer(&reader, stalled_reader);
	start = rqu_now_ns();
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		stalled_child_run();
	forked = rqu_now_ns() - start;
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 &&
	       rqu_now_ns() - start < HUNG_S * TU_NS_PER_S)
		tu_sleep_ms(5);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	atomic_store(&reader_release, 1);
	tu_thread_join(reader);
	printf("fork() took %llu ms (bound %llu ms); child %s, status 0x%x\n",
	       (unsigned long long)(forked / TU_NS_PER_MS),
	       (unsigned long long)(bound / TU_NS_PER_MS), r == 0 ? "hung" : "exited", status);
	CHECK(r != 0);
	CHECK(forked < bound + TU_NS_PER_S);
	CHECK(WIFEXITED(status));
	CHECK(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3);
	rqmap_hash_destroy(map);
}

/*
 * A signal handler of the forking thread that updates a map while its own
 * fork() holds the gate closed (here during the prepare handler's wait for a
 * grace period in flight, held up by a stalled reader) must not wait for a
 * grace period: the gate reopens only when that thread goes on. Map B's free
 * elements run out inside the handler and the rest wait on the retire stacks,
 * which only a grace period (closed gate) can recycle: a handler that waited
 * for them would wait for ever, and so would fork(). Those updates get
 * -ENOMEM, fork() returns once the reader leaves, and after quiesce map B
 * has count + free == capacity.
 */
static struct rqmap_hash *map_b;
static pthread_t gate_main;
static atomic_int gate_forking, gate_in_fork, gate_handler_started, gate_handler_in_fork,
    gate_handler_done, gate_quit, gate_nomem, gate_bad;

static void gate_handler(int sig)
{
	(void)sig;
	atomic_store(&gate_handler_in_fork, atomic_load(&gate_in_fork));
	atomic_store(&gate_handler_started, 1);
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t key = i % 16;
		uint64_t value = i;
		int ret = rqmap_hash_update(map_b, &key, &value, RQMAP_ANY);

		if (ret == -ENOMEM)
			atomic_fetch_add(&gate_nomem, 1);
		else if (ret != 0)
			atomic_fetch_add(&gate_bad, 1);
	}
	atomic_store(&gate_handler_done, 1);
}

/* Leaves its section 300 ms after the handler started (3 s at most). */
static void *gate_reader(void *arg)
{
	uint64_t start;

	(void)arg;
	CHECK_EQ(rqmap_read_lock(), 0);
	atomic_store(&reader_stalled, 1);
	while (!atomic_load(&gate_forking))
		tu_sleep_ms(1);
	start = rqu_now_ns();
	while (!atomic_load(&gate_handler_started) && rqu_now_ns() - start < 3 * TU_NS_PER_S)
		tu_sleep_ms(1);
	tu_sleep_ms(300);
	rqmap_read_unlock();
	return NULL;
}

static void *gate_kicker(void *arg)
{
	(void)arg;
	while (!atomic_load(&gate_forking))
		tu_sleep_ms(1);
	tu_sleep_ms(50);
	pthread_kill(gate_main, SIGUSR1);
	return NULL;
}

/* fork() hung in the handler: report it and end the test process. */
static void *gate_watchdog(void *arg)
{
	uint64_t start = rqu_now_ns();

	(void)arg;
	while (!atomic_load(&gate_quit)) {
		if (rqu_now_ns() - start > 20 * TU_NS_PER_S) {
			fprintf(stderr,
			        "not ok - fork() still in the handler after 20 s "
			        "(handler started %d, done %d)\n",
			        atomic_load(&gate_handler_started),
			        atomic_load(&gate_handler_done));
			_exit(1);
		}
		tu_sleep_ms(10);
	}
	return NULL;
}

static void test_maps_fork_handler_in_gate(void)
{
	struct rqmap_hash_attr a = {
	    .key_size = 4, .value_size = 8, .max_entries = 1024, .spare = 256};
	struct rqmap_hash_attr b = {.key_size = 4, .value_size = 8, .max_entries = 16, .spare = 8};
	struct sigaction sa = {.sa_handler = gate_handler}, old;
	struct rqmap_hash_info info;
	pthread_t reader, kicker, watchdog;
	int status = 0;
	pid_t pid;

	if (TU_TSAN) {
		printf("# fork() of a threaded process: not under TSan\n");
		return;
	}
	gate_main = pthread_self();
	atomic_store(&reader_stalled, 0);
	CHECK_EQ(rqmap_hash_create(&a, &map), 0);
	CHECK_EQ(rqmap_hash_create(&b, &map_b), 0);
	for (uint32_t key = 0; key < 16; key++) {
		uint64_t value = 0;

		CHECK_EQ(rqmap_hash_update(map_b, &key, &value, RQMAP_ANY), 0);
	}
	rqmap_quiesce(); /* map B: 16 live, 8 free */
	CHECK_EQ(sigaction(SIGUSR1, &sa, &old), 0);
	stall_reclaimer(&reader, gate_reader);
	tu_thread_start(&kicker, gate_kicker, NULL);
	tu_thread_start(&watchdog, gate_watchdog, NULL);
	atomic_store(&gate_in_fork, 1);
	atomic_store(&gate_forking, 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	atomic_store(&gate_in_fork, 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	tu_thread_join(kicker);
	tu_thread_join(reader);
	for (int i = 0; i < 5000 && !atomic_load(&gate_handler_done); i++)
		tu_sleep_ms(1);
	atomic_store(&gate_quit, 1);
	tu_thread_join(watchdog);
	CHECK_EQ(sigaction(SIGUSR1, &old, NULL), 0);
	printf("handler %s fork(); %d of its updates got -ENOMEM\n",
	       atomic_load(&gate_handler_in_fork) ? "inside" : "after (not tested)",
	       atomic_load(&gate_nomem));
	CHECK(atomic_load(&gate_handler_done));
	CHECK_EQ(atomic_load(&gate_bad), 0);
	rqmap_quiesce();
	CHECK_EQ(rqmap_hash_info(map_b, &info), 0);
	CHECK_EQ(info.count + info.free, info.capacity);
	rqmap_hash_destroy(map_b);
	rqmap_hash_destroy(map);
}

/*
 * rqmap_quiesce() in a child whose reclaim thread cannot be created (the
 * link wraps pthread_create(); no_thread makes it fail with EAGAIN): the
 * child's replacements leave retired elements that only a grace period
 * recycles, and quiesce must recycle them itself before it returns. A
 * quiesce that returned early would leave them retired, and a destroy after
 * it would free a pool they point into: count + free == capacity checks
 * that every element is back.
 */
int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
static atomic_int no_thread;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	if (atomic_load(&no_thread))
		return EAGAIN;
	return __real_pthread_create(t, attr, fn, arg);
}

static int no_thread_child(void)
{
	struct rqmap_hash_info info;

	atomic_store(&no_thread, 1);
	/* Fewer retired elements than make an update help (spare / 8). */
	for (uint32_t i = 0; i < 24; i++) {
		uint32_t key = i % 4;
		uint64_t value = i;

		if (rqmap_hash_update(map, &key, &value, RQMAP_ANY))
			return 1;
	}
	rqmap_quiesce();
	if (rqmap_hash_info(map, &info))
		return 2;
	if (info.count != 4 || info.count + info.free != info.capacity) {
		fprintf(stderr, "child: count %u free %u capacity %u\n", (unsigned)info.count,
		        (unsigned)info.free, (unsigned)info.capacity);
		return 3;
	}
	return 0;
}

static void test_maps_fork_quiesce_no_thread(void)
{
	struct rqmap_hash_attr attr = {
	    .key_size = 4, .value_size = 8, .max_entries = 1024, .spare = 256};
	int status = 0;
	pid_t pid;

	if (TU_TSAN) {
		printf("# fork() of a threaded process: not under TSan\n");
		return;
	}
	CHECK_EQ(rqmap_hash_create(&attr, &map), 0); /* the parent's reclaim thread */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(no_thread_child());
	status = tu_wait_child(pid, 30);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	rqmap_hash_destroy(map);
}

/*
 * fork() from a signal handler of a thread that is inside a map call (docs/
 * MAPS.md, rule 5): the child goes on with that call when the handler
 * returns, and it must return (within its bound, or with a documented
 * error), after which the child uses the map as child_run() does: updates
 * from the forking thread and from a new thread, every value checked,
 * rqmap_quiesce(). The interrupted call is rqmap_quiesce() (over_quiesce)
 * or replacing updates, deletes and lookups (over_ops), which often help a
 * grace period, while the 4 hammer threads keep urcu's update side busy.
 * What it catches: a child that hangs in the resumed quiesce (waiting for
 * the parent's reclaim thread) or in urcu_memb_synchronize_rcu() (a
 * grace-period wait of the forking thread that goes on in the child), or
 * crashes in its new reclaim thread (a dead thread's reader record left in
 * urcu's registry, zeroed when that thread reuses its stack).
 */
enum hf_call { HF_NONE, HF_QUIESCE, HF_UPDATE, HF_DELETE, HF_LOOKUP, HF_CALLS };
static const char *const hf_call_names[HF_CALLS] = {"other", "quiesce", "update", "delete",
                                                    "lookup"};
static pthread_t hf_main;
static atomic_int hf_call;     /* what the main thread is inside */
static atomic_int hf_in_child; /* set by the handler in the child */
static atomic_int hf_forked;   /* pid + 1 after the parent's handler forked */
static atomic_int hf_where;    /* hf_call at the last fork */
static atomic_int hf_stop;
static atomic_int hf_phase; /* over_ops: which calls the main thread makes */
static _Atomic uint64_t hf_slowest_fork_ns;
static _Atomic uint64_t hf_child_since; /* in the child: when fork() returned */
/* The slowest resumed call of any child (shared memory). A lock wait there
 * costs at most two timeouts (1 ms in the child), quiesce a grace period and
 * the recycling; the rest of the limit is the loaded machine's stalls. */
static _Atomic uint64_t *hf_slowest_resumed_ns;
#define HF_RESUMED_MAX_NS (10 * TU_NS_PER_S)
/* The forking thread's updates in each child: still 16 grace periods of its
 * own. Fewer than maps_fork_child_uses_map's: a freelist list that a dead
 * parent thread held is the home list of this thread here more often (the
 * hammer threads steal from it), and then every pop waits 2 lock timeouts
 * on it first; 4000 took over 30 s under ASan on the loaded machine. */
#define HF_CHILD_OPS 512

static void hf_handler(int sig)
{
	uint64_t start = rqu_now_ns(), took;
	int saved = errno;
	pid_t pid;

	(void)sig;
	atomic_store(&hf_where, atomic_load(&hf_call));
	pid = fork();
	if (pid == 0) {
		atomic_store(&hf_child_since, rqu_now_ns());
		(void)res_spin_set_timeout_ns(TU_NS_PER_MS); /* as child_run() */
		atomic_store(&hf_in_child, 1);
	} else {
		took = rqu_now_ns() - start;
		if (took > atomic_load(&hf_slowest_fork_ns))
			atomic_store(&hf_slowest_fork_ns, took);
		atomic_store(&hf_forked, pid < 0 ? -1 : (int)pid + 1);
	}
	errno = saved;
}

/* In-place lookups of 16 keys from @key in one read-side section (a fork
 * inside it: the prepare handler's drain is bounded to 1 ms). */
static uint64_t hf_lookup_section(uint32_t key)
{
	uint64_t sum = 0;

	if (rqmap_read_lock())
		return 0;
	for (uint32_t k = key; k < key + 16; k++) {
		const uint64_t *v = rqmap_hash_lookup_elem(map, &k);

		if (v)
			sum += *v;
	}
	rqmap_read_unlock();
	return sum;
}

/* The interrupted call of @what with @key (returns in the child); odd
 * lookups are a section of in-place lookups. */
static void hf_call_once(enum hf_call what, uint32_t key, uint64_t value)
{
	atomic_store(&hf_call, what);
	switch (what) {
	case HF_QUIESCE:
		rqmap_quiesce();
		break;
	case HF_UPDATE:
		(void)rqmap_hash_update(map, &key, &value, RQMAP_ANY);
		break;
	case HF_DELETE:
		(void)rqmap_hash_delete(map, &key);
		break;
	default:
		if (value % 2)
			(void)hf_lookup_section(key);
		else
			(void)rqmap_hash_lookup(map, &key, &value, 0);
		break;
	}
	atomic_store(&hf_call, HF_NONE);
}

/* The call that fork @phase is aimed at: over quiesce, quiesce; else
 * replacements (most help a grace period; half the forks), deletes (of the
 * keys the replacements put), or lookups. */
static enum hf_call hf_phase_call(bool over_quiesce, int phase)
{
	if (over_quiesce)
		return HF_QUIESCE;
	switch (phase % 4) {
	case 0:
	case 1:
		return HF_UPDATE;
	case 2:
		return HF_DELETE;
	default:
		return HF_LOOKUP;
	}
}

/* The call the main thread makes @i-th: over quiesce, 8 replacements then a
 * quiesce; else the current phase's call. */
static enum hf_call hf_next_call(bool over_quiesce, uint32_t i)
{
	if (over_quiesce)
		return i % 9 == 8 ? HF_QUIESCE : HF_UPDATE;
	return hf_phase_call(false, atomic_load(&hf_phase));
}

/* The main thread's loop, where the handler forks; children leave it for
 * child_run(). */
static void hf_main_loop(bool over_quiesce)
{
	uint64_t rnd = 12345;

	for (uint32_t i = 0; !atomic_load(&hf_stop); i++) {
		uint32_t key = 2000000 + (uint32_t)(tu_rand(&rnd) % 64);

		hf_call_once(hf_next_call(over_quiesce, i), key, i);
		if (atomic_load(&hf_in_child)) {
			uint64_t took = rqu_now_ns() - atomic_load(&hf_child_since);

			if (took > atomic_load(hf_slowest_resumed_ns))
				atomic_store(hf_slowest_resumed_ns, took);
			child_run(HF_CHILD_OPS);
		}
	}
}

struct hf_result {
	bool over_quiesce;
	int done, hung, crashed, failed, nomem, where[HF_CALLS];
	uint64_t slowest;
};

/* Waits (100 ms at most) until the main thread is inside @want: the signal
 * sent then mostly interrupts that call. */
static void hf_aim(enum hf_call want)
{
	uint64_t start = rqu_now_ns();

	while (atomic_load(&hf_call) != (int)want && rqu_now_ns() - start < 100 * TU_NS_PER_MS)
		sched_yield();
}

/* Waits for child @pid at most HUNG_S seconds and counts how it ended. */
static void hf_reap(pid_t pid, int f, struct hf_result *res)
{
	uint64_t start = rqu_now_ns(), took;
	int status = 0;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 &&
	       rqu_now_ns() - start < HUNG_S * TU_NS_PER_S)
		tu_sleep_ms(5);
	took = rqu_now_ns() - start;
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		res->hung++;
		fprintf(stderr, "child %d (over %s) hung\n", f,
		        hf_call_names[atomic_load(&hf_where)]);
		return;
	}
	if (took > res->slowest)
		res->slowest = took;
	if (WIFSIGNALED(status)) {
		res->crashed++;
		fprintf(stderr, "child %d (over %s): signal %d\n", f,
		        hf_call_names[atomic_load(&hf_where)], WTERMSIG(status));
	} else if (WEXITSTATUS(status) == 2) {
		res->nomem++;
	} else if (WEXITSTATUS(status) != 0) {
		res->failed++;
		fprintf(stderr, "child %d (over %s): exit %d\n", f,
		        hf_call_names[atomic_load(&hf_where)], WEXITSTATUS(status));
	}
}

/* The parent's controller: signals the main thread at random moments, one
 * fork at a time, and reaps each child. */
static void *hf_kicker(void *arg)
{
	struct hf_result *res = arg;
	/* 8 at least: 2 aimed at lookups */
	int forks = (int)(tu_scaled(20) > 8 ? tu_scaled(20) : 8);
	uint64_t rnd = 777;

	for (int f = 0; f < forks && res->hung < MAX_HUNG; f++, res->done++) {
		uint64_t sent;
		int forked;

		atomic_store(&hf_phase, f);
		tu_sleep_ms(1 + (int)(tu_rand(&rnd) % 8));
		hf_aim(hf_phase_call(res->over_quiesce, f));
		atomic_store(&hf_forked, 0);
		sent = rqu_now_ns();
		pthread_kill(hf_main, SIGUSR1);
		while (!(forked = atomic_load(&hf_forked))) {
			if (rqu_now_ns() - sent > HUNG_S * TU_NS_PER_S)
				tu_fail(__FILE__, __LINE__, "fork %d: no fork() after %d s", f,
				        HUNG_S);
			tu_sleep_ms(1);
		}
		CHECK(forked > 0);
		res->where[atomic_load(&hf_where)]++;
		hf_reap(forked - 1, f, res);
	}
	atomic_store(&hf_stop, 1);
	return NULL;
}

static void hf_report(const struct hf_result *res)
{
	printf("%d forks from a handler over (", res->done);
	for (int i = 0; i < HF_CALLS; i++)
		printf("%s %s %d", i ? "," : "", hf_call_names[i], res->where[i]);
	printf(" ): %d children hung (killed after %d s), %d crashed, %d failed, %d saw -ENOMEM; "
	       "slowest fork() %llu ms, resumed call %llu ms, child %llu ms\n",
	       res->hung, HUNG_S, res->crashed, res->failed, res->nomem,
	       (unsigned long long)(atomic_load(&hf_slowest_fork_ns) / TU_NS_PER_MS),
	       (unsigned long long)(atomic_load(hf_slowest_resumed_ns) / TU_NS_PER_MS),
	       (unsigned long long)(res->slowest / TU_NS_PER_MS));
}

static void test_fork_in_handler(bool over_quiesce)
{
	struct rqmap_hash_attr attr = {
	    .key_size = 4, .value_size = 8, .max_entries = 4096, .spare = 256};
	struct hf_result res = {.over_quiesce = over_quiesce};
	pthread_t t[4], kicker;

	if (TU_TSAN) {
		printf("# fork() of a threaded process: not under TSan\n");
		return;
	}
	hf_slowest_resumed_ns = mmap(NULL, sizeof(*hf_slowest_resumed_ns), PROT_READ | PROT_WRITE,
	                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(hf_slowest_resumed_ns != MAP_FAILED);
	hf_main = pthread_self();
	atomic_store(&stop, 0);
	atomic_store(&hf_stop, 0);
	CHECK_EQ(rqmap_thread_init(), 0);
	CHECK_EQ(rqmap_hash_create(&attr, &map), 0);
	tu_install_handler(SIGUSR1, hf_handler);
	for (uintptr_t i = 0; i < 4; i++)
		tu_thread_start(&t[i], hammer, (void *)i);
	tu_sleep_ms(20);
	tu_thread_start(&kicker, hf_kicker, &res);
	hf_main_loop(over_quiesce);
	tu_thread_join(kicker);
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		tu_thread_join(t[i]);
	signal(SIGUSR1, SIG_DFL);
	hf_report(&res);
	CHECK_EQ(res.hung, 0);
	CHECK_EQ(res.crashed, 0);
	CHECK_EQ(res.failed, 0);
	CHECK(atomic_load(hf_slowest_resumed_ns) < HF_RESUMED_MAX_NS);
	/* The calls named were interrupted (a fork between calls is "other"). */
	CHECK(res.where[over_quiesce ? HF_QUIESCE : HF_UPDATE] > 0);
	CHECK(over_quiesce || res.where[HF_LOOKUP] > 0);
	munmap(hf_slowest_resumed_ns, sizeof(*hf_slowest_resumed_ns));
	rqmap_hash_destroy(map);
}

static void test_maps_fork_handler_over_quiesce(void)
{
	test_fork_in_handler(true);
}

static void test_maps_fork_handler_over_ops(void)
{
	test_fork_in_handler(false);
}

static const struct tu_test tests[] = {
    TU_TEST("maps_fork_child_uses_map", test_maps_fork_child_uses_map, 240, TU_NO_WATCHDOG),
    TU_TEST("maps_fork_stalled_reader", test_maps_fork_stalled_reader, 60, TU_NO_WATCHDOG),
    TU_TEST("maps_fork_handler_in_gate", test_maps_fork_handler_in_gate, 60, TU_NO_WATCHDOG),
    TU_TEST("maps_fork_quiesce_no_thread", test_maps_fork_quiesce_no_thread, 60, 0),
    TU_TEST("maps_fork_handler_over_quiesce", test_maps_fork_handler_over_quiesce, 240,
            TU_NO_WATCHDOG),
    TU_TEST("maps_fork_handler_over_ops", test_maps_fork_handler_over_ops, 240, TU_NO_WATCHDOG),
};

TU_MAIN(tests)
