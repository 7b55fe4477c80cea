/* SPDX-License-Identifier: MIT */
/* Readers (readers.h): registration with liburcu-memb, read-side sections. */
#include "readers.h"
#include "fork_gate.h"
#include "sys.h"

/* struct urcu_reader, for forgetting the parent's readers after fork() */
#include <urcu/static/urcu-memb.h>

#include <rqmap.h>
#include <rqspinlock.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>

_Thread_local bool rqmap_tls_registered;
_Thread_local unsigned rqmap_tls_depth;
#ifdef RQ_SANITIZE_THREAD
char rqmap_tsan_gp;
#endif

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/*
 * Every thread registered by the library, for the child of a fork(): the
 * other threads of the parent are gone there, but their urcu reader records
 * stay in urcu's registry, and one that was inside a read-side section at
 * the fork would hold up every grace period of the child for ever. Left in
 * the registry, a record would also be added a second time when a thread of
 * the child reuses the dead thread's stack and TLS (glibc caches them),
 * corrupting the list. Changed only inside rqmap_urcu_enter() (registration,
 * unregistration), so never in the middle of a change at a drained fork().
 */
struct reg_node {
	struct cds_list_head node; /* in reg_list while the thread is registered */
	struct urcu_reader *reader;
};
static CDS_LIST_HEAD(reg_list);
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local struct reg_node tls_reg;

static void reg_add(void)
{
	tls_reg.reader = &URCU_TLS(urcu_memb_reader);
	pthread_mutex_lock(&reg_lock);
	cds_list_add(&tls_reg.node, &reg_list);
	pthread_mutex_unlock(&reg_lock);
}

static void reg_del(void)
{
	pthread_mutex_lock(&reg_lock);
	cds_list_del(&tls_reg.node);
	pthread_mutex_unlock(&reg_lock);
}

/*
 * In the child: the parent's other threads are gone, and their records leave
 * urcu's registry (no update-side call is in flight, this thread's neither:
 * see the fork gate). After an undrained fork() the list may be mid-change
 * and nothing waits for grace periods: it is not read.
 */
static void reg_after_fork_child(void)
{
	struct cds_list_head *pos;

	for (pos = reg_list.next; !rqmap_urcu_unusable && pos != &reg_list; pos = pos->next) {
		if (pos != &tls_reg.node)
			cds_list_del(&cds_list_entry(pos, struct reg_node, node)->reader->node);
	}
	CDS_INIT_LIST_HEAD(&reg_list);
	if (rqmap_tls_registered)
		cds_list_add(&tls_reg.node, &reg_list);
	pthread_mutex_init(&reg_lock, NULL);
}

/* Is this thread inside a read-side section? (urcu's reader state is read
 * only for a registered thread.) */
static bool in_section(void)
{
	return rqmap_tls_registered && urcu_memb_read_ongoing();
}

static const struct rqmap_fork_hooks readers_fork_hooks = {
    .in_section = in_section,
    .after_fork_child = reg_after_fork_child,
};

/* liburcu requires unregistration before a registered thread exits. It
 * runs with every signal blocked, as registration does: a handler in
 * between would read maps unregistered, unseen by grace periods. */
static void unregister_at_exit(void *arg)
{
	sigset_t old = rqmap_block_signals();

	(void)arg;
	if (rqmap_tls_registered) {
		if (!rqmap_urcu_unusable) { /* else urcu's registry lock may be held */
			rqmap_urcu_enter();
			reg_del();
			urcu_memb_unregister_thread();
			rqmap_urcu_exit();
		}
		rqmap_tls_registered = false;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void make_exit_key(void)
{
	(void)pthread_key_create(&exit_key, unregister_at_exit);
}

/*
 * Registration runs with every signal blocked: a handler that used a map
 * inside it would register the thread a second time (liburcu asserts and
 * aborts) or wait for the registry mutex the interrupted registration
 * holds. A signal that arrives meanwhile runs its handler once the thread
 * is registered. A handler that ran before the mask may have registered
 * the thread already. (pthread_once() too: a handler inside it would wait
 * for itself.)
 */
int rqmap_thread_register_slow(void)
{
	sigset_t old = rqmap_block_signals();
	int ret = 0;

	pthread_once(&exit_key_once, make_exit_key);
	rqmap_fork_gate_install(&readers_fork_hooks);
	if (!rqmap_tls_registered) {
		/* urcu's registry lock may be held for ever, or this thread's
		 * own fork() holds the gate closed (fork gate) */
		if (rqmap_urcu_unusable || rqmap_tls_forking ||
		    pthread_setspecific(exit_key, (void *)1)) {
			ret = -ENOMEM;
		} else {
			rqmap_urcu_enter();
			urcu_memb_register_thread();
			reg_add();
			rqmap_urcu_exit();
			rqmap_tls_registered = true;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int rqmap_thread_init(void)
{
	/* Also take a lock-registry slot now, in normal context. */
	(void)res_spin_thread_slot();
	return rqmap_thread_ensure();
}

int rqmap_read_lock(void)
{
	int ret = rqmap_thread_ensure();

	if (!ret)
		rqmap_rcu_lock();
	return ret;
}

void rqmap_read_unlock(void)
{
	rqmap_rcu_unlock();
}
