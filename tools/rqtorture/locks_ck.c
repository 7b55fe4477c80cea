/* SPDX-License-Identifier: MIT */
/*
 * Concurrency Kit peers (Debian libck-dev), used as they are: MCS and CLH
 * queue locks with per-thread nodes, and CK's ticket lock. Built only when
 * <ck_spinlock.h> was found at configure time (and not under TSan, which
 * cannot see CK's inline-assembly atomics); otherwise the types are listed
 * as unavailable with the reason.
 */
#include <stddef.h>

#include "rqtorture.h"

#ifdef RQT_HAVE_CK

static void mcs_init(union lk_lock *l)
{
	ck_spinlock_mcs_init(&l->mcs);
}

static LKOP int lkop_ckmcs_lock(union lk_lock *l, union lk_node *n)
{
	ck_spinlock_mcs_lock(&l->mcs, &n->mcs);
	return 0;
}

static LKOP void lkop_ckmcs_unlock(union lk_lock *l, union lk_node *n)
{
	ck_spinlock_mcs_unlock(&l->mcs, &n->mcs);
}

static void clh_init(union lk_lock *l)
{
	ck_spinlock_clh_init(&l->clh.tail, &l->clh.unowned);
}

static void clh_node_init(union lk_node *n)
{
	n->clh.cur = &n->clh.own;
}

static LKOP int lkop_ckclh_lock(union lk_lock *l, union lk_node *n)
{
	ck_spinlock_clh_lock(&l->clh.tail, n->clh.cur);
	return 0;
}

static LKOP void lkop_ckclh_unlock(union lk_lock *l, union lk_node *n)
{
	(void)l;
	/* CK hands this thread its predecessor's node for next time. */
	ck_spinlock_clh_unlock(&n->clh.cur);
}

static void ckticket_init(union lk_lock *l)
{
	ck_spinlock_ticket_init(&l->ckticket);
}

static LKOP int lkop_ckticket_lock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	ck_spinlock_ticket_lock(&l->ckticket);
	return 0;
}

static LKOP void lkop_ckticket_unlock(union lk_lock *l, union lk_node *n)
{
	(void)n;
	ck_spinlock_ticket_unlock(&l->ckticket);
}

#define CK_ENTRY(name, desc, init, node_init, lock, unlock)                                        \
	{                                                                                          \
		name, desc, LK_SPIN | LK_CK, true, NULL, NULL, init, node_init, lock, unlock       \
	}

#else

#ifdef RQ_SANITIZE_THREAD
#define CK_WHY "not built: ThreadSanitizer cannot see Concurrency Kit's inline-assembly atomics"
#else
#define CK_WHY                                                                                     \
	"not built: <ck_spinlock.h> was not found at configure time; install Debian's libck-dev "  \
	"(scripts/install-deps.sh as root) and rebuild"
#endif

/* Listed with the reason, so that asking for them gives a clear message. */
#define CK_ENTRY(name, desc, init, node_init, lock, unlock)                                        \
	{                                                                                          \
		name, desc, LK_SPIN | LK_CK, false, CK_WHY, NULL, NULL, NULL, NULL, NULL           \
	}

#endif

static const struct lk_ops ck_ops[] = {
    CK_ENTRY("ck-mcs", "Concurrency Kit ck_spinlock_mcs (libck-dev)", mcs_init, NULL,
             lkop_ckmcs_lock, lkop_ckmcs_unlock),
    CK_ENTRY("ck-clh", "Concurrency Kit ck_spinlock_clh (libck-dev)", clh_init, clh_node_init,
             lkop_ckclh_lock, lkop_ckclh_unlock),
    CK_ENTRY("ck-ticket", "Concurrency Kit ck_spinlock_ticket (libck-dev)", ckticket_init, NULL,
             lkop_ckticket_lock, lkop_ckticket_unlock),
};

void lk_ck_register(const struct lk_ops **out, size_t *n)
{
	size_t cnt = sizeof(ck_ops) / sizeof(ck_ops[0]);

	if (cnt > *n)
		cnt = *n;
	for (size_t i = 0; i < cnt; i++)
		out[i] = &ck_ops[i];
	*n = cnt;
}
