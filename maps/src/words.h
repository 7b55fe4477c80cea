/* SPDX-License-Identifier: MIT */
/*
 * Element data as 32-bit atomic words (words.c), the maps' lowest floor.
 *
 * Element data that lock-free readers may read while a writer fills a
 * recycled element is stored in 32-bit atomic words, accessed relaxed. RCU
 * already orders these accesses (an element is rewritten only after every
 * reader that could see it has finished), but that ordering comes from
 * membarrier(2) inside liburcu, which the C11 model and TSan cannot see;
 * relaxed atomics make the reads race-free in C11 terms at no cost on x86.
 */
#ifndef RQMAP_WORDS_H
#define RQMAP_WORDS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define RQMAP_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RQMAP_UNLIKELY(x) __builtin_expect(!!(x), 0)

typedef _Atomic uint32_t rqmap_word_t;

static inline uint32_t rqmap_words(uint32_t bytes)
{
	return (bytes + 3) / 4;
}

void rqmap_words_store(rqmap_word_t *dst, const void *src, uint32_t bytes);
void rqmap_words_load(void *dst, const rqmap_word_t *src, uint32_t bytes);
bool rqmap_words_equal(const rqmap_word_t *a, const uint32_t *b, uint32_t nwords);
/* Store @src skipping the 4-byte word at @skip_word (an embedded lock). */
void rqmap_words_store_skip(rqmap_word_t *dst, const void *src, uint32_t bytes, uint32_t skip_word);
void rqmap_words_zero(rqmap_word_t *dst, uint32_t nwords);

/* An embedded value lock (a 4-byte rqspinlock_t) at @lock_off: word-aligned
 * and inside the value. */
static inline bool rqmap_lock_off_ok(uint32_t lock_off, uint32_t value_size)
{
	return lock_off % 4 == 0 && (uint64_t)lock_off + 4 <= value_size;
}

#endif /* RQMAP_WORDS_H */
