/* SPDX-License-Identifier: MIT */
/*
 * Never -ENOMEM below capacity: the storm of the maps' second-pass issue.
 * 4 writer threads on 2 CPUs (the reclaim thread shares them) replace,
 * delete and look up their own keys of a preallocated hash map (then of an
 * LPM trie) that stays far below max_entries, while a per-thread SIGPROF
 * timer at 2 kHz runs a handler that updates (and checks) the thread's
 * handler keys in the same map. Asserts: no -ENOMEM anywhere, every lookup
 * exact, after the storm every key holds exactly its last written value, and
 * at the quiescent point count + free == capacity (nodes + free for the trie).
 */
#include "testutil.h"
#include "sigtimer.h"

#include <rqmap.h>
#include <rqspinlock.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WRITERS     4
#define MAIN_KEYS   1024
#define HKEYS       128
#define MAX_ENTRIES 8000
/* A small spare pool: removed elements that wait for a grace period exhaust
 * it within milliseconds unless reclamation keeps up (also under the
 * sanitizers' slower updates). */
#define SPARE      256
#define HANDLER_HZ 2000
#define NO_VALUE   UINT64_MAX
/* Locks may wait this long before -ETIMEDOUT: far beyond any preemption of
 * a holder on the loaded 2-CPU CI machine. */
#define LOCK_TIMEOUT_NS (2000ULL * 1000 * 1000)

enum kind { HASH, LPM };

/* Results a context saw, by kind; the handler writes only its own thread's. */
struct counts {
	long ok, nomem, deadlk, timedout, other, wrong;
	int last_other;
};

struct writer {
	uint32_t t;
	uint64_t main_val[MAIN_KEYS], hval[HKEYS];
	struct counts main, handler;
	long ops;
};

static enum kind storm_kind;
static struct rqmap_hash *storm_hash;
static struct rqmap_lpm *storm_lpm;
static atomic_bool storm_stop;
static _Thread_local struct writer *self;

/* ---- keys: hash keys are u32; trie keys a /24 or /32 IPv4-style prefix */

struct lpm_key4 {
	uint32_t prefixlen;
	uint8_t data[4];
};

static uint32_t hash_key(uint32_t t, uint32_t i, bool handler)
{
	return (handler ? 0x80000000U : 0) | t << 16 | i;
}

/* Distinct in their first 24 bits, so no key's prefix covers another's. */
static struct lpm_key4 lpm_key(uint32_t t, uint32_t i, bool handler)
{
	struct lpm_key4 k = {.prefixlen = i % 3 ? 32 : 24,
	                     .data = {(uint8_t)(t + (handler ? 16 : 0)), (uint8_t)(i >> 6),
	                              (uint8_t)((i & 63) << 2), 0}};
	return k;
}

static int op_update(uint32_t t, uint32_t i, bool handler, uint64_t v)
{
	if (storm_kind == HASH) {
		uint32_t k = hash_key(t, i, handler);

		return rqmap_hash_update(storm_hash, &k, &v, RQMAP_ANY);
	}
	struct lpm_key4 k = lpm_key(t, i, handler);

	return rqmap_lpm_update(storm_lpm, &k, &v, RQMAP_ANY);
}

static int op_delete(uint32_t t, uint32_t i)
{
	if (storm_kind == HASH) {
		uint32_t k = hash_key(t, i, false);

		return rqmap_hash_delete(storm_hash, &k);
	}
	struct lpm_key4 k = lpm_key(t, i, false);

	return rqmap_lpm_delete(storm_lpm, &k);
}

static int op_lookup(uint32_t t, uint32_t i, bool handler, uint64_t *v)
{
	if (storm_kind == HASH) {
		uint32_t k = hash_key(t, i, handler);

		return rqmap_hash_lookup(storm_hash, &k, v, 0);
	}
	struct lpm_key4 k = lpm_key(t, i, handler);

	return rqmap_lpm_lookup(storm_lpm, &k, v);
}

/* A lookup agrees with the expected value @want (NO_VALUE: absent). */
static bool lookup_exact(uint32_t t, uint32_t i, bool handler, uint64_t want)
{
	uint64_t got = 0;
	int ret = op_lookup(t, i, handler, &got);

	return want == NO_VALUE ? ret == -ENOENT : ret == 0 && got == want;
}

/* Count @ret; true when the operation took effect. */
static bool tally(struct counts *c, int ret)
{
	if (ret == 0)
		c->ok++;
	else if (ret == -ENOMEM)
		c->nomem++;
	else if (ret == -EDEADLK)
		c->deadlk++; /* a lock the interrupted context holds */
	else if (ret == -ETIMEDOUT)
		c->timedout++;
	else {
		c->other++;
		c->last_other = ret;
	}
	return ret == 0;
}

static void storm_handler(int sig)
{
	struct writer *w = self;
	int saved = errno;

	(void)sig;
	if (w) {
		static _Thread_local uint64_t seed;
		uint32_t j;

		if (!seed)
			seed = 0x9e3779b97f4a7c15ULL * (w->t + 1);
		j = (uint32_t)(tu_rand(&seed) % HKEYS);
		if (!lookup_exact(w->t, j, true, w->hval[j]))
			w->handler.wrong++;
		uint64_t v = w->hval[j] == NO_VALUE ? 1 : w->hval[j] + 1;

		if (tally(&w->handler, op_update(w->t, j, true, v)))
			w->hval[j] = v;
	}
	errno = saved;
}

static void writer_step(struct writer *w, uint64_t r)
{
	uint32_t i = (uint32_t)(r % MAIN_KEYS), what = (uint32_t)(r >> 32) % 16;
	uint64_t *slot = &w->main_val[i];

	if (what == 0) {
		int ret = op_delete(w->t, i);

		if (ret == -ENOENT && *slot == NO_VALUE)
			return;
		if (tally(&w->main, ret))
			*slot = NO_VALUE;
	} else if (what < 4) {
		if (!lookup_exact(w->t, i, false, *slot))
			w->main.wrong++;
	} else {
		uint64_t v = *slot == NO_VALUE ? 1 : *slot + 1;

		if (tally(&w->main, op_update(w->t, i, false, v)))
			*slot = v;
	}
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t seed = 0x2545f4914f6cdd1dULL * (w->t + 1);
	timer_t tm;

	CHECK_EQ(rqmap_thread_init(), 0); /* before the handler can run a map op */
	atomic_signal_fence(memory_order_seq_cst);
	self = w;
	tm = thread_prof_timer(1000000L / HANDLER_HZ);
	while (!atomic_load_explicit(&storm_stop, memory_order_relaxed)) {
		for (int n = 0; n < 64; n++)
			writer_step(w, tu_rand(&seed));
		w->ops += 64;
	}
	block_sigprof();
	timer_delete(tm);
	self = NULL;
	return NULL;
}

/* Every key holds exactly its last written value; returns the live count. */
static uint32_t verify_final(struct writer *w)
{
	uint32_t live = 0;

	for (uint32_t i = 0; i < MAIN_KEYS; i++) {
		if (!lookup_exact(w->t, i, false, w->main_val[i]))
			w->main.wrong++;
		live += w->main_val[i] != NO_VALUE;
	}
	for (uint32_t j = 0; j < HKEYS; j++) {
		if (!lookup_exact(w->t, j, true, w->hval[j]))
			w->main.wrong++;
		live += w->hval[j] != NO_VALUE;
	}
	return live;
}

static void check_accounting(uint32_t live)
{
	rqmap_quiesce();
	if (storm_kind == HASH) {
		struct rqmap_hash_info info;

		CHECK_EQ(rqmap_hash_info(storm_hash, &info), 0);
		CHECK_EQ(info.count, live);
		CHECK_EQ(info.count + info.free, info.capacity);
	} else {
		struct rqmap_lpm_info info;

		CHECK_EQ(rqmap_lpm_info(storm_lpm, &info), 0);
		CHECK_EQ(info.count, live);
		CHECK_EQ(info.nodes + info.free, info.capacity);
	}
}

static void sum_counts(struct counts *sum, const struct counts *c)
{
	sum->ok += c->ok;
	sum->nomem += c->nomem;
	sum->deadlk += c->deadlk;
	sum->timedout += c->timedout;
	sum->other += c->other;
	sum->wrong += c->wrong;
	if (c->other)
		sum->last_other = c->last_other;
}

static void storm(enum kind kind)
{
	static struct writer w[WRITERS];
	struct counts main = {0}, handler = {0};
	pthread_t th[WRITERS];
	double secs = 0.3 + (double)tu_scaled(100) / 100.0;
	uint32_t live = 0;
	long ops = 0;

	storm_kind = kind;
	atomic_store(&storm_stop, false);
	for (uint32_t t = 0; t < WRITERS; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].t = t;
		for (uint32_t i = 0; i < MAIN_KEYS; i++)
			w[t].main_val[i] = NO_VALUE;
		for (uint32_t j = 0; j < HKEYS; j++)
			w[t].hval[j] = NO_VALUE;
		CHECK_EQ(pthread_create(&th[t], NULL, writer_main, &w[t]), 0);
	}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&storm_stop, true);
	for (uint32_t t = 0; t < WRITERS; t++) {
		pthread_join(th[t], NULL);
		live += verify_final(&w[t]);
		sum_counts(&main, &w[t].main);
		sum_counts(&handler, &w[t].handler);
		ops += w[t].ops;
	}
	printf("%s storm: %ld writer ops: ok %ld, -ENOMEM %ld, -ETIMEDOUT %ld, wrong %ld; "
	       "handler updates: ok %ld, -ENOMEM %ld, -EDEADLK %ld, -ETIMEDOUT %ld, wrong %ld\n",
	       kind == HASH ? "hash" : "lpm", ops, main.ok, main.nomem, main.timedout, main.wrong,
	       handler.ok, handler.nomem, handler.deadlk, handler.timedout, handler.wrong);
	if (main.other || handler.other)
		printf("unexpected error %d / %d\n", main.last_other, handler.last_other);
	CHECK(handler.ok > 0); /* the handlers did run map updates */
	CHECK_EQ(main.nomem, 0);
	CHECK_EQ(handler.nomem, 0);
	CHECK_EQ(main.wrong, 0);
	CHECK_EQ(handler.wrong, 0);
	CHECK_EQ(main.other + main.deadlk, 0); /* normal context holds no lock to re-enter */
	CHECK_EQ(handler.other, 0);
	check_accounting(live);
}

/* The storm runs on two CPUs whatever the machine has. */
static void use_two_cpus(void)
{
	cpu_set_t have, two;
	int n = 0;

	CHECK_EQ(sched_getaffinity(0, sizeof(have), &have), 0);
	CPU_ZERO(&two);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &have)) {
			CPU_SET(c, &two);
			n++;
		}
	CHECK_EQ(sched_setaffinity(0, sizeof(two), &two), 0);
}

static void test_maps_nomem(void)
{
	struct sigaction sa;
	struct rqmap_hash_attr ha = {
	    .key_size = 4, .value_size = 8, .max_entries = MAX_ENTRIES, .spare = SPARE};
	struct rqmap_lpm_attr la = {
	    .key_size = 8, .value_size = 8, .max_entries = MAX_ENTRIES, .spare = SPARE};

	use_two_cpus(); /* before the reclaim thread starts: it inherits the mask */
	CHECK_EQ(rqmap_thread_init(), 0);
	(void)res_spin_set_timeout_ns(LOCK_TIMEOUT_NS);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = storm_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGPROF, &sa, NULL), 0);

	CHECK_EQ(rqmap_hash_create(&ha, &storm_hash), 0);
	storm(HASH);
	rqmap_hash_destroy(storm_hash);
	CHECK_EQ(rqmap_lpm_create(&la, &storm_lpm), 0);
	storm(LPM);
	rqmap_lpm_destroy(storm_lpm);
}

static const struct tu_test tests[] = {
    TU_TEST("maps_nomem", test_maps_nomem, 60, 0),
    /* The storm with threads beyond the lock registry (no slot, TAS slow path). */
    TU_TEST("maps_nomem_noslot", test_maps_nomem, 60, 0, .env = "RQSPINLOCK_SLOTS=2"),
};

TU_MAIN(tests)
