// SPDX-License-Identifier: MIT
/* One object, several programs, one of which rqbpf cannot link (a helper it
 * does not have): the others still open, load and run, and the bad one's
 * error is its own, given when it is loaded, verified or listed (as libbpf
 * reports it only when it loads that program). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline int bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return v ? 7 : 1;
}

SEC("tc")
int ingress(struct __sk_buff *skb)
{
	return bump(0);
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	return bump(1);
}

/* bpf_probe_read_kernel (helper 113): not one rqbpf has. */
SEC("kprobe/do_sys_openat2")
int trace_pid(void *ctx)
{
	return bump(bpf_probe_read_kernel(ctx, 0, 0) & 3);
}

char _license[] SEC("license") = "GPL";
