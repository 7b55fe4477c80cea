/* SPDX-License-Identifier: MIT */
/* Built against an installed librqmaps: one operation of each map type,
 * and the version the program runs with is the one it was built with. */
#include <rqmap.h>
#include <rqspinlock.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	struct rqmap_hash_attr ha = {.key_size = 4, .value_size = 8, .max_entries = 16};
	struct rqmap_array_attr aa = {.value_size = 8, .max_entries = 4};
	struct rqmap_hash *h = NULL;
	struct rqmap_array *a = NULL;
	uint32_t k = 3;
	uint64_t v = 42, got = 0;
	uint64_t *p;
	rqspinlock_t lock;

	if (strcmp(rqmap_version(), RQMAP_VERSION) != 0)
		return 6;
	if (rqmap_thread_init() || rqmap_hash_create(&ha, &h) || rqmap_array_create(&aa, &a))
		return 1;
	if (rqmap_hash_update(h, &k, &v, RQMAP_ANY) || rqmap_hash_lookup(h, &k, &got, 0) ||
	    got != 42)
		return 2;
	if (rqmap_array_update(a, &k, &v, RQMAP_ANY))
		return 3;
	p = rqmap_array_lookup_elem(a, &k);
	if (!p || *p != 42 || rqmap_array_delete(a, &k) != -22)
		return 4;
	res_spin_lock_init(&lock);
	if (res_spin_lock(&lock))
		return 5;
	res_spin_unlock(&lock);
	rqmap_hash_destroy(h);
	rqmap_array_destroy(a);
	printf("maps consumer: rqmaps %s OK\n", rqmap_version());
	return 0;
}
