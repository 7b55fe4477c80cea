/* SPDX-License-Identifier: MIT */
/*
 * res_lock_fail: each program breaks one rule; the verifier (and the
 * kernel) must reject it with that rule's message (see expect.txt).
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct elem);
} elems SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, int);
	__type(value, __u64);
} plain SEC(".maps");

struct spin_elem {
	struct bpf_spin_lock lock;
	__u32 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct spin_elem);
} spins SEC(".maps");

struct bpf_res_spin_lock lock_x HIDDEN SEC(".data.X");
struct bpf_res_spin_lock lock_y HIDDEN SEC(".data.Y");
/* Two locks in one section: the kernel finds no valid lock there. */
struct bpf_res_spin_lock lock_p HIDDEN SEC(".data.P");
struct bpf_res_spin_lock lock_q HIDDEN SEC(".data.P");
long scratch;

static struct elem *elem0(void)
{
	int key = 0;

	return bpf_map_lookup_elem(&elems, &key);
}

SEC("?tc")
int aa_direct(struct __sk_buff *ctx)
{
	struct elem *e = elem0();

	if (!e)
		return 0;
	bpf_res_spin_lock(&e->lock);
	bpf_res_spin_lock(&e->lock);
	return 0;
}

SEC("?tc")
int aa_after_success(struct __sk_buff *ctx)
{
	struct elem *e = elem0();

	if (!e || bpf_res_spin_lock(&e->lock))
		return 0;
	bpf_res_spin_lock(&e->lock);
	return 0;
}

SEC("?tc")
int unlock_other_global(struct __sk_buff *ctx)
{
	struct elem *e = elem0();

	if (!e || bpf_res_spin_lock(&e->lock))
		return 0;
	bpf_res_spin_unlock(&lock_y);
	return 0;
}

SEC("?tc")
int unlock_other_elem(struct __sk_buff *ctx)
{
	struct elem *e = elem0();

	if (!e || bpf_res_spin_lock(&lock_x))
		return 0;
	bpf_res_spin_unlock(&e->lock);
	return 0;
}

SEC("?tc")
int unlock_never_locked(struct __sk_buff *ctx)
{
	bpf_res_spin_unlock(&lock_x);
	return 0;
}

SEC("?tc")
int unlock_wrong_order(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&lock_x))
		return 0;
	if (bpf_res_spin_lock(&lock_y)) {
		bpf_res_spin_unlock(&lock_x);
		return 0;
	}
	bpf_res_spin_unlock(&lock_x);
	bpf_res_spin_unlock(&lock_y);
	return 0;
}

SEC("?tc")
int irqrestore_plain_lock(struct __sk_buff *ctx)
{
	unsigned long flags;

	if (bpf_res_spin_lock_irqsave(&lock_x, &flags))
		return 0;
	bpf_res_spin_unlock(&lock_x);
	return 0;
}

SEC("?tc")
int irq_restore_out_of_order(struct __sk_buff *ctx)
{
	unsigned long f1, f2;

	if (bpf_res_spin_lock_irqsave(&lock_x, &f1))
		return 0;
	if (bpf_res_spin_lock_irqsave(&lock_y, &f2)) {
		bpf_res_spin_unlock_irqrestore(&lock_x, &f1);
		return 0;
	}
	bpf_res_spin_unlock_irqrestore(&lock_y, &f1);
	bpf_res_spin_unlock_irqrestore(&lock_x, &f2);
	return 0;
}

SEC("?tc")
int lock_ctx(struct __sk_buff *ctx)
{
	bpf_res_spin_lock((struct bpf_res_spin_lock *)ctx);
	return 0;
}

SEC("?tc")
int lock_off_by_one(struct __sk_buff *ctx)
{
	struct elem *e = elem0();

	if (!e)
		return 0;
	bpf_res_spin_lock((void *)&e->lock + 1);
	return 0;
}

SEC("?tc")
int lock_var_off(struct __sk_buff *ctx)
{
	__u64 off = ctx->len & 8;

	bpf_res_spin_lock((void *)&scratch + off);
	return 0;
}

SEC("?tc")
int lock_in_bss(struct __sk_buff *ctx)
{
	bpf_res_spin_lock((void *)&scratch);
	return 0;
}

SEC("?tc")
int helper_under_lock(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&lock_x))
		return 0;
	scratch = bpf_ktime_get_ns();
	bpf_res_spin_unlock(&lock_x);
	return 0;
}

SEC("?tc")
int exit_under_lock(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&lock_x))
		return 0;
	return 1;
}

SEC("?tc")
int unchecked_lookup(struct __sk_buff *ctx)
{
	int key = 0;
	__u64 *v = bpf_map_lookup_elem(&plain, &key);

	return *v;
}

SEC("?tc")
int value_out_of_bounds(struct __sk_buff *ctx)
{
	int key = 0;
	__u64 *v = bpf_map_lookup_elem(&plain, &key);

	if (!v)
		return 0;
	return v[1];
}

SEC("?tc")
int unbounded_loop(struct __sk_buff *ctx)
{
	__u32 n = ctx->len;
	int i = 0;

	while (n != 1) {
		n = n & 1 ? 3 * n + 1 : n / 2;
		i++;
	}
	return i;
}

SEC("?tc")
int res_lock_on_spin_lock(struct __sk_buff *ctx)
{
	int key = 0;
	struct spin_elem *s = bpf_map_lookup_elem(&spins, &key);

	if (!s)
		return 0;
	bpf_res_spin_lock((struct bpf_res_spin_lock *)&s->lock);
	return 0;
}

SEC("?tc")
int lock_before_null_check(struct __sk_buff *ctx)
{
	int key = ctx->mark;
	struct elem *e = bpf_map_lookup_elem(&elems, &key);

	if (bpf_res_spin_lock(&e->lock))
		return 0;
	bpf_res_spin_unlock(&e->lock);
	return 0;
}

SEC("?tc")
int lock_in_loop(struct __sk_buff *ctx)
{
	struct elem *e = elem0();

	if (!e)
		return 0;
	for (int i = 0; i < 2; i++)
		if (bpf_res_spin_lock(&e->lock))
			return 0;
	return 0;
}

SEC("?tc")
int restore_unsaved_flag(struct __sk_buff *ctx)
{
	unsigned long saved, other;

	if (bpf_res_spin_lock_irqsave(&lock_x, &saved))
		return 0;
	bpf_res_spin_unlock_irqrestore(&lock_x, &other);
	return 0;
}

SEC("?tc")
int save_flag_twice(struct __sk_buff *ctx)
{
	unsigned long flag;

	if (bpf_res_spin_lock_irqsave(&lock_x, &flag))
		return 0;
	if (bpf_res_spin_lock_irqsave(&lock_y, &flag)) {
		bpf_res_spin_unlock_irqrestore(&lock_x, &flag);
		return 0;
	}
	return 0;
}

/* A store over a saved flag is allowed; it destroys the flag, so the
 * restore finds none. */
SEC("?tc")
int irq_flag_overwritten(struct __sk_buff *ctx)
{
	unsigned long flags;

	if (bpf_res_spin_lock_irqsave(&lock_x, &flags))
		return 0;
	*(volatile unsigned long *)&flags = ctx->len;
	bpf_res_spin_unlock_irqrestore(&lock_x, &flags);
	return 0;
}

SEC("?tc")
int irq_flag_byte_overwritten(struct __sk_buff *ctx)
{
	unsigned long flags;

	if (bpf_res_spin_lock_irqsave(&lock_x, &flags))
		return 0;
	*(volatile unsigned char *)&flags = ctx->len;
	bpf_res_spin_unlock_irqrestore(&lock_x, &flags);
	return 0;
}

/* An irq flag must be an aligned stack slot. */
SEC("?tc")
int irq_save_misaligned(struct __sk_buff *ctx)
{
	unsigned long buf[2];

	if (bpf_res_spin_lock_irqsave(&lock_x, (unsigned long *)((char *)buf + 4)))
		return 0;
	bpf_res_spin_unlock_irqrestore(&lock_x, (unsigned long *)((char *)buf + 4));
	return 0;
}

SEC("?tc")
int irq_restore_misaligned(struct __sk_buff *ctx)
{
	unsigned long buf[2];

	if (bpf_res_spin_lock_irqsave(&lock_x, &buf[1]))
		return 0;
	bpf_res_spin_unlock_irqrestore(&lock_x, (unsigned long *)((char *)buf + 4));
	return 0;
}

SEC("?tc")
int two_locks_one_section(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&lock_p))
		return 0;
	bpf_res_spin_unlock(&lock_p);
	return 0;
}

char _license[] SEC("license") = "GPL";
