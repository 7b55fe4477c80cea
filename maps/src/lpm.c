/* SPDX-License-Identifier: MIT */
/*
 * BPF_MAP_TYPE_LPM_TRIE on rqspinlock: a binary path-compressed trie as in
 * the kernel (nodes hold a prefix; intermediate nodes join two subtrees), one
 * rqspinlock for writers, lock-free RCU lookups, nodes preallocated and
 * recycled through the per-thread freelist after a grace period.
 */
#include "freelist.h"
#include "readers.h"
#include "reclaim.h"
#include "words.h"

#include <rqmap.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "lpm.c assumes a little-endian host (bit extraction from 32-bit words)"
#endif

#define LPM_DATA_SIZE_MAX 256
#define LPM_MAX_PREFIXLEN (8 * LPM_DATA_SIZE_MAX)
#define LPM_INTERMEDIATE  1U
#define LPM_ENTRIES_LIMIT (1U << 26)
#define UPDATE_FLAGS_MASK (RQMAP_NOEXIST | RQMAP_EXIST)

struct lpm_node {
	union {
		struct rqmap_retire rt;
		struct rqfl_node fl;
	};
	_Atomic(struct lpm_node *) child[2];
	_Atomic uint32_t prefixlen;
	_Atomic uint32_t flags;
	rqmap_word_t data[]; /* data words (bytes in key order), then value words */
};

struct rqmap_lpm {
	rqspinlock_t lock;
	_Atomic(struct lpm_node *) root;
	uint32_t data_size, data_words, max_prefixlen;
	uint32_t value_size, node_size, max_entries, capacity;
	_Atomic uint32_t n_entries; /* written under the lock, read unlocked */
	struct rqfl fl;
	char *pool;
};

/* A key copied out of the caller's buffer, data zero-padded to whole words. */
struct lpm_keyref {
	uint32_t prefixlen;
	uint32_t w[LPM_DATA_SIZE_MAX / 4];
};

/* ---- bits: bit 0 is the most significant bit of data byte 0 */

static inline uint32_t word_bit(uint32_t w, uint32_t pos)
{
	uint32_t byte = (w >> (8 * ((pos / 8) % 4))) & 0xff;

	return (byte >> (7 - pos % 8)) & 1;
}

static inline uint32_t key_bit(const struct lpm_keyref *k, uint32_t pos)
{
	return word_bit(k->w[pos / 32], pos);
}

static inline uint32_t node_bit(const struct lpm_node *n, uint32_t pos)
{
	return word_bit(atomic_load_explicit(&n->data[pos / 32], memory_order_relaxed), pos);
}

static inline uint32_t node_plen(const struct lpm_node *n)
{
	return atomic_load_explicit(&n->prefixlen, memory_order_relaxed);
}

static inline bool node_is_im(const struct lpm_node *n)
{
	return atomic_load_explicit(&n->flags, memory_order_relaxed) & LPM_INTERMEDIATE;
}

static inline struct lpm_node *child_of(struct lpm_node *n, uint32_t bit)
{
	/* acquire: pairs with publish() */
	return atomic_load_explicit(&n->child[bit], memory_order_acquire);
}

static inline void publish(_Atomic(struct lpm_node *) *slot, struct lpm_node *n)
{
	/* release: the node (or the subtree now hanging here) is fully built
	 * before readers can reach it; pairs with child_of() and the root load */
	atomic_store_explicit(slot, n, memory_order_release);
}

/* Number of leading bits @n and @k share, at most both prefix lengths. */
static uint32_t prefix_match(const struct rqmap_lpm *t, const struct lpm_node *n,
                             const struct lpm_keyref *k)
{
	uint32_t plen = node_plen(n);
	uint32_t limit = plen < k->prefixlen ? plen : k->prefixlen;

	for (uint32_t i = 0; i < t->data_words && 32 * i < limit; i++) {
		uint32_t x = atomic_load_explicit(&n->data[i], memory_order_relaxed) ^ k->w[i];

		if (x) {
			uint32_t m = 32 * i + (uint32_t)__builtin_clz(__builtin_bswap32(x));

			return m < limit ? m : limit;
		}
	}
	return limit;
}

static int key_prepare(const struct rqmap_lpm *t, const void *key, struct lpm_keyref *k)
{
	memcpy(&k->prefixlen, key, sizeof(k->prefixlen));
	if (k->prefixlen > t->max_prefixlen)
		return -EINVAL;
	k->w[t->data_words - 1] = 0;
	memcpy(k->w, (const char *)key + 4, t->data_size);
	return 0;
}

/* The common start of a keyed operation: the key's checks and digest, then
 * this thread's registration. */
static int keyed_op_start(const struct rqmap_lpm *t, const void *key, struct lpm_keyref *k)
{
	int ret = key_prepare(t, key, k);

	return ret ? ret : rqmap_thread_ensure();
}

static rqmap_word_t *node_value(const struct rqmap_lpm *t, struct lpm_node *n)
{
	return n->data + t->data_words;
}

/* ---- node life cycle */

static struct lpm_node *node_alloc(struct rqmap_lpm *t)
{
	struct rqfl_node *f = rqmap_pop_or_wait(&t->fl);

	return f ? caa_container_of(f, struct lpm_node, fl) : NULL;
}

static void node_free_now(struct rqmap_lpm *t, struct lpm_node *n)
{
	if (n)
		rqfl_push(&t->fl, &n->fl, rqfl_home(&t->fl));
}

static void node_retire(struct rqmap_lpm *t, struct lpm_node *n)
{
	rqmap_retire(&n->rt, &t->fl, rqfl_home(&t->fl));
}

static void node_init(struct rqmap_lpm *t, struct lpm_node *n, const struct lpm_keyref *k,
                      uint32_t plen, uint32_t flags)
{
	atomic_store_explicit(&n->prefixlen, plen, memory_order_relaxed);
	atomic_store_explicit(&n->flags, flags, memory_order_relaxed);
	atomic_store_explicit(&n->child[0], NULL, memory_order_relaxed);
	atomic_store_explicit(&n->child[1], NULL, memory_order_relaxed);
	for (uint32_t i = 0; i < t->data_words; i++)
		atomic_store_explicit(&n->data[i], k->w[i], memory_order_relaxed);
}

static void copy_children(struct lpm_node *dst, struct lpm_node *src)
{
	for (int i = 0; i < 2; i++)
		atomic_store_explicit(&dst->child[i],
		                      atomic_load_explicit(&src->child[i], memory_order_relaxed),
		                      memory_order_relaxed);
}

/* ---- update */

struct lpm_walk {
	_Atomic(struct lpm_node *) *slot;        /* where the search stopped */
	_Atomic(struct lpm_node *) *parent_slot; /* slot of the parent, or NULL */
	struct lpm_node *node, *parent;
	uint32_t matchlen;
};

/* Descend while the node is a strict prefix of the key. Writers only. */
static void walk_to(struct rqmap_lpm *t, const struct lpm_keyref *k, struct lpm_walk *w)
{
	w->slot = &t->root;
	w->parent_slot = NULL;
	w->parent = NULL;
	w->matchlen = 0;
	while ((w->node = atomic_load_explicit(w->slot, memory_order_relaxed))) {
		uint32_t plen = node_plen(w->node);

		w->matchlen = prefix_match(t, w->node, k);
		if (plen != w->matchlen || plen == k->prefixlen)
			break;
		w->parent = w->node;
		w->parent_slot = w->slot;
		w->slot = &w->node->child[key_bit(k, plen)];
	}
}

static bool walk_exact(const struct lpm_walk *w, const struct lpm_keyref *k)
{
	return w->node && node_plen(w->node) == k->prefixlen && w->matchlen == k->prefixlen;
}

/* Link @n (already filled) where the walk stopped. Trie lock held. */
static int insert_at(struct rqmap_lpm *t, struct lpm_walk *w, const struct lpm_keyref *k,
                     struct lpm_node *n, struct lpm_node **im, uint64_t flags)
{
	struct lpm_node *old = w->node;
	bool exact = walk_exact(w, k), replace = exact && !node_is_im(old);

	if (replace && flags == RQMAP_NOEXIST)
		return -EEXIST;
	if (!replace && flags == RQMAP_EXIST)
		return -ENOENT;
	if (!replace && atomic_load_explicit(&t->n_entries, memory_order_relaxed) >= t->max_entries)
		return -ENOSPC;
	if (!n || (old && !exact && w->matchlen != k->prefixlen && !*im))
		return -ENOMEM;
	if (!old) {
		publish(w->slot, n);
	} else if (exact) {
		copy_children(n, old);
		publish(w->slot, n);
		node_retire(t, old);
	} else if (w->matchlen == k->prefixlen) {
		/* the new prefix contains the old node */
		atomic_store_explicit(&n->child[node_bit(old, w->matchlen)], old,
		                      memory_order_relaxed);
		publish(w->slot, n);
	} else {
		/* they diverge at matchlen: join them under an intermediate node */
		struct lpm_node *j = *im;
		uint32_t bit = key_bit(k, w->matchlen);

		*im = NULL;
		node_init(t, j, k, w->matchlen, LPM_INTERMEDIATE);
		atomic_store_explicit(&j->child[bit], n, memory_order_relaxed);
		atomic_store_explicit(&j->child[!bit], old, memory_order_relaxed);
		publish(w->slot, j);
	}
	if (!replace)
		atomic_fetch_add_explicit(&t->n_entries, 1, memory_order_relaxed);
	return 0;
}

static int rqmap_lpm_update_impl(struct rqmap_lpm *t, const void *key, const void *value,
                                 uint64_t flags)
{
	struct lpm_node *n, *im;
	struct lpm_keyref k;
	struct lpm_walk w;
	int ret;

	if (!t || !key || !value || (flags & ~UPDATE_FLAGS_MASK) || flags == 3)
		return -EINVAL;
	ret = keyed_op_start(t, key, &k);
	if (ret)
		return ret;
	/* Take both nodes an insert may need before locking. */
	n = node_alloc(t);
	im = node_alloc(t);
	if (n) {
		node_init(t, n, &k, k.prefixlen, 0);
		rqmap_words_store(node_value(t, n), value, t->value_size);
	}
	ret = res_spin_lock(&t->lock);
	if (!ret) {
		walk_to(t, &k, &w);
		ret = insert_at(t, &w, &k, n, &im, flags);
		res_spin_unlock(&t->lock);
	}
	if (ret)
		node_free_now(t, n);
	node_free_now(t, im);
	return ret;
}

int rqmap_lpm_update(struct rqmap_lpm *t, const void *key, const void *value, uint64_t flags)
{
	int ret;

	rqmap_enter();
	ret = rqmap_lpm_update_impl(t, key, value, flags);
	rqmap_leave();
	return ret;
}

/* ---- delete */

static void remove_node(struct rqmap_lpm *t, struct lpm_walk *w)
{
	struct lpm_node *n = w->node;
	struct lpm_node *c0 = atomic_load_explicit(&n->child[0], memory_order_relaxed);
	struct lpm_node *c1 = atomic_load_explicit(&n->child[1], memory_order_relaxed);

	if (c0 && c1) {
		/* still joins two subtrees: it becomes an intermediate node */
		atomic_store_explicit(&n->flags, LPM_INTERMEDIATE, memory_order_relaxed);
		return;
	}
	if (!c0 && !c1 && w->parent && node_is_im(w->parent)) {
		/* the parent only joined this leaf and its sibling: drop both */
		struct lpm_node *p = w->parent;
		bool right = atomic_load_explicit(&p->child[1], memory_order_relaxed) == n;

		publish(w->parent_slot,
		        atomic_load_explicit(&p->child[!right], memory_order_relaxed));
		node_retire(t, p);
	} else {
		publish(w->slot, c0 ? c0 : c1);
	}
	node_retire(t, n);
}

static int rqmap_lpm_delete_impl(struct rqmap_lpm *t, const void *key)
{
	struct lpm_keyref k;
	struct lpm_walk w;
	int ret;

	if (!t || !key)
		return -EINVAL;
	ret = keyed_op_start(t, key, &k);
	if (!ret)
		ret = res_spin_lock(&t->lock);
	if (ret)
		return ret;
	walk_to(t, &k, &w);
	if (walk_exact(&w, &k) && !node_is_im(w.node)) {
		remove_node(t, &w);
		atomic_fetch_sub_explicit(&t->n_entries, 1, memory_order_relaxed);
	} else {
		ret = -ENOENT;
	}
	res_spin_unlock(&t->lock);
	return ret;
}

int rqmap_lpm_delete(struct rqmap_lpm *t, const void *key)
{
	int ret;

	rqmap_enter();
	ret = rqmap_lpm_delete_impl(t, key);
	rqmap_leave();
	return ret;
}

/* ---- lock-free readers */

static struct lpm_node *root_of(struct rqmap_lpm *t)
{
	/* acquire: pairs with publish() */
	return atomic_load_explicit(&t->root, memory_order_acquire);
}

int rqmap_lpm_lookup(struct rqmap_lpm *t, const void *key, void *value)
{
	struct lpm_node *n, *found = NULL;
	struct lpm_keyref k;
	int ret;

	if (!t || !key || !value)
		return -EINVAL;
	/* A prefix longer than the keys': nothing matches, as in the kernel. */
	if (key_prepare(t, key, &k))
		return -ENOENT;
	ret = rqmap_thread_ensure();
	if (ret)
		return ret;
	rqmap_rcu_lock();
	for (n = root_of(t); n;) {
		uint32_t plen = node_plen(n), m = prefix_match(t, n, &k);

		if (m < plen)
			break;
		if (!node_is_im(n))
			found = n;
		if (m == t->max_prefixlen || plen == k.prefixlen)
			break;
		n = child_of(n, key_bit(&k, plen));
	}
	if (found)
		rqmap_words_load(value, node_value(t, found), t->value_size);
	rqmap_rcu_unlock();
	return found ? 0 : -ENOENT;
}

/* First node in post-order of the subtree at @n: always a real (leaf) node. */
static struct lpm_node *leftmost_leaf(struct lpm_node *n)
{
	for (;;) {
		struct lpm_node *c = child_of(n, 0);

		if (!c)
			c = child_of(n, 1);
		if (!c)
			return n;
		n = c;
	}
}

/* Post-order successor of stack[depth] given its ancestors stack[0..depth-1]. */
static struct lpm_node *postorder_next(struct lpm_node **stack, int depth)
{
	for (int i = depth - 1; i >= 0; i--) {
		struct lpm_node *p = stack[i], *right = child_of(p, 1);

		if (right && right != stack[i + 1])
			return leftmost_leaf(right);
		if (!node_is_im(p))
			return p;
	}
	return NULL;
}

/* Path from the root to the stored prefix @k; depth of it, or -1. */
static int find_path(struct rqmap_lpm *t, const struct lpm_keyref *k, struct lpm_node **stack)
{
	int depth = 0;

	for (struct lpm_node *n = root_of(t); n && depth <= LPM_MAX_PREFIXLEN; depth++) {
		uint32_t plen = node_plen(n), m = prefix_match(t, n, k);

		stack[depth] = n;
		if (m < plen || plen > k->prefixlen)
			return -1;
		if (plen == k->prefixlen)
			return node_is_im(n) ? -1 : depth;
		n = child_of(n, key_bit(k, plen));
	}
	return -1;
}

static void key_copy_out(const struct rqmap_lpm *t, struct lpm_node *n, void *key)
{
	uint32_t plen = node_plen(n);

	memcpy(key, &plen, sizeof(plen));
	rqmap_words_load((char *)key + 4, n->data, t->data_size);
}

int rqmap_lpm_get_next_key(struct rqmap_lpm *t, const void *key, void *next_key)
{
	struct lpm_node *stack[LPM_MAX_PREFIXLEN + 2], *next = NULL, *root;
	struct lpm_keyref k;
	int depth = -1, ret;

	if (!t || !next_key)
		return -EINVAL;
	/* A prefix longer than the keys' is not stored: the first key follows,
	 * as in the kernel. */
	if (key && key_prepare(t, key, &k))
		key = NULL;
	ret = rqmap_thread_ensure();
	if (ret)
		return ret;
	rqmap_rcu_lock();
	root = root_of(t);
	if (key && root)
		depth = find_path(t, &k, stack);
	if (depth >= 0)
		next = postorder_next(stack, depth);
	else if (root) /* no key, or not stored (deleted meanwhile): the first */
		next = leftmost_leaf(root);
	if (next)
		key_copy_out(t, next, next_key);
	rqmap_rcu_unlock();
	return next ? 0 : -ENOENT;
}

uint32_t rqmap_lpm_count(struct rqmap_lpm *t)
{
	return t ? atomic_load_explicit(&t->n_entries, memory_order_relaxed) : 0;
}

/* Nodes reachable from @n (the trie lock held: nothing moves). */
static uint32_t count_nodes(struct lpm_node *n)
{
	uint32_t total = 0;

	while (n) {
		struct lpm_node *c1 = child_of(n, 1);

		total++;
		total += count_nodes(child_of(n, 0)); /* depth <= prefix bits */
		n = c1;
	}
	return total;
}

int rqmap_lpm_info(struct rqmap_lpm *t, struct rqmap_lpm_info *info)
{
	int ret;

	if (!t || !info)
		return -EINVAL;
	rqmap_enter();
	ret = res_spin_lock(&t->lock);
	if (!ret) {
		info->max_entries = t->max_entries;
		info->capacity = t->capacity;
		info->count = atomic_load_explicit(&t->n_entries, memory_order_relaxed);
		info->nodes = count_nodes(atomic_load_explicit(&t->root, memory_order_relaxed));
		info->free = (uint32_t)rqfl_count(&t->fl);
		res_spin_unlock(&t->lock);
	}
	rqmap_leave();
	return ret;
}

/* ---- creation */

static int check_attr(const struct rqmap_lpm_attr *a)
{
	if (a->key_size <= 4 || !a->value_size || !a->max_entries)
		return -EINVAL;
	if (a->key_size - 4 > LPM_DATA_SIZE_MAX || a->value_size > RQMAP_MAX_VALUE_SIZE ||
	    a->max_entries > LPM_ENTRIES_LIMIT || a->spare > LPM_ENTRIES_LIMIT)
		return -E2BIG;
	return 0;
}

int rqmap_lpm_create(const struct rqmap_lpm_attr *a, struct rqmap_lpm **out)
{
	struct rqmap_lpm *t;
	int ret;

	if (!a || !out)
		return -EINVAL;
	ret = check_attr(a);
	if (!ret)
		ret = rqmap_thread_ensure();
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->data_size = a->key_size - 4;
	t->data_words = rqmap_words(t->data_size);
	t->max_prefixlen = 8 * t->data_size;
	t->value_size = a->value_size;
	t->max_entries = a->max_entries;
	t->capacity = 2 * a->max_entries +
	              (a->spare ? a->spare : (a->max_entries > 1024 ? a->max_entries : 1024));
	t->node_size = (uint32_t)((sizeof(struct lpm_node) +
	                           4 * (size_t)(t->data_words + rqmap_words(a->value_size)) + 7) &
	                          ~(size_t)7);
	ret = rqfl_init(&t->fl, 0);
	t->fl.help_above = (t->capacity - 2 * t->max_entries) / RQMAP_HELP_DIVISOR;
	if (!ret) {
		t->pool = calloc(t->capacity, t->node_size);
		ret = t->pool ? 0 : -ENOMEM;
	}
	if (ret) {
		rqmap_lpm_destroy(t);
		return ret;
	}
	rqfl_populate(&t->fl, t->pool, t->node_size, t->capacity);
	ret = rqmap_reclaim_start();
	if (ret) {
		rqmap_lpm_destroy(t);
		return ret;
	}
	*out = t;
	return 0;
}

void rqmap_lpm_destroy(struct rqmap_lpm *t)
{
	if (!t)
		return;
	rqmap_quiesce(); /* callbacks push into this trie's freelist */
	if (t->fl.lists)
		rqfl_destroy(&t->fl);
	free(t->pool);
	free(t);
}
