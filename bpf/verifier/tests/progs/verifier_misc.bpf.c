/* SPDX-License-Identifier: MIT */
/*
 * verifier_misc: bounds, loops and stack rules beyond the locks.
 */
#include "common.h"

struct table {
	__u64 slot[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct table);
} tables SEC(".maps");

static struct table *table0(void)
{
	int key = 0;

	return bpf_map_lookup_elem(&tables, &key);
}

SEC("?tc")
int masked_index(struct __sk_buff *ctx)
{
	struct table *t = table0();

	if (!t)
		return 0;
	return t->slot[ctx->len & 7];
}

SEC("?tc")
int checked_index(struct __sk_buff *ctx)
{
	struct table *t = table0();
	__u32 i = ctx->len;

	if (!t || i >= 8)
		return 0;
	return t->slot[i];
}

SEC("?tc")
int unchecked_index(struct __sk_buff *ctx)
{
	struct table *t = table0();

	if (!t)
		return 0;
	return t->slot[ctx->len];
}

SEC("?tc")
int off_by_one_index(struct __sk_buff *ctx)
{
	struct table *t = table0();
	__u32 i = ctx->len;

	if (!t || i > 8)
		return 0;
	return t->slot[i];
}

SEC("?tc")
int loop_over_value(struct __sk_buff *ctx)
{
	struct table *t = table0();
	__u64 sum = 0;

	if (!t)
		return 0;
	for (int i = 0; i < 8; i++)
		sum ^= t->slot[i] * (i + ctx->len);
	return sum & 0xff;
}

SEC("?tc")
int long_loop(struct __sk_buff *ctx)
{
	struct table *t = table0();

	if (!t)
		return 0;
	for (__u32 i = 0; i < 300000; i++)
		t->slot[i & 7] ^= i * ctx->len + t->slot[(i + 1) & 7];
	return 0;
}

/* The kernel lets a privileged loader read uninitialised stack; this
 * verifier never does (a documented difference). */
SEC("?tc")
int uninit_key(struct __sk_buff *ctx)
{
	int key;
	struct table *t;

	asm volatile("" : "=m"(key));
	t = bpf_map_lookup_elem(&tables, &key);
	return t ? 1 : 0;
}

/* A store at a variable offset counts as writing every byte it may reach,
 * as in the kernel for a privileged loader: the read of buf[0] is
 * accepted though the store may have missed it. */
SEC("?tc")
int var_offset_write_then_read(struct __sk_buff *ctx)
{
	volatile char buf[64];

	buf[ctx->len & 63] = 1;
	return buf[0];
}

/* The index less one is compared: clang keeps i and i - 1 in two
 * registers, linked by the constant (i in [1, 7]). */
SEC("?tc")
int index_minus_one(struct __sk_buff *ctx)
{
	struct table *t = table0();
	__u64 i = ctx->len;

	if (!t)
		return 0;
	if (i - 1 < 7)
		return t->slot[i];
	return 0;
}

/* The same, one too far: i may be 8. */
SEC("?tc")
int index_minus_one_past_end(struct __sk_buff *ctx)
{
	struct table *t = table0();
	__u64 i = ctx->len;

	if (!t)
		return 0;
	if (i - 1 < 8)
		return t->slot[i];
	return 0;
}

/* A signed i plus two may wrap: i (a byte offset) may be -2 or -1. */
SEC("?tc")
int signed_index_plus_two(struct __sk_buff *ctx)
{
	struct table *t = table0();
	__s64 i = (__s32)ctx->len;

	if (!t)
		return 0;
	if ((__u64)(i + 2) < 10)
		return ((__u8 *)t)[i];
	return 0;
}

/* bpf_get_current_comm fills uninitialised stack, which may then be read. */
SEC("?tc")
int comm_fills_stack(struct __sk_buff *ctx)
{
	char name[16];

	bpf_get_current_comm(name, sizeof(name));
	return name[0];
}

/* The size reaches past the buffer, off the top of the stack. */
SEC("?tc")
int comm_past_stack(struct __sk_buff *ctx)
{
	char name[8];

	bpf_get_current_comm(name + 4, 16);
	return name[0];
}

/* Into a map value (writable), within it. */
SEC("?tc")
int comm_into_value(struct __sk_buff *ctx)
{
	struct table *t = table0();

	if (!t)
		return 0;
	return bpf_get_current_comm(t, 16);
}

/* bpf_copy_from_user may sleep: a tc program may not call it. */
SEC("?tc")
int copy_user_in_tc(struct __sk_buff *ctx)
{
	char b[8];

	return bpf_copy_from_user(b, sizeof(b), (void *)(long)ctx->mark) ? 1 : b[0];
}

char _license[] SEC("license") = "GPL";
