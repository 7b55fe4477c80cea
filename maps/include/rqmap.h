/* SPDX-License-Identifier: MIT */
/**
 * @file rqmap.h
 * @brief BPF-style maps built on the resilient queued spin lock.
 *
 * Three map types with the semantics of the kernel's BPF_MAP_TYPE_HASH,
 * BPF_MAP_TYPE_LPM_TRIE and BPF_MAP_TYPE_ARRAY, the first two as converted
 * to rqspinlock in the kernel series (the array needs no map lock):
 *  - writers take one rqspinlock (a bucket lock, the trie lock) and return its
 *    -EDEADLK / -ETIMEDOUT unchanged, leaving the map exactly as it was;
 *  - lookups take no lock: they run inside a liburcu (memb flavour) read-side
 *    critical section, and removed elements are recycled only after a grace
 *    period (urcu-memb synchronize_rcu in a reclaim thread, or in the
 *    updater itself when retired elements pile up), so a lookup never reads
 *    recycled memory;
 *  - elements are preallocated and handed out by a per-thread freelist, so the
 *    update path never calls malloc: every operation of a preallocated map is
 *    async-signal-safe once the calling thread is registered (see
 *    rqmap_thread_init()).
 *
 * Errors are negative errno values. 0 is success.
 *
 * Read-side rules for callers:
 *  - Each thread must be registered with the maps' RCU before its first map
 *    call from a signal handler: call rqmap_thread_init() once in the thread
 *    (normal context). Calls from normal context register lazily; threads are
 *    unregistered automatically when they exit.
 *  - Values are copied in and out, except by the in-place lookups
 *    rqmap_hash_lookup_elem() and rqmap_array_lookup_elem(), which return a
 *    pointer into the map for a BPF runtime (see "In-place access" below).
 *  - rqmap_*_destroy() and rqmap_quiesce() wait for retired elements to be
 *    recycled: never call them from a signal handler, inside a read-side
 *    section, or while another thread still uses the map.
 *  - An update that finds retired elements piling up waits for a grace
 *    period itself (urcu_memb_synchronize_rcu()), also in a signal handler
 *    that interrupted neither a map operation nor a read-side section of its
 *    thread; the thread's signals stay blocked during that wait. If the
 *    application uses liburcu-memb's update side directly, map-updating
 *    handlers must not interrupt those calls.
 *  - RQMAP_F_NO_PREALLOC maps call malloc()/free(): not from handlers.
 *  - A child of fork() can use the maps; fork() waits (bounded) for other
 *    threads' grace-period waits to end first. After a fork() in a signal
 *    handler, the map call it interrupted returns in the child as it would
 *    have in the parent (docs/MAPS.md, rule 5).
 */
#ifndef RQMAP_H
#define RQMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rqmap_hash_info() and rqmap_lpm_info() share their structs' names, as
 * stat() does; g++'s -Wshadow takes that for a function hiding a class's
 * constructor in C++, so the two declarations tell it they mean it. */
#if defined(__cplusplus) && defined(__GNUC__)
#define RQMAP_SAME_NAME_BEGIN                                                                      \
	_Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wshadow\"")
#define RQMAP_SAME_NAME_END _Pragma("GCC diagnostic pop")
#else
#define RQMAP_SAME_NAME_BEGIN
#define RQMAP_SAME_NAME_END
#endif

/**
 * @defgroup inplace In-place access (for a BPF runtime)
 *
 * rqmap_hash_lookup_elem() returns a pointer to an element's value inside the
 * map, as a BPF program's bpf_map_lookup_elem() does. The pointer is valid
 * only inside the read-side section that was open when it was returned:
 *
 *  - Open a section with rqmap_read_lock() and close it with
 *    rqmap_read_unlock(). Sections nest (a count per thread) and both calls
 *    are async-signal-safe once the thread is registered (rqmap_thread_init();
 *    in normal context rqmap_read_lock() registers lazily). A signal handler
 *    may open its own section over an interrupted one.
 *  - Until the section ends, the element's memory is not recycled: it stays
 *    the value of the element the lookup found. An update of the same key
 *    does not write into it: the update links a new element and unlinks the
 *    old one (copy-on-write), so the pointer keeps showing the old element's
 *    value, and a delete unlinks it; either way the old element is reused
 *    only after every section open at its removal has ended (the kernel's
 *    RCU rule). A later lookup finds the new element.
 *  - Writes through the pointer are plain stores into the live element, as a
 *    BPF program's are: other threads' lookups may see them torn. To write or
 *    read a value consistently, take its embedded lock (RQMAP_F_VALUE_LOCK)
 *    with res_spin_lock() on (char *)ptr + lock_off, the lock the map's own
 *    RQMAP_F_LOCK copies take; never write the lock word otherwise.
 *  - Inside a section do not call rqmap_quiesce(), rqmap_*_destroy() or
 *    anything else that waits for a grace period (it would wait for itself),
 *    and keep the section short: removed elements of every map wait for it.
 *    Map updates inside a section are fine.
 *
 * rqmap_array_lookup_elem() needs no section: array values are never
 * removed, so its pointer is valid until the map is destroyed. The same rule
 * on writes and on the embedded lock applies.
 * @{
 */

/**
 * @brief Open a read-side section (nestable, async-signal-safe once the
 * thread is registered).
 * @return 0; -ENOMEM when lazy registration failed (no section was opened).
 */
int rqmap_read_lock(void);

/** @brief Close the innermost read-side section opened by rqmap_read_lock(). */
void rqmap_read_unlock(void);

/** @} */

/** The version of this header: major, minor, patch, and as a string. */
#define RQMAP_VERSION_MAJOR 0
#define RQMAP_VERSION_MINOR 1
#define RQMAP_VERSION_PATCH 0
#define RQMAP_VERSION       "0.1.0"

/**
 * The version of librqmaps the program runs with, "MAJOR.MINOR.PATCH"
 * (RQMAP_VERSION is the one it was compiled with).
 */
const char *rqmap_version(void);

/* Update flags (values as in the kernel's uapi). */
#define RQMAP_ANY     0ULL /**< create or replace (BPF_ANY) */
#define RQMAP_NOEXIST 1ULL /**< create only: -EEXIST if present (BPF_NOEXIST) */
#define RQMAP_EXIST   2ULL /**< replace only: -ENOENT if absent (BPF_EXIST) */
#define RQMAP_F_LOCK  4ULL /**< copy the value under its embedded lock (BPF_F_LOCK) */

/* Creation flags. */
#define RQMAP_F_NO_PREALLOC 0x1U /**< allocate elements on update (not signal-safe) */
#define RQMAP_F_VALUE_LOCK  0x2U /**< values embed an rqspinlock_t at lock_off */
#define RQMAP_F_ZERO_SEED   0x4U /**< hash seed 0 (reproducible bucket order) */

/** Largest key accepted by either map type, in bytes. */
#define RQMAP_MAX_KEY_SIZE 512
/** Largest value accepted, in bytes. */
#define RQMAP_MAX_VALUE_SIZE 65536

/**
 * Bucket lock of a hash map. Only RQMAP_LOCK_RQSPIN is resilient; the other
 * two exist so that tests and the benchmark can compare the same map with
 * pthread spin locks per bucket, and with one global lock around every
 * operation, lookups included (the design of userspace eBPF runtimes).
 */
enum rqmap_lock_kind {
	RQMAP_LOCK_RQSPIN = 0,       /**< one rqspinlock per bucket (default) */
	RQMAP_LOCK_PTHREAD_SPIN = 1, /**< one pthread_spinlock_t per bucket */
	RQMAP_LOCK_GLOBAL = 2,       /**< one pthread_spinlock_t for the map */
};

/** Attributes of a hash map; zero what you do not use. */
struct rqmap_hash_attr {
	uint32_t key_size;              /**< bytes, 1..RQMAP_MAX_KEY_SIZE */
	uint32_t value_size;            /**< bytes, 1..RQMAP_MAX_VALUE_SIZE */
	uint32_t max_entries;           /**< most live elements, >= 1 */
	uint32_t flags;                 /**< RQMAP_F_* creation flags */
	uint32_t lock_off;              /**< with RQMAP_F_VALUE_LOCK: offset of the rqspinlock_t
	                                     in the value, a multiple of 4 */
	uint32_t spare;                 /**< preallocated elements beyond max_entries that cover
	                                     removed elements waiting for a grace period;
	                                     0 = max(max_entries, 1024) */
	uint32_t n_buckets;             /**< 0 = max_entries rounded up to a power of two */
	enum rqmap_lock_kind lock_kind; /**< comparison builds only */
};

struct rqmap_hash;

/**
 * @brief Register the calling thread with the maps' RCU (idempotent).
 *
 * Must be called in normal context before the thread runs a map operation in
 * a signal handler. Not async-signal-safe.
 * @return 0, or -ENOMEM.
 */
int rqmap_thread_init(void);

/**
 * @brief Wait until every element removed so far has been recycled (an RCU
 * barrier). Not async-signal-safe; not from inside a map operation.
 */
void rqmap_quiesce(void);

/**
 * @brief Create a hash map.
 * @return 0 and *out set; -EINVAL for a bad attribute; -E2BIG for sizes over
 *  the limits; -ENOMEM.
 */
int rqmap_hash_create(const struct rqmap_hash_attr *attr, struct rqmap_hash **out);

/** @brief Destroy @p map (waits for retired elements). NULL is a no-op. */
void rqmap_hash_destroy(struct rqmap_hash *map);

/**
 * @brief Insert or replace @p key with @p value.
 *
 * @p flags: one of RQMAP_ANY / RQMAP_NOEXIST / RQMAP_EXIST, optionally with
 * RQMAP_F_LOCK (then an existing value is overwritten in place under its
 * embedded lock; the lock word itself is never copied).
 * @return 0; -EEXIST (NOEXIST, key present); -ENOENT (EXIST, key absent);
 *  -E2BIG (new key, map holds max_entries); -ENOMEM (malloc failed with
 *  RQMAP_F_NO_PREALLOC; or no free element although the map is below
 *  max_entries, which a preallocated map returns only to a context that may
 *  not wait for a grace period (a signal handler over a map operation or a
 *  read-side section of its thread) after most of `spare` was retired since
 *  the last grace period, or when `spare` is smaller than the number of
 *  concurrent updates; other contexts help the grace period instead, see
 *  docs/MAPS.md);
 *  -EDEADLK / -ETIMEDOUT from the bucket lock or the value lock, with the map
 *  unchanged; -EINVAL for bad arguments or flags.
 */
int rqmap_hash_update(struct rqmap_hash *map, const void *key, const void *value, uint64_t flags);

/**
 * @brief Copy the value of @p key into @p value. Takes no bucket lock.
 * @p flags: 0 or RQMAP_F_LOCK (copy under the value's embedded lock).
 * @return 0; -ENOENT; -EINVAL; with RQMAP_F_LOCK also -EDEADLK / -ETIMEDOUT.
 */
int rqmap_hash_lookup(struct rqmap_hash *map, const void *key, void *value, uint64_t flags);

/** @brief Delete @p key. @return 0; -ENOENT; -EDEADLK / -ETIMEDOUT; -EINVAL. */
int rqmap_hash_delete(struct rqmap_hash *map, const void *key);

/**
 * @brief Copy the value of @p key out and delete it, atomically.
 * @return as rqmap_hash_delete(); @p flags as rqmap_hash_lookup().
 */
int rqmap_hash_lookup_and_delete(struct rqmap_hash *map, const void *key, void *value,
                                 uint64_t flags);

/**
 * @brief Iterate: the key after @p key (NULL: the first key) into @p next_key.
 *
 * Order is bucket order. As in the kernel, when @p key is no longer in the map
 * (deleted concurrently) iteration restarts from the first key: it never
 * fails because of a concurrent delete. Takes no lock.
 * @return 0; -ENOENT after the last key; -EINVAL.
 */
int rqmap_hash_get_next_key(struct rqmap_hash *map, const void *key, void *next_key);

/**
 * @brief Copy whole buckets, starting at bucket *@p cursor (0 to start).
 *
 * Copies keys and values of every element of each non-empty bucket, each
 * bucket under its lock (a consistent snapshot of that bucket), into @p keys
 * and @p values (arrays of *@p count entries). A bucket that does not fit is
 * left for the next call. On return *@p count holds the number copied and
 * *@p cursor the bucket to continue from.
 * @return 0 (more to come); -ENOENT (reached the end; *count may be > 0);
 *  -ENOSPC (the first bucket alone holds more than *count elements);
 *  -EDEADLK / -ETIMEDOUT (a bucket lock failed; that bucket is untouched and
 *  *cursor points at it); -EINVAL.
 */
int rqmap_hash_lookup_batch(struct rqmap_hash *map, uint32_t *cursor, void *keys, void *values,
                            uint32_t *count, uint64_t flags);

/** @brief As rqmap_hash_lookup_batch(), also deleting what was copied. */
int rqmap_hash_lookup_and_delete_batch(struct rqmap_hash *map, uint32_t *cursor, void *keys,
                                       void *values, uint32_t *count, uint64_t flags);

/**
 * @brief In-place lookup: a pointer to the value of @p key, or NULL when the
 * key is absent (or an argument is NULL). Takes no lock. Call it inside a
 * read-side section; the pointer is valid until that section ends (see
 * "In-place access" above). The value is 8-byte aligned. Async-signal-safe.
 */
void *rqmap_hash_lookup_elem(struct rqmap_hash *map, const void *key);

/**
 * Where a preallocated hash map keeps its values, for a BPF runtime that
 * checks a program's accesses: the value of element i, for i < count, is
 * the value_size bytes at (char *)base + i * stride + value_off. Every
 * pointer rqmap_hash_lookup_elem() returns is one of them; elements are
 * recycled, never freed, while the map lives.
 */
struct rqmap_hash_values {
	const void *base;    /**< the first element */
	uint32_t count;      /**< elements: the map's capacity */
	uint32_t stride;     /**< bytes from one element to the next */
	uint32_t value_off;  /**< bytes from an element to its value */
	uint32_t value_size; /**< as created */
};

/**
 * @brief Where @p map keeps its values (see struct rqmap_hash_values).
 * @return 0; -EINVAL (a NULL argument); -ENOTSUP for a map created with
 *  RQMAP_F_NO_PREALLOC, whose elements are allocated one by one.
 */
int rqmap_hash_get_values(const struct rqmap_hash *map, struct rqmap_hash_values *out);

/** Element accounting of a hash map. */
struct rqmap_hash_info {
	uint32_t max_entries; /**< as created */
	uint32_t capacity;    /**< preallocated elements: max_entries + spare */
	uint32_t count;       /**< live elements */
	uint32_t free;        /**< elements in the freelist */
	uint32_t n_buckets;   /**< buckets */
};

/**
 * @brief Fill @p info. @c free is exact only at a quiescent point (no
 * concurrent writer, after rqmap_quiesce()); then count + free == capacity
 * for a preallocated map.
 * @return 0, or -EINVAL.
 */
RQMAP_SAME_NAME_BEGIN
int rqmap_hash_info(struct rqmap_hash *map, struct rqmap_hash_info *info);
RQMAP_SAME_NAME_END

/* C++ has no flexible array members: g++ takes `__extension__` before the
 * one below, clang++ a pragma, so that -pedantic-errors accepts it. */
#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc99-extensions"
#pragma clang diagnostic ignored "-Wflexible-array-extensions"
#endif
/** Key of an LPM trie: prefix length in bits, then the data (network order). */
struct rqmap_lpm_key {
	uint32_t prefixlen; /**< bits of data that count */
#if defined(__cplusplus) && !defined(__clang__)
	__extension__
#endif
	    uint8_t data[]; /**< key_size - 4 bytes */
};
#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic pop
#endif

/** Attributes of an LPM trie. */
struct rqmap_lpm_attr {
	uint32_t key_size;    /**< 4 + data bytes; data 1..256 bytes */
	uint32_t value_size;  /**< bytes, 1..RQMAP_MAX_VALUE_SIZE */
	uint32_t max_entries; /**< most prefixes stored, >= 1 */
	uint32_t spare;       /**< nodes beyond 2 * max_entries for removed nodes
	                           waiting for a grace period; 0 = max(max_entries, 1024) */
};

struct rqmap_lpm;

/** @brief Create an LPM trie. @return 0; -EINVAL; -E2BIG; -ENOMEM. */
int rqmap_lpm_create(const struct rqmap_lpm_attr *attr, struct rqmap_lpm **out);

/** @brief Destroy @p trie (waits for retired elements). NULL is a no-op. */
void rqmap_lpm_destroy(struct rqmap_lpm *trie);

/**
 * @brief Insert or replace the prefix @p key (a struct rqmap_lpm_key).
 * @return 0; -EINVAL (prefixlen > data bits, bad flags); -EEXIST; -ENOENT
 *  (as for the hash map); -ENOSPC (new prefix, trie holds max_entries);
 *  -ENOMEM (no free node: as for rqmap_hash_update() on a preallocated
 *  map); -EDEADLK / -ETIMEDOUT from the trie lock.
 */
int rqmap_lpm_update(struct rqmap_lpm *trie, const void *key, const void *value, uint64_t flags);

/** @brief Delete the exact prefix @p key.
 *  @return 0; -ENOENT; -EINVAL (prefixlen > data bits); lock errors. */
int rqmap_lpm_delete(struct rqmap_lpm *trie, const void *key);

/**
 * @brief Longest-prefix match: the value of the longest stored prefix that
 * matches the first key->prefixlen bits of key->data. Takes no lock.
 * @return 0; -ENOENT (no prefix matches, also for prefixlen > data bits,
 *  as in the kernel); -EINVAL (a NULL argument).
 */
int rqmap_lpm_lookup(struct rqmap_lpm *trie, const void *key, void *value);

/**
 * @brief Iterate in the kernel's order (post-order: longer prefixes before the
 * prefixes that contain them). @p key NULL or not stored (prefixlen > data
 * bits included, as in the kernel): the first key.
 * @return 0; -ENOENT after the last key; -EINVAL (a NULL trie or next_key).
 */
int rqmap_lpm_get_next_key(struct rqmap_lpm *trie, const void *key, void *next_key);

/** @brief Number of prefixes stored. */
uint32_t rqmap_lpm_count(struct rqmap_lpm *trie);

/** Node accounting of an LPM trie. */
struct rqmap_lpm_info {
	uint32_t max_entries; /**< as created */
	uint32_t capacity;    /**< preallocated nodes: 2 * max_entries + spare */
	uint32_t count;       /**< prefixes stored */
	uint32_t nodes;       /**< nodes in the trie (prefixes and intermediate nodes) */
	uint32_t free;        /**< nodes in the freelist */
};

/**
 * @brief Fill @p info, under the trie lock. @c free is exact only at a
 * quiescent point (no concurrent writer, after rqmap_quiesce()); then
 * nodes + free == capacity.
 * @return 0; -EINVAL; -EDEADLK / -ETIMEDOUT from the trie lock.
 */
RQMAP_SAME_NAME_BEGIN
int rqmap_lpm_info(struct rqmap_lpm *trie, struct rqmap_lpm_info *info);
RQMAP_SAME_NAME_END

/** Attributes of an array map (BPF_MAP_TYPE_ARRAY; keys are u32 indices). */
struct rqmap_array_attr {
	uint32_t value_size;  /**< bytes, 1..RQMAP_MAX_VALUE_SIZE */
	uint32_t max_entries; /**< elements, >= 1 */
	uint32_t flags;       /**< 0 or RQMAP_F_VALUE_LOCK */
	uint32_t lock_off;    /**< with RQMAP_F_VALUE_LOCK: offset of the rqspinlock_t in the
	                           value, a multiple of 4 */
};

struct rqmap_array;

/**
 * @brief Create an array map: max_entries values, preallocated and zeroed.
 * Values are 8-byte aligned (stride value_size rounded up to 8).
 * @return 0 and *out set; -EINVAL (zero sizes, unknown flags, bad lock_off);
 *  -E2BIG (value_size over the limit, array over 1 TiB); -ENOMEM.
 */
int rqmap_array_create(const struct rqmap_array_attr *attr, struct rqmap_array **out);

/** @brief Destroy @p map (no pointer into it may be in use). NULL is a no-op. */
void rqmap_array_destroy(struct rqmap_array *map);

/**
 * @brief Copy @p value into element *(uint32_t *)@p key.
 *
 * @p flags: RQMAP_ANY or RQMAP_EXIST (every element exists), optionally with
 * RQMAP_F_LOCK (copy under the value's embedded lock). The embedded lock word
 * is never copied. Async-signal-safe; needs no registration.
 * @return 0; -E2BIG (index >= max_entries); -EEXIST (RQMAP_NOEXIST);
 *  -EINVAL (NULL arguments, unknown flags or NOEXIST|EXIST, RQMAP_F_LOCK
 *  without a value lock); -EDEADLK / -ETIMEDOUT from the value lock, value
 *  unchanged. Checks run in the kernel's order.
 */
int rqmap_array_update(struct rqmap_array *map, const void *key, const void *value, uint64_t flags);

/**
 * @brief Copy element *(uint32_t *)@p key out into @p value; the embedded lock
 * word, if any, reads as zero. @p flags: 0 or RQMAP_F_LOCK.
 * @return 0; -ENOENT (index >= max_entries); -EINVAL; with RQMAP_F_LOCK also
 *  -EDEADLK / -ETIMEDOUT.
 */
int rqmap_array_lookup(struct rqmap_array *map, const void *key, void *value, uint64_t flags);

/** @brief Arrays have no delete: always -EINVAL, as in the kernel. */
int rqmap_array_delete(struct rqmap_array *map, const void *key);

/**
 * @brief In-place lookup: a pointer to element *(uint32_t *)@p key, valid for
 * the map's lifetime, or NULL when the index is out of range (or an argument
 * is NULL). Async-signal-safe; no read-side section needed.
 */
void *rqmap_array_lookup_elem(struct rqmap_array *map, const void *key);

/**
 * @brief Iterate indices: NULL or an out-of-range @p key gives 0, the last
 * index gives -ENOENT, else key + 1 (the kernel's order).
 * @return 0; -ENOENT; -EINVAL.
 */
int rqmap_array_get_next_key(struct rqmap_array *map, const void *key, void *next_key);

/** @brief value_size as created (0 for NULL). */
uint32_t rqmap_array_value_size(const struct rqmap_array *map);

/** @brief max_entries as created (0 for NULL). */
uint32_t rqmap_array_max_entries(const struct rqmap_array *map);

#ifdef __cplusplus
}
#endif

#endif /* RQMAP_H */
