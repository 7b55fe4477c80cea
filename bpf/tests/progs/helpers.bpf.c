// SPDX-License-Identifier: MIT
/* The helpers besides the map ones: trace_printk (format in .rodata),
 * ktime_get_ns, get_prandom_u32, get_smp_processor_id. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* trace_printk's return value: the bytes written ("rqbpf 7 -3 ff\n" = 14). */
SEC("tc")
int printk(struct __sk_buff *ctx)
{
	return bpf_printk("rqbpf %d %d %x\n", 7, -3, 255);
}

/* 1 when two clock reads are ordered and two random numbers differ. */
SEC("tc")
int time_and_random(struct __sk_buff *ctx)
{
	__u64 t0 = bpf_ktime_get_ns(), t1 = bpf_ktime_get_ns();
	__u32 a = bpf_get_prandom_u32(), b = bpf_get_prandom_u32();

	return t1 >= t0 && t0 > 0 && a != b;
}

SEC("tc")
int cpu_id(struct __sk_buff *ctx)
{
	return bpf_get_smp_processor_id();
}

char _license[] SEC("license") = "GPL";
