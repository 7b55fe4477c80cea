// SPDX-License-Identifier: MIT
/* Programs the verifier should refuse, run with the verifier skipped to test
 * the runtime's own checks: a read past a map value, an exit holding a lock,
 * an unlock of a lock not held. */
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

char _license[] SEC("license") = "GPL";
