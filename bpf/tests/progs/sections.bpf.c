// SPDX-License-Identifier: MIT
/* One program per section name that could mean a tc, socket, cgroup_skb or
 * xdp program: rqbpf must take a section as a program type exactly when the
 * libbpf it is built with does (bpf_loader: libbpf 1.1 refuses tc/ingress,
 * tc/egress, tcx/ingress and tcx/egress, which libbpf 1.3 added; bpf_kernel:
 * each loads in the kernel through libbpf exactly when rqbpf has no error
 * for it). A refused section is that program's error ("unknown program type
 * for section"), never a program with no context. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int sec_tc(void *ctx)
{
	return 0;
}

SEC("classifier")
int sec_classifier(void *ctx)
{
	return 0;
}

SEC("action")
int sec_action(void *ctx)
{
	return 0;
}

SEC("socket")
int sec_socket(void *ctx)
{
	return 0;
}

SEC("xdp")
int sec_xdp(void *ctx)
{
	return 0;
}

SEC("xdp.frags")
int sec_xdp_frags(void *ctx)
{
	return 0;
}

SEC("cgroup_skb/ingress")
int sec_cgroup_skb_ingress(void *ctx)
{
	return 0;
}

SEC("cgroup_skb/egress")
int sec_cgroup_skb_egress(void *ctx)
{
	return 0;
}

SEC("tc/ingress")
int sec_tc_ingress(void *ctx)
{
	return 0;
}

SEC("tc/egress")
int sec_tc_egress(void *ctx)
{
	return 0;
}

SEC("tcx/ingress")
int sec_tcx_ingress(void *ctx)
{
	return 0;
}

SEC("tcx/egress")
int sec_tcx_egress(void *ctx)
{
	return 0;
}

SEC("classifier/x")
int sec_classifier_x(void *ctx)
{
	return 0;
}

SEC("?tc/x")
int sec_tc_x(void *ctx)
{
	return 0;
}

char _license[] SEC("license") = "GPL";
