/* SPDX-License-Identifier: MIT */
/*
 * Checking parsers of environment strings (tests/test_env.c,
 * pthread/tests/test_env.c): a reference for decimal numbers, and the
 * libFuzzer entry that feeds every input to the checks as such a string.
 */
#ifndef RQ_PARSECHECK_H
#define RQ_PARSECHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The reference: @s is decimal digits only and its value is in [1, @max];
 * then the value, else 0. Any length: leading zeros leave the value, and
 * strtoull reads at most 18 digits, which cannot overflow.
 */
static inline uint64_t pc_decimal_in_range(const char *s, uint64_t max)
{
	size_t n = strlen(s);
	uint64_t v;

	if (n == 0 || strspn(s, "0123456789") != n)
		return 0;
	for (; n > 18 && *s == '0'; n--)
		s++;
	if (n > 18) /* at least 10^18 */
		return 0;
	v = strtoull(s, NULL, 10);
	return v >= 1 && v <= max ? v : 0;
}

/* Longest input the fuzzer passes on, as environment strings are short. */
#define PC_MAX_LEN 255

/*
 * The libFuzzer entry: each input without a NUL and at most PC_MAX_LEN
 * bytes goes to @check (void (*)(const char *)) as a C string.
 */
#define PC_FUZZ_STRINGS(check)                                                                     \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                              \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                               \
	{                                                                                          \
		char s[PC_MAX_LEN + 1];                                                            \
                                                                                                   \
		if (size > PC_MAX_LEN || memchr(data, 0, size))                                    \
			return 0;                                                                  \
		memcpy(s, data, size);                                                             \
		s[size] = '\0';                                                                    \
		check(s);                                                                          \
		return 0;                                                                          \
	}

#endif /* RQ_PARSECHECK_H */
