/* SPDX-License-Identifier: MIT */
/*
 * prog_types: the kernel's per-type rules. Types that may not use a map
 * holding a lock (tracing, socket filters), return ranges (cgroup_skb),
 * and context fields read and written at the sizes each type allows
 * (__sk_buff for tc, socket filters and cgroup_skb; xdp_md). Verdicts and
 * messages in expect.txt, each checked against the 6.18 kernel.
 */
#include "common.h"

ARRAY_OF(elems, struct elem);

struct plain {
	__u64 n;
};
ARRAY_OF(plains, struct plain);

#define LOOKUP_LOCKED(prog, sec)                                                                   \
	SEC(sec) int prog(void *ctx)                                                               \
	{                                                                                          \
		int key = 0;                                                                       \
		return bpf_map_lookup_elem(&elems, &key) != 0;                                     \
	}

/* A bare lookup of a map with a lock is refused in these types. */
LOOKUP_LOCKED(kprobe_lookup, "?kprobe/do_nanosleep")
LOOKUP_LOCKED(tracepoint_lookup, "?tracepoint/syscalls/sys_enter_nanosleep")
LOOKUP_LOCKED(raw_tp_lookup, "?raw_tp/sys_enter")
LOOKUP_LOCKED(perf_event_lookup, "?perf_event")
LOOKUP_LOCKED(socket_lookup, "?socket")
/* ... and allowed in these. */
LOOKUP_LOCKED(tc_lookup, "?tc")
LOOKUP_LOCKED(xdp_lookup, "?xdp")
LOOKUP_LOCKED(syscall_lookup, "?syscall")

/* A tracing program may use a map without a lock. */
SEC("?kprobe/do_nanosleep")
int kprobe_plain(void *ctx)
{
	int key = 0;
	struct plain *p = bpf_map_lookup_elem(&plains, &key);

	if (p)
		__sync_fetch_and_add(&p->n, 1);
	return 0;
}

/* Even in code no path reaches. */
SEC("?socket")
int socket_dead_lookup(struct __sk_buff *ctx)
{
	int key = 0, zero;

	asm volatile("%0 = 0" : "=r"(zero));
	if (zero)
		return bpf_map_lookup_elem(&elems, &key) != 0;
	return 0;
}

/* Return ranges: cgroup_skb ingress [0, 1], egress [0, 3]. */
SEC("?cgroup_skb/ingress")
int cg_ingress_ok(struct __sk_buff *ctx)
{
	return ctx->len > 100;
}

SEC("?cgroup_skb/ingress")
int cg_ingress_two(struct __sk_buff *ctx)
{
	return 2;
}

SEC("?cgroup_skb/ingress")
int cg_ingress_unknown(struct __sk_buff *ctx)
{
	return ctx->mark;
}

SEC("?cgroup_skb/egress")
int cg_egress_three(struct __sk_buff *ctx)
{
	return ctx->len > 100 ? 3 : 1;
}

SEC("?cgroup_skb/egress")
int cg_egress_four(struct __sk_buff *ctx)
{
	return ctx->len > 100 ? 4 : 1;
}

SEC("?cgroup/skb")
int cg_skb_minus(struct __sk_buff *ctx)
{
	return ctx->len > 100 ? -1 : 1;
}

SEC("?tc")
int tc_any_return(struct __sk_buff *ctx)
{
	return ctx->len + 7;
}

/* Context fields. */
SEC("?tc")
int tc_write_mark(struct __sk_buff *ctx)
{
	ctx->mark = 1;
	ctx->priority = 2;
	ctx->cb[4] = 3;
	ctx->tstamp = 4;
	return ctx->queue_mapping;
}

SEC("?tc")
int tc_write_len(struct __sk_buff *ctx)
{
	ctx->len = 1;
	return 0;
}

SEC("?cgroup_skb/ingress")
int cg_write_len(struct __sk_buff *ctx)
{
	ctx->len = 1;
	return 1;
}

SEC("?cgroup_skb/ingress")
int cg_write_tc_index(struct __sk_buff *ctx)
{
	ctx->tc_index = 1;
	return 1;
}

SEC("?cgroup_skb/ingress")
int cg_read_ip(struct __sk_buff *ctx)
{
	return ctx->remote_ip6[3] == ctx->local_ip4 && ctx->family == 2;
}

SEC("?tc")
int tc_read_family(struct __sk_buff *ctx)
{
	return ctx->family;
}

SEC("?socket")
int socket_write_cb(struct __sk_buff *ctx)
{
	ctx->cb[0] = ctx->len;
	return 0;
}

SEC("?socket")
int socket_write_mark(struct __sk_buff *ctx)
{
	ctx->mark = 1;
	return 0;
}

SEC("?socket")
int socket_read_tc_classid(struct __sk_buff *ctx)
{
	return ctx->tc_classid;
}

SEC("?tc")
int tc_narrow_reads(struct __sk_buff *ctx)
{
	__u8 *b = (__u8 *)ctx;
	__u16 *h = (__u16 *)ctx;

	return b[1] + h[3] + b[50] + (int)*(__u64 *)&ctx->cb[0] + ctx->tstamp_type;
}

SEC("?tc")
int tc_tstamp_half(struct __sk_buff *ctx)
{
	return *(__u32 *)&ctx->tstamp;
}

SEC("?xdp")
int xdp_read_ifindex(struct xdp_md *ctx)
{
	return ctx->ingress_ifindex + ctx->rx_queue_index;
}

SEC("?xdp")
int xdp_read_half(struct xdp_md *ctx)
{
	return *(__u16 *)&ctx->ingress_ifindex;
}

SEC("?xdp")
int xdp_write(struct xdp_md *ctx)
{
	ctx->rx_queue_index = 0;
	return 0;
}

char _license[] SEC("license") = "GPL";
