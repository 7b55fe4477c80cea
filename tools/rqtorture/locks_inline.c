/* SPDX-License-Identifier: MIT */
/*
 * rqspinlock through its opt-in inline fast path: this file alone defines
 * RQSPINLOCK_INLINE, so res_spin_lock() and res_spin_unlock() below are the
 * static inline functions of <rqspinlock/inline.h>, compiled into the lkop_*
 * wrappers, while the rest of rqtorture calls the exported ones. The lock
 * and its results are the library's; only where the fast path runs differs.
 * Named only (-l rqspinlock-inline): "all" leaves it out, as it would only
 * repeat the rqspinlock column wherever the fast path is not the cost.
 */
#define RQSPINLOCK_INLINE

#include "rqtorture.h"

static LKOP int lkop_rqi_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	return res_spin_lock(&l->rq);
}

static LKOP void lkop_rqi_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	res_spin_unlock(&l->rq);
}

static const struct lk_ops inline_ops = {
    "rqspinlock-inline",
    "rqspinlock, opt-in inline fast path (RQSPINLOCK_INLINE); not in 'all'",
    LK_RESILIENT | LK_NAMED_ONLY,
    true,
    NULL,
    rq_prepare_queued,
    rq_init,
    NULL,
    lkop_rqi_lock,
    lkop_rqi_unlock};

const struct lk_ops *lk_inline_ops(void)
{
	return &inline_ops;
}

LK_TIGHT_LOOP(tight_rq_inline, res_spin_lock(&l->rq), res_spin_unlock(&l->rq))

lk_tight_fn lk_inline_tight(void)
{
	return tight_rq_inline;
}
