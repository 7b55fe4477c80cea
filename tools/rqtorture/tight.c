/* SPDX-License-Identifier: MIT */
/*
 * --uncontended --tight: the tight loops of the types that have one
 * (LK_TIGHT_LOOP, rqtorture.h): rqspinlock and QL call the library's
 * exported functions directly, pthread-spin and pthread-mutex glibc's;
 * rqspinlock-inline (locks_inline.c) and the unlock experiments
 * (locks_unlock.c) run their pair inline in the loop.
 */
#include <string.h>

#include "rqtorture.h"

LK_TIGHT_LOOP(tight_rq, res_spin_lock(&l->rq), res_spin_unlock(&l->rq))
LK_TIGHT_LOOP(tight_ql, (ql_spin_lock(&l->ql), 0), ql_spin_unlock(&l->ql))
LK_TIGHT_LOOP(tight_pspin, pthread_spin_lock(&l->pspin), (void)pthread_spin_unlock(&l->pspin))
LK_TIGHT_LOOP(tight_mutex, pthread_mutex_lock(&l->mutex), (void)pthread_mutex_unlock(&l->mutex))

lk_tight_fn lk_tight_find(const struct lk_tight_entry *e, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(e[i].name, name) == 0)
			return e[i].fn;
	return NULL;
}

lk_tight_fn lk_tight(const struct lk_ops *ops)
{
	static const struct lk_tight_entry loops[] = {
	    {"rqspinlock", tight_rq},      {"rqspinlock-tas", tight_rq},   {"ql", tight_ql},
	    {"pthread-spin", tight_pspin}, {"pthread-mutex", tight_mutex},
	};
	lk_tight_fn fn = lk_tight_find(loops, sizeof(loops) / sizeof(loops[0]), ops->name);

	if (fn == NULL && strcmp(ops->name, "rqspinlock-inline") == 0)
		fn = lk_inline_tight();
	return fn ? fn : lk_unlock_tight(ops->name);
}
