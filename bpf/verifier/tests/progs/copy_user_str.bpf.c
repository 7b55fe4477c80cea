// SPDX-License-Identifier: MIT
/* bpf_copy_from_user_str's argument checks: the buffer may be
 * uninitialised stack (the kfunc fills it); a NULL buffer, a size past it
 * or an unbounded one, and a program that may not sleep are refused with
 * the kernel's messages (expect.txt; verifier_kernel compares). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern int bpf_copy_from_user_str(void *dst, __u32 dst__sz, const void *unsafe_ptr__ign,
                                  __u64 flags) __ksym;

__u64 uptr;
__u32 usize;

SEC("?syscall")
int str_uninit_stack(void *ctx)
{
	char buf[8];
	int r = bpf_copy_from_user_str(buf, sizeof(buf), (void *)uptr, 0);

	return r + buf[0];
}

SEC("?syscall")
int str_null_dst(void *ctx)
{
	return bpf_copy_from_user_str((void *)0, 0, (void *)uptr, 0);
}

SEC("?syscall")
int str_past_buffer(void *ctx)
{
	char buf[8] = {};

	return bpf_copy_from_user_str(buf, 16, (void *)uptr, 0);
}

SEC("?syscall")
int str_unbounded_size(void *ctx)
{
	char buf[8] = {};

	return bpf_copy_from_user_str(buf, usize, (void *)uptr, 0);
}

SEC("?tc")
int str_not_sleepable(void *ctx)
{
	char buf[8] = {};

	return bpf_copy_from_user_str(buf, sizeof(buf), (void *)uptr, 0);
}

char _license[] SEC("license") = "GPL";
