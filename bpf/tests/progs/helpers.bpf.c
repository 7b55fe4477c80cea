// SPDX-License-Identifier: MIT
/* The helpers besides the map ones: trace_printk (format in .rodata),
 * ktime_get_ns, get_prandom_u32, get_smp_processor_id, get_current_pid_tgid,
 * get_current_uid_gid, get_current_comm, copy_from_user. */
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

/* The current ids into the context: cb[0] tgid, cb[1] pid, cb[2] uid,
 * cb[3] gid. */
SEC("tc")
int current_ids(struct __sk_buff *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid(), ug = bpf_get_current_uid_gid();

	ctx->cb[0] = pt >> 32;
	ctx->cb[1] = (__u32)pt;
	ctx->cb[2] = (__u32)ug;
	ctx->cb[3] = ug >> 32;
	return 0;
}

/* The thread's name into cb[0..3] (16 bytes, uninitialised stack filled by
 * the helper); returns the helper's result. */
SEC("tc")
int current_comm(struct __sk_buff *ctx)
{
	__u32 w[4];
	long r = bpf_get_current_comm(w, sizeof(w));

	ctx->cb[0] = w[0];
	ctx->cb[1] = w[1];
	ctx->cb[2] = w[2];
	ctx->cb[3] = w[3];
	return r;
}

/* A 6-byte buffer: 5 characters and the NUL; cb[0..1] as above. */
SEC("tc")
int current_comm_short(struct __sk_buff *ctx)
{
	__u16 w[3];
	long r = bpf_get_current_comm(w, sizeof(w));

	ctx->cb[0] = w[0] | (__u32)w[1] << 16;
	ctx->cb[1] = w[2];
	return r;
}

/* copy_from_user's input and output: the user pointer (set by the test),
 * the bytes read, the helper's result. */
struct copy_io {
	__u64 uptr;
	char buf[16];
	long ret;
};

struct copy_io io SEC(".data.io") = {};

/* A sleepable program (syscall): 16 bytes at io.uptr into io.buf. */
SEC("syscall")
int copy_user(void *ctx)
{
	io.ret = bpf_copy_from_user(io.buf, sizeof(io.buf), (void *)io.uptr);
	return (int)io.ret;
}

char _license[] SEC("license") = "GPL";
