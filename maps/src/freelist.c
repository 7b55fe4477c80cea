/* SPDX-License-Identifier: MIT */
#include "freelist.h"
#include "readers.h"

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
		fl->lists[i].pushes = 0;
	}
	fl->nr_lists = nr_lists;
	fl->help_above = 0;
	return 0;
}

void rqfl_destroy(struct rqfl *fl)
{
	free(fl->lists);
	fl->lists = NULL;
}

/* Threads without a registry slot spread over the per-slot lists too: were
 * they all homed on the shared list, nearly every free element would sit in
 * the one list that a handler finds locked by the context it interrupted. */
static __attribute__((noinline)) uint32_t noslot_index(void)
{
	static _Atomic uint32_t next;
	static _Thread_local uint32_t mine; /* index + 1; 0 until assigned */

	if (!mine)
		mine = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) + 1;
	return mine - 1;
}

uint32_t rqfl_home(const struct rqfl *fl)
{
	int slot = res_spin_thread_slot();

	if (RQMAP_UNLIKELY(slot < 0)) /* -ENOSPC: registry full */
		return noslot_index() % fl->nr_lists;
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
	h->pushes++;
	res_spin_unlock(&h->lock);
	return 0;
}

void rqfl_push_chain_at(struct rqfl *fl, struct rqfl_node *first, struct rqfl_node *last,
                        uint32_t n, uint32_t list)
{
	uint32_t total = fl->nr_lists + 1;
	bool nested = rqmap_tls_depth > 1;

	/* First round: trylock only, so that a list whose owner was interrupted
	 * with its lock held (or is preempted) delays nobody. A nested writer
	 * (see rqfl_pop()) never waits: list locks are held only briefly by
	 * contexts that wait for nothing, so some trylock soon succeeds.
	 * A lock fails only on deadlock (a context this handler interrupted holds
	 * it) or timeout, so some list is always available eventually: keep going
	 * round until one takes the elements rather than lose them. */
	for (uint32_t i = 0;; i++)
		if (push_one(&fl->lists[(list + i) % total], first, last, n,
		             i >= total && !nested) == 0)
			return;
}

void rqfl_push_chain(struct rqfl *fl, struct rqfl_node *first, struct rqfl_node *last, uint32_t n,
                     uint32_t home)
{
	/* Pops steal from every per-slot list before the shared one, so free
	 * elements drift into the lists of the busiest threads. Keep a small
	 * reserve in the shared list: a signal handler whose thread holds its own
	 * list's lock can still find an element there. */
	if (atomic_load_explicit(&fl->lists[fl->nr_lists].n, memory_order_relaxed) < RQFL_RESERVE)
		home = fl->nr_lists;
	rqfl_push_chain_at(fl, first, last, n, home);
}

void rqfl_push(struct rqfl *fl, struct rqfl_node *node, uint32_t home)
{
	rqfl_push_chain(fl, node, node, 1, home);
}

/* Take the first element of @h, or NULL when @h is empty or its lock failed
 * (then *failed is set). *pushes: @h's push count, read under the lock. */
static struct rqfl_node *pop_locked(struct rqfl_head *h, bool wait, bool *failed, uint32_t *pushes)
{
	struct rqfl_node *node;

	if (wait ? res_spin_lock(&h->lock) : res_spin_trylock(&h->lock)) {
		*failed = true; /* taken by a context we interrupted, busy, or timed out */
		return NULL;
	}
	node = atomic_load_explicit(&h->first, memory_order_relaxed);
	if (node) {
		atomic_store_explicit(&h->first,
		                      atomic_load_explicit(&node->next, memory_order_relaxed),
		                      memory_order_relaxed);
		atomic_fetch_sub_explicit(&h->n, 1, memory_order_relaxed);
	}
	*pushes = h->pushes;
	res_spin_unlock(&h->lock);
	return node;
}

/* The fast pass: caller's list with a waiting lock (AA check; trylock when
 * @nested, see rqfl_pop()), the others with trylock, any list will do; lists
 * that look empty are skipped without touching their lock. */
static struct rqfl_node *pop_fast(struct rqfl *fl, uint32_t home, bool nested)
{
	uint32_t total = fl->nr_lists + 1, pushes;
	bool failed = false;

	for (uint32_t i = 0; i < total; i++) {
		struct rqfl_head *h = &fl->lists[(home + i) % total];
		struct rqfl_node *node;

		if (!atomic_load_explicit(&h->first, memory_order_relaxed))
			continue;
		node = pop_locked(h, i == 0 && !nested, &failed, &pushes);
		if (node)
			return node;
	}
	return NULL;
}

/* A pass that locks every list (@wait: waiting locks, else trylock). NULL:
 * *sum is the sum of the lists' push counts, each read as its list was found
 * empty, and *clean says whether every list was locked (the sum is then
 * complete). */
static struct rqfl_node *pop_pass(struct rqfl *fl, uint32_t home, bool wait, bool *clean,
                                  uint32_t *sum)
{
	uint32_t total = fl->nr_lists + 1, pushes = 0;

	*sum = 0;
	*clean = true;
	for (uint32_t i = 0; i < total; i++) {
		bool failed = false;
		struct rqfl_node *node =
		    pop_locked(&fl->lists[(home + i) % total], wait, &failed, &pushes);

		if (node)
			return node;
		if (failed)
			*clean = false; /* skip it: another list may hold an element */
		else
			*sum += pushes;
	}
	return NULL;
}

/*
 * A pass over the lists is no snapshot: while it waits for one list's lock,
 * other threads can pop the elements ahead of it and push them into lists it
 * has already passed (a push whose trylocks fail spills into the next list).
 * With most threads on the shared list, nearly every element sits in the one
 * list its pushes spill into, and all of them could move behind a pop that
 * waited there: it came back empty with 1000 elements free. So NULL needs two
 * clean passes (every list locked) that found every list empty with equal
 * push counts: each list then stayed empty from its look in the first pass
 * to its look in the second (pops only remove), so all were empty at once
 * between the passes. A list whose lock fails is skipped, not the end of the
 * search.
 *
 * A nested context (a signal handler that interrupted a map operation of its
 * thread) uses trylock only: waiting on a list whose owner is itself nested
 * could close a cycle through the contexts both interrupted. List locks are
 * held for a few instructions by running contexts, so a busy list is free
 * again by the next pass; only a list held by a frozen context (the one this
 * handler interrupted) stays locked, and its elements are out of reach.
 * Each pass that finds lists changed behind it is caused by pushes that
 * completed meanwhile; the pass limits bound the time all the same.
 */
struct rqfl_node *rqfl_pop(struct rqfl *fl)
{
	uint32_t home = rqfl_home(fl);
	bool nested = rqmap_tls_depth > 1, clean, was_clean = false;
	struct rqfl_node *node = pop_fast(fl, home, nested);
	uint32_t before = 0, after;
	uint32_t passes = nested ? RQFL_NESTED_PASSES : RQFL_POP_PASSES;

	for (uint32_t pass = 0; !node && pass < passes; pass++) {
		node = pop_pass(fl, home, !nested, &clean, &after);
		if (!node && clean && was_clean && after == before)
			return NULL;
		was_clean = clean;
		before = after;
	}
	return node;
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
