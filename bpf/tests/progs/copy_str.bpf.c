// SPDX-License-Identifier: MIT
/* bpf_copy_from_user_str (a sleepable kfunc: syscall programs) with the
 * pointer, size and flags the test sets in io; bpf_kernel.c runs it in the
 * kernel and in rqbpf and compares the result and the bytes written. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern int bpf_copy_from_user_str(void *dst, __u32 dst__sz, const void *unsafe_ptr__ign,
                                  __u64 flags) __ksym;

struct str_io {
	__u64 uptr;
	__u64 flags;
	__u32 size; /* at most sizeof(buf) */
	char buf[16];
	int ret;
};

struct str_io io SEC(".data.io") = {};

SEC("syscall")
int copy_str(void *ctx)
{
	__u32 size = io.size;

	if (size > sizeof(io.buf))
		return -1;
	io.ret = bpf_copy_from_user_str(io.buf, size, (void *)io.uptr, io.flags);
	return io.ret;
}

char _license[] SEC("license") = "GPL";
