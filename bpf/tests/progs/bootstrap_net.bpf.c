// SPDX-License-Identifier: MIT
/*
 * Adapted from libbpf-bootstrap's examples/c/tc.bpf.c, xdp.bpf.c and
 * sockfilter.bpf.c (github.com/libbpf/libbpf-bootstrap; rewritten, not
 * copied), with counters in maps so that a test can compare what each run
 * leaves with the kernel's BPF_PROG_TEST_RUN on the same packet
 * (bpf_kernel_packets), and a writer of each packet type. The features each
 * needs are listed above it.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* The legacy packet loads (BPF_LD_ABS/IND), as the selftests declare them. */
unsigned long long load_byte(void *skb, unsigned long long off) asm("llvm.bpf.load.byte");
unsigned long long load_half(void *skb, unsigned long long off) asm("llvm.bpf.load.half");
unsigned long long load_word(void *skb, unsigned long long off) asm("llvm.bpf.load.word");

#define SKF_NET_OFF (-0x100000)
#define SKF_LL_OFF  (-0x200000)

struct tc_counts {
	__u64 ip_packets;
	__u32 last_tot_len;
	__u32 last_ttl;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tc_counts);
} tc_stats SEC(".maps");

/* tc.bpf.c: for an IPv4 packet, the header's total length and ttl.
 * Needs: a tc section, __sk_buff.protocol, data and data_end, bounds
 * checks on them, direct packet reads, bpf_printk, an array map. */
SEC("tc")
int tc_ingress(struct __sk_buff *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *l2 = data;
	struct iphdr *l3;
	struct tc_counts *s;
	__u32 zero = 0;

	if (ctx->protocol != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	if ((void *)(l2 + 1) > data_end)
		return TC_ACT_OK;
	l3 = (struct iphdr *)(l2 + 1);
	if ((void *)(l3 + 1) > data_end)
		return TC_ACT_OK;
	bpf_printk("Got IP packet: tot_len: %d, ttl: %d", bpf_ntohs(l3->tot_len), l3->ttl);
	s = bpf_map_lookup_elem(&tc_stats, &zero);
	if (s) {
		__sync_fetch_and_add(&s->ip_packets, 1);
		s->last_tot_len = bpf_ntohs(l3->tot_len);
		s->last_ttl = l3->ttl;
	}
	return TC_ACT_OK;
}

/* A writer: IPv4 ttl minus one (the checksum updated), TC_ACT_SHOT when it
 * runs out. Needs: direct packet writes (tc may write). */
SEC("tc")
int tc_ttl_dec(struct __sk_buff *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct iphdr *ip = data + sizeof(struct ethhdr);
	__u32 sum;

	if ((void *)(ip + 1) > data_end || ctx->protocol != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	if (ip->ttl <= 1)
		return TC_ACT_SHOT;
	ip->ttl--;
	sum = ip->check + bpf_htons(0x0100);
	ip->check = (__u16)(sum + (sum >> 16));
	return TC_ACT_OK;
}

struct xdp_count {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct xdp_count);
} xdp_by_proto SEC(".maps");

/* xdp.bpf.c: the packet's size (data_end - data), counted per Ethernet
 * protocol. Needs: an xdp section, xdp_md's data and data_end, their
 * difference as a scalar, a bounds check, bpf_printk, a hash map. */
SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int pkt_sz = data_end - data;
	struct ethhdr *eth = data;
	struct xdp_count *c, init = {1, 0};
	__u32 proto = 0;

	bpf_printk("packet size: %d", pkt_sz);
	if ((void *)(eth + 1) <= data_end)
		proto = bpf_ntohs(eth->h_proto);
	c = bpf_map_lookup_elem(&xdp_by_proto, &proto);
	if (c) {
		__sync_fetch_and_add(&c->packets, 1);
		__sync_fetch_and_add(&c->bytes, pkt_sz);
	} else {
		init.bytes = pkt_sz;
		bpf_map_update_elem(&xdp_by_proto, &proto, &init, BPF_NOEXIST);
	}
	return XDP_PASS;
}

/* A writer: the Ethernet addresses swapped, sent back (XDP_TX); runts
 * dropped. Needs: direct packet writes (xdp may write). */
SEC("xdp")
int xdp_swap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	unsigned char *p = data;

	if (p + ETH_HLEN > (unsigned char *)data_end)
		return XDP_DROP;
	for (int i = 0; i < ETH_ALEN; i++) {
		unsigned char t = p[i];

		p[i] = p[ETH_ALEN + i];
		p[ETH_ALEN + i] = t;
	}
	return XDP_TX;
}

/* Metadata before the data: xdp_md's data_meta, checked against data.
 * Needs: data_meta, a meta < data comparison. */
SEC("xdp")
int xdp_meta(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	__u32 *meta = (void *)(long)ctx->data_meta;

	if ((void *)(meta + 1) > data)
		return XDP_ABORTED;
	return *meta == 0x01020304 ? XDP_DROP : XDP_PASS;
}

struct so_event {
	__be32 src_addr;
	__be32 dst_addr;
	__be32 ports;
	__u32 ip_proto;
	__u32 pkt_type;
	__u32 ifindex;
	__u32 len;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} rb SEC(".maps");

/* sockfilter.bpf.c: one event per IPv4 packet that is not a fragment,
 * its addresses, protocol and ports read with the legacy loads, into a
 * ring buffer; the packet kept whole (its length returned). Needs: a socket
 * section, LD_ABS (relative to the data and to the link and network
 * headers) and LD_IND, __sk_buff.pkt_type, ifindex and len, a ring buffer. */
SEC("socket")
int socket_handler(struct __sk_buff *skb)
{
	struct so_event *e;
	__u32 verlen, proto, ip_proto, frag, ports = 0;

	proto = load_half(skb, SKF_LL_OFF + 12);
	if (proto != ETH_P_IP)
		return 0;
	frag = load_half(skb, SKF_NET_OFF + 6);
	if (frag & 0x3fff) /* IP_MF | IP_OFFSET */
		return 0;
	ip_proto = load_byte(skb, 9);
	verlen = load_byte(skb, 0);
	if (ip_proto != IPPROTO_GRE)
		ports = load_word(skb, (verlen & 0xf) << 2);
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e)
		return 0;
	e->ip_proto = ip_proto;
	e->ports = ports;
	e->pkt_type = skb->pkt_type;
	e->ifindex = skb->ifindex;
	e->len = skb->len;
	e->src_addr = 0;
	e->dst_addr = 0;
	bpf_ringbuf_submit(e, 0);
	return skb->len;
}

/* The addresses with LD_ABS before the event (no load may run while a
 * record is reserved: it can end the program). Needs: LD_ABS words. */
SEC("socket")
int socket_addrs(struct __sk_buff *skb)
{
	__u32 src = load_word(skb, 12), dst = load_word(skb, 16);

	return (src ^ dst) & 0xffff;
}

char _license[] SEC("license") = "GPL";
