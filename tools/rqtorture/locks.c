/* SPDX-License-Identifier: MIT */
/*
 * The lock-type table. Every type is driven through struct lk_ops so that
 * all of them pay the same indirect-call cost in every measurement.
 *
 * The "ticket" and "tas" peers below are tiny reference locks written for
 * this tool (not part of the library): a FIFO ticket lock and a
 * test-and-test-and-set lock, both plain spinners that never yield.
 * Wrappers are named lkop_* and kept out of line so that callgrind can
 * count exactly one lock+unlock pair with --toggle-collect='lkop_*'.
 */
#include <errno.h>
#include <string.h>

#include "rqtorture.h"

/* ---- rqspinlock, queued and test-and-set modes ---------------------- */

void rq_prepare_queued(void)
{
	(void)res_spin_set_mode(RQSPINLOCK_MODE_QUEUED);
}

static void rq_prepare_tas(void)
{
	(void)res_spin_set_mode(RQSPINLOCK_MODE_TAS);
}

void rq_init(union lk_lock *l)
{
	res_spin_lock_init(&l->rq);
}

static LKOP int lkop_rq_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	return res_spin_lock(&l->rq);
}

static LKOP void lkop_rq_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	res_spin_unlock(&l->rq);
}

/* ---- QL, the baseline ----------------------------------------------- */

void ql_init(union lk_lock *l)
{
	memset(&l->ql, 0, sizeof(l->ql));
}

static LKOP int lkop_ql_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	ql_spin_lock(&l->ql);
	return 0;
}

static LKOP void lkop_ql_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	ql_spin_unlock(&l->ql);
}

/* ---- tool-local peer: ticket lock ----------------------------------- */

static void ticket_init(union lk_lock *l)
{
	atomic_init(&l->ticket.next, 0);
	atomic_init(&l->ticket.owner, 0);
}

static LKOP int lkop_ticket_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	/* Relaxed: taking a ticket orders nothing; the owner load below does. */
	uint32_t me = atomic_fetch_add_explicit(&l->ticket.next, 1, memory_order_relaxed);
	/* Acquire: pairs with the release store in lkop_ticket_unlock. */
	while (atomic_load_explicit(&l->ticket.owner, memory_order_acquire) != me)
		cpu_relax();
	return 0;
}

static LKOP void lkop_ticket_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	/* Only the holder writes owner, so a relaxed read of it is exact. */
	uint32_t cur = atomic_load_explicit(&l->ticket.owner, memory_order_relaxed);
	/* Release: pairs with the acquire load in lkop_ticket_lock. */
	atomic_store_explicit(&l->ticket.owner, cur + 1, memory_order_release);
}

/* ---- tool-local peer: test-and-test-and-set lock -------------------- */

static void tas_init(union lk_lock *l)
{
	atomic_init(&l->word, 0);
}

static LKOP int lkop_tas_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	for (;;) {
		/* Acquire: pairs with the release store in lkop_tas_unlock. */
		if (atomic_exchange_explicit(&l->word, 1, memory_order_acquire) == 0)
			return 0;
		while (atomic_load_explicit(&l->word, memory_order_relaxed) != 0)
			cpu_relax();
	}
}

static LKOP void lkop_tas_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	/* Release: pairs with the acquire exchange in lkop_tas_lock. */
	atomic_store_explicit(&l->word, 0, memory_order_release);
}

/* ---- glibc ---------------------------------------------------------- */

static void pspin_init(union lk_lock *l)
{
	(void)pthread_spin_init(&l->pspin, PTHREAD_PROCESS_PRIVATE);
}

static LKOP int lkop_pspin_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	return -pthread_spin_lock(&l->pspin);
}

static LKOP void lkop_pspin_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	(void)pthread_spin_unlock(&l->pspin);
}

static void mutex_init(union lk_lock *l)
{
	(void)pthread_mutex_init(&l->mutex, NULL);
}

static LKOP int lkop_mutex_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	return -pthread_mutex_lock(&l->mutex);
}

static LKOP void lkop_mutex_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	(void)pthread_mutex_unlock(&l->mutex);
}

/* ---- the table ------------------------------------------------------ */

static const struct lk_ops builtin_ops[] = {
    {"rqspinlock", "resilient queued spin lock (this library, queued mode)", LK_RESILIENT, true,
     NULL, rq_prepare_queued, rq_init, NULL, lkop_rq_lock, lkop_rq_unlock},
    {"rqspinlock-tas", "resilient spin lock in test-and-set mode (res_spin_set_mode)", LK_RESILIENT,
     true, NULL, rq_prepare_tas, rq_init, NULL, lkop_rq_lock, lkop_rq_unlock},
    {"ql", "baseline queued spin lock QL (this library, not resilient)", LK_BASELINE, true, NULL,
     NULL, ql_init, NULL, lkop_ql_lock, lkop_ql_unlock},
    {"ticket", "ticket lock (tiny peer written in rqtorture)", LK_SPIN, true, NULL, NULL,
     ticket_init, NULL, lkop_ticket_lock, lkop_ticket_unlock},
    {"tas", "test-and-test-and-set lock (tiny peer written in rqtorture)", LK_SPIN, true, NULL,
     NULL, tas_init, NULL, lkop_tas_lock, lkop_tas_unlock},
    {"pthread-spin", "glibc pthread_spin_lock", LK_SPIN, true, NULL, NULL, pspin_init, NULL,
     lkop_pspin_lock, lkop_pspin_unlock},
    {"pthread-mutex", "glibc pthread_mutex_lock (sleeping lock, for reference)", 0, true, NULL,
     NULL, mutex_init, NULL, lkop_mutex_lock, lkop_mutex_unlock},
};

#define NBUILTIN (sizeof(builtin_ops) / sizeof(builtin_ops[0]))
#define NCK      3
#define NTABLE   5
#define NUNLOCK  4

const struct lk_ops *lk_table(size_t *n)
{
	static struct lk_ops all[NBUILTIN + 1 + NTABLE + NUNLOCK + NCK];
	static size_t count;

	if (count == 0) {
		const struct lk_ops *ck[NCK], *table;
		size_t nck = NCK, ntable;

		memcpy(all, builtin_ops, sizeof(builtin_ops));
		count = NBUILTIN;
		all[count++] = *lk_inline_ops();
		table = lk_table_ops(&ntable);
		for (size_t i = 0; i < ntable && i < NTABLE; i++)
			all[count++] = table[i];
		table = lk_unlock_ops(&ntable);
		for (size_t i = 0; i < ntable && i < NUNLOCK; i++)
			all[count++] = table[i];
		lk_ck_register(ck, &nck);
		for (size_t i = 0; i < nck; i++)
			all[count++] = *ck[i];
	}
	*n = count;
	return all;
}

const struct lk_ops *lk_find(const char *name)
{
	size_t n;
	const struct lk_ops *t = lk_table(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

bool lk_is_rq(const struct lk_ops *ops)
{
	return (ops->flags & LK_RESILIENT) != 0;
}
