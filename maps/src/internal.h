/* SPDX-License-Identifier: MIT */
/* Shared by the map types: RCU glue and word-wise copies of element data. */
#ifndef RQMAP_INTERNAL_H
#define RQMAP_INTERNAL_H

/* Inline urcu read-side primitives, except under TSan: inlined, their plain
 * accesses to liburcu's shared futex word would be instrumented against the
 * library's own uninstrumented atomics and reported as races. */
#ifndef RQ_SANITIZE_THREAD
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RQMAP_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RQMAP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * Element data that lock-free readers may read while a writer fills a
 * recycled element is stored in 32-bit atomic words, accessed relaxed. RCU
 * already orders these accesses (an element is rewritten only after every
 * reader that could see it has finished), but that ordering comes from
 * membarrier(2) inside liburcu, which the C11 model and TSan cannot see;
 * relaxed atomics make the reads race-free in C11 terms at no cost on x86.
 */
typedef _Atomic uint32_t rqmap_word_t;

static inline uint32_t rqmap_words(uint32_t bytes)
{
	return (bytes + 3) / 4;
}

/*
 * Read-side sections. TSan cannot see the grace period (membarrier inside
 * liburcu), so sanitizer builds tell it: every reader "releases" a shared
 * token when it leaves, and callbacks "acquire" it before reusing memory.
 */
#ifdef RQ_SANITIZE_THREAD
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char rqmap_tsan_gp;
#define RQMAP_TSAN_RELEASE() __tsan_release(&rqmap_tsan_gp)
#define RQMAP_TSAN_ACQUIRE() __tsan_acquire(&rqmap_tsan_gp)
#else
#define RQMAP_TSAN_RELEASE() ((void)0)
#define RQMAP_TSAN_ACQUIRE() ((void)0)
#endif

static inline void rqmap_rcu_lock(void)
{
	urcu_memb_read_lock();
}

static inline void rqmap_rcu_unlock(void)
{
	RQMAP_TSAN_RELEASE();
	urcu_memb_read_unlock();
}

/*
 * Writer operations in progress on this thread, counting the contexts a
 * signal handler interrupted. An update waits for recycled elements only at
 * depth 1: a nested one could be holding up, by sleeping, a lock that its
 * interrupted context holds and every other thread needs.
 */
extern _Thread_local unsigned rqmap_tls_depth;

static inline void rqmap_enter(void)
{
	rqmap_tls_depth++;
	atomic_signal_fence(memory_order_seq_cst); /* a handler sees it */
}

static inline void rqmap_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	rqmap_tls_depth--;
}

/* Registered thread fast check; registers lazily (normal context only). */
extern _Thread_local bool rqmap_tls_registered;
int rqmap_thread_register_slow(void);

static inline int rqmap_thread_ensure(void)
{
	if (RQMAP_LIKELY(rqmap_tls_registered))
		return 0;
	return rqmap_thread_register_slow();
}

struct rqfl;
struct rqfl_node;
/* Pop a free element; when the freelist is empty, give the RCU worker a
 * bounded chance to recycle retired ones. */
struct rqfl_node *rqmap_pop_or_wait(struct rqfl *fl);

/*
 * Deferred reuse. liburcu's call_rcu() worker sleeps 10 ms between batches,
 * which at millions of updates per second strands far more elements than a
 * preallocated pool can spare; so removed elements go to a lock-free retire
 * stack (push by CAS: async-signal-safe, no allocation) drained by one
 * library thread that waits for a grace period with urcu_memb's
 * synchronize_rcu() and then runs each element's reuse function.
 */
struct rqmap_retire {
	struct rqmap_retire *next;
	struct rqfl *fl; /* freelist to return to; NULL: free() (no-prealloc) */
	uint32_t home;   /* list of @fl to push to */
};

/* Start the reclaim thread if needed. Normal context (map creation). */
int rqmap_reclaim_start(void);
/* After a grace period, push @r (the first member of its element) to list
 * @home of @fl, or free() it when @fl is NULL. Async-signal-safe. */
void rqmap_retire(struct rqmap_retire *r, struct rqfl *fl, uint32_t home);

void rqmap_words_store(rqmap_word_t *dst, const void *src, uint32_t bytes);
void rqmap_words_load(void *dst, const rqmap_word_t *src, uint32_t bytes);
bool rqmap_words_equal(const rqmap_word_t *a, const uint32_t *b, uint32_t nwords);
/* Store @src skipping the 4-byte word at @skip_word (an embedded lock). */
void rqmap_words_store_skip(rqmap_word_t *dst, const void *src, uint32_t bytes, uint32_t skip_word);
void rqmap_words_zero(rqmap_word_t *dst, uint32_t nwords);

#endif /* RQMAP_INTERNAL_H */
