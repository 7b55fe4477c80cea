/* SPDX-License-Identifier: MIT */
/*
 * A signal whose handler uses a map, arriving while its thread registers
 * with the maps' RCU (rqmap_thread_init(), or the lazy registration of a
 * first map call). The link wraps liburcu's registration
 * (-Wl,--wrap=urcu_memb_register_thread) so that the signal is raised at
 * its entry, the worst instant: the handler must run only once the thread
 * is registered, and its map call must work (a handler that registered
 * first would trip liburcu's "already registered" assertion, which aborts
 * the process).
 */
#include "testutil.h"

#include <rqmap.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

void __real_urcu_memb_register_thread(void);
void __wrap_urcu_memb_register_thread(void);

static struct rqmap_hash *map;
static _Thread_local int raise_in_registration;
static _Thread_local int registering;
static atomic_int handler_runs, handler_during_registration, handler_errors;

void __wrap_urcu_memb_register_thread(void)
{
	registering = 1;
	if (raise_in_registration) {
		raise_in_registration = 0;
		CHECK_EQ(raise(SIGUSR1), 0);
	}
	__real_urcu_memb_register_thread();
	registering = 0;
}

static void handler(int sig)
{
	uint32_t key = 7;
	uint64_t value;

	(void)sig;
	if (registering)
		atomic_fetch_add(&handler_during_registration, 1);
	if (rqmap_hash_lookup(map, &key, &value, 0) != -ENOENT)
		atomic_fetch_add(&handler_errors, 1);
	atomic_fetch_add(&handler_runs, 1);
}

/* Registers through rqmap_thread_init() (@p arg NULL) or through a first
 * map call in normal context. */
static void *registering_thread(void *arg)
{
	uint32_t key = 1;
	uint64_t value = 1;

	raise_in_registration = 1;
	if (arg)
		CHECK_EQ(rqmap_hash_update(map, &key, &value, RQMAP_ANY), 0);
	else
		CHECK_EQ(rqmap_thread_init(), 0);
	CHECK_EQ(raise_in_registration, 0); /* the signal was raised in there */
	return NULL;
}

static void test_register_signal(void)
{
	struct rqmap_hash_attr a = {.key_size = 4, .value_size = 8, .max_entries = 16};
	struct sigaction sa = {.sa_handler = handler};
	pthread_t t;

	CHECK_EQ(rqmap_hash_create(&a, &map), 0);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	tu_thread_start(&t, registering_thread, NULL);
	tu_thread_join(t);
	tu_thread_start(&t, registering_thread, (void *)1);
	tu_thread_join(t);
	CHECK_EQ(atomic_load(&handler_runs), 2);
	CHECK_EQ(atomic_load(&handler_during_registration), 0);
	CHECK_EQ(atomic_load(&handler_errors), 0);
	sa.sa_handler = SIG_DFL;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	rqmap_hash_destroy(map);
}

static const struct tu_test tests[] = {
    TU_TEST("maps_register_signal", test_register_signal, 30, 0),
};

TU_MAIN(tests)
