/* SPDX-License-Identifier: MIT */
/*
 * queue_stack: BPF_MAP_TYPE_QUEUE and _STACK with bpf_map_push_elem,
 * bpf_map_pop_elem and bpf_map_peek_elem. The qs_ok_* programs are
 * accepted; each other one breaks one rule, rejected with the kernel's
 * message (see expect.txt).
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 8);
	__type(value, __u64);
} q SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 8);
	__type(value, __u64);
} s SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, __u64);
} qs_arr SEC(".maps");

SEC("?tc")
int qs_ok_push_pop(struct __sk_buff *ctx)
{
	__u64 v = ctx->len, out;

	if (bpf_map_push_elem(&q, &v, BPF_EXIST))
		return 1;
	if (bpf_map_pop_elem(&q, &out))
		return 2;
	return out;
}

SEC("?tc")
int qs_ok_peek_stack(struct __sk_buff *ctx)
{
	__u64 v = 5, out;

	bpf_map_push_elem(&s, &v, 0);
	if (bpf_map_peek_elem(&s, &out))
		return 0;
	return out;
}

SEC("?tc")
int qs_ok_pop_into_value(struct __sk_buff *ctx)
{
	int k = 0;
	__u64 *v = bpf_map_lookup_elem(&qs_arr, &k);

	if (!v)
		return 0;
	return bpf_map_pop_elem(&q, v);
}

SEC("?tc")
int qs_push_array(struct __sk_buff *ctx)
{
	__u64 v = 1;

	return bpf_map_push_elem(&qs_arr, &v, 0);
}

SEC("?tc")
int qs_pop_array(struct __sk_buff *ctx)
{
	__u64 v;

	return bpf_map_pop_elem(&qs_arr, &v);
}

SEC("?tc")
int qs_lookup_queue(struct __sk_buff *ctx)
{
	int k = 0;

	return bpf_map_lookup_elem(&q, &k) != 0;
}

SEC("?tc")
int qs_push_uninit(struct __sk_buff *ctx)
{
	__u64 v;

	return bpf_map_push_elem(&q, &v, 0);
}

SEC("?tc")
int qs_pop_ctx(struct __sk_buff *ctx)
{
	return bpf_map_pop_elem(&q, ctx);
}

SEC("?tc")
int qs_pop_short(struct __sk_buff *ctx)
{
	__u32 v[2] = {0, 0};

	return bpf_map_pop_elem(&q, (char *)v + 4);
}

char _license[] SEC("license") = "GPL";
