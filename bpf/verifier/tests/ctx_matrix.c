/* SPDX-License-Identifier: MIT */
/*
 * ctx_matrix: the table of context fields (bpf/contract/prog_types.c)
 * against the running kernel, access by access: for tc, socket filter,
 * cgroup_skb (ingress and egress) and xdp programs, every offset of the
 * context and 8 bytes past it, sizes 1, 2, 4 and 8, read and write, the
 * kernel's verdict on a three-instruction program must be the table's.
 * Exits 77 (skipped) without root or BPF.
 */
#include <bpf/bpf.h>
#include <stdio.h>
#include <unistd.h>

#include "kernel_ref.h"
#include "prog_types.h"

struct ctx_case {
	const char *name;
	enum bpf_prog_type type;
	enum bpf_attach_type attach;
	int size; /* bytes of the context */
};

static const struct ctx_case cases[] = {
    {"tc", BPF_PROG_TYPE_SCHED_CLS, 0, (int)sizeof(struct __sk_buff)},
    {"socket", BPF_PROG_TYPE_SOCKET_FILTER, 0, (int)sizeof(struct __sk_buff)},
    {"cgroup_skb/ingress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS,
     (int)sizeof(struct __sk_buff)},
    {"cgroup_skb/egress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS,
     (int)sizeof(struct __sk_buff)},
    {"xdp", BPF_PROG_TYPE_XDP, 0, (int)sizeof(struct xdp_md)},
};

/* The kernel's verdict on "r2 = 0; [*(size *)(r1 + off) = r2 | r2 = *(size *)(r1 + off)];
 * r0 = 0; exit". */
static bool kernel_allows(const struct ctx_case *c, int off, int size, bool write)
{
	static const int codes[9] = {[1] = BPF_B, [2] = BPF_H, [4] = BPF_W, [8] = BPF_DW};
	struct bpf_insn in[4] = {
	    {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0},
	    {write ? (uint8_t)(BPF_STX | BPF_MEM | codes[size])
	           : (uint8_t)(BPF_LDX | BPF_MEM | codes[size]),
	     write ? BPF_REG_1 : BPF_REG_2, write ? BPF_REG_2 : BPF_REG_1, (int16_t)off, 0},
	    {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
	    {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
	};
	struct bpf_prog_load_opts opts = {.sz = sizeof(opts), .expected_attach_type = c->attach};
	int fd = bpf_prog_load(c->type, NULL, "GPL", in, 4, &opts);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

int main(void)
{
	static const int sizes[] = {1, 2, 4, 8};
	int checked = 0, wrong = 0;

	kref_quiet_libbpf();
	if (!kref_available()) {
		printf(
		    "SKIP: the kernel comparison needs root and a kernel with bpf_res_spin_lock\n");
		return 77;
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int off = 0; off < cases[c].size + 8; off++)
			for (size_t s = 0; s < 4; s++)
				for (int w = 0; w < 2; w++) {
					bool k = kernel_allows(&cases[c], off, sizes[s], w);
					bool ours =
					    rqbpf_ctx_access_ok(cases[c].type, off, sizes[s], w);

					checked++;
					if (k == ours)
						continue;
					wrong++;
					printf("FAIL %s: %s off=%d size=%d: kernel %s, table %s\n",
					       cases[c].name, w ? "write" : "read", off, sizes[s],
					       k ? "allows" : "refuses",
					       ours ? "allows" : "refuses");
				}
	printf("%d context accesses compared with the kernel, %d differ\n", checked, wrong);
	return wrong ? 1 : 0;
}
