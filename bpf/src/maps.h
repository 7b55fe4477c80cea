/* SPDX-License-Identifier: MIT */
/*
 * maps.h: map kinds behind one table of operations, in the style of the
 * kernel's struct bpf_map_ops (Floor 4, docs/HACKING.md "bpf/"). maps.c
 * holds the table of kinds and the map API on top of it; each kind is one
 * file (map_array.c, map_hash.c) defining its struct rqbpf_map_ops. The
 * helpers, the run-time memory check and, through the linked program's
 * map descriptions, the verifier read a map's kind only through its ops.
 */
#ifndef RQBPF_MAPS_H
#define RQBPF_MAPS_H

#include "object.h"

struct rqbpf_map_ops {
	uint32_t type; /* BPF_MAP_TYPE_* */
	/* Keys are u32 indices below max_entries, every one present: a
	 * lookup of one cannot fail (the verifier's rqbpf_map_desc.indexed). */
	bool indexed;
	/* A looked-up value's address stays valid only inside a read-side
	 * section (rqmap_read_lock()), which a run holds until it ends. */
	bool rcu;
	/* One value per possible CPU (map_percpu.c): the map API's values are
	 * rqbpf_map_value_bytes() long, a program's the calling thread's. */
	bool percpu;
	int (*create)(struct rqbpf_map *m, struct rqbpf_error *err);
	/* After every map of the object is created (NULL: nothing to do): a
	 * map of maps puts its initial inner maps (BTF `values`). */
	int (*link)(struct rqbpf_map *m, struct rqbpf_error *err);
	/* Frees what create made, also after a failed create. */
	void (*destroy)(struct rqbpf_map *m);
	/* The address of @p key's value, or NULL. The accesses through it
	 * may use that value, or every value when the kind set
	 * rqbpf_map.all_values at create. */
	void *(*lookup_value)(struct rqbpf_map *m, const void *key);
	/* rqbpf.h's map API, past its argument checks. */
	int (*lookup)(struct rqbpf_map *m, const void *key, void *value);
	int (*update)(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags);
	int (*delete)(struct rqbpf_map *m, const void *key);
	/* A program's bpf_map_update_elem() where it differs from update
	 * (a per-CPU map's: the calling thread's value); NULL: update. */
	int (*update_prog)(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags);
	int (*next_key)(struct rqbpf_map *m, const void *key, void *next_key);
	/* Which value @p addr falls in: true, and its region in *@p out,
	 * when it lies in one. */
	bool (*value_at)(const struct rqbpf_map *m, uintptr_t addr, struct rqbpf_region *out);
	/* A ring buffer's (map_ringbuf.c; NULL for other kinds), as the
	 * kernel's bpf_ringbuf: a record of @p size bytes reserved, or NULL;
	 * a reserved record committed (submitted, or discarded), with
	 * BPF_RB_NO_WAKEUP or BPF_RB_FORCE_WAKEUP in @p flags; what
	 * bpf_ringbuf_query() returns for @p flags. */
	void *(*reserve)(struct rqbpf_map *m, uint64_t size);
	void (*commit)(struct rqbpf_map *m, void *rec, uint64_t flags, bool discard);
	uint64_t (*query)(struct rqbpf_map *m, uint64_t flags);
	/* A queue's or stack's (map_queue_stack.c; NULL for other kinds), as
	 * the kernel's map_push_elem/pop_elem/peek_elem: 0 or -errno. */
	int (*push)(struct rqbpf_map *m, const void *value, uint64_t flags);
	int (*pop)(struct rqbpf_map *m, void *value);
	int (*peek)(struct rqbpf_map *m, void *value);
};

/* The kind of map type @p type (BPF_MAP_TYPE_*), NULL when rqbpf has none. */
const struct rqbpf_map_ops *rqbpf_map_kind(uint32_t type);
/* Create every map of @p obj (at load); free them. */
int rqbpf_maps_create(struct rqbpf_object *obj, struct rqbpf_error *err);
void rqbpf_maps_free(struct rqbpf_object *obj);
/* rqbpf_map_update() as the bpf_map_update_elem() helper does it: the
 * same results, with the map code's errors before a refused BPF_F_LOCK. */
int rqbpf_map_update_helper(struct rqbpf_map *map, const void *key, const void *value,
                            uint64_t flags);
/* The key after @p key (NULL: the first) among the u32 indices below
 * @p max_entries of an array kind, as the kernel's arrays iterate: an index
 * past the end restarts at 0; -ENOENT after the last. */
int rqbpf_index_next_key(uint32_t max_entries, const void *key, void *next_key);
/* The lock attribute of rqmaps for @p d's value lock: copies skip it. */
void rqbpf_map_lock_attr(const struct rqbpf_map_desc *d, uint32_t *flags, uint32_t *off);

#endif /* RQBPF_MAPS_H */
