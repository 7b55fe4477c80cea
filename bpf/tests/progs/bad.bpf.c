// SPDX-License-Identifier: MIT
/* Programs the verifier should refuse, run with the verifier skipped to test
 * the runtime's own checks: a read past a map value, an exit holding a lock,
 * an unlock of a lock not held, unlocks of the wrong kind, AA on a
 * bpf_spin_lock, bpf_local_irq_save/restore misused (exit inside, a garbage,
 * unsaved or spent flag, restores out of order). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_res_spin_lock.h"

struct val {
	struct bpf_res_spin_lock lock;
	__u32 data;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct val);
} vals SEC(".maps");

static struct val *val0(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&vals, &key);
}

SEC("?tc")
int read_past_value(struct __sk_buff *ctx)
{
	struct val *v = val0();

	if (!v)
		return 1;
	return *(volatile __u32 *)((char *)v + 4096 + ctx->cb[0]);
}

SEC("?tc")
int exit_holding_lock(struct __sk_buff *ctx)
{
	struct val *v = val0();

	if (!v)
		return 1;
	return bpf_res_spin_lock(&v->lock);
}

SEC("?tc")
int unlock_not_held(struct __sk_buff *ctx)
{
	struct val *v = val0();

	if (!v)
		return 1;
	bpf_res_spin_unlock(&v->lock);
	return 0;
}

SEC("?tc")
int lock_again(struct __sk_buff *ctx)
{
	struct val *v = val0();
	int err;

	if (!v)
		return 1;
	err = bpf_res_spin_lock(&v->lock);
	if (!err)
		bpf_res_spin_unlock(&v->lock);
	return err;
}

/* The irqsave flag changed before the irqrestore: restoring its bytes as
 * a signal mask would leave signals blocked after the run. */
SEC("?tc")
int irqsave_flag_garbage(struct __sk_buff *ctx)
{
	struct val *v = val0();
	unsigned long flags;

	if (!v || bpf_res_spin_lock_irqsave(&v->lock, &flags))
		return 1;
	flags = ~0UL - ctx->cb[0];
	bpf_res_spin_unlock_irqrestore(&v->lock, &flags);
	return 0;
}

/* The value's lock word taken as a bpf_spin_lock (the runtime does not
 * check which field it is). */
static struct bpf_spin_lock *as_spin(struct val *v)
{
	return (struct bpf_spin_lock *)&v->lock;
}

SEC("?tc")
int spin_exit_holding(struct __sk_buff *ctx)
{
	struct val *v = val0();

	if (!v)
		return 1;
	bpf_spin_lock(as_spin(v));
	return 0;
}

SEC("?tc")
int spin_unlock_by_res(struct __sk_buff *ctx)
{
	struct val *v = val0();

	if (!v)
		return 1;
	bpf_spin_lock(as_spin(v));
	bpf_res_spin_unlock(&v->lock);
	return 0;
}

SEC("?tc")
int res_unlock_by_spin(struct __sk_buff *ctx)
{
	struct val *v = val0();

	if (!v || bpf_res_spin_lock(&v->lock))
		return 1;
	bpf_spin_unlock(as_spin(v));
	return 0;
}

SEC("?tc")
int spin_aa(struct __sk_buff *ctx)
{
	struct val *v = val0();

	if (!v)
		return 1;
	bpf_spin_lock(as_spin(v));
	bpf_spin_lock(as_spin(v));
	return 0;
}

SEC("?tc")
int irq_exit_open(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	return 0;
}

/* The saved flag changed before the restore. */
SEC("?tc")
int irq_restore_garbage(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	flags += 1 + ctx->cb[0];
	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_restore_unsaved(struct __sk_buff *ctx)
{
	unsigned long flags = ctx->cb[0];

	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_restore_twice(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	bpf_local_irq_restore(&flags);
	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_out_of_order(struct __sk_buff *ctx)
{
	unsigned long f1, f2;

	bpf_local_irq_save(&f1);
	bpf_local_irq_save(&f2);
	bpf_local_irq_restore(&f1);
	bpf_local_irq_restore(&f2);
	return 0;
}

/* Unverifiable (a call under a bpf_spin_lock), but it runs: the lock
 * blocked no signals, so its unlock inside the newer irq region restores no
 * mask. */
SEC("?tc")
int spin_unlock_in_irq(struct __sk_buff *ctx)
{
	struct val *v = val0();
	unsigned long flags;

	if (!v)
		return 1;
	bpf_spin_lock(as_spin(v));
	bpf_local_irq_save(&flags);
	bpf_spin_unlock(as_spin(v));
	bpf_local_irq_restore(&flags);
	return 0;
}

char _license[] SEC("license") = "GPL";
