// SPDX-License-Identifier: MIT
/* Programs the verifier should refuse, run with the verifier skipped to test
 * the runtime's own checks: a read past a map value, an exit holding a lock,
 * an unlock of a lock not held, unlocks of the wrong kind, AA on a
 * bpf_spin_lock. */
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

char _license[] SEC("license") = "GPL";
