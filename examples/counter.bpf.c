// SPDX-License-Identifier: MIT
/*
 * counter.bpf.c: a BPF program for rqbpf (compile with clang -target bpf;
 * examples/Makefile and examples/CMakeLists.txt show how). It counts calls
 * per key (the context's cb[0] % 16) in a hash map whose value embeds a
 * struct bpf_res_spin_lock, taken with the kernel's kfuncs: the verifier
 * checks that every path unlocks, and a failed lock is handled.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf_res_spin_lock.h>

struct counter {
	struct bpf_res_spin_lock lock;
	__u32 pad;
	__u64 calls;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct counter);
} counts SEC(".maps");

SEC("tc")
int count(struct __sk_buff *ctx)
{
	__u32 key = ctx->cb[0] % 16;
	struct counter zero = {}, *c;

	c = bpf_map_lookup_elem(&counts, &key);
	if (!c) {
		bpf_map_update_elem(&counts, &key, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&counts, &key);
		if (!c)
			return 1;
	}
	if (bpf_res_spin_lock(&c->lock))
		return 2; /* -EDEADLK or -ETIMEDOUT: not held, nothing to unlock */
	c->calls++;
	bpf_res_spin_unlock(&c->lock);
	return 0;
}

char _license[] SEC("license") = "GPL";
