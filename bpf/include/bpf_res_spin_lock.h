/* SPDX-License-Identifier: MIT */
/*
 * bpf_res_spin_lock.h: for authors of BPF programs that rqbpf (and a kernel
 * with resilient spin locks) runs. Debian's <linux/bpf.h> and libbpf's
 * <bpf/bpf_helpers.h> predate res locks, so this header declares the lock
 * type, the four res-lock kfuncs and bpf_local_irq_save/restore. Include it
 * after <bpf/bpf_helpers.h>.
 */
#ifndef RQBPF_BPF_RES_SPIN_LOCK_H
#define RQBPF_BPF_RES_SPIN_LOCK_H

#ifndef __ksym
#define __ksym __attribute__((section(".ksyms")))
#endif

/* The lock, embedded in a map value or a global variable (4 bytes). */
struct bpf_res_spin_lock {
	__u32 val;
};

/* 0 on success; -EDEADLK or -ETIMEDOUT, and the lock is not held. */
extern int bpf_res_spin_lock(struct bpf_res_spin_lock *lock) __ksym;
extern void bpf_res_spin_unlock(struct bpf_res_spin_lock *lock) __ksym;
/* As above, and the caller's signals (interrupts) stay blocked while held;
 * *flags keeps the previous mask for the matching irqrestore. */
extern int bpf_res_spin_lock_irqsave(struct bpf_res_spin_lock *lock,
                                     unsigned long *flags__irq_flag) __ksym;
extern void bpf_res_spin_unlock_irqrestore(struct bpf_res_spin_lock *lock,
                                           unsigned long *flags__irq_flag) __ksym;
/* Block the caller's signals (interrupts) until the matching restore, which
 * takes the same flag; regions nest and close in reverse order. */
extern void bpf_local_irq_save(unsigned long *flags__irq_flag) __ksym;
extern void bpf_local_irq_restore(unsigned long *flags__irq_flag) __ksym;

#endif /* RQBPF_BPF_RES_SPIN_LOCK_H */
