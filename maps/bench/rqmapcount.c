/* SPDX-License-Identifier: MIT */
/*
 * rqmapcount: a fixed single-thread workload for instruction counts. It fills
 * a hash map of 4096 keys built on one lock kind, then runs N updates
 * (RQMAP_ANY, every one a replace) and N lookups of random keys. Run it under
 * callgrind with --toggle-collect=rqmap_hash_update (or rqmap_hash_lookup)
 * and divide the total by N:
 *
 *   valgrind --tool=callgrind --toggle-collect=rqmap_hash_update \
 *       build/bench/maps/rqmapcount rq 200000
 *
 * usage: rqmapcount rq|pthread|global [N]
 */
#include <rqmap.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS 4096U

int main(int argc, char **argv)
{
	static const char *kinds[] = {"rq", "pthread", "global"};
	struct rqmap_hash_attr a = {.key_size = 4, .value_size = 8, .max_entries = KEYS};
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 200000;
	struct rqmap_hash *m = NULL;
	uint64_t v = 1;
	uint32_t s = 1;
	int kind = -1;

	for (int i = 0; argc > 1 && i < 3; i++)
		if (strcmp(argv[1], kinds[i]) == 0)
			kind = i;
	if (kind < 0 || n == 0) {
		fprintf(stderr, "usage: %s rq|pthread|global [N]\n", argv[0]);
		return 2;
	}
	a.lock_kind = (enum rqmap_lock_kind)kind;
	if (rqmap_thread_init() || rqmap_hash_create(&a, &m))
		return 1;
	for (uint32_t k = 0; k < KEYS; k++)
		if (rqmap_hash_update(m, &k, &v, RQMAP_ANY))
			return 1;
	for (unsigned long i = 0; i < n; i++) {
		uint32_t k;

		s = s * 1103515245U + 12345U;
		k = (s >> 8) % KEYS;
		if (rqmap_hash_update(m, &k, &v, RQMAP_ANY))
			return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		uint32_t k;

		s = s * 1103515245U + 12345U;
		k = (s >> 8) % KEYS;
		if (rqmap_hash_lookup(m, &k, &v, 0))
			return 1;
	}
	rqmap_hash_destroy(m);
	return 0;
}
