/* SPDX-License-Identifier: MIT */
/*
 * The one parser of decimal numbers and the one case rule for words, for
 * the environment variables and the command lines (util/: header-only, libc
 * only, never installed; docs/HACKING.md, "util/").
 *
 * A number is decimal digits only: no space, sign, prefix or suffix, at
 * least one digit, at most the caller's maximum (checked before any
 * overflow). A word matches in any case ("TAS", "tas" and "Tas" alike).
 */
#ifndef RQU_PARSE_H
#define RQU_PARSE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* The number in s[0, len), at most max, into *out: 0, or -EINVAL (and
 * *out untouched). */
static inline int rqu_parse_decimal_n(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9 || v > max / 10)
			return -EINVAL;
		v *= 10; /* <= max: no overflow */
		if (d > max - v)
			return -EINVAL;
		v += d;
	}
	*out = v;
	return 0;
}

/* The number that is the whole of the string s, at most max. */
static inline int rqu_parse_decimal(const char *s, uint64_t max, uint64_t *out)
{
	return rqu_parse_decimal_n(s, strlen(s), max, out);
}

/* Whether s is the word w, in any case. */
static inline bool rqu_word_is(const char *s, const char *w)
{
	return strcasecmp(s, w) == 0;
}

#endif /* RQU_PARSE_H */
