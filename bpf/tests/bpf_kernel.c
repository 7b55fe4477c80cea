/* SPDX-License-Identifier: MIT */
/*
 * The kernel as the reference: where the test runs as root and the kernel
 * loads the objects (it needs the res_spin_lock kfuncs, Linux 6.15+), run
 * the same programs with BPF_PROG_TEST_RUN through libbpf and with rqbpf,
 * with the same inputs, and compare the return values and the context's
 * writable fields after the run (cb[], mark: ctx_out). Elsewhere the test
 * is skipped (exit 77) with a message saying why.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <sys/mman.h>

#include "bpftest.h"

#define SKIP 77

struct case_ {
	const char *obj, *prog;
	int inputs; /* runs with varied cb inputs (1: stateful, run once) */
};

static const struct case_ cases[] = {
    {"conform", "arith", 64},
    {"conform", "branches", 64},
    {"conform", "loop", 64},
    {"conform", "bytes", 64},
    {"conform", "calls", 64},
    {"conform", "atomics", 64},
    {"conform", "globals", 1},
    {"conform", "ctx_cb", 64},
    {"conform_v4", "signed_ops", 64},
    {"conform_v4", "bytes_v4", 64},
    {"conform_v4", "arith_v4", 64},
    {"res_lock", "same_element_twice", 1},
    {"res_lock", "order_ab", 1},
    {"res_lock", "order_ba", 1},
    {"res_lock", "array_update_f_lock", 1},
    {"irqsave", "irqsave_nested", 1},
    {"irqsave", "irqsave_aa", 1},
    {"irqsave", "handler_take", 1},
    {"counter", "count", 1},
    {"counter", "spin_count", 1},
    {"hash", "hash_count", 3},
    {"hash", "hash_aa", 1},
    {"hash", "hash_delete", 1},
    {"hash", "hash_many_lookups", 1},
    {"hash", "hash_update_f_lock", 1},
    {"spin_lock", "spin_count", 1},
    {"spin_lock", "spin_hold_long", 1},
    {"spin_lock", "spin_hash_count", 8},
    {"spin_lock", "spin_global", 1},
    {"local_irq", "irq_count", 8},
    {"local_irq", "irq_hash_count", 8},
    {"local_irq", "irq_nested", 1},
    {"local_irq", "irq_with_res_lock", 1},
    {"local_irq", "irq_hold_long", 1},
    {"local_irq", "noirq_hold_long", 1},
    {"local_irq", "irq_peek", 1},
    {"helpers", "current_ids", 1},
    {"helpers", "current_comm", 1},
    {"helpers", "current_comm_short", 1},
    {"printk", "str", 1},
    {"printk", "str_unreadable", 1},
    {"printk", "str_width", 1},
    {"printk", "str_then_letter", 1},
    {"printk", "str_kernel", 1},
    {"printk", "width", 1},
    {"printk", "signs", 1},
    {"printk", "longs", 1},
    {"printk", "wide", 1},
    {"printk", "hex_cases", 1},
    {"printk", "percent", 1},
    {"printk", "chars", 1},
    {"printk", "ptr", 1},
    {"printk", "ptr_kinds", 1},
    {"printk", "ptr_symbol", 1},
    {"printk", "ptr_swallows", 1},
    {"printk", "ptr_width", 1},
    {"printk", "ip", 1},
    {"printk", "ip6_full", 1},
    {"printk", "ip6_plain", 1},
    {"printk", "ip_unreadable", 1},
    {"printk", "precision", 1},
    {"printk", "alt_form", 1},
    {"printk", "short_int", 1},
    {"printk", "size_t_len", 1},
    {"printk", "three_l", 1},
    {"printk", "ptr_letter", 1},
    {"printk", "ptr_unknown", 1},
    {"printk", "control_char", 1},
    {"printk", "lone_percent", 1},
    {"ringbuf", "reserve_flags", 1},
    {"ringbuf", "reserve_too_big", 1},
    {"ringbuf", "fill", 1},
    {"ringbuf", "avail", 1},
    {"ringbuf", "positions", 1},
    {"ringbuf", "output_full", 1},
    {"ringbuf", "output_bad_flags", 1},
    {"queue_stack", "q_fill", 1},
    {"queue_stack", "q_overwrite", 1},
    {"queue_stack", "q_drain", 1},
    {"queue_stack", "s_fill", 1},
    {"queue_stack", "s_overwrite", 1},
    {"queue_stack", "s_drain", 1},
    {"loops", "iter_sum", 1},
    {"loops", "iter_repeat", 1},
    {"loops", "iter_ranges", 1},
    {"loops", "iter_errors", 1},
    {"loops", "iter_nested", 1},
    {"loops", "iter_under_lock", 1},
    {"loops", "mg_bounded", 1},
    {"loops", "loop_sum", 1},
    {"loops", "loop_results", 1},
    {"loops", "loop_iter_in_cb", 1},
    {"loops", "loop_nested", 1},
    {"loops", "foreach_array", 1},
    {"loops", "foreach_hash", 1},
    {"loops", "foreach_lock", 1},
    {"loops", "throw_cookie", 1},
    {"loops", "throw_in_subprog", 1},
};

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* Runs @p prog in the kernel from a context with @p cb; the context after
 * the run into *@p out (ctx_out). */
static uint32_t kernel_run(struct bpf_object *ko, const char *prog, const uint32_t *cb,
                           struct __sk_buff *out)
{
	struct __sk_buff ctx;
	uint8_t pkt[64] = {0};
	struct bpf_test_run_opts opts = {.sz = sizeof(opts),
	                                 .data_in = pkt,
	                                 .data_size_in = sizeof(pkt),
	                                 .ctx_in = &ctx,
	                                 .ctx_size_in = sizeof(ctx),
	                                 .ctx_out = out,
	                                 .ctx_size_out = sizeof(*out),
	                                 .repeat = 1};
	struct bpf_program *p = bpf_object__find_program_by_name(ko, prog);

	memset(&ctx, 0, sizeof(ctx));
	memcpy(ctx.cb, cb, sizeof(ctx.cb));
	CHECK(p != NULL);
	CHECK_EQ(bpf_prog_test_run_opts(bpf_program__fd(p), &opts), 0);
	return opts.retval;
}

/* Runs @p prog in rqbpf as kernel_run() does in the kernel. */
static uint32_t rqbpf_run_ctx(struct rqbpf_object *ro, const char *prog, const uint32_t *cb,
                              struct __sk_buff *out)
{
	struct rqbpf_run_result res;
	int ret;

	memset(out, 0, sizeof(*out));
	memcpy(out->cb, cb, sizeof(out->cb));
	ret = rqbpf_prog_run(bt_prog(ro, prog), out, sizeof(*out), &res);
	if (ret)
		tu_fail(__FILE__, __LINE__, "run %s: %d %s", prog, ret, res.msg);
	return (uint32_t)res.retval;
}

/* Returns the number of programs compared, or -1 when the kernel refused. */
static int compare_object(const char *name, const char *cc)
{
	struct rqbpf_object *ro = bt_load(name, cc, 0);
	struct bpf_object *ko;
	char path[512];
	uint64_t seed = 0x9e3779b9;
	int n = 0, err;

	if (!ro)
		return 0;
	bt_obj_path(path, sizeof(path), name, cc);
	ko = bpf_object__open_file(path, NULL);
	CHECK(ko != NULL);
	err = bpf_object__load(ko);
	if (err) {
		printf("# %s (%s): the kernel did not load it (%s)\n", name, cc, strerror(-err));
		bpf_object__close(ko);
		rqbpf_object_close(ro);
		return -1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].obj, name) != 0)
			continue;
		for (int k = 0; k < cases[i].inputs; k++) {
			uint32_t cb[5];

			for (int j = 0; j < 5; j++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				cb[j] = k == 0 ? 0 : (uint32_t)(seed >> (j * 7));
			}
			struct __sk_buff kctx, rctx;
			uint32_t want = kernel_run(ko, cases[i].prog, cb, &kctx);
			uint32_t got = rqbpf_run_ctx(ro, cases[i].prog, cb, &rctx);

			if (memcmp(kctx.cb, rctx.cb, sizeof(kctx.cb)) != 0 ||
			    kctx.mark != rctx.mark)
				tu_fail(__FILE__, __LINE__,
				        "%s/%s (%s) cb %x: context after the run: rqbpf cb[1] %x "
				        "mark %x, kernel cb[1] %x mark %x",
				        name, cases[i].prog, cc, cb[0], rctx.cb[1], rctx.mark,
				        kctx.cb[1], kctx.mark);
			if (got != want)
				tu_fail(__FILE__, __LINE__,
				        "%s/%s (%s) cb %x %x %x %x %x: rqbpf %x kernel %x", name,
				        cases[i].prog, cc, cb[0], cb[1], cb[2], cb[3], cb[4], got,
				        want);
		}
		n++;
	}
	bpf_object__close(ko);
	rqbpf_object_close(ro);
	return n;
}

static void test_kernel_ref(void)
{
	static const char *const objs[] = {
	    "conform",   "conform_v4", "res_lock", "irqsave",     "counter", "hash", "spin_lock",
	    "local_irq", "printk",     "ringbuf",  "queue_stack", "helpers", "loops"};
	int compared = 0, refused = 0;

	if (geteuid() != 0) {
		printf("# skipped: BPF_PROG_TEST_RUN needs root\n");
		exit(SKIP);
	}
	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++)
		for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
			int n = compare_object(objs[i], *cc);

			if (n < 0)
				refused++;
			else
				compared += n;
		}
	printf("# %d programs compared with the kernel, %d objects refused by it\n", compared,
	       refused);
	if (compared == 0) {
		printf("# skipped: this kernel loads none of the objects\n");
		exit(SKIP);
	}
	CHECK_EQ(refused, 0);
}

/* Does the kernel, through libbpf, load program @p name of @p path alone? */
static bool kernel_loads(const char *path, const char *name)
{
	struct bpf_object *lo = bpf_object__open_file(path, NULL);
	struct bpf_program *p;
	bool ok;

	CHECK(libbpf_get_error(lo) == 0);
	bpf_object__for_each_program(p, lo)
	{
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	}
	ok = bpf_object__load(lo) == 0;
	bpf_object__close(lo);
	return ok;
}

/* Runs @p check on each program of object @p name, for every compiler, as
 * root (skipped, exit 77, elsewhere); returns how many it checked. */
static int each_prog_loaded(const char *name,
                            void (*check)(const char *path, const struct rqbpf_prog *p))
{
	int n = 0;

	if (geteuid() != 0) {
		printf("# skipped: loading programs needs root\n");
		exit(SKIP);
	}
	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *ro = bt_open(name, *cc);
		char path[512];

		if (!ro)
			continue;
		bt_obj_path(path, sizeof(path), name, *cc);
		for (size_t i = 0; i < rqbpf_object_prog_count(ro); i++, n++)
			check(path, rqbpf_object_prog(ro, i));
		rqbpf_object_close(ro);
	}
	return n;
}

/* The kernel with libbpf loads @p p exactly when rqbpf takes its section. */
static void same_section_verdict(const char *path, const struct rqbpf_prog *p)
{
	bool kernel = kernel_loads(path, rqbpf_prog_name(p));

	printf("# %s: kernel %s, rqbpf %s\n", rqbpf_prog_section(p), kernel ? "loads" : "refuses",
	       rqbpf_prog_error(p) ? "refuses" : "takes");
	CHECK_EQ(kernel, rqbpf_prog_error(p) == NULL);
}

/* sections.bpf.c: rqbpf takes a section as a program type exactly when the
 * kernel with libbpf loads the program. */
static void test_kernel_sections(void)
{
	CHECK_GT(each_prog_loaded("sections", same_section_verdict), 0);
}

/* The kernel loads @p p alone, and rqbpf's verifier accepts it. */
static void both_accept(const char *path, const struct rqbpf_prog *p)
{
	CHECK(kernel_loads(path, rqbpf_prog_name(p)));
	CHECK_EQ(rqbpf_prog_verify(p, NULL, NULL, NULL), 0);
}

/* bootstrap_minimal.bpf.c (libbpf-bootstrap's minimal and minimal_legacy):
 * both accept each program. Their returns are compared by
 * bpf_load_bootstrap_minimal only: the kernel has no BPF_PROG_TEST_RUN for
 * tracepoint programs. */
static void test_kernel_bootstrap(void)
{
	CHECK_GT(each_prog_loaded("bootstrap_minimal", both_accept), 1);
}

/* helpers.bpf.c's copy_io, in .data.io. */
struct copy_io {
	uint64_t uptr;
	char buf[16];
	int64_t ret;
};

/* Runs copy_user from @p in in the kernel; its retval, .data.io into *@p out. */
static int kernel_copy(struct bpf_object *ko, const struct copy_io *in, struct copy_io *out)
{
	struct bpf_map *m = bpf_object__find_map_by_name(ko, ".data.io");
	struct bpf_program *p = bpf_object__find_program_by_name(ko, "copy_user");
	struct bpf_test_run_opts opts = {.sz = sizeof(opts)}; /* syscall: no repeat */
	uint32_t zero = 0;

	CHECK(m && p);
	CHECK_EQ(bpf_map_update_elem(bpf_map__fd(m), &zero, in, 0), 0);
	CHECK_EQ(bpf_prog_test_run_opts(bpf_program__fd(p), &opts), 0);
	CHECK_EQ(bpf_map_lookup_elem(bpf_map__fd(m), &zero, out), 0);
	return (int)opts.retval;
}

/* The same in rqbpf. */
static int rqbpf_copy(struct rqbpf_object *ro, const struct copy_io *in, struct copy_io *out)
{
	struct rqbpf_map *m = rqbpf_object_find_map(ro, ".data.io");
	struct rqbpf_run_result res;
	uint32_t zero = 0;

	CHECK(m != NULL);
	CHECK_EQ(rqbpf_map_update(m, &zero, in, 0), 0);
	CHECK_EQ(rqbpf_prog_run(bt_prog(ro, "copy_user"), NULL, 0, &res), 0);
	CHECK_EQ(rqbpf_map_lookup(m, &zero, out), 0);
	return (int)(uint32_t)res.retval;
}

/* bpf_copy_from_user (a syscall program) from the same pointers in both:
 * readable bytes, NULL, a PROT_NONE page, and 16 bytes that run from a
 * mapping's last 8 into that page; dst starts as 0x55s. */
static void test_kernel_copy_from_user(void)
{
	static const char text[] = "copy_from_user: 16 bytes";
	long page = sysconf(_SC_PAGESIZE);
	char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int compared = 0;

	if (geteuid() != 0) {
		printf("# skipped: BPF_PROG_TEST_RUN needs root\n");
		exit(SKIP);
	}
	CHECK(two != MAP_FAILED);
	memset(two + page - 8, 'x', 8); /* the 8 readable bytes before the PROT_NONE page */
	CHECK_EQ(mprotect(two + page, (size_t)page, PROT_NONE), 0);
	const uint64_t ptrs[] = {(uintptr_t)text, 0, (uintptr_t)(two + page),
	                         (uintptr_t)(two + page - 8)};

	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *ro = bt_load("helpers", *cc, 0);
		struct bpf_object *ko;
		char path[512];

		if (!ro)
			continue;
		bt_obj_path(path, sizeof(path), "helpers", *cc);
		ko = bpf_object__open_file(path, NULL);
		CHECK(ko != NULL);
		CHECK_EQ(bpf_object__load(ko), 0);
		for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
			struct copy_io in = {.uptr = ptrs[i]}, kout, rout;
			int kret, rret;

			memset(in.buf, 0x55, sizeof(in.buf));
			kret = kernel_copy(ko, &in, &kout);
			rret = rqbpf_copy(ro, &in, &rout);
			printf("# %s: pointer %zu: kernel %d, rqbpf %d\n", *cc, i, kret, rret);
			CHECK_EQ(rret, kret);
			CHECK_EQ(memcmp(&rout, &kout, sizeof(rout)), 0);
			CHECK_EQ(kret, (i == 0 ? 0 : -EFAULT));
			CHECK_EQ(
			    memcmp(rout.buf, i == 0 ? text : "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16),
			    0);
			compared++;
		}
		bpf_object__close(ko);
		rqbpf_object_close(ro);
	}
	munmap(two, 2 * (size_t)page);
	CHECK_GT(compared, 0);
}

struct records {
	uint64_t v[512];
	int n;
};

static int add_record(void *ctx, void *data, size_t size)
{
	struct records *r = ctx;

	CHECK_EQ(size, 8);
	if (r->n < 512)
		memcpy(&r->v[r->n++], data, 8);
	return 0;
}

/* ringbuf.bpf.c's small ring, filled until it overflows (every third record
 * discarded), then read by libbpf's consumer from the kernel's and by
 * rqbpf's from rqbpf's: the same records, in the same order. */
static void test_kernel_ringbuf(void)
{
	int compared = 0;

	if (geteuid() != 0) {
		printf("# skipped: loading programs needs root\n");
		exit(SKIP);
	}
	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *ro = bt_load("ringbuf", *cc, 0);
		static const uint32_t cb[5];
		struct records kr = {0}, rr = {0};
		struct rqbpf_ring_buffer *rrb;
		struct ring_buffer *krb;
		struct bpf_object *ko;
		char path[512];

		if (!ro)
			continue;
		bt_obj_path(path, sizeof(path), "ringbuf", *cc);
		ko = bpf_object__open_file(path, NULL);
		CHECK(ko != NULL);
		if (bpf_object__load(ko)) {
			printf("# ringbuf (%s): the kernel did not load it\n", *cc);
			bpf_object__close(ko);
			rqbpf_object_close(ro);
			continue;
		}
		krb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(ko, "small")),
		                       add_record, &kr, NULL);
		CHECK(krb != NULL);
		CHECK_EQ(rqbpf_ring_buffer_new(rqbpf_object_find_map(ro, "small"), add_record, &rr,
		                               &rrb),
		         0);
		for (int round = 0; round < 2; round++) {
			const char *prog = round ? "output_full" : "fill";

			struct __sk_buff kctx;

			CHECK_EQ(bt_run_cb(ro, prog, cb), kernel_run(ko, prog, cb, &kctx));
			CHECK_EQ(rqbpf_ring_buffer_consume(rrb), ring_buffer__consume(krb));
		}
		printf("# %s: %d records read from each ring\n", *cc, kr.n);
		CHECK_EQ(rr.n, kr.n);
		CHECK_GT(kr.n, 100);
		CHECK(memcmp(rr.v, kr.v, sizeof(kr.v[0]) * (size_t)kr.n) == 0);
		compared++;
		ring_buffer__free(krb);
		rqbpf_ring_buffer_free(rrb);
		bpf_object__close(ko);
		rqbpf_object_close(ro);
	}
	if (!compared) {
		printf("# skipped: this kernel loads no ring buffer object\n");
		exit(SKIP);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_kernel_ringbuf", test_kernel_ringbuf, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_ref", test_kernel_ref, 120, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_sections", test_kernel_sections, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_copy_from_user", test_kernel_copy_from_user, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_bootstrap", test_kernel_bootstrap, 60, TU_SKIPPABLE),
};

TU_MAIN(tests)
