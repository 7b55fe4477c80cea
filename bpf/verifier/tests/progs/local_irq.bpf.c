/* SPDX-License-Identifier: MIT */
/*
 * local_irq: bpf_local_irq_save/restore. Programs the verifier (and the
 * kernel) accept, then one per rule they break, with that rule's message
 * (see expect.txt).
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u64);
} irq_vals SEC(".maps");

struct bpf_res_spin_lock irq_lock HIDDEN SEC(".data.I");

SEC("?tc")
int irq_update(struct __sk_buff *ctx)
{
	unsigned long flags;
	int key = ctx->cb[0] & 3;
	__u64 v = 1;

	bpf_local_irq_save(&flags);
	bpf_map_update_elem(&irq_vals, &key, &v, BPF_ANY);
	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_nested(struct __sk_buff *ctx)
{
	unsigned long f1, f2;

	bpf_local_irq_save(&f1);
	bpf_local_irq_save(&f2);
	bpf_local_irq_restore(&f2);
	bpf_local_irq_restore(&f1);
	return 0;
}

SEC("?tc")
int irq_around_lock(struct __sk_buff *ctx)
{
	unsigned long f1, f2;

	bpf_local_irq_save(&f1);
	if (!bpf_res_spin_lock_irqsave(&irq_lock, &f2))
		bpf_res_spin_unlock_irqrestore(&irq_lock, &f2);
	bpf_local_irq_restore(&f1);
	return 0;
}

SEC("?tc")
int irq_exit_open(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	return 0;
}

SEC("?tc")
int irq_out_of_order(struct __sk_buff *ctx)
{
	unsigned long f1, f2;

	bpf_local_irq_save(&f1);
	bpf_local_irq_save(&f2);
	bpf_local_irq_restore(&f1);
	bpf_local_irq_restore(&f2);
	return 0;
}

SEC("?tc")
int irq_restore_unsaved(struct __sk_buff *ctx)
{
	unsigned long flags = 0;

	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_save_twice(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	bpf_local_irq_save(&flags);
	bpf_local_irq_restore(&flags);
	return 0;
}

/* bpf_local_irq_restore is not a call allowed while a lock is held. */
SEC("?tc")
int irq_restore_under_lock(struct __sk_buff *ctx)
{
	unsigned long flags;

	if (bpf_res_spin_lock_irqsave(&irq_lock, &flags))
		return 0;
	bpf_local_irq_restore(&flags);
	bpf_res_spin_unlock(&irq_lock);
	return 0;
}

/*
 * Flags at offsets no flag can have: variable, at or above the frame
 * pointer, below the stack. The kernel names the problem on one line and
 * ends with the flag's expected state, except for a save below the stack,
 * which fails as the write it would do.
 */
#define IRQ_ASM(name, body)                                                                        \
	SEC("?tc") __attribute__((naked)) int name(void)                                           \
	{                                                                                          \
		asm volatile(                                                                      \
		    body ::[save] "i"(bpf_local_irq_save), [restore] "i"(bpf_local_irq_restore),   \
		    [lock_irqsave] "i"(bpf_res_spin_lock_irqsave), [lock] "i"(&irq_lock));         \
	}

IRQ_ASM(irq_flag_var_off, "r2 = *(u32 *)(r1 + 0);"
                          "r2 &= 8;"
                          "r1 = r10;"
                          "r1 += -16;"
                          "r1 += r2;"
                          "call %[save];"
                          "r0 = 0;"
                          "exit;")
IRQ_ASM(irq_flag_at_fp, "r1 = r10;"
                        "call %[save];"
                        "r0 = 0;"
                        "exit;")
IRQ_ASM(irq_restore_above_fp, "r1 = r10;"
                              "r1 += 8;"
                              "call %[restore];"
                              "r0 = 0;"
                              "exit;")
IRQ_ASM(irq_flag_below_stack, "r1 = r10;"
                              "r1 += -520;"
                              "call %[save];"
                              "r0 = 0;"
                              "exit;")
IRQ_ASM(irq_restore_below_stack, "r1 = r10;"
                                 "r1 += -520;"
                                 "call %[restore];"
                                 "r0 = 0;"
                                 "exit;")
IRQ_ASM(irq_lock_flag_above_fp, "r1 = %[lock] ll;"
                                "r2 = r10;"
                                "r2 += 16;"
                                "call %[lock_irqsave];"
                                "r0 = 0;"
                                "exit;")

char _license[] SEC("license") = "GPL";
