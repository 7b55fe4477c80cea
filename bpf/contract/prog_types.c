/* SPDX-License-Identifier: MIT */
/* prog_types.c: the table of program types (prog_types.h) as rows. */
#include <stddef.h>

#include "prog_types.h"

#define ROW(type, ctx)                                                                             \
	{type,                                                                                     \
	 &(#ctx)[sizeof("struct")],                                                                \
	 sizeof(ctx),                                                                              \
	 offsetof(ctx, data),                                                                      \
	 offsetof(ctx, data_end),                                                                  \
	 offsetof(ctx, data_meta)},
static const struct rqbpf_prog_type types[] = {RQBPF_PROG_TYPES(ROW)};
#undef ROW

const struct rqbpf_prog_type *rqbpf_prog_type_find(uint32_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return &types[i];
	return NULL;
}

/* Program types and the rules of check_map_prog_compatibility() and
 * check_return_code() (Linux 6.18): X(type, attach or -1 for any, lock
 * refusal or NULL, has a return range, min, max). The first row that
 * matches type and attach applies. */
#define ANY_ATTACH (-1)
#define TRACING    "tracing progs cannot use bpf_spin_lock yet"
// clang-format off
#define RQBPF_PROG_RULES(X)                                                                        \
	X(BPF_PROG_TYPE_SOCKET_FILTER, ANY_ATTACH, "socket filter progs cannot use bpf_spin_lock yet", \
	  false, 0, 0)                                                                             \
	X(BPF_PROG_TYPE_KPROBE, ANY_ATTACH, TRACING, false, 0, 0)                                  \
	X(BPF_PROG_TYPE_TRACEPOINT, ANY_ATTACH, TRACING, false, 0, 0)                              \
	X(BPF_PROG_TYPE_PERF_EVENT, ANY_ATTACH, TRACING, false, 0, 0)                              \
	X(BPF_PROG_TYPE_RAW_TRACEPOINT, ANY_ATTACH, TRACING, false, 0, 0)                          \
	X(BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE, ANY_ATTACH, TRACING, false, 0, 0)                 \
	X(BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, NULL, true, 0, 3)                      \
	X(BPF_PROG_TYPE_CGROUP_SKB, ANY_ATTACH, NULL, true, 0, 1)                                  \
	X(BPF_PROG_TYPE_CGROUP_SOCK, ANY_ATTACH, NULL, true, 0, 1)                                 \
	X(BPF_PROG_TYPE_SOCK_OPS, ANY_ATTACH, NULL, true, 0, 1)                                    \
	X(BPF_PROG_TYPE_CGROUP_DEVICE, ANY_ATTACH, NULL, true, 0, 1)                               \
	X(BPF_PROG_TYPE_CGROUP_SYSCTL, ANY_ATTACH, NULL, true, 0, 1)                               \
	X(BPF_PROG_TYPE_CGROUP_SOCKOPT, ANY_ATTACH, NULL, true, 0, 1)                              \
	X(BPF_PROG_TYPE_SK_LOOKUP, ANY_ATTACH, NULL, true, 0, 1)                                   \
	X(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, NULL, true, 0, 0)                               \
	X(BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, NULL, true, 0, 0)
// clang-format on

struct prog_rule {
	uint32_t type;
	int32_t attach;
	const char *lock_refusal;
	bool has_range;
	int32_t min, max;
};

#define RULE(type, attach, lock, has, lo, hi) {type, attach, lock, has, lo, hi},
static const struct prog_rule rules[] = {RQBPF_PROG_RULES(RULE)};
#undef RULE

static const struct prog_rule *rule_of(uint32_t type, int32_t attach)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].type == type && (rules[i].attach == ANY_ATTACH ||
		                              attach == ANY_ATTACH || rules[i].attach == attach))
			return &rules[i];
	return NULL;
}

const char *rqbpf_prog_type_lock_refusal(uint32_t type)
{
	const struct prog_rule *r = rule_of(type, ANY_ATTACH);

	return r ? r->lock_refusal : NULL;
}

bool rqbpf_prog_type_ret_range(uint32_t type, uint32_t attach, int32_t *min, int32_t *max)
{
	const struct prog_rule *r = rule_of(type, (int32_t)attach);

	if (!r || !r->has_range)
		return false;
	*min = r->min;
	*max = r->max;
	return true;
}

/*
 * Context fields: X(offset, size, access by tc (sched_cls, sched_act),
 * by socket filters, by cgroup_skb) for struct __sk_buff, as the 6.18
 * kernel's tc_cls_act_, sk_filter_ and cg_skb_is_valid_access() allow
 * (checked offset by offset and size by size against it, as root); bytes
 * no row covers (padding, flow_keys) may not be accessed.
 */
// clang-format off
#define SKB_FIELDS(X)                                                                              \
	X(0, 4, READ, READ, READ)       /* len */                                                  \
	X(4, 4, READ, READ, READ)       /* pkt_type */                                             \
	X(8, 4, RW, READ, RW)           /* mark */                                                 \
	X(12, 4, RW, READ, READ)        /* queue_mapping */                                        \
	X(16, 16, READ, READ, READ)     /* protocol, vlan_present, vlan_tci, vlan_proto */         \
	X(32, 4, RW, READ, RW)          /* priority */                                             \
	X(36, 8, READ, READ, READ)      /* ingress_ifindex, ifindex */                             \
	X(44, 4, RW, READ, READ)        /* tc_index */                                             \
	X(48, 20, ANY, ANY, ANY)        /* cb[5] */                                                \
	X(68, 4, READ, READ, READ)      /* hash */                                                 \
	X(72, 4, RW, NONE, NONE)        /* tc_classid */                                           \
	X(76, 4, PACKET, NONE, PACKET)  /* data */                                                 \
	X(80, 4, PACKET, NONE, PACKET)  /* data_end */                                             \
	X(84, 4, READ, READ, READ)      /* napi_id */                                              \
	X(88, 4, NONE, NONE, READ)      /* family */                                               \
	X(92, 40, NONE, NONE, READ4)    /* remote_ip4, local_ip4, remote_ip6[4], local_ip6[4] */   \
	X(132, 8, NONE, NONE, READ)     /* remote_port, local_port */                              \
	X(140, 4, PACKET, NONE, NONE)   /* data_meta */                                            \
	X(152, 8, RW8, NONE, RW8)       /* tstamp */                                               \
	X(160, 4, READ, NONE, NONE)     /* wire_len */                                             \
	X(164, 4, READ, READ, READ)     /* gso_segs */                                             \
	X(168, 8, READ8, READ8, READ8)  /* sk */                                                   \
	X(176, 4, READ, READ, READ)     /* gso_size */                                             \
	X(180, 1, READ1, NONE, NONE)    /* tstamp_type */                                          \
	X(184, 8, READ8, NONE, READ8)   /* hwtstamp */
// clang-format on

struct ctx_field {
	uint16_t off, size;
	uint8_t access[3]; /* enum rqbpf_ctx_access, by the columns above */
};

#define FIELD(off, size, tc, sock, cg)                                                             \
	{off, size, {RQBPF_CTX_##tc, RQBPF_CTX_##sock, RQBPF_CTX_##cg}},
static const struct ctx_field skb_fields[] = {SKB_FIELDS(FIELD)};
#undef FIELD

/* struct xdp_md, by xdp_is_valid_access() (not a devmap program): read
 * only, 4 bytes at a time; egress_ifindex (20) is for devmap programs. */
static const struct ctx_field xdp_fields[] = {
    {0, 12, {RQBPF_CTX_PACKET}}, /* data, data_end, data_meta */
    {12, 8, {RQBPF_CTX_READ4}},  /* ingress_ifindex, rx_queue_index */
};

/* The fields of @type's context and its column, or NULL. */
static const struct ctx_field *ctx_fields(uint32_t type, size_t *n, int *col)
{
	*col = 0;
	switch (type) {
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_SOCKET_FILTER:
	case BPF_PROG_TYPE_CGROUP_SKB:
		*col = type == BPF_PROG_TYPE_SOCKET_FILTER ? 1
		       : type == BPF_PROG_TYPE_CGROUP_SKB  ? 2
		                                           : 0;
		*n = sizeof(skb_fields) / sizeof(skb_fields[0]);
		return skb_fields;
	case BPF_PROG_TYPE_XDP:
		*n = sizeof(xdp_fields) / sizeof(xdp_fields[0]);
		return xdp_fields;
	default:
		*n = 0;
		return NULL;
	}
}

/* Whether @size bytes at @off, inside field @f, may be accessed as @a allows. */
static bool field_access_ok(const struct ctx_field *f, enum rqbpf_ctx_access a, int off, int size,
                            bool write)
{
	bool narrow = (size == 1 || size == 2 || size == 4) && off % size == 0;

	switch (a) {
	case RQBPF_CTX_READ:
		return !write && narrow;
	case RQBPF_CTX_RW:
		return write ? size == 4 && off % 4 == 0 : narrow;
	case RQBPF_CTX_READ1:
		return !write && size == 1;
	case RQBPF_CTX_READ4:
	case RQBPF_CTX_PACKET:
		return !write && size == 4 && (off - f->off) % 4 == 0;
	case RQBPF_CTX_READ8:
		return !write && size == 8 && off == f->off;
	case RQBPF_CTX_RW8:
		return size == 8 && off == f->off;
	case RQBPF_CTX_ANY:
		return (narrow || size == 8) && off % size == 0;
	default:
		return false;
	}
}

bool rqbpf_ctx_access_ok(uint32_t type, int off, int size, bool write)
{
	size_t n;
	int col;
	const struct ctx_field *f = ctx_fields(type, &n, &col);

	for (size_t i = 0; f && i < n; i++)
		if (off >= f[i].off && off < f[i].off + f[i].size)
			return off + size <= f[i].off + f[i].size &&
			       field_access_ok(&f[i], (enum rqbpf_ctx_access)f[i].access[col], off,
			                       size, write);
	return false;
}
