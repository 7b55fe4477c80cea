// SPDX-License-Identifier: MIT
/* Packet access, which rqbpf does not support (no packet pointers): each
 * program reads one packet pointer field of its context, and the verifier
 * must say that, not "invalid mem access 'scalar'" at the dereference
 * (bpf_loader checks the messages). parse_eth is the usual bounds-checked
 * form. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("?tc")
int skb_data(struct __sk_buff *skb)
{
	return *(unsigned char *)(long)skb->data;
}

SEC("?tc")
int skb_data_meta(struct __sk_buff *skb)
{
	return *(unsigned char *)(long)skb->data_meta;
}

SEC("?xdp")
int xdp_data_end(struct xdp_md *ctx)
{
	return *((unsigned char *)(long)ctx->data_end - 1);
}

SEC("?xdp")
int parse_eth(struct xdp_md *ctx)
{
	unsigned char *p = (unsigned char *)(long)ctx->data;

	if (p + 14 > (unsigned char *)(long)ctx->data_end)
		return XDP_PASS;
	return p[12] == 0x08 ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
