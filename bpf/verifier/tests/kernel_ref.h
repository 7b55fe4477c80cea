/* SPDX-License-Identifier: MIT */
/*
 * kernel_ref.h: the running kernel's verifier as a reference. Loads each
 * program of an object on its own with libbpf and keeps the verdict and
 * the kernel's log.
 */
#ifndef RQBPF_VERIFIER_TEST_KERNEL_REF_H
#define RQBPF_VERIFIER_TEST_KERNEL_REF_H

#include <stdbool.h>

struct kref_result {
	char name[128];
	bool accepted;
	char last_line[256]; /* rejected: the log's last message line */
	char *log;           /* the whole log */
};

/* Root, and bpf_res_spin_lock in /sys/kernel/btf/vmlinux. */
bool kref_available(void);

/* Load each program of the object at @path; returns the count and *out
 * (free with kref_free), or a negative errno. */
int kref_verify_object(const char *path, struct kref_result **out);

void kref_free(struct kref_result *res, int n);

/* Silence libbpf's own messages (the tests print the kernel's). */
void kref_quiet_libbpf(void);

#endif
