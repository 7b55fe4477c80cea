/* SPDX-License-Identifier: MIT */
/*
 * ringbuf: BPF_MAP_TYPE_RINGBUF and its helpers. The rb_ok_* programs are
 * accepted; each other one breaks one rule of the reserved record's
 * reference or of the helpers' arguments, and must be rejected with the
 * kernel's message (see expect.txt).
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct elem);
} rb_elems SEC(".maps");

struct rec {
	__u64 a, b;
};

SEC("?tc")
int rb_ok_submit(struct __sk_buff *ctx)
{
	struct rec *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r)
		return 0;
	r->a = ctx->len;
	r->b = 2;
	bpf_ringbuf_submit(r, 0);
	return 1;
}

SEC("?tc")
int rb_ok_discard(struct __sk_buff *ctx)
{
	struct rec *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r)
		return 0;
	r->a = 1;
	bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
	return 1;
}

SEC("?tc")
int rb_ok_two(struct __sk_buff *ctx)
{
	struct rec *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	__u64 *s;

	if (!r)
		return 0;
	s = bpf_ringbuf_reserve(&rb, 8, 0);
	if (!s) {
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	*s = 7;
	r->a = 1;
	bpf_ringbuf_submit(s, 0);
	bpf_ringbuf_submit(r, 0);
	return 2;
}

SEC("?tc")
int rb_ok_output(struct __sk_buff *ctx)
{
	struct rec r = {ctx->len, 3};

	return bpf_ringbuf_output(&rb, &r, sizeof(r), 0);
}

SEC("?tc")
int rb_ok_output_var(struct __sk_buff *ctx)
{
	struct rec r = {ctx->len, 3};
	__u32 n = ctx->cb[0] & 15;

	return bpf_ringbuf_output(&rb, &r, n, 0);
}

SEC("?tc")
int rb_ok_query(struct __sk_buff *ctx)
{
	return bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) + bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
}

SEC("?tc")
int rb_leak(struct __sk_buff *ctx)
{
	struct rec *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r)
		return 0;
	r->a = 1;
	return 1;
}

SEC("?tc")
int rb_leak_one_path(struct __sk_buff *ctx)
{
	struct rec *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r)
		return 0;
	if (ctx->cb[0])
		return 1;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?tc")
int rb_unchecked(struct __sk_buff *ctx)
{
	struct rec *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	r->a = 1;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?tc")
int rb_out_of_bounds(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 0;
	r[1] = 1;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?tc")
int rb_var_size(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, ctx->cb[0] & 8, 0);

	if (!r)
		return 0;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?tc")
int rb_submit_twice(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 0;
	bpf_ringbuf_submit(r, 0);
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?tc")
int rb_use_after_submit(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 0;
	bpf_ringbuf_submit(r, 0);
	*r = 1;
	return 0;
}

SEC("?tc")
int rb_submit_null(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?tc")
int rb_submit_stack(struct __sk_buff *ctx)
{
	__u64 x = 0;

	bpf_ringbuf_submit(&x, 0);
	return 0;
}

SEC("?tc")
int rb_submit_offset(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 16, 0);

	if (!r)
		return 0;
	bpf_ringbuf_submit(r + 1, 0);
	return 0;
}

SEC("?tc")
int rb_reserve_array(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb_elems, 8, 0);

	if (!r)
		return 0;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?tc")
int rb_lookup_ringbuf(struct __sk_buff *ctx)
{
	int k = 0;

	return bpf_map_lookup_elem(&rb, &k) != 0;
}

SEC("?tc")
int rb_under_lock(struct __sk_buff *ctx)
{
	int k = 0;
	struct elem *e = bpf_map_lookup_elem(&rb_elems, &k);
	__u64 *r;

	if (!e || bpf_res_spin_lock(&e->lock))
		return 0;
	r = bpf_ringbuf_reserve(&rb, 8, 0);
	if (r)
		bpf_ringbuf_submit(r, 0);
	bpf_res_spin_unlock(&e->lock);
	return 0;
}

SEC("?tc")
int rb_output_unbounded(struct __sk_buff *ctx)
{
	struct rec r = {ctx->len, 3};

	return bpf_ringbuf_output(&rb, &r, ctx->cb[0], 0);
}

SEC("?tc")
int rb_output_past_stack(struct __sk_buff *ctx)
{
	struct rec r = {ctx->len, 3};

	return bpf_ringbuf_output(&rb, &r, sizeof(r) + 8, 0);
}

SEC("?tc")
int rb_output_record(struct __sk_buff *ctx)
{
	struct rec *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	long ret;

	if (!r)
		return 0;
	r->a = 1;
	r->b = 2;
	ret = bpf_ringbuf_output(&rb, r, sizeof(*r), 0);
	bpf_ringbuf_discard(r, 0);
	return ret;
}

SEC("?tc")
int rb_return_record(struct __sk_buff *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 0;
	bpf_ringbuf_submit(r, 0);
	return (long)r;
}

char _license[] SEC("license") = "GPL";
