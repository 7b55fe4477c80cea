// SPDX-License-Identifier: MIT
/*
 * Direct packet access and the legacy loads: programs the kernel accepts
 * (bounds checked with data_end in its forms, variable offsets checked
 * again, data_meta against data, LD_ABS/IND) and programs it refuses
 * (no check, a check one byte short, the wrong side of the check, writes
 * where the type may only read, arithmetic on data_end, an atomic on the
 * packet, LD_ABS with a ring buffer record reserved). expect.txt has the
 * verdicts, which equal the kernel's.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

unsigned long long load_byte(void *skb, unsigned long long off) asm("llvm.bpf.load.byte");
unsigned long long load_half(void *skb, unsigned long long off) asm("llvm.bpf.load.half");

#define DATA(c)     ((unsigned char *)(long)(c)->data)
#define DATA_END(c) ((unsigned char *)(long)(c)->data_end)

SEC("?tc")
int pkt_eth_proto(struct __sk_buff *ctx)
{
	unsigned char *p = DATA(ctx);

	if (p + ETH_HLEN > DATA_END(ctx))
		return 0;
	return p[12] << 8 | p[13];
}

/* if (end >= p + n) instead of if (p + n > end) */
SEC("?xdp")
int pkt_end_first(struct xdp_md *ctx)
{
	unsigned char *p = DATA(ctx);

	if (DATA_END(ctx) >= p + 4)
		return p[3];
	return XDP_PASS;
}

/* A header at a variable offset: checked again after the add. */
SEC("?tc")
int pkt_var_off(struct __sk_buff *ctx)
{
	unsigned char *p = DATA(ctx), *q;

	if (p + 1 > DATA_END(ctx))
		return 0;
	q = p + (p[0] & 15) * 4;
	if (q + 2 > DATA_END(ctx))
		return 0;
	return q[1];
}

SEC("?xdp")
int pkt_meta_ok(struct xdp_md *ctx)
{
	unsigned char *m = (unsigned char *)(long)ctx->data_meta;

	if (m + 4 > DATA(ctx))
		return XDP_PASS;
	return m[0] == 1 ? XDP_DROP : XDP_PASS;
}

SEC("?tc")
int pkt_write_tc(struct __sk_buff *ctx)
{
	unsigned char *p = DATA(ctx);

	if (p + 1 > DATA_END(ctx))
		return 0;
	p[0] = 0xff;
	return 0;
}

SEC("?socket")
int ld_abs_ind(struct __sk_buff *skb)
{
	unsigned long long ihl = load_byte(skb, 0) & 15;

	return load_half(skb, ihl * 4) + load_byte(skb, 9);
}

SEC("?tc")
int pkt_unchecked(struct __sk_buff *ctx)
{
	return DATA(ctx)[0];
}

SEC("?tc")
int pkt_short_check(struct __sk_buff *ctx)
{
	unsigned char *p = DATA(ctx);

	if (p + 13 > DATA_END(ctx))
		return 0;
	return p[13];
}

SEC("?xdp")
int pkt_wrong_side(struct xdp_md *ctx)
{
	unsigned char *p = DATA(ctx);

	if (p + 8 <= DATA_END(ctx))
		return XDP_PASS;
	return p[0];
}

SEC("?cgroup_skb/ingress")
int pkt_write_cgroup(struct __sk_buff *ctx)
{
	unsigned char *p = DATA(ctx);

	if (p + 1 > DATA_END(ctx))
		return 1;
	p[0] = 0;
	return 1;
}

SEC("?xdp")
int pkt_end_read(struct xdp_md *ctx)
{
	return *(DATA_END(ctx) - 1);
}

SEC("?socket")
int pkt_socket_data(struct __sk_buff *ctx)
{
	return ctx->data != 0;
}

SEC("?xdp")
int pkt_atomic(struct xdp_md *ctx)
{
	unsigned int *p = (unsigned int *)DATA(ctx);

	if ((unsigned char *)(p + 1) > DATA_END(ctx))
		return XDP_PASS;
	__sync_fetch_and_add(p, 1);
	return XDP_PASS;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring SEC(".maps");

SEC("?socket")
int ld_abs_record_held(struct __sk_buff *skb)
{
	unsigned char *e = bpf_ringbuf_reserve(&ring, 8, 0);

	if (!e)
		return 0;
	e[0] = load_byte(skb, 0);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("?xdp")
int ld_abs_xdp(struct xdp_md *ctx)
{
	return load_byte(ctx, 0);
}

char _license[] SEC("license") = "GPL";
