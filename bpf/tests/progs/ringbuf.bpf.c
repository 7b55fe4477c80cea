// SPDX-License-Identifier: MIT
/* Ring buffers: a producer (bpf_ringbuf.c runs it on 8 threads against a
 * consumer), and a small ring filled until it overflows, with some records
 * discarded (bpf_kernel.c compares the results with the kernel's). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 4096);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} small SEC(".maps");

struct event {
	__u32 producer;
	__u32 seq;
	__u64 check;
};

/* One event: producer cb[0], sequence number cb[1]; 1 when the ring is full. */
SEC("tc")
int produce(struct __sk_buff *skb)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 1;
	e->producer = skb->cb[0];
	e->seq = skb->cb[1];
	e->check = ((__u64)skb->cb[0] << 32 | skb->cb[1]) ^ 0x5a5a5a5a5a5a5a5aull;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* 8-byte records numbered from 0 until a reservation fails, every third
 * discarded: the number reserved. */
SEC("tc")
int fill(struct __sk_buff *skb)
{
	int n = 0;

	for (int i = 0; i < 1024; i++) {
		__u64 *r = bpf_ringbuf_reserve(&small, 8, 0);

		if (!r)
			break;
		*r = i;
		if (i % 3 == 2)
			bpf_ringbuf_discard(r, 0);
		else
			bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
		n++;
	}
	return n;
}

/* bpf_ringbuf_output into the full ring: -EAGAIN. */
SEC("tc")
int output_full(struct __sk_buff *skb)
{
	__u64 v = 77;

	return bpf_ringbuf_output(&small, &v, sizeof(v), 0);
}

/* bpf_ringbuf_output's flags the kernel refuses: -EINVAL. */
SEC("tc")
int output_bad_flags(struct __sk_buff *skb)
{
	__u64 v = 77;

	return bpf_ringbuf_output(&small, &v, sizeof(v), 4);
}

/* A reservation with flags: NULL. */
SEC("tc")
int reserve_flags(struct __sk_buff *skb)
{
	__u64 *r = bpf_ringbuf_reserve(&small, 8, 1);

	if (!r)
		return 0;
	bpf_ringbuf_discard(r, 0);
	return 1;
}

/* A record larger than the ring: NULL. */
SEC("tc")
int reserve_too_big(struct __sk_buff *skb)
{
	char *r = bpf_ringbuf_reserve(&small, 4096, 0);

	if (!r)
		return 0;
	bpf_ringbuf_discard(r, 0);
	return 1;
}

SEC("tc")
int avail(struct __sk_buff *skb)
{
	return bpf_ringbuf_query(&small, BPF_RB_AVAIL_DATA);
}

SEC("tc")
int positions(struct __sk_buff *skb)
{
	return bpf_ringbuf_query(&small, BPF_RB_PROD_POS) * 10000 +
	       bpf_ringbuf_query(&small, BPF_RB_CONS_POS) * 10 +
	       (bpf_ringbuf_query(&small, BPF_RB_RING_SIZE) == 4096) +
	       bpf_ringbuf_query(&small, 99);
}

/* Refused by the verifier; run unverified by bpf_ringbuf.c: a record left
 * reserved at the exit, a submit of memory that is no record. */
SEC("?tc")
int leak(struct __sk_buff *skb)
{
	__u64 *r = bpf_ringbuf_reserve(&small, 8, 0);

	if (!r)
		return 0;
	*r = 5;
	return 1;
}

SEC("?tc")
int submit_stack(struct __sk_buff *skb)
{
	__u64 v = 0;

	bpf_ringbuf_submit(&v, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
