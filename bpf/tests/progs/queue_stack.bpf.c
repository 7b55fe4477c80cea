// SPDX-License-Identifier: MIT
/* Queues and stacks: filled past their capacity, overwritten with
 * BPF_EXIST, drained (bpf_kernel.c compares each result with the kernel's;
 * bpf_queue.c also pushes and pops on 8 threads). Results are digit
 * strings: one digit per operation. */
#include <linux/errno.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 4);
	__type(value, __u64);
} q SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 4);
	__type(value, __u64);
} s SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 64);
	__type(value, __u64);
} shared SEC(".maps");

static int digit(long r)
{
	return r == 0 ? 1 : r == -E2BIG ? 2 : r == -ENOENT ? 3 : r == -EINVAL ? 4 : 9;
}

/* 1..5 pushed into 4 slots: 11112. */
static int fill(void *map)
{
	int acc = 0;

	for (__u64 i = 1; i <= 5; i++)
		acc = acc * 10 + digit(bpf_map_push_elem(map, &i, 0));
	return acc;
}

/* 6 pushed with BPF_EXIST into the full map (the oldest, 1, goes); a push
 * with BPF_NOEXIST or an unknown flag is refused: 144. */
static int overwrite(void *map)
{
	__u64 v = 6;
	int acc = digit(bpf_map_push_elem(map, &v, BPF_EXIST));

	acc = acc * 10 + digit(bpf_map_push_elem(map, &v, BPF_NOEXIST));
	return acc * 10 + digit(bpf_map_push_elem(map, &v, 4));
}

/* The value peeked, then every value popped, then 3 (-ENOENT) with the
 * value zeroed (1) for the pop and the peek of the empty map. */
static int drain(void *map)
{
	__u64 v = 0;
	int acc;

	bpf_map_peek_elem(map, &v);
	acc = v;
	for (int i = 0; i < 5; i++) {
		long r;

		v = 99;
		r = bpf_map_pop_elem(map, &v);
		if (r) {
			acc = acc * 10 + digit(r);
			acc = acc * 10 + (v == 0);
			break;
		}
		acc = acc * 10 + v;
	}
	v = 99;
	acc = acc * 10 + digit(bpf_map_peek_elem(map, &v));
	return acc * 10 + (v == 0);
}

SEC("tc")
int q_fill(struct __sk_buff *skb)
{
	return fill(&q);
}

SEC("tc")
int q_overwrite(struct __sk_buff *skb)
{
	return overwrite(&q);
}

SEC("tc")
int q_drain(struct __sk_buff *skb)
{
	return drain(&q);
}

SEC("tc")
int s_fill(struct __sk_buff *skb)
{
	return fill(&s);
}

SEC("tc")
int s_overwrite(struct __sk_buff *skb)
{
	return overwrite(&s);
}

SEC("tc")
int s_drain(struct __sk_buff *skb)
{
	return drain(&s);
}

/* Push cb[0] into the shared queue; then pop one value: 0 when the queue
 * was empty, else the value + 1 (bpf_queue.c). */
SEC("tc")
int push_pop(struct __sk_buff *skb)
{
	__u64 v = skb->cb[0], out;

	if (bpf_map_push_elem(&shared, &v, 0))
		return -1;
	if (bpf_map_pop_elem(&shared, &out))
		return 0;
	return out + 1;
}

char _license[] SEC("license") = "GPL";
