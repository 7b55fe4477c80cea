/* SPDX-License-Identifier: MIT */
/*
 * Misuse that must stay harmless: an unlock by a thread that is not the
 * owner, locks taken in thread-specific-data destructors, and invalid
 * environment settings (rqspinlock.h).
 */
#include "testutil.h"

#include <limits.h>

#ifndef PTHREAD_DESTRUCTOR_ITERATIONS
#define PTHREAD_DESTRUCTOR_ITERATIONS 4 /* glibc */
#endif

/* ---- an unlock by a non-owner gives nobody a false -EDEADLK ---- */

struct step_thread {
	rqspinlock_t *first, *second; /* lock first, then (after go) second */
	pthread_t t;
	atomic_int step, go; /* step 1: holds first; 2: result is set */
	int result;
};

static void *step_fn(void *arg)
{
	struct step_thread *s = arg;

	CHECK_EQ(res_spin_lock(s->first), 0);
	atomic_store(&s->step, 1);
	TU_WAIT_UNTIL(atomic_load(&s->go), TU_SETUP_MS);
	s->result = res_spin_lock(s->second);
	if (s->result == 0)
		res_spin_unlock(s->second);
	atomic_store(&s->step, 2);
	return NULL;
}

static void step_start(struct step_thread *s, rqspinlock_t *first, rqspinlock_t *second)
{
	s->first = first;
	s->second = second;
	atomic_init(&s->step, 0);
	atomic_init(&s->go, 0);
	tu_thread_start(&s->t, step_fn, s);
	TU_WAIT_UNTIL(atomic_load(&s->step) >= 1, TU_SETUP_MS);
}

static void test_unlock_non_owner(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT, m = RQSPINLOCK_INIT;
	struct step_thread a, c;
	struct tu_holder d;

	res_spin_set_timeout_ns(5 * TU_NS_PER_S); /* nothing times out */
	step_start(&a, &l, &m);
	/* This thread, not the owner, releases L; D takes it. A's table
	 * still lists L. */
	res_spin_unlock(&l);
	tu_holder_start(&d, &l, 0);
	/* A waits for M, which C holds; then C waits for L (D's). No cycle:
	 * D releases L, C takes it and leaves, then A gets M. C, unrelated
	 * to A's stale entry, must not see one. */
	step_start(&c, &m, &l);
	atomic_store(&a.go, 1);
	tu_sleep_ms(10);
	atomic_store(&c.go, 1);
	tu_sleep_ms(30); /* detection checks run every millisecond */
	tu_holder_join(&d);
	TU_WAIT_UNTIL(atomic_load(&c.step) == 2, TU_SETUP_MS);
	printf("# waiter of L: %d\n", c.result);
	CHECK_EQ(c.result, 0);
	res_spin_unlock(&m);
	TU_WAIT_UNTIL(atomic_load(&a.step) == 2, TU_SETUP_MS);
	/* A itself still "holds" L by its own table: -EDEADLK is its view. */
	printf("# waiter of M: %d\n", a.result);
	CHECK(a.result == 0 || a.result == -EDEADLK);
	tu_thread_join(c.t);
	tu_thread_join(a.t);
	res_spin_set_timeout_ns(0);
}

/* ---- locks in thread-specific-data destructors leak no slot ---- */

static pthread_key_t late_key;
static rqspinlock_t late_lock;

/* Runs in every destructor round; locks in glibc's last one. */
static void late_destructor(void *arg)
{
	uintptr_t round = (uintptr_t)arg;

	if (round < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(late_key, (void *)(round + 1));
		return;
	}
	if (res_spin_lock(&late_lock) == 0)
		res_spin_unlock(&late_lock);
}

static void *late_fn(void *arg)
{
	int *slot = arg;

	*slot = res_spin_thread_slot();
	pthread_setspecific(late_key, (void *)(uintptr_t)1);
	return NULL;
}

static void test_tsd_destructor(void)
{
	int n = 3 * 4; /* RQSPINLOCK_SLOTS=4: a leak per thread fills it */

	if (TU_TSAN) {
		/* TSan finishes its own per-thread state in glibc's last
		 * destructor round: instrumented code cannot run there. */
		printf("# locks in the last destructor round: not under TSan\n");
		return;
	}

	CHECK_EQ(pthread_key_create(&late_key, late_destructor), 0);
	for (int i = 0; i < n; i++) {
		pthread_t t;
		int slot = -100;

		tu_thread_start(&t, late_fn, &slot);
		tu_thread_join(t);
		if (slot < 0)
			tu_fail(__FILE__, __LINE__, "thread %d got no slot: %d", i, slot);
	}
	CHECK_LE(res_spin_thread_slot_bound(), 4);
	CHECK_EQ(res_spin_lock(&late_lock), 0);
	res_spin_unlock(&late_lock);
}

/* ---- environment settings ---- */

static void *slot_fn(void *arg)
{
	atomic_int *go = arg;
	int slot = res_spin_thread_slot();

	CHECK_GE(slot, 0);
	atomic_fetch_add(go, 1);
	TU_WAIT_UNTIL(atomic_load(go) >= 4, TU_SETUP_MS);
	return NULL;
}

/* RQSPINLOCK_SLOTS invalid: the default capacity, so 4 live threads all get
 * a slot. (RQSPINLOCK_MODE is checked by every test's harness.) */
static void test_env_invalid(void)
{
	atomic_int go = 0;
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		tu_thread_start(&t[i], slot_fn, &go);
	for (int i = 0; i < 4; i++)
		tu_thread_join(t[i]);
}

/* RQSPINLOCK_MODE=TAS selects TAS mode; =garbage the default. */
static void test_env_mode(void)
{
	const char *m = getenv("RQSPINLOCK_MODE");
	rqspinlock_t l = RQSPINLOCK_INIT;

	CHECK(m != NULL);
	CHECK_EQ(res_spin_get_mode(),
	         strcasecmp(m, "tas") == 0 ? RQSPINLOCK_MODE_TAS : RQSPINLOCK_MODE_QUEUED);
	CHECK_EQ(res_spin_lock(&l), 0);
	res_spin_unlock(&l);
}

static const struct tu_test tests[] = {
    TU_TEST("deadlock_unlock_non_owner", test_unlock_non_owner, 40, TU_TAS | TU_INLINE),
    TU_TEST("core_tsd_destructor", test_tsd_destructor, 30, TU_TAS | TU_INLINE,
            .env = "RQSPINLOCK_SLOTS=4"),
    TU_TEST("core_env_invalid", test_env_invalid, 20, TU_TAS, .env = "RQSPINLOCK_SLOTS=abc"),
    /* Modes are matched without case; anything else means the default, with
     * a message on stderr (the harness checks the mode in effect). */
    TU_TEST("core_env_mode_upper", test_env_mode, 20, 0, .env = "RQSPINLOCK_MODE=TAS"),
    TU_TEST("core_env_mode_garbage", test_env_mode, 20, 0, .env = "RQSPINLOCK_MODE=garbage"),
};

TU_MAIN(tests)
