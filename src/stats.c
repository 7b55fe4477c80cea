/* SPDX-License-Identifier: MIT */
/*
 * Layer 0, lockevent-style counters: per thread (in the registry slot,
 * incremented on slow paths only by the thread itself, rq_stat_inc()),
 * kept with the slot when a thread leaves it, and global ones for threads
 * without a slot (registry.c); summed on read. Uses the registry.
 */
#include <errno.h>

#include "registry.h"

/*
 * Counters only grow: a slot's are written by the thread in the slot alone
 * (rq_stat_inc()) and stay with the slot when the thread leaves it; threads
 * without a slot count in the global ones. A reset therefore takes a
 * snapshot of the sums, which reads subtract, instead of zeroing counters
 * that their threads may be incrementing.
 */
static _Atomic uint64_t rq_stats_base[RQ_STAT_NR];

/* The global counters plus those of every slot ever used. */
static void sum_all(uint64_t sum[RQ_STAT_NR])
{
	_Atomic uint64_t *global = rq_stats_global();
	uint32_t bound = rq_slot_bound();

	for (int s = 0; s < RQ_STAT_NR; s++)
		sum[s] = atomic_load_explicit(&global[s], memory_order_relaxed);
	for (uint32_t i = 0; i < bound; i++) {
		struct rq_thread *t = rq_thread_at(i);

		for (int s = 0; s < RQ_STAT_NR; s++)
			sum[s] += atomic_load_explicit(&t->stats[s], memory_order_relaxed);
	}
}

static void sum_stats(uint64_t sum[RQ_STAT_NR])
{
	sum_all(sum);
	for (int s = 0; s < RQ_STAT_NR; s++) {
		uint64_t base = atomic_load_explicit(&rq_stats_base[s], memory_order_relaxed);

		/* below the base only if another thread reset after our sum */
		sum[s] = sum[s] > base ? sum[s] - base : 0;
	}
}

RQ_EXPORT int res_spin_get_stats(struct rqspinlock_stats *out)
{
	uint64_t sum[RQ_STAT_NR];

	if (!out)
		return -EINVAL;
	sum_stats(sum);
	*out = (struct rqspinlock_stats){
	    .lock_slowpath = sum[RQ_STAT_SLOWPATH],
	    .lock_pending = sum[RQ_STAT_PENDING],
	    .lock_use_node2 = sum[RQ_STAT_NODE2],
	    .lock_use_node3 = sum[RQ_STAT_NODE3],
	    .lock_use_node4 = sum[RQ_STAT_NODE4],
	    .lock_no_node = sum[RQ_STAT_NO_NODE],
	    .lock_tas = sum[RQ_STAT_TAS],
	    .timeout = sum[RQ_STAT_TIMEOUT],
	    .deadlock_aa = sum[RQ_STAT_AA],
	    .deadlock_abba = sum[RQ_STAT_ABBA],
	    .deadlock_cycle = sum[RQ_STAT_CYCLE],
	    .queue_handoff = sum[RQ_STAT_HANDOFF],
	    .yields = sum[RQ_STAT_YIELD],
	    .no_slot = sum[RQ_STAT_NO_SLOT],
	    .unlock_not_held = sum[RQ_STAT_UNLOCK_NOT_HELD],
	    .deadline_extensions = sum[RQ_STAT_EXTEND],
	    .timeout_owner_running = sum[RQ_STAT_TIMEOUT_RUNNING],
	    .timeout_owner_blocked = sum[RQ_STAT_TIMEOUT_BLOCKED],
	    .timeout_owner_unknown = sum[RQ_STAT_TIMEOUT_UNKNOWN],
	};
	return 0;
}

RQ_EXPORT void res_spin_reset_stats(void)
{
	uint64_t sum[RQ_STAT_NR];

	sum_all(sum);
	for (int s = 0; s < RQ_STAT_NR; s++)
		atomic_store_explicit(&rq_stats_base[s], sum[s], memory_order_relaxed);
}
