// SPDX-License-Identifier: MIT
/* irqsave variants and the programs the signal tests run: a long critical
 * section on element 0's lock (plain or irqsave), and a short one a signal
 * handler runs on the same lock. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_res_spin_lock.h"

#define EDEADLK 35

struct elem {
	struct bpf_res_spin_lock lock;
	__u32 pad;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct elem);
} elems SEC(".maps");

struct bpf_res_spin_lock lock_a SEC(".data.A");
struct bpf_res_spin_lock lock_b SEC(".data.B");

static struct elem *elem0(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&elems, &key);
}

/* Nested irqsave, released in reverse order: returns 0. */
SEC("tc")
int irqsave_nested(struct __sk_buff *ctx)
{
	unsigned long f1, f2;

	if (bpf_res_spin_lock_irqsave(&lock_a, &f1))
		return 1;
	if (bpf_res_spin_lock_irqsave(&lock_b, &f2)) {
		bpf_res_spin_unlock_irqrestore(&lock_a, &f1);
		return 2;
	}
	bpf_res_spin_unlock_irqrestore(&lock_b, &f2);
	bpf_res_spin_unlock_irqrestore(&lock_a, &f1);
	return 0;
}

/* AA with irqsave, on two lookups of element 0 (one lock the verifier cannot
 * prove to be the same): the second acquisition fails with -EDEADLK. */
SEC("tc")
int irqsave_aa(struct __sk_buff *ctx)
{
	struct elem *a = elem0(), *b = elem0();
	unsigned long f1, f2;
	int err;

	if (!a || !b)
		return -1;
	if (bpf_res_spin_lock_irqsave(&a->lock, &f1))
		return 1;
	err = bpf_res_spin_lock_irqsave(&b->lock, &f2);
	if (!err) {
		bpf_res_spin_unlock_irqrestore(&b->lock, &f2);
		bpf_res_spin_unlock_irqrestore(&a->lock, &f1);
		return 2;
	}
	bpf_res_spin_unlock_irqrestore(&a->lock, &f1);
	return err == -EDEADLK ? 0 : err;
}

/* Hold element 0's lock across a long loop; returns the loop's sum. */
static __always_inline int long_section(int irq)
{
	struct elem *e = elem0();
	unsigned long flags;
	__u64 sum = 0;
	int err;

	if (!e)
		return -1;
	err = irq ? bpf_res_spin_lock_irqsave(&e->lock, &flags) : bpf_res_spin_lock(&e->lock);
	if (err)
		return err;
	for (int i = 0; i < 20000; i++)
		sum += i ^ e->count;
	e->count++;
	if (irq)
		bpf_res_spin_unlock_irqrestore(&e->lock, &flags);
	else
		bpf_res_spin_unlock(&e->lock);
	return (int)(sum & 0x7fffffff);
}

SEC("tc")
int hold_long(struct __sk_buff *ctx)
{
	return long_section(0);
}

SEC("tc")
int hold_long_irqsave(struct __sk_buff *ctx)
{
	return long_section(1);
}

/* What the signal handler runs: element 0's lock, briefly. Returns 0 or the
 * lock's error. */
SEC("tc")
int handler_take(struct __sk_buff *ctx)
{
	struct elem *e = elem0();
	int err;

	if (!e)
		return -1;
	err = bpf_res_spin_lock(&e->lock);
	if (err)
		return err;
	e->count++;
	bpf_res_spin_unlock(&e->lock);
	return 0;
}

char _license[] SEC("license") = "GPL";
