/* SPDX-License-Identifier: MIT */
/*
 * LPM trie against a brute-force reference, IPv4- and IPv6-sized keys:
 * random prefixes inserted and deleted, every lookup compared with a linear
 * scan for the longest matching stored prefix; get_next_key must enumerate
 * exactly the stored prefixes, each after every longer prefix it contains;
 * the kernel's error results. A concurrent phase runs lock-free lookups while
 * a writer mutates (memory safety under ASan/TSan).
 */
#include "testutil.h"

#include <rqmap.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MAXD 16
#define NREF 600

struct key {
	uint32_t plen;
	uint8_t d[MAXD];
};

struct ref {
	struct key k[NREF];
	uint64_t v[NREF];
	int n;
	uint32_t dsize;
};

static bool prefix_eq(const uint8_t *a, const uint8_t *b, uint32_t bits)
{
	for (uint32_t i = 0; i < bits; i++)
		if (((a[i / 8] >> (7 - i % 8)) & 1) != ((b[i / 8] >> (7 - i % 8)) & 1))
			return false;
	return true;
}

static int ref_find(const struct ref *r, const struct key *k)
{
	for (int i = 0; i < r->n; i++)
		if (r->k[i].plen == k->plen && prefix_eq(r->k[i].d, k->d, k->plen))
			return i;
	return -1;
}

static int ref_lpm(const struct ref *r, const uint8_t *addr)
{
	int best = -1;

	for (int i = 0; i < r->n; i++)
		if (prefix_eq(r->k[i].d, addr, r->k[i].plen) &&
		    (best < 0 || r->k[i].plen > r->k[best].plen))
			best = i;
	return best;
}

static void rand_key(struct key *k, uint32_t dsize, uint64_t *rs)
{
	/* few distinct high bytes so that prefixes nest and share paths;
	 * i < MAXD too: gcc -O3 cannot see that dsize never exceeds it */
	for (uint32_t i = 0; i < dsize && i < MAXD; i++)
		k->d[i] = (uint8_t)(i < 2 ? tu_rand(rs) % 4 : tu_rand(rs));
	k->plen = (uint32_t)(tu_rand(rs) % (8 * dsize + 1));
}

static void check_lookups(struct rqmap_lpm *t, const struct ref *r, uint64_t *rs)
{
	struct key q;
	uint64_t v;

	for (int i = 0; i < 300; i++) {
		int want, ret;

		rand_key(&q, r->dsize, rs);
		if (i % 3 == 0 && r->n) /* aim inside a stored prefix */
			memcpy(q.d, r->k[tu_rand(rs) % (unsigned)r->n].d, r->dsize);
		q.plen = 8 * r->dsize;
		want = ref_lpm(r, q.d);
		ret = rqmap_lpm_lookup(t, &q, &v);
		if (want < 0) {
			CHECK_EQ(ret, -ENOENT);
		} else {
			CHECK_EQ(ret, 0);
			CHECK_EQ(v, r->v[want]);
		}
	}
}

/* get_next_key: each stored key once, longer prefixes before their parents. */
static void check_iteration(struct rqmap_lpm *t, const struct ref *r)
{
	static bool seen[NREF];
	struct key cur, next;
	int n = 0;
	bool first = true;

	memset(seen, 0, sizeof(seen));
	while (rqmap_lpm_get_next_key(t, first ? NULL : &cur, &next) == 0) {
		int i = ref_find(r, &next);

		CHECK(i >= 0 && !seen[i]);
		for (int j = 0; j < r->n; j++) /* contained longer prefixes came first */
			if (r->k[j].plen > next.plen && prefix_eq(r->k[j].d, next.d, next.plen))
				CHECK(seen[j]);
		seen[i] = true;
		n++;
		cur = next;
		first = false;
	}
	CHECK_EQ(n, r->n);
}

static void test_random(uint32_t dsize, uint64_t seed)
{
	struct rqmap_lpm_attr a = {.key_size = 4 + dsize, .value_size = 8, .max_entries = NREF};
	static struct ref r;
	struct rqmap_lpm *t = NULL;
	uint64_t rs = seed;
	long rounds = tu_scaled(8);

	memset(&r, 0, sizeof(r));
	r.dsize = dsize;
	CHECK_EQ(rqmap_lpm_create(&a, &t), 0);
	for (long round = 0; round < rounds; round++) {
		for (int i = 0; i < 200; i++) {
			struct key k;
			uint64_t v = tu_rand(&rs);
			int at, ret;

			rand_key(&k, dsize, &rs);
			at = ref_find(&r, &k);
			if (tu_rand(&rs) % 3 == 0) {
				ret = rqmap_lpm_delete(t, &k);
				CHECK_EQ(ret, at < 0 ? -ENOENT : 0);
				if (at >= 0)
					r.k[at] = r.k[r.n - 1], r.v[at] = r.v[r.n - 1], r.n--;
				continue;
			}
			ret = rqmap_lpm_update(t, &k, &v, RQMAP_ANY);
			if (at < 0 && r.n == NREF) {
				CHECK_EQ(ret, -ENOSPC);
				continue;
			}
			CHECK_EQ(ret, 0);
			if (at < 0) {
				at = r.n++;
				r.k[at] = k;
			}
			r.v[at] = v;
		}
		CHECK_EQ(rqmap_lpm_count(t), r.n);
		check_lookups(t, &r, &rs);
		check_iteration(t, &r);
	}
	printf("lpm %u-byte keys: %d prefixes stored at the end\n", dsize, r.n);
	rqmap_lpm_destroy(t);
}

static void test_errors(void)
{
	struct rqmap_lpm_attr a = {.key_size = 8, .value_size = 4, .max_entries = 2};
	struct rqmap_lpm *t = NULL;
	struct key k = {.plen = 33, .d = {10, 0, 0, 1}};
	uint32_t v = 1;

	a.key_size = 4;
	CHECK_EQ(rqmap_lpm_create(&a, &t), -EINVAL);
	a.key_size = 4 + 257;
	CHECK_EQ(rqmap_lpm_create(&a, &t), -E2BIG);
	a.key_size = 8;
	CHECK_EQ(rqmap_lpm_create(&a, &t), 0);
	CHECK_EQ(rqmap_lpm_update(t, &k, &v, 0), -EINVAL); /* prefixlen > 32 */
	k.plen = 8;
	CHECK_EQ(rqmap_lpm_update(t, &k, &v, RQMAP_EXIST), -ENOENT);
	CHECK_EQ(rqmap_lpm_update(t, &k, &v, RQMAP_NOEXIST), 0);
	CHECK_EQ(rqmap_lpm_update(t, &k, &v, RQMAP_NOEXIST), -EEXIST);
	CHECK_EQ(rqmap_lpm_update(t, &k, &v, 3), -EINVAL);
	k.plen = 16;
	CHECK_EQ(rqmap_lpm_update(t, &k, &v, 0), 0);
	k.plen = 24;
	CHECK_EQ(rqmap_lpm_update(t, &k, &v, 0), -ENOSPC); /* max_entries 2 */
	CHECK_EQ(rqmap_lpm_delete(t, &k), -ENOENT);
	k.plen = 16;
	CHECK_EQ(rqmap_lpm_delete(t, &k), 0);
	CHECK_EQ(rqmap_lpm_count(t), 1);
	/* A prefix longer than the keys: update and delete refuse it, a
	 * lookup finds nothing, get_next_key starts over (the kernel's
	 * results). */
	k.plen = 33;
	CHECK_EQ(rqmap_lpm_delete(t, &k), -EINVAL);
	CHECK_EQ(rqmap_lpm_lookup(t, &k, &v), -ENOENT);
	{
		struct key next = {0};

		CHECK_EQ(rqmap_lpm_get_next_key(t, &k, &next), 0);
		CHECK_EQ(next.plen, 8);
	}
	rqmap_lpm_destroy(t);
}

/* ---- readers against a writer */

struct conc {
	struct rqmap_lpm *t;
	atomic_bool stop;
	atomic_long bad, lookups;
};

static void *conc_reader(void *arg)
{
	struct conc *c = arg;
	uint64_t rs = (uint64_t)(uintptr_t)&rs | 1;
	struct key q = {.plen = 32};
	uint64_t v;

	rqmap_thread_init();
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		uint32_t addr = (uint32_t)tu_rand(&rs) & 0x0300ffff;

		memcpy(q.d, &addr, 4);
		/* values encode their prefix length; a match must be <= 32 */
		if (rqmap_lpm_lookup(c->t, &q, &v) == 0 && (v & 0xff) > 32)
			atomic_fetch_add(&c->bad, 1);
		atomic_fetch_add_explicit(&c->lookups, 1, memory_order_relaxed);
	}
	return NULL;
}

static void test_concurrent(void)
{
	struct rqmap_lpm_attr a = {.key_size = 8, .value_size = 8, .max_entries = 256};
	struct conc c = {0};
	uint64_t rs = 7;
	pthread_t th[2];

	CHECK_EQ(rqmap_lpm_create(&a, &c.t), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, conc_reader, &c), 0);
	for (long i = 0; i < tu_scaled(60000); i++) {
		struct key k;
		uint64_t v;
		int ret;

		rand_key(&k, 4, &rs);
		v = ((uint64_t)i << 8) | k.plen;
		ret = (i & 1) ? rqmap_lpm_delete(c.t, &k) : rqmap_lpm_update(c.t, &k, &v, 0);
		CHECK(ret == 0 || ret == -ENOENT || ret == -ENOSPC);
	}
	atomic_store(&c.stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(atomic_load(&c.bad), 0);
	printf("lpm concurrent: %ld lookups\n", atomic_load(&c.lookups));
	rqmap_lpm_destroy(c.t);
}

static void test_maps_lpm(void)
{
	rqmap_thread_init();
	test_errors();
	test_random(4, 1);
	test_random(16, 2);
	test_concurrent();
}

static const struct tu_test tests[] = {
    TU_TEST("maps_lpm", test_maps_lpm, 60, 0),
};

TU_MAIN(tests)
