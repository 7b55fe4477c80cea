/* SPDX-License-Identifier: MIT */
/*
 * lock_layout: which layouts of a map value or data section hold a lock a
 * program may use, as the kernel's BTF field parser decides (expect.txt;
 * docs/VERIFIER.md, "Locks in map values"). Each program takes and
 * releases one lock of one map.
 */
#include "common.h"

/* Modifiers and typedefs hide a lock. */
typedef struct bpf_res_spin_lock res_lock_t;
struct typedef_member {
	int a;
	res_lock_t lock;
};
ARRAY_OF(typedefs, struct typedef_member);
TAKE(typedef_member, typedefs, struct typedef_member, lock)

struct volatile_member {
	int a;
	volatile struct bpf_res_spin_lock lock;
};
ARRAY_OF(volatiles, struct volatile_member);
TAKE(volatile_member, volatiles, struct volatile_member, lock)

struct inner {
	int x;
	struct bpf_res_spin_lock lock;
};
struct const_nested {
	int a;
	const struct inner in;
};
ARRAY_OF(consts, struct const_nested);
TAKE(const_nested_struct, consts, struct const_nested, in.lock)

/* ... but not at the top of the value type. */
typedef struct {
	int a;
	struct bpf_res_spin_lock lock;
} value_t;
ARRAY_OF(typedef_values, value_t);
TAKE(typedef_value, typedef_values, value_t, lock)

/* A misaligned lock (in a packed struct) is no lock. */
struct __attribute__((packed)) packed_value {
	char c;
	struct bpf_res_spin_lock lock;
};
ARRAY_OF(packed, struct packed_value);

SEC("?tc")
int misaligned_lock(struct __sk_buff *ctx)
{
	int key = 0;
	char *v = bpf_map_lookup_elem(&packed, &key);

	if (!v || bpf_res_spin_lock((void *)(v + 1)))
		return 0;
	bpf_res_spin_unlock((void *)(v + 1));
	return 2;
}

/* Arrays of one element count; of more, the value has no valid lock. */
struct array1 {
	int a;
	struct bpf_res_spin_lock lock[1][1];
};
ARRAY_OF(arrays1, struct array1);
TAKE(lock_array_of_one, arrays1, struct array1, lock[0][0])

struct array2 {
	int a;
	struct bpf_res_spin_lock lock[2];
};
ARRAY_OF(arrays2, struct array2);
TAKE(lock_array_of_two, arrays2, struct array2, lock[0])

struct nested1 {
	int a;
	struct inner in[1];
};
ARRAY_OF(nested1s, struct nested1);
TAKE(nested_array_of_one, nested1s, struct nested1, in[0].lock)

struct nested2 {
	int a;
	struct inner in[2];
};
ARRAY_OF(nested2s, struct nested2);
TAKE(nested_array_of_two, nested2s, struct nested2, in[0].lock)

/* Two of one kind side by side: none is valid. In different nested
 * structs: the last one counts. */
struct two_direct {
	struct bpf_res_spin_lock a, b;
};
ARRAY_OF(two_directs, struct two_direct);
TAKE(two_direct_locks, two_directs, struct two_direct, a)

struct direct_then_nested {
	struct bpf_res_spin_lock lock;
	struct inner in;
};
ARRAY_OF(direct_nested, struct direct_then_nested);
TAKE(first_of_direct_then_nested, direct_nested, struct direct_then_nested, lock)
TAKE(last_of_direct_then_nested, direct_nested, struct direct_then_nested, in.lock)

struct nested_then_direct {
	struct inner in;
	struct bpf_res_spin_lock lock;
};
ARRAY_OF(nested_direct, struct nested_then_direct);
TAKE(last_of_nested_then_direct, nested_direct, struct nested_then_direct, lock)

/* Both kinds in one value: neither is valid. */
struct spin_inside {
	struct bpf_spin_lock s;
};
struct both_kinds {
	struct spin_inside in;
	struct bpf_res_spin_lock lock;
};
ARRAY_OF(both, struct both_kinds);
TAKE(res_beside_nested_spin, both, struct both_kinds, lock)

/* A union is not searched; a value that is the lock itself holds none. */
union with_lock {
	struct bpf_res_spin_lock lock;
	long x;
};
struct union_member {
	int a;
	union with_lock u;
};
ARRAY_OF(unions, struct union_member);
TAKE(lock_in_union, unions, struct union_member, u.lock)
ARRAY_OF(bare_locks, struct bpf_res_spin_lock);
TAKE(value_is_the_lock, bare_locks, struct bpf_res_spin_lock, val)

/* A kind of map that takes no lock, and a read-only section: the kernel
 * refuses the map with its BTF and libbpf creates it without. */
struct lpm_key {
	__u32 prefixlen;
	__u32 ip;
};
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 4);
	__type(key, struct lpm_key);
	__type(value, struct inner);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} tries SEC(".maps");

SEC("?tc")
int lock_in_lpm_trie(struct __sk_buff *ctx)
{
	struct lpm_key key = {32, 1};
	struct inner *v = bpf_map_lookup_elem(&tries, &key);

	if (!v || bpf_res_spin_lock(&v->lock))
		return 0;
	bpf_res_spin_unlock(&v->lock);
	return 2;
}

struct bpf_res_spin_lock ro_lock HIDDEN SEC(".rodata.R");
const struct bpf_res_spin_lock const_lock HIDDEN SEC(".rodata.C");
volatile struct bpf_res_spin_lock volatile_global HIDDEN SEC(".data.V");
struct bpf_res_spin_lock global_array[1] HIDDEN SEC(".data.G");

TAKE_GLOBAL(lock_in_rodata, ro_lock)
TAKE_GLOBAL(const_global_lock, const_lock)
TAKE_GLOBAL(volatile_global_lock, volatile_global)
TAKE_GLOBAL(global_lock_array_of_one, global_array[0])

char _license[] SEC("license") = "GPL";
