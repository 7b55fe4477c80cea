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

/* Open-coded numeric iterator (8 bytes on the stack): new() makes it yield
 * start, start + 1, ..., end - 1 (nothing when end <= start; -EINVAL and
 * nothing for a range over 1 << 23); next() returns a pointer to the next
 * value or NULL; every new() needs its destroy(), also after an error. */
struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;

/* Ends the program at once, which returns @cookie; no lock, irq region or
 * reference (an iterator, a ring buffer record) may be held, and a
 * callback may not call it. */
extern void bpf_throw(__u64 cookie) __ksym;

/* Loops over an iterator, in the shapes libbpf's bpf_helpers.h (1.2 on)
 * gives them; defined here only where that header does not. bpf_for(i, a,
 * b): i from a to b - 1; bpf_repeat(n): n times. The iterator is destroyed
 * when the loop's scope ends (cleanup attribute). */
#ifndef bpf_for
#define bpf_for(i, start, end)                                                                     \
	for (struct bpf_iter_num ___it __attribute__((aligned(8), cleanup(bpf_iter_num_destroy))), \
	     *___p __attribute__((unused)) = (bpf_iter_num_new(&___it, (start), (end)),            \
	                                      (void)bpf_iter_num_destroy, (void *)0);              \
	     ({                                                                                    \
		     int *___t = bpf_iter_num_next(&___it);                                        \
		     (___t && ((i) = *___t, 1));                                                   \
	     });)
#endif
#ifndef bpf_repeat
#define bpf_repeat(n)                                                                              \
	for (struct bpf_iter_num ___it __attribute__((aligned(8), cleanup(bpf_iter_num_destroy))), \
	     *___p __attribute__((unused)) =                                                       \
	         (bpf_iter_num_new(&___it, 0, (n)), (void)bpf_iter_num_destroy, (void *)0);        \
	     bpf_iter_num_next(&___it);)
#endif

#endif /* RQBPF_BPF_RES_SPIN_LOCK_H */
