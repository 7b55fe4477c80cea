// SPDX-License-Identifier: MIT
/* Constructs rqbpf does not support, each in its own program so that each
 * is that program's error (bpf_loader checks the exact messages):
 * bpf_printk with four arguments
 * (bpf_trace_vprintk), and maps of a type rqbpf does not have (a device
 * map; a program array with a BTF `values` initialiser): the programs
 * that use them are refused, naming the map; the object still loads and
 * its other programs run. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} devs SEC(".maps");

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} inner SEC(".maps");

int use_inner(struct __sk_buff *skb);

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, int(struct __sk_buff *));
} jmp_table SEC(".maps") = {
    .values = {[0] = (void *)&use_inner},
};

SEC("?tc")
int use_devmap(struct __sk_buff *skb)
{
	__u32 k = 0;
	__u32 *v = bpf_map_lookup_elem(&devs, &k);

	return v ? 1 : 0;
}

SEC("?tc")
int use_jmp_table(struct __sk_buff *skb)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&jmp_table, &k) ? 1 : 0;
}

/* Autoloaded: the object loads, and this program runs. */
SEC("tc")
int use_inner(struct __sk_buff *skb)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&inner, &k);

	if (!v)
		return 0;
	*v += 1;
	return (int)*v;
}

SEC("?tc")
int printk4(struct __sk_buff *skb)
{
	bpf_printk("%u %u %u %u", skb->cb[0], skb->cb[1], skb->cb[2], skb->cb[3]);
	return 0;
}

char _license[] SEC("license") = "GPL";
