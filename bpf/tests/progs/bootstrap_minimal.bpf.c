// SPDX-License-Identifier: MIT
/*
 * Adapted from libbpf-bootstrap's examples/c/minimal.bpf.c and
 * minimal_legacy.bpf.c (github.com/libbpf/libbpf-bootstrap; rewritten, not
 * copied): a tracepoint program that prints a line when the process whose
 * id the loader set runs it. Features they need: a tracepoint section,
 * bpf_get_current_pid_tgid, bpf_printk (format in .rodata), the pid in a
 * global (minimal) or in a one-element array (minimal_legacy).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

int my_pid SEC(".data.pid") = 0;

/* minimal: 0 after printing for the process my_pid names, 1 for others. */
SEC("tp/syscalls/sys_enter_write")
int minimal(void *ctx)
{
	int pid = bpf_get_current_pid_tgid() >> 32;

	if (pid != my_pid)
		return 1;
	bpf_printk("BPF triggered from PID %d.\n", pid);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, int);
} pid_map SEC(".maps");

/* minimal_legacy: the same, the pid in pid_map[0] (no global data). */
SEC("tp/syscalls/sys_enter_write")
int minimal_legacy(void *ctx)
{
	__u32 key = 0;
	int pid = bpf_get_current_pid_tgid() >> 32;
	int *want = bpf_map_lookup_elem(&pid_map, &key);

	if (!want || *want != pid)
		return 1;
	bpf_printk("BPF triggered from PID %d.\n", pid);
	return 0;
}

char _license[] SEC("license") = "Dual BSD/GPL";
