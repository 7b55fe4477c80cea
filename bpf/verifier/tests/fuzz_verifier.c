/* SPDX-License-Identifier: MIT */
/*
 * fuzz_verifier: libFuzzer on random instruction streams.
 *  1. The verifier, on the stream with a fixed map table, must not crash.
 *  2. The stream replaces the program of a template object (its maps:
 *     progs/fuzz_template.bpf.c); when the verifier accepts it, it runs in
 *     rqbpf's interpreter on a packet (rqbpf_prog_test_run(): direct
 *     packet access and LD_ABS/IND), whose run-time bounds checks must never fire:
 *     a fault there means the verifier accepted an unsafe program.
 * Each 8 input bytes are one instruction; register fields are taken
 * modulo 11 and map indices modulo the map count, so that more streams
 * get past the first checks; an ld_imm64 of source 4 (BPF_PSEUDO_FUNC, a
 * callback) stays as it is.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn.h"
#include "object.h"
#include "rqbpf.h"
#include "verifier.h"

#define MAX_INSNS 256

static uint8_t *template_image;
static unsigned long streams, accepted, ran;

static void print_counts(void)
{
	fprintf(stderr, "fuzz_verifier: %lu streams, %lu accepted against the template, %lu ran\n",
	        streams, accepted, ran);
}
static size_t template_size;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *path = getenv("RQBPF_FUZZ_TEMPLATE");
	FILE *f;
	long n;

	(void)argc;
	(void)argv;
	if (!path)
		path = RQBPF_FUZZ_TEMPLATE;
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "fuzz_verifier: cannot read the template %s\n", path);
		abort();
	}
	template_image = malloc((size_t)n);
	if (!template_image || fread(template_image, 1, (size_t)n, f) != (size_t)n)
		abort();
	template_size = (size_t)n;
	fclose(f);
	atexit(print_counts);
	return 0;
}

static size_t decode(const uint8_t *data, size_t size, struct bpf_insn *insns, size_t nmaps)
{
	size_t n = size / sizeof(struct bpf_insn);

	if (n > MAX_INSNS)
		n = MAX_INSNS;
	memcpy(insns, data, n * sizeof(*insns));
	for (size_t i = 0; i < n; i++) {
		insns[i].dst_reg %= 11;
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_FUNC) {
			continue; /* a callback: imm is its offset, as a call's */
		} else if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg) {
			insns[i].src_reg =
			    insns[i].src_reg & 1 ? BPF_PSEUDO_MAP_FD : BPF_PSEUDO_MAP_VALUE;
			insns[i].imm = (int32_t)((uint32_t)insns[i].imm % (uint32_t)nmaps);
		} else if (BPF_CLASS(insns[i].code) != BPF_JMP ||
		           BPF_OP(insns[i].code) != BPF_CALL) {
			insns[i].src_reg %= 11;
		}
	}
	return n;
}

static void verify_fixed_maps(const struct bpf_insn *insns, size_t n)
{
	struct rqbpf_linked_prog p = {
	    .name = "fuzz",
	    .section = "tc",
	    .prog_type = BPF_PROG_TYPE_SCHED_CLS,
	    .insns = insns,
	    .insn_cnt = n,
	    .maps = test_maps,
	    .map_cnt = M_COUNT,
	    .ctx_size = sizeof(struct __sk_buff),
	};
	struct rqbpf_verdict v;

	rqbpf_verify(&p, &v, NULL);
}

/* Verify the stream against the template's maps and run it if accepted. */
static void verify_and_run(const uint8_t *data, size_t size)
{
	struct rqbpf_object *obj;
	struct rqbpf_prog *prog;
	struct bpf_insn insns[MAX_INSNS];
	/* a 64-byte IPv4 frame: the run's packet (direct access, LD_ABS) */
	uint8_t frame[64] = {[12] = 0x08, [14] = 0x45, [16] = 0, [17] = 50, [22] = 64, [23] = 6};
	struct rqbpf_test_run_opts opts = {.data_in = frame, .data_size_in = sizeof(frame)};
	size_t n;
	int rc;

	if (rqbpf_object_open_mem(template_image, template_size, "fuzz", &obj, NULL))
		abort();
	prog = rqbpf_object_find_prog(obj, "fuzz_target");
	if (!prog)
		abort();
	n = decode(data, size, insns, obj->map_cnt);
	if (!n || n > prog->lp.insn_cnt) {
		rqbpf_object_close(obj);
		return;
	}
	/* The loader owns the instruction array; the stream overwrites it in
	 * place (the template's program is MAX_INSNS long). */
	memcpy((void *)(uintptr_t)prog->lp.insns, insns, n * sizeof(*insns));
	prog->lp.insn_cnt = n;
	if (rqbpf_object_load(obj, 0, NULL) == 0) {
		accepted++;
		rc = rqbpf_prog_test_run(prog, &opts);
		ran++;
		if (rc == -EFAULT) {
			fprintf(stderr, "verifier accepted a program that faulted: %s\n",
			        opts.result.msg);
			abort();
		}
	}
	rqbpf_object_close(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpf_insn insns[MAX_INSNS];
	size_t n = decode(data, size, insns, M_COUNT);

	streams++;
	if (n)
		verify_fixed_maps(insns, n);
	verify_and_run(data, size);
	return 0;
}
