/* SPDX-License-Identifier: MIT */
/* Word-wise copies of element data (words.h). */
#include "words.h"

#include <string.h>

void rqmap_words_store(rqmap_word_t *dst, const void *src, uint32_t bytes)
{
	const unsigned char *s = src;
	uint32_t i, full = bytes / 4;

	for (i = 0; i < full; i++) {
		uint32_t w;

		memcpy(&w, s + 4 * (size_t)i, 4);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
	if (bytes % 4) {
		uint32_t w = 0;

		memcpy(&w, s + 4 * (size_t)i, bytes % 4);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
}

void rqmap_words_store_skip(rqmap_word_t *dst, const void *src, uint32_t bytes, uint32_t skip_word)
{
	const unsigned char *s = src;
	uint32_t n = rqmap_words(bytes);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = 0;

		if (i == skip_word)
			continue;
		memcpy(&w, s + 4 * (size_t)i, i * 4 + 4 <= bytes ? 4 : bytes % 4);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
}

void rqmap_words_load(void *dst, const rqmap_word_t *src, uint32_t bytes)
{
	unsigned char *d = dst;
	uint32_t i, full = bytes / 4;

	for (i = 0; i < full; i++) {
		uint32_t w = atomic_load_explicit(&src[i], memory_order_relaxed);

		memcpy(d + 4 * (size_t)i, &w, 4);
	}
	if (bytes % 4) {
		uint32_t w = atomic_load_explicit(&src[i], memory_order_relaxed);

		memcpy(d + 4 * (size_t)i, &w, bytes % 4);
	}
}

bool rqmap_words_equal(const rqmap_word_t *a, const uint32_t *b, uint32_t nwords)
{
	for (uint32_t i = 0; i < nwords; i++)
		if (atomic_load_explicit(&a[i], memory_order_relaxed) != b[i])
			return false;
	return true;
}

void rqmap_words_zero(rqmap_word_t *dst, uint32_t nwords)
{
	for (uint32_t i = 0; i < nwords; i++)
		atomic_store_explicit(&dst[i], 0, memory_order_relaxed);
}
