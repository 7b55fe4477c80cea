/* SPDX-License-Identifier: MIT */
/*
 * test_verifier_objs: the verifier on clang-built objects, end to end
 * through rqbpf's loader.
 *
 *   test_verifier_objs EXPECT OBJ...           verdicts and messages as
 *                                              EXPECT (progs/expect.txt) says
 *   test_verifier_objs --kernel EXPECT OBJ...  the same programs through the
 *                                              running kernel's verifier: the
 *                                              same verdict, and the kernel's
 *                                              log holds our message
 *
 * The kernel mode exits 77 (CTest: skipped) without root or without
 * bpf_res_spin_lock in the kernel's BTF.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_ref.h"
#include "rqbpf.h"

#define MAX_EXPECT 1024

struct expect {
	char obj[64], prog[128];
	bool accepted, kernel_differs, slow;
	char msg[256];
};

static struct expect expects[MAX_EXPECT];
static int nexpects;

static int load_expectations(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct expect *e = &expects[nexpects];
		char verdict[16];
		int used = 0;

		line[strcspn(line, "\n")] = 0;
		if (line[0] == '#' || !line[0])
			continue;
		if (nexpects == MAX_EXPECT) {
			fprintf(stderr, "%s: more than %d expectations (MAX_EXPECT)\n", path,
			        MAX_EXPECT);
			fclose(f);
			return -1;
		}
		if (sscanf(line, "%63s %127s %15s %n", e->obj, e->prog, verdict, &used) < 3)
			continue;
		snprintf(e->msg, sizeof(e->msg), "%s", line + used);
		for (;;) { /* trailing flags */
			char *t = strrchr(e->msg, '~');

			if (!t || t == e->msg || t[-1] != ' ')
				break;
			if (!strcmp(t, "~kernel"))
				e->kernel_differs = true;
			else if (!strcmp(t, "~slow"))
				e->slow = true;
			else
				break;
			t[-1] = 0;
		}
		e->accepted = !strcmp(verdict, "accepted");
		nexpects++;
	}
	fclose(f);
	return 0;
}

static const struct expect *find_expect(const char *obj, const char *prog)
{
	for (int i = 0; i < nexpects; i++)
		if (!strcmp(expects[i].obj, obj) && !strcmp(expects[i].prog, prog))
			return &expects[i];
	return NULL;
}

/* "dir/res_lock_ok.clang14.bpf.o" -> "res_lock_ok" */
static void object_base(const char *path, char *out, size_t size)
{
	const char *b = strrchr(path, '/');

	snprintf(out, size, "%s", b ? b + 1 : path);
	out[strcspn(out, ".")] = 0;
}

struct ours {
	bool accepted, skipped;
	char msg[256];
	char line[256]; /* rejected: "; <source line> @ file:N", or "" */
	int insn;       /* rejected: the instruction, or -1 */
	unsigned long long processed;
};

static void verify_ours(const struct rqbpf_prog *p, struct ours *o)
{
	struct rqbpf_error err = {{0}};
	uint64_t processed = 0;
	int rc = rqbpf_prog_verify(p, NULL, &processed, &err);
	char *insn;

	o->accepted = rc == 0;
	o->processed = (unsigned long long)processed;
	snprintf(o->msg, sizeof(o->msg), "%s", rc ? err.msg : "");
	/* the last " (insn N)": a message may name an instruction too */
	insn = strstr(o->msg, " (insn ");
	for (char *next = insn; next; next = strstr(next + 1, " (insn "))
		insn = next;
	o->insn = -1;
	if (insn) {
		const char *line = strstr(insn, "\n  ");

		o->insn = atoi(insn + 7);
		snprintf(o->line, sizeof(o->line), "%s", line ? line + 3 : "");
		*insn = 0;
	}
}

/* The instruction the kernel's log (level 1) shows last before line @msg:
 * the one it rejected; -1 if none. */
static int kernel_insn(const char *log, const char *msg)
{
	const char *end = strstr(log, msg), *p = log;
	int insn = -1;

	while (end && p < end) {
		int n;
		char paren;

		if (sscanf(p, "%d: %c", &n, &paren) == 2 && paren == '(')
			insn = n;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return insn;
}

struct tally {
	int programs, failures, compared, verdicts_agree, messages_agree, expected_differ;
	int rejected_both, insns_agree, no_kernel_insn, lines_agree;
};

/* Sanitizer builds run the tests with RQ_TEST_SCALE < 1: the programs that
 * walk a million instructions are skipped there. */
static bool scaled_down(void)
{
	const char *s = getenv("RQ_TEST_SCALE");

	return s && atof(s) < 1.0;
}

static void check_expected(const char *base, const char *name, const struct ours *o,
                           struct tally *t)
{
	const struct expect *e = find_expect(base, name);
	bool ok = e && e->accepted == o->accepted && (o->accepted || !strcmp(e->msg, o->msg));

	if (o->skipped) {
		printf("skip %-26s %s (~slow, RQ_TEST_SCALE < 1)\n", name, base);
		return;
	}
	t->programs++;
	if (o->accepted)
		printf("%s %-26s %s accepted (%llu insns processed)\n", ok ? "ok  " : "FAIL", name,
		       base, o->processed);
	else
		printf("%s %-26s %s rejected: %s\n", ok ? "ok  " : "FAIL", name, base, o->msg);
	if (!e)
		printf("     no expectation for %s %s\n", base, name);
	else if (!ok)
		printf("     expected %s %s\n", e->accepted ? "accepted" : "rejected:", e->msg);
	t->failures += !ok;
}

static void compare_kernel(const char *base, const struct kref_result *k, const struct ours *o,
                           struct tally *t)
{
	const struct expect *e = find_expect(base, k->name);
	bool verdict = k->accepted == o->accepted;
	bool message = verdict && (o->accepted || strstr(k->log, o->msg) != NULL);
	bool differs = e && e->kernel_differs;

	t->compared++;
	t->verdicts_agree += verdict;
	t->messages_agree += message;
	if (message && !o->accepted) {
		int ki = kernel_insn(k->log, o->msg);
		/* Before the walk (checks of the whole program) the kernel names no
		 * instruction and shows no line; an object loaded without BTF has none. */
		bool line = ki < 0 || (o->line[0] ? strstr(k->log, o->line) != NULL
		                                  : !strstr(k->log, "\n; "));

		t->rejected_both++;
		t->insns_agree += ki == o->insn;
		t->no_kernel_insn += ki < 0;
		t->lines_agree += line;
		if (ki >= 0 && (ki != o->insn || !line))
			printf(
			    "note %-26s %s: kernel insn %d, ours %d; our line '%s' %s the kernel's "
			    "log\n",
			    k->name, base, ki, o->insn, o->line, line ? "in" : "not in");
	}
	if (differs && !message) {
		t->expected_differ++;
	} else if (!message) {
		t->failures++;
	}
	printf("%s %-26s %s kernel %s%s%s, ours %s%s%s\n",
	       message   ? "same"
	       : differs ? "diff"
	                 : "FAIL",
	       k->name, base,
	       k->accepted ? "accepted" : "rejected: ", k->accepted ? "" : k->last_line, "",
	       o->accepted ? "accepted" : "rejected: ", o->accepted ? "" : o->msg,
	       differs ? " (a known difference)" : "");
}

static int run_object(const char *path, bool kernel, struct tally *t)
{
	struct rqbpf_error err = {{0}};
	struct rqbpf_object *obj;
	struct kref_result *kres = NULL;
	char base[64];
	int nk = 0;

	object_base(path, base, sizeof(base));
	if (rqbpf_object_open_file(path, &obj, &err)) {
		printf("FAIL %s: %s\n", path, err.msg);
		t->failures++;
		return -1;
	}
	if (kernel) {
		nk = kref_verify_object(path, &kres);
		if (nk < 0) {
			printf("FAIL %s: kernel load: %s\n", path, strerror(-nk));
			t->failures++;
			nk = 0;
		}
	}
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
		const struct rqbpf_prog *p = rqbpf_object_prog(obj, i);
		const struct expect *e = find_expect(base, rqbpf_prog_name(p));
		struct ours o = {0};

		if (!kernel && e && e->slow && scaled_down())
			o.skipped = true;
		else
			verify_ours(p, &o);
		if (!kernel) {
			check_expected(base, rqbpf_prog_name(p), &o, t);
			continue;
		}
		for (int k = 0; k < nk; k++)
			if (!strcmp(kres[k].name, rqbpf_prog_name(p)))
				compare_kernel(base, &kres[k], &o, t);
	}
	kref_free(kres, nk);
	rqbpf_object_close(obj);
	return 0;
}

int main(int argc, char **argv)
{
	struct tally t = {0};
	bool kernel = argc > 1 && !strcmp(argv[1], "--kernel");
	int first = kernel ? 2 : 1;

	if (argc < first + 2) {
		fprintf(stderr, "usage: test_verifier_objs [--kernel] EXPECT OBJ...\n");
		return 2;
	}
	if (load_expectations(argv[first]))
		return 1;
	kref_quiet_libbpf();
	if (kernel && !kref_available()) {
		printf("SKIP: the kernel comparison needs root and a kernel with bpf_res_spin_lock "
		       "in /sys/kernel/btf/vmlinux\n");
		return 77;
	}
	for (int i = first + 1; i < argc; i++)
		run_object(argv[i], kernel, &t);
	if (kernel)
		printf(
		    "compared %d programs with the kernel: verdicts agreed %d, messages agreed %d, "
		    "known differences %d, failures %d; rejected by both %d: same instruction %d, "
		    "the kernel naming none %d, the same source line %d\n",
		    t.compared, t.verdicts_agree, t.messages_agree, t.expected_differ, t.failures,
		    t.rejected_both, t.insns_agree, t.no_kernel_insn, t.lines_agree);
	else
		printf("%d programs, %d failures\n", t.programs, t.failures);
	return t.failures || (kernel ? !t.compared : !t.programs) ? 1 : 0;
}
