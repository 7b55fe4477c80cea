/* SPDX-License-Identifier: MIT */
#include "freelist.h"
#include "internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

int rqfl_init(struct rqfl *fl, uint32_t nr_lists)
{
	if (nr_lists == 0)
		nr_lists = RQFL_DEFAULT_LISTS;
	fl->lists = aligned_alloc(64, sizeof(*fl->lists) * (nr_lists + 1));
	if (!fl->lists)
		return -ENOMEM;
	for (uint32_t i = 0; i <= nr_lists; i++) {
		res_spin_lock_init(&fl->lists[i].lock);
		atomic_init(&fl->lists[i].n, 0);
		atomic_init(&fl->lists[i].first, NULL);
	}
	fl->nr_lists = nr_lists;
	return 0;
}

void rqfl_destroy(struct rqfl *fl)
{
	free(fl->lists);
	fl->lists = NULL;
}

uint32_t rqfl_home(const struct rqfl *fl)
{
	int slot = res_spin_thread_slot();

	if (slot < 0) /* -ENOSPC: registry full, use the shared list */
		return fl->nr_lists;
	return (uint32_t)slot % fl->nr_lists;
}

static int push_one(struct rqfl_head *h, struct rqfl_node *first, struct rqfl_node *last,
                    uint32_t n, bool wait)
{
	int ret = wait ? res_spin_lock(&h->lock) : res_spin_trylock(&h->lock);

	if (ret)
		return ret;
	atomic_store_explicit(&last->next, atomic_load_explicit(&h->first, memory_order_relaxed),
	                      memory_order_relaxed);
	atomic_store_explicit(&h->first, first, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->n, n, memory_order_relaxed);
	res_spin_unlock(&h->lock);
	return 0;
}

void rqfl_push_chain(struct rqfl *fl, struct rqfl_node *first, struct rqfl_node *last, uint32_t n,
                     uint32_t home)
{
	uint32_t total = fl->nr_lists + 1;
	bool nested = rqmap_tls_depth > 1;

	/* Pops steal from every per-slot list before the shared one, so free
	 * elements drift into the lists of the busiest threads. Keep a small
	 * reserve in the shared list: a signal handler whose thread holds its own
	 * list's lock can still find an element there. */
	if (atomic_load_explicit(&fl->lists[fl->nr_lists].n, memory_order_relaxed) < RQFL_RESERVE)
		home = fl->nr_lists;
	/* First round: trylock only, so that a list whose owner was interrupted
	 * with its lock held (or is preempted) delays nobody. A nested writer
	 * (see rqfl_pop()) never waits: list locks are held only briefly by
	 * contexts that wait for nothing, so some trylock soon succeeds.
	 * A lock fails only on deadlock (a context this handler interrupted holds
	 * it) or timeout, so some list is always available eventually: keep going
	 * round until one takes the elements rather than lose them. */
	for (uint32_t i = 0;; i++)
		if (push_one(&fl->lists[(home + i) % total], first, last, n,
		             i >= total && !nested) == 0)
			return;
}

void rqfl_push(struct rqfl *fl, struct rqfl_node *node, uint32_t home)
{
	rqfl_push_chain(fl, node, node, 1, home);
}

static struct rqfl_node *pop_one(struct rqfl_head *h, bool wait)
{
	struct rqfl_node *node;

	/* Unlocked peek: skip empty lists without touching their lock. */
	if (!atomic_load_explicit(&h->first, memory_order_relaxed))
		return NULL;
	if (wait ? res_spin_lock(&h->lock) : res_spin_trylock(&h->lock))
		return NULL; /* taken by a context we interrupted, busy, or timed out */
	node = atomic_load_explicit(&h->first, memory_order_relaxed);
	if (node) {
		atomic_store_explicit(&h->first,
		                      atomic_load_explicit(&node->next, memory_order_relaxed),
		                      memory_order_relaxed);
		atomic_fetch_sub_explicit(&h->n, 1, memory_order_relaxed);
	}
	res_spin_unlock(&h->lock);
	return node;
}

struct rqfl_node *rqfl_pop(struct rqfl *fl)
{
	uint32_t total = fl->nr_lists + 1;
	uint32_t home = rqfl_home(fl);
	/* Other threads' lists: trylock first, any list will do. Only a writer
	 * that did not interrupt another map operation of its thread waits for
	 * one: a nested context waiting on a list whose owner is itself nested
	 * could close a cycle through the contexts both interrupted. */
	uint32_t rounds = rqmap_tls_depth > 1 ? 1 : 2;

	for (uint32_t round = 0; round < rounds; round++)
		for (uint32_t i = 0; i < total; i++) {
			bool wait = i == 0 || round == 1; /* own list: AA check */
			struct rqfl_node *node = pop_one(&fl->lists[(home + i) % total], wait);

			if (node)
				return node;
		}
	return NULL;
}

void rqfl_populate(struct rqfl *fl, void *base, size_t size, uint32_t n)
{
	char *p = base;

	for (uint32_t i = 0; i < n; i++)
		rqfl_push(fl, (struct rqfl_node *)(void *)(p + (size_t)i * size),
		          i % (fl->nr_lists + 1));
}

uint64_t rqfl_count(struct rqfl *fl)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i <= fl->nr_lists; i++)
		sum += atomic_load_explicit(&fl->lists[i].n, memory_order_relaxed);
	return sum;
}
