/* SPDX-License-Identifier: MIT */
/*
 * An ordinary program linked against earlylib.so, whose constructor locked
 * before main(): report what it saw. Exit 0 when the drop-in's documented
 * results came back and the library's own thread-specific value survived.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

extern int early_results[4];

int main(void)
{
	static const char *const what[] = {"lock", "lock again (AA)", "unlock",
	                                   "its own thread-specific value"};
	static const int want[] = {0, EDEADLK, 0, 0};
	int bad = 0;

	for (int i = 0; i < 4; i++) {
		printf("constructor, %s: %s (want %s)\n", what[i],
		       early_results[i] ? strerror(early_results[i]) : "0",
		       want[i] ? strerror(want[i]) : "0");
		bad |= early_results[i] != want[i];
	}
	return bad;
}
