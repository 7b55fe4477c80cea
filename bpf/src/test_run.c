/* SPDX-License-Identifier: MIT */
/*
 * test_run.c: rqbpf_prog_test_run(), BPF_PROG_TEST_RUN's contract. For a
 * program type with a packet it builds what the 6.18 kernel's
 * bpf_prog_test_run_skb() and bpf_prog_test_run_xdp() build (net/bpf/
 * test_run.c): the packet in a buffer of its own, the context's fields from
 * the packet and from ctx_in, with the kernel's checks of ctx_in; after the
 * runs it gives back the packet and the fields the kernel copies back.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdlib.h>
#include <string.h>

#include "rqu_clock.h"
#include "runtime.h"

/* The most packet bytes the kernel takes in one page (x86-64, 4 KiB pages):
 * PAGE_SIZE less its headroom (NET_SKB_PAD 64; XDP_PACKET_HEADROOM 256) and
 * tailroom (skb_shared_info, 320). */
#define SKB_MAX_DATA 3712u
#define XDP_MAX_DATA 3520u
#define XDP_MAX_META 32u
#define GSO_MAX_SEGS 65535u
#define GSO_MAX_LEN  65536u
#define LOOPBACK_IF  1u /* the kernel runs skb programs on the loopback device */

enum pkt_kind { PKT_NONE, PKT_SKB, PKT_XDP };

static enum pkt_kind kind_of(uint32_t type)
{
	switch (type) {
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_SOCKET_FILTER:
	case BPF_PROG_TYPE_CGROUP_SKB:
		return PKT_SKB;
	case BPF_PROG_TYPE_XDP:
		return PKT_XDP;
	default:
		return PKT_NONE;
	}
}

/* Programs that see the Ethernet header (the kernel's is_l2). */
static bool is_l2(uint32_t type)
{
	return type == BPF_PROG_TYPE_SCHED_CLS || type == BPF_PROG_TYPE_SCHED_ACT;
}

static bool all_zero(const void *p, size_t from, size_t to)
{
	const uint8_t *b = p;

	for (size_t i = from; i < to; i++)
		if (b[i])
			return false;
	return true;
}

/* The kernel's convert___skb_to_skb(): the fields ctx_in may set; the rest
 * must be zero. */
static bool skb_ctx_in_ok(const struct __sk_buff *c)
{
#define END(f) (offsetof(struct __sk_buff, f) + sizeof(c->f))
#define AT(f)  offsetof(struct __sk_buff, f)
	return all_zero(c, 0, AT(mark)) && all_zero(c, END(mark), AT(priority)) &&
	       all_zero(c, END(ifindex), AT(cb)) && all_zero(c, END(cb), AT(tstamp)) &&
	       all_zero(c, END(gso_segs), AT(gso_size)) &&
	       all_zero(c, END(gso_size), AT(hwtstamp)) && all_zero(c, END(hwtstamp), sizeof(*c)) &&
	       c->gso_segs <= GSO_MAX_SEGS;
#undef END
#undef AT
}

/* What eth_type_trans() makes of the frame at @f (@n bytes, at least an
 * Ethernet header) on the loopback device (address 00:00:00:00:00:00): the
 * protocol, in network order, and the packet type. */
static void eth_trans(const uint8_t *f, uint32_t n, uint32_t *proto, uint32_t *pkt_type)
{
	static const uint8_t zero[ETH_ALEN];
	uint16_t p = (uint16_t)(f[12] << 8 | f[13]);

	if (p >= ETH_P_802_3_MIN)
		*proto = (uint32_t)__builtin_bswap16(p);
	else if (n >= ETH_HLEN + 2 && f[ETH_HLEN] == 0xff && f[ETH_HLEN + 1] == 0xff)
		*proto = __builtin_bswap16(ETH_P_802_3);
	else
		*proto = __builtin_bswap16(ETH_P_802_2);
	/* loopback's broadcast address is its own, all zeros: ff:ff:.. is multicast */
	if (!memcmp(f, zero, ETH_ALEN))
		*pkt_type = PACKET_HOST;
	else
		*pkt_type = f[0] & 1 ? PACKET_MULTICAST : PACKET_OTHERHOST;
}

/* A run's packet and context, as the kernel builds them. */
struct setup {
	struct rqbpf_packet pkt;
	union {
		struct __sk_buff skb;
		struct xdp_md xdp;
	} ctx;
	size_t ctx_size;
	uint32_t meta;  /* xdp: metadata bytes before the data */
	uint32_t total; /* the packet's bytes, fragments included */
};

static int skb_setup(uint32_t type, const struct rqbpf_test_run_opts *o, struct setup *s)
{
	struct __sk_buff *c = &s->ctx.skb;
	uint32_t n = o->data_size_in, data = is_l2(type) ? 0 : ETH_HLEN;

	if (n <= ETH_HLEN || n > SKB_MAX_DATA) /* the kernel wants a payload */
		return -EINVAL;
	if (o->ctx_in && !skb_ctx_in_ok(c))
		return -EINVAL;
	memcpy(s->pkt.buf, o->data_in, n);
	s->pkt = (struct rqbpf_packet){s->pkt.buf, n, is_l2(type), data, 0, ETH_HLEN};
	s->total = n;
	eth_trans(s->pkt.buf, n, &c->protocol, &c->pkt_type);
	c->len = n - data;
	if (c->ifindex <= LOOPBACK_IF)
		c->ifindex = LOOPBACK_IF;
	if (!c->wire_len)
		c->wire_len = c->len;
	else if (c->wire_len < c->len || c->wire_len > GSO_MAX_LEN)
		return -EINVAL;
	c->data = c->data_meta = RQBPF_PKT_VA + data;
	c->data_end = RQBPF_PKT_VA + n;
	s->ctx_size = sizeof(*c);
	return 0;
}

/* The kernel's checks of an xdp_md context: no data before the metadata,
 * data_end (the bytes in the linear part, which the program reaches
 * directly) at most the packet's size, metadata a multiple of 4 up to 32
 * bytes, no egress device, and a queue only with a device (rqbpf has none
 * other than the default, loopback's queue 0). The kernel takes a context
 * when ctx_in or ctx_out is given: with ctx_out alone it is all zeros, its
 * linear part empty. The bytes past the linear part are fragments, which
 * the program cannot reach directly; data_out has them all. */
static int xdp_setup(const struct rqbpf_test_run_opts *o, struct setup *s)
{
	struct xdp_md *c = &s->ctx.xdp;
	uint32_t n = o->data_size_in, linear = n;

	if (o->ctx_in || o->ctx_out) {
		if (c->data_meta || c->data_end > n || c->data > c->data_end ||
		    c->data > XDP_MAX_META || c->data % 4)
			return -EINVAL;
		if (c->egress_ifindex || (!c->ingress_ifindex && c->rx_queue_index) ||
		    (c->ingress_ifindex && c->ingress_ifindex != LOOPBACK_IF) || c->rx_queue_index)
			return -EINVAL;
		s->meta = c->data;
		linear = c->data_end;
	}
	if (n > XDP_MAX_DATA || n - s->meta < ETH_HLEN) /* meta <= data_end <= n */
		return -EINVAL;
	/* the metadata comes from data_in's first bytes, as in the kernel */
	memcpy(s->pkt.buf, o->data_in, n);
	s->pkt = (struct rqbpf_packet){s->pkt.buf, linear, true, s->meta, 0, 0};
	s->total = n;
	c->data_meta = RQBPF_PKT_VA;
	c->data = RQBPF_PKT_VA + s->meta;
	c->data_end = RQBPF_PKT_VA + linear;
	c->ingress_ifindex = LOOPBACK_IF;
	c->rx_queue_index = 0;
	s->ctx_size = sizeof(*c);
	return 0;
}

/* The context fields the kernel copies back (convert_skb_to___skb(),
 * xdp_convert_buff_to_md()) over ctx_in's, into @out. */
static void ctx_finish(enum pkt_kind k, const struct setup *s, const void *ctx_in, void *out)
{
	if (k == PKT_XDP) {
		struct xdp_md *x = out;

		memset(x, 0, sizeof(*x));
		if (ctx_in)
			memcpy(x, ctx_in, sizeof(*x));
		x->data = s->meta;
		x->data_end = s->pkt.size; /* from data_meta, as the kernel gives it */
		x->data_meta = 0;
		return;
	}
	const struct __sk_buff *r = &s->ctx.skb;
	struct __sk_buff *c = out;

	memset(c, 0, sizeof(*c));
	if (ctx_in)
		memcpy(c, ctx_in, sizeof(*c));
	c->mark = r->mark;
	c->priority = r->priority;
	c->ingress_ifindex = r->ingress_ifindex;
	c->ifindex = r->ifindex;
	c->tstamp = r->tstamp;
	memcpy(c->cb, r->cb, sizeof(c->cb));
	c->wire_len = r->wire_len;
	c->gso_segs = r->gso_segs;
	c->hwtstamp = r->hwtstamp;
}

static int run_repeat(const struct rqbpf_prog *prog, void *ctx, size_t ctx_size,
                      const struct rqbpf_packet *pkt, struct rqbpf_test_run_opts *o)
{
	uint32_t n = o->repeat ? o->repeat : 1;
	uint64_t t0 = rqu_now_ns();
	int ret = 0;

	for (uint32_t i = 0; i < n && !ret; i++)
		ret = rqbpf_run_packet(prog, ctx, ctx_size, pkt, &o->result);
	o->duration = (uint32_t)((rqu_now_ns() - t0) / n);
	o->retval = (uint32_t)o->result.retval;
	return ret;
}

/* Copies @n bytes of @src to @dst (@cap bytes; NULL: none wanted); sets
 * *@p size to @n; -ENOSPC when they did not fit. */
static int copy_out(void *dst, uint32_t *size, const void *src, size_t n)
{
	uint32_t cap = *size;

	*size = (uint32_t)n;
	if (!dst)
		return 0;
	memcpy(dst, src, n < cap ? n : cap);
	return n > cap ? -ENOSPC : 0;
}

/* A type without a packet: its context from ctx_in, as rqbpf_prog_run(). */
static int run_plain(const struct rqbpf_prog *prog, struct rqbpf_test_run_opts *o)
{
	size_t size = prog->lp.ctx_size;
	uint8_t *ctx;
	int ret;

	if (o->data_in || o->ctx_size_in > size)
		return -EINVAL;
	ctx = calloc(1, size ? size : 1);
	if (!ctx)
		return -ENOMEM;
	if (o->ctx_in)
		memcpy(ctx, o->ctx_in, o->ctx_size_in);
	ret = run_repeat(prog, size ? ctx : NULL, size, NULL, o);
	if (!ret && o->ctx_out)
		ret = copy_out(o->ctx_out, &o->ctx_size_out, ctx, size);
	free(ctx);
	return ret;
}

int rqbpf_prog_test_run(const struct rqbpf_prog *prog, struct rqbpf_test_run_opts *o)
{
	enum pkt_kind k;
	struct setup s;
	uint8_t buf[SKB_MAX_DATA]; /* > XDP_MAX_DATA */
	uint8_t out_ctx[sizeof(struct __sk_buff)];
	int ret, out;

	if (!prog || !o || (!o->data_in && o->data_size_in) || (!o->ctx_in && o->ctx_size_in))
		return -EINVAL;
	k = kind_of(prog->lp.prog_type);
	if (k == PKT_NONE)
		return run_plain(prog, o);
	memset(&s, 0, sizeof(s));
	if (o->ctx_in) {
		if (o->ctx_size_in > (k == PKT_SKB ? sizeof(s.ctx.skb) : sizeof(s.ctx.xdp)))
			return -EINVAL;
		memcpy(&s.ctx, o->ctx_in, o->ctx_size_in);
	}
	s.pkt.buf = buf;
	ret = k == PKT_SKB ? skb_setup(prog->lp.prog_type, o, &s) : xdp_setup(o, &s);
	if (ret)
		return ret;
	ret = run_repeat(prog, &s.ctx, s.ctx_size, &s.pkt, o);
	if (ret)
		return ret;
	if (k == PKT_SKB && !is_l2(prog->lp.prog_type))
		memset(buf, 0, ETH_HLEN); /* the kernel gives the header back zeroed */
	ret = copy_out(o->data_out, &o->data_size_out, buf, s.total);
	if (!o->ctx_out) /* the kernel leaves ctx_size_out alone then */
		return ret;
	ctx_finish(k, &s, o->ctx_in, out_ctx);
	out = copy_out(o->ctx_out, &o->ctx_size_out, out_ctx, s.ctx_size);
	return ret ? ret : out;
}
