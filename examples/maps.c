/* SPDX-License-Identifier: MIT */
/*
 * maps.c: per-key counters in an rqmaps hash map. Each value embeds an
 * rqspinlock (RQMAP_F_VALUE_LOCK); four threads find their key's value in
 * place (inside a read-side section) and increment it under that lock, as
 * a BPF program does with bpf_res_spin_lock(). A SIGALRM handler also
 * bumps a key from inside whatever map call it interrupts: the maps never
 * deadlock when re-entered from a signal handler.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>

#include <rqmap.h>
#include <rqspinlock.h>

#define KEYS    8
#define THREADS 4
#define ROUNDS  20000

struct counter {
	rqspinlock_t lock; /* the value's embedded lock, at lock_off 0 */
	uint32_t pad;
	uint64_t hits;
};

static struct rqmap_hash *map;
/* SIGALRM is process-directed: the handler runs on any thread. */
static atomic_int handler_hits, handler_failures;

/* Adds one to `key`'s counter; 0, or why not (-ENOENT, -EDEADLK ...). */
static int bump(uint32_t key)
{
	struct counter *c;
	int err;

	err = rqmap_read_lock();
	if (err)
		return err;
	c = rqmap_hash_lookup_elem(map, &key);
	err = c ? res_spin_lock(&c->lock) : -ENOENT;
	if (!err) {
		c->hits++;
		res_spin_unlock(&c->lock);
	}
	rqmap_read_unlock();
	return err;
}

static void on_alarm(int sig)
{
	int saved = errno; /* a handler must not change the errno it interrupts */

	(void)sig;
	if (bump(0) == 0)
		atomic_fetch_add_explicit(&handler_hits, 1, memory_order_relaxed);
	else /* -EDEADLK: it interrupted its own thread holding key 0's lock */
		atomic_fetch_add_explicit(&handler_failures, 1, memory_order_relaxed);
	errno = saved;
}

static void *worker(void *arg)
{
	long failures = 0;
	uint32_t first = (uint32_t)(uintptr_t)arg;

	if (rqmap_thread_init() != 0) /* before a handler may use the map */
		return (void *)-1L;
	for (int i = 0; i < ROUNDS; i++)
		if (bump((first + (uint32_t)i) % KEYS) != 0)
			failures++;
	return (void *)failures;
}

int main(void)
{
	struct rqmap_hash_attr attr = {.key_size = sizeof(uint32_t),
	                               .value_size = sizeof(struct counter),
	                               .max_entries = KEYS,
	                               .flags = RQMAP_F_VALUE_LOCK,
	                               .lock_off = 0};
	struct itimerval tick = {.it_interval = {0, 1000}, .it_value = {0, 1000}};
	struct counter zero = {0};
	pthread_t t[THREADS];
	uint64_t total = 0;
	long failures = 0;

	if (rqmap_thread_init() || rqmap_hash_create(&attr, &map))
		return 1;
	for (uint32_t k = 0; k < KEYS; k++)
		if (rqmap_hash_update(map, &k, &zero, RQMAP_NOEXIST))
			return 1;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &tick, NULL);
	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		failures += (long)r;
	}
	setitimer(ITIMER_REAL, &(struct itimerval){0}, NULL);
	signal(SIGALRM, SIG_IGN);
	for (uint32_t k = 0; k < KEYS; k++) {
		struct counter c;
		if (rqmap_hash_lookup(map, &k, &c, RQMAP_F_LOCK))
			return 1;
		total += c.hits;
	}
	rqmap_hash_destroy(map);
	printf("rqmaps %s: %llu hits (%d by threads, %d by the handler), %ld+%d refused\n",
	       rqmap_version(), (unsigned long long)total, THREADS * ROUNDS - (int)failures,
	       (int)handler_hits, failures, (int)handler_failures);
	/* Every hit counted once; every refusal reported, none lost. */
	return total == (uint64_t)(THREADS * ROUNDS - failures + handler_hits) ? 0 : 1;
}
