// SPDX-License-Identifier: MIT
/* bpf_local_irq_save/restore: per-key counters updated by map updates inside
 * an irq region (array and hash), regions nested and mixed with an irqsave
 * lock, and a long region that marks its slot busy, which a signal handler
 * (running irq_peek) must never see. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_res_spin_lock.h"

struct slot {
	__u64 count;
	__u64 busy; /* 1 while irq_hold_long / noirq_hold_long is inside */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} hcounts SEC(".maps");

struct bpf_res_spin_lock irq_lock SEC(".data.L");
__u64 irq_lock_count SEC(".data.L");

/* Adds 1 to key cb[0] % 16 of the array with a lookup and an update inside
 * an irq region; returns the new count. */
SEC("tc")
int irq_count(struct __sk_buff *ctx)
{
	__u32 key = ctx->cb[0] & 15;
	unsigned long flags;
	struct slot *v, n = {};

	bpf_local_irq_save(&flags);
	v = bpf_map_lookup_elem(&slots, &key);
	if (v)
		n.count = v->count + 1;
	bpf_map_update_elem(&slots, &key, &n, BPF_ANY);
	bpf_local_irq_restore(&flags);
	return (int)n.count;
}

/* The same on the hash map: the first run of a key inserts it (an update),
 * later ones add in place (a replacing update inside the run's read-side
 * section can meet -ENOMEM, docs/MAPS.md). Returns the new count or the
 * insert's error. */
SEC("tc")
int irq_hash_count(struct __sk_buff *ctx)
{
	__u32 key = ctx->cb[0] & 15;
	unsigned long flags;
	__u64 *v, n = 1;
	long err = 0;

	bpf_local_irq_save(&flags);
	v = bpf_map_lookup_elem(&hcounts, &key);
	if (v)
		n = ++*v;
	else
		err = bpf_map_update_elem(&hcounts, &key, &n, BPF_NOEXIST);
	bpf_local_irq_restore(&flags);
	return err ? (int)err : (int)n;
}

/* Two regions, closed in reverse order: returns 0. */
SEC("tc")
int irq_nested(struct __sk_buff *ctx)
{
	unsigned long f1, f2;

	bpf_local_irq_save(&f1);
	bpf_local_irq_save(&f2);
	bpf_local_irq_restore(&f2);
	bpf_local_irq_restore(&f1);
	return 0;
}

/* An irqsave lock inside an irq region; returns the lock's counter. */
SEC("tc")
int irq_with_res_lock(struct __sk_buff *ctx)
{
	unsigned long f1, f2;
	__u64 n;

	bpf_local_irq_save(&f1);
	if (bpf_res_spin_lock_irqsave(&irq_lock, &f2)) {
		bpf_local_irq_restore(&f1);
		return -1;
	}
	n = ++irq_lock_count;
	bpf_res_spin_unlock_irqrestore(&irq_lock, &f2);
	bpf_local_irq_restore(&f1);
	return (int)n;
}

/* Slot 0 marked busy across a long loop, in an irq region or not; returns
 * the loop's sum. */
static __always_inline int hold_long(int irq)
{
	__u32 key = 0;
	unsigned long flags;
	struct slot *v;
	__u64 sum = 0;

	if (irq)
		bpf_local_irq_save(&flags);
	v = bpf_map_lookup_elem(&slots, &key);
	if (v) {
		/* volatile: the first store is not dead to the handler */
		*(volatile __u64 *)&v->busy = 1;
		for (int i = 0; i < 20000; i++)
			sum += i ^ v->count;
		v->count++;
		*(volatile __u64 *)&v->busy = 0;
	}
	if (irq)
		bpf_local_irq_restore(&flags);
	return (int)(sum & 0x7fffffff);
}

SEC("tc")
int irq_hold_long(struct __sk_buff *ctx)
{
	return hold_long(1);
}

SEC("tc")
int noirq_hold_long(struct __sk_buff *ctx)
{
	return hold_long(0);
}

/* What the signal handler runs: 1 when slot 0 is marked busy, else 0. */
SEC("tc")
int irq_peek(struct __sk_buff *ctx)
{
	__u32 key = 0;
	struct slot *v = bpf_map_lookup_elem(&slots, &key);

	return v ? (int)*(volatile __u64 *)&v->busy : -1;
}

char _license[] SEC("license") = "GPL";
