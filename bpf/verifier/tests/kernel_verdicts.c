/* SPDX-License-Identifier: MIT */
/*
 * kernel_verdicts: load each program of a BPF object into the running
 * kernel, one at a time (libbpf, log level 1), and print the kernel's
 * verdict in rqbpf verify's format. With -l DIR, each program's kernel log
 * goes to DIR/NAME.log. Exit 0 when every program was tried, 77 when the
 * kernel cannot be used (not root, or no bpf_res_spin_lock in its BTF).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_ref.h"

int main(int argc, char **argv)
{
	const char *logdir = NULL, *path;
	struct kref_result *res = NULL;
	int n, opt;

	while ((opt = getopt(argc, argv, "l:")) != -1) {
		if (opt != 'l') {
			fprintf(stderr, "usage: kernel_verdicts [-l LOGDIR] OBJ\n");
			return 2;
		}
		logdir = optarg;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: kernel_verdicts [-l LOGDIR] OBJ\n");
		return 2;
	}
	path = argv[optind];
	kref_quiet_libbpf();
	if (!kref_available()) {
		printf("SKIP: needs root and a kernel with bpf_res_spin_lock in its BTF\n");
		return 77;
	}
	n = kref_verify_object(path, &res);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-n));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (res[i].accepted)
			printf("%s: accepted\n", res[i].name);
		else
			printf("%s: rejected: %s\n", res[i].name, res[i].last_line);
		if (logdir) {
			char fn[512];
			FILE *f;

			snprintf(fn, sizeof(fn), "%s/%s.log", logdir, res[i].name);
			f = fopen(fn, "w");
			if (f) {
				fputs(res[i].log, f);
				fclose(f);
			}
		}
	}
	kref_free(res, n);
	return 0;
}
