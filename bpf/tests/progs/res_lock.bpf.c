// SPDX-License-Identifier: MIT
/* Res-lock scenarios for rqbpf: AA on one array element, AB/BA on two global
 * locks, and more locks held than the held-lock table tracks. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_res_spin_lock.h"
#include "expect_aa.h"

#define EDEADLK   35
#define ETIMEDOUT 110
#define NLOCKS    34

struct slot {
	struct bpf_res_spin_lock lock;
	__u32 hits;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 40);
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

struct bpf_res_spin_lock first_lock SEC(".data.A");
struct bpf_res_spin_lock second_lock SEC(".data.B");

int ba_error;

/* Two lookups of element 0 give the same lock: the second acquisition must
 * fail with -EDEADLK. Returns 0 when it did. */
SEC("tc")
int same_element_twice(struct __sk_buff *ctx)
{
	__u32 key = 0;
	struct slot *a, *b;

	a = bpf_map_lookup_elem(&slots, &key);
	b = bpf_map_lookup_elem(&slots, &key);
	if (!a || !b)
		return -1;
	return expect_aa(&a->lock, &b->lock);
}

/* first_lock, then second_lock. */
SEC("tc")
int order_ab(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&first_lock))
		return 0;
	if (!bpf_res_spin_lock(&second_lock))
		bpf_res_spin_unlock(&second_lock);
	bpf_res_spin_unlock(&first_lock);
	return 0;
}

/* second_lock, then first_lock: returns the error of the inner lock. */
SEC("tc")
int order_ba(struct __sk_buff *ctx)
{
	int err;

	if (bpf_res_spin_lock(&second_lock))
		return 0;
	err = bpf_res_spin_lock(&first_lock);
	if (!err)
		bpf_res_spin_unlock(&first_lock);
	else
		ba_error = err;
	bpf_res_spin_unlock(&second_lock);
	return err;
}

/* Hold NLOCKS element locks (more than the held-lock table's 31 entries),
 * then take the last one again: it is not in the table. The kernel's lock
 * finds no AA there and waits for its timeout (-ETIMEDOUT); rqspinlock's
 * finds it through the lock word, which names the thread (-EDEADLK at
 * once). Returns that error, or a positive code saying what went wrong. */
SEC("tc")
int beyond_held_table(struct __sk_buff *ctx)
{
	struct bpf_res_spin_lock *locks[NLOCKS + 1];
	int i, ret;

	for (i = 0; i < NLOCKS; i++) {
		__u32 key = i;
		struct slot *s = bpf_map_lookup_elem(&slots, &key);

		if (!s)
			return 10;
		locks[i] = &s->lock;
	}
	{
		__u32 key = NLOCKS - 1;
		struct slot *s = bpf_map_lookup_elem(&slots, &key);

		if (!s)
			return 11;
		locks[NLOCKS] = &s->lock;
	}
	for (i = 0; i < NLOCKS; i++)
		if (bpf_res_spin_lock(locks[i]))
			break;
	if (i == NLOCKS) {
		ret = bpf_res_spin_lock(locks[NLOCKS]);
		if (!ret) {
			bpf_res_spin_unlock(locks[NLOCKS]);
			ret = 12;
		}
	} else {
		ret = 13;
	}
	while (--i >= 0)
		bpf_res_spin_unlock(locks[i]);
	return ret;
}

/* BPF_F_LOCK updates of an array whose value holds a bpf_res_spin_lock
 * (no bpf_spin_lock): refused with -EINVAL, after the index (-E2BIG) and
 * BPF_NOEXIST (-EEXIST) checks, as in the kernel. Returns the three errors
 * as decimal digit pairs: 220717. */
SEC("tc")
int array_update_f_lock(struct __sk_buff *ctx)
{
	struct slot zero = {};
	__u32 key = 0, far = 1000;
	long a, b, c;

	a = bpf_map_update_elem(&slots, &key, &zero, BPF_F_LOCK);
	b = bpf_map_update_elem(&slots, &far, &zero, BPF_F_LOCK);
	c = bpf_map_update_elem(&slots, &key, &zero, BPF_NOEXIST | BPF_F_LOCK);
	return (int)(-a * 10000 - b * 100 - c);
}

char _license[] SEC("license") = "GPL";
