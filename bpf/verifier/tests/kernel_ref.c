/* SPDX-License-Identifier: MIT */
/* kernel_ref.c: see kernel_ref.h. */
#include "kernel_ref.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* The kernel keeps the tail of a log that overflows: enough for the message. */
#define LOG_SIZE (1u << 20)

bool kref_available(void)
{
	struct btf *vmlinux;
	bool ok;

	if (geteuid() != 0)
		return false;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return false;
	ok = btf__find_by_name_kind(vmlinux, "bpf_res_spin_lock", BTF_KIND_FUNC) >= 0;
	btf__free(vmlinux);
	return ok;
}

/* The last line of the log that is a message, not the statistics. */
static void last_message_line(const char *log, char *out, size_t size)
{
	const char *p = log, *best = NULL;
	size_t best_len = 0;

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len && strncmp(p, "processed ", 10) != 0 &&
		    strncmp(p, "verification time", 17) != 0 &&
		    strncmp(p, "stack depth", 11) != 0) {
			best = p;
			best_len = len;
		}
		p += len + (e ? 1 : 0);
	}
	if (!best) {
		snprintf(out, size, "(empty log)");
		return;
	}
	snprintf(out, size, "%.*s", (int)best_len, best);
}

/*
 * Load only program @idx of the object at @path. libbpf loads first without
 * a log and, only when that fails, again at log level 1 into @log.
 */
static int load_one(const char *path, int idx, char *log, size_t log_size)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	int i = 0, err;

	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj)
	{
		bpf_program__set_autoload(prog, i == idx);
		if (i == idx)
			bpf_program__set_log_buf(prog, log, log_size);
		i++;
	}
	err = bpf_object__load(obj);
	bpf_object__close(obj);
	return err;
}

static int verify_one(const char *path, int idx, struct kref_result *r)
{
	int err;

	r->log = calloc(1, LOG_SIZE);
	if (!r->log)
		return -ENOMEM;
	err = load_one(path, idx, r->log, LOG_SIZE);
	r->accepted = err == 0;
	if (r->accepted)
		r->log[0] = 0;
	else if (!r->log[0])
		snprintf(r->last_line, sizeof(r->last_line), "load failed: %s", strerror(-err));
	else
		last_message_line(r->log, r->last_line, sizeof(r->last_line));
	return 0;
}

int kref_verify_object(const char *path, struct kref_result **out)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	struct kref_result *res;
	int n = 0, i = 0, err = 0;

	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj) n++;
	res = calloc((size_t)n ? (size_t)n : 1, sizeof(*res));
	if (!res) {
		bpf_object__close(obj);
		return -ENOMEM;
	}
	bpf_object__for_each_program(prog, obj)
	{
		snprintf(res[i].name, sizeof(res[i].name), "%s", bpf_program__name(prog));
		i++;
	}
	bpf_object__close(obj);
	for (i = 0; i < n && !err; i++)
		err = verify_one(path, i, &res[i]);
	if (err) {
		kref_free(res, n);
		return err;
	}
	*out = res;
	return n;
}

void kref_free(struct kref_result *res, int n)
{
	for (int i = 0; i < n; i++)
		free(res[i].log);
	free(res);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

void kref_quiet_libbpf(void)
{
	libbpf_set_print(quiet);
}
