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
    {"percpu", "pa_ops", 1},
    {"percpu", "ph_ops", 1},
    {"percpu", "pa_count", 1},
    {"percpu", "ph_count", 1},
    {"map_in_map", "aom_count", 8},
    {"map_in_map", "hom_count", 16},
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

/* Skips the test unless the process may load programs (root): @what
 * needs it. */
static void need_root(const char *what)
{
	if (geteuid() != 0) {
		printf("# skipped: %s needs root\n", what);
		exit(SKIP);
	}
}

/* Object @name built by @cc, loaded by rqbpf (*@ro) and by the kernel
 * (*@ko); false, with nothing left open, when either does not load it. */
static bool load_both(const char *name, const char *cc, struct rqbpf_object **ro,
                      struct bpf_object **ko)
{
	char path[512];

	*ro = bt_load(name, cc, 0);
	if (!*ro)
		return false;
	bt_obj_path(path, sizeof(path), name, cc);
	*ko = bpf_object__open_file(path, NULL);
	CHECK(*ko != NULL);
	if (bpf_object__load(*ko)) {
		printf("# %s (%s): the kernel did not load it\n", name, cc);
		bpf_object__close(*ko);
		rqbpf_object_close(*ro);
		return false;
	}
	return true;
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
	static const char *const objs[] = {"conform", "conform_v4", "res_lock",    "irqsave",
	                                   "counter", "hash",       "spin_lock",   "local_irq",
	                                   "printk",  "ringbuf",    "queue_stack", "helpers",
	                                   "percpu",  "map_in_map", "loops"};
	int compared = 0, refused = 0;

	need_root("BPF_PROG_TEST_RUN");
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

	need_root("loading programs");
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

	need_root("BPF_PROG_TEST_RUN");
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

	need_root("loading programs");
	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *ro;
		static const uint32_t cb[5];
		struct records kr = {0}, rr = {0};
		struct rqbpf_ring_buffer *rrb;
		struct ring_buffer *krb;
		struct bpf_object *ko;

		if (!load_both("ringbuf", *cc, &ro, &ko))
			continue;
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

/* Every CPU's hits at @p key of a per-CPU map's value buffer (16-byte
 * values: struct counter of percpu.bpf.c), summed. */
static uint64_t sum_hits(const uint8_t *buf, int ncpus)
{
	uint64_t sum = 0, hits;

	for (int c = 0; c < ncpus; c++) {
		memcpy(&hits, buf + (size_t)c * 16, sizeof(hits));
		sum += hits;
	}
	return sum;
}

/* percpu.bpf.c's counters bumped by the same runs in the kernel and in
 * rqbpf, then read through each one's map API, one value per possible CPU
 * (the kernel's CPUs, rqbpf's thread slots): the same sums per key, and the
 * same keys in the hash. */
static void compare_percpu(struct bpf_object *ko, struct rqbpf_object *ro)
{
	int kcpus = libbpf_num_possible_cpus(), rcpus = rqbpf_num_possible_cpus();
	uint8_t *kv = calloc((size_t)kcpus, 16), *rv = calloc((size_t)rcpus, 16);
	static const char *const maps[] = {"pcpu_array", "pcpu_hash"};

	CHECK(kv && rv);
	for (uint32_t i = 0; i < 40; i++) {
		uint32_t cb[5] = {i * 7 % 5, i};
		struct __sk_buff kctx;

		kernel_run(ko, "pa_count", cb, &kctx);
		bt_run_cb(ro, "pa_count", cb);
		kernel_run(ko, "ph_count", cb, &kctx);
		bt_run_cb(ro, "ph_count", cb);
	}
	for (int m = 0; m < 2; m++) {
		struct rqbpf_map *rm = rqbpf_object_find_map(ro, maps[m]);
		int kfd = bpf_map__fd(bpf_object__find_map_by_name(ko, maps[m]));

		CHECK_EQ(rqbpf_map_value_bytes(rm), (size_t)rcpus * 16);
		for (uint32_t k = 0; k < 5; k++) {
			int kret = bpf_map_lookup_elem(kfd, &k, kv);
			int rret = rqbpf_map_lookup(rm, &k, rv);

			CHECK_EQ(rret, kret < 0 ? -errno : kret);
			if (!kret && sum_hits(kv, kcpus) != sum_hits(rv, rcpus))
				tu_fail(__FILE__, __LINE__,
				        "%s key %u: rqbpf %llu hits, kernel %llu", maps[m], k,
				        (unsigned long long)sum_hits(rv, rcpus),
				        (unsigned long long)sum_hits(kv, kcpus));
		}
	}
	free(kv);
	free(rv);
}

/* @compare applied to object @name of each compiler, loaded by rqbpf and
 * by the kernel; the test is skipped when the kernel loads none. */
static void compare_each(const char *name, const char *what,
                         void (*compare)(struct bpf_object *, struct rqbpf_object *))
{
	int compared = 0;

	need_root("BPF_PROG_TEST_RUN");
	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *ro;
		struct bpf_object *ko;

		if (!load_both(name, *cc, &ro, &ko))
			continue;
		compare(ko, ro);
		compared++;
		bpf_object__close(ko);
		rqbpf_object_close(ro);
	}
	if (!compared) {
		printf("# skipped: this kernel loads no %s object\n", what);
		exit(SKIP);
	}
}

static void test_kernel_percpu(void)
{
	compare_each("percpu", "per-CPU map", compare_percpu);
}

/* rqbpf's name for an inner map: its index in the object. */
static uint32_t map_index(struct rqbpf_object *ro, const char *name)
{
	struct rqbpf_map *m = rqbpf_object_find_map(ro, name);
	uint32_t i = 0;

	while (rqbpf_object_map(ro, i) != m)
		i++;
	return i;
}

static int kernel_fd(struct bpf_object *ko, const char *name)
{
	return bpf_map__fd(bpf_object__find_map_by_name(ko, name));
}

/* Outer map @p outer's slot @p key set to inner map @p inner (by fd in the
 * kernel, by index in rqbpf): the same result from both. */
static void both_set(struct bpf_object *ko, struct rqbpf_object *ro, const char *outer, int key,
                     const char *inner, uint64_t flags)
{
	int fd = kernel_fd(ko, inner);
	uint32_t idx = map_index(ro, inner);
	int kret = bpf_map_update_elem(kernel_fd(ko, outer), &key, &fd, flags);
	int rret = rqbpf_map_update(rqbpf_object_find_map(ro, outer), &key, &idx, flags);

	if ((kret < 0 ? -errno : kret) != rret)
		tu_fail(__FILE__, __LINE__, "%s[%d] = %s (flags %llu): rqbpf %d, kernel %d", outer,
		        key, inner, (unsigned long long)flags, rret, kret < 0 ? -errno : kret);
}

static void both_delete(struct bpf_object *ko, struct rqbpf_object *ro, const char *outer, int key)
{
	int kret = bpf_map_delete_elem(kernel_fd(ko, outer), &key);

	CHECK_EQ(rqbpf_map_delete(rqbpf_object_find_map(ro, outer), &key),
	         kret < 0 ? -errno : kret);
}

static void both_run(struct bpf_object *ko, struct rqbpf_object *ro, const char *prog, uint32_t cb0,
                     uint32_t cb1)
{
	const uint32_t cb[5] = {cb0, cb1};
	struct __sk_buff kctx;
	uint32_t want = kernel_run(ko, prog, cb, &kctx), got = (uint32_t)bt_run_cb(ro, prog, cb);

	if (got != want)
		tu_fail(__FILE__, __LINE__, "%s cb %u %u: rqbpf %d, kernel %d", prog, cb0, cb1,
		        (int)got, (int)want);
}

/* map_in_map.bpf.c: runs through the initial inner maps, then inner maps
 * set, replaced and removed through each one's map API (with the refused
 * updates' errors), each run's result and each inner value equal. */
static void compare_map_in_map(struct bpf_object *ko, struct rqbpf_object *ro)
{
	both_run(ko, ro, "aom_count", 0, 0);
	both_run(ko, ro, "aom_count", 1, 0); /* empty slot */
	both_set(ko, ro, "outer", 1, "a1", BPF_ANY);
	both_run(ko, ro, "aom_count", 1, 0);
	both_set(ko, ro, "outer", 1, "a0", BPF_NOEXIST); /* fd arrays: BPF_ANY only */
	both_set(ko, ro, "outer", 2, "a0", BPF_ANY);     /* past the end */
	both_set(ko, ro, "outer", 0, "h0", BPF_ANY);     /* not the template's kind */
	both_set(ko, ro, "outer", 1, "a0", BPF_ANY);     /* both slots: a0 */
	both_run(ko, ro, "aom_count", 1, 0);
	both_run(ko, ro, "aom_count", 0, 0);
	both_delete(ko, ro, "outer", 0);
	both_delete(ko, ro, "outer", 0);
	both_run(ko, ro, "aom_count", 0, 0);
	both_set(ko, ro, "houter", 0, "h1", BPF_NOEXIST);
	both_set(ko, ro, "houter", 0, "h0", BPF_NOEXIST);
	both_set(ko, ro, "houter", 0, "a0", BPF_ANY);
	for (uint32_t k = 0; k < 12; k++)
		both_run(ko, ro, "hom_count", k % 3 == 0, k);
	both_delete(ko, ro, "houter", 1);
	both_run(ko, ro, "hom_count", 1, 0);
	for (int k = 0; k < 8; k++) {
		uint64_t kv = 0, rv = 0;
		int kret = bpf_map_lookup_elem(kernel_fd(ko, "h1"), &k, &kv);

		CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(ro, "h1"), &k, &rv),
		         kret < 0 ? -errno : kret);
		CHECK_EQ(rv, kv);
	}
}

static void test_kernel_map_in_map(void)
{
	compare_each("map_in_map", "map of maps", compare_map_in_map);
}

/* copy_str.bpf.c's io, in .data.io. */
struct str_io {
	uint64_t uptr, flags;
	uint32_t size;
	char buf[16];
	int32_t ret;
};

/* Runs @p prog (a syscall program) once with .data.io = *@p in, in the
 * kernel or in rqbpf; .data.io after the run into *@p out. */
static void kernel_str(struct bpf_object *ko, const struct str_io *in, struct str_io *out)
{
	int fd = bpf_map__fd(bpf_object__find_map_by_name(ko, ".data.io"));
	struct bpf_test_run_opts opts = {.sz = sizeof(opts)};
	uint32_t zero = 0;

	CHECK_EQ(bpf_map_update_elem(fd, &zero, in, 0), 0);
	CHECK_EQ(bpf_prog_test_run_opts(
	             bpf_program__fd(bpf_object__find_program_by_name(ko, "copy_str")), &opts),
	         0);
	CHECK_EQ(bpf_map_lookup_elem(fd, &zero, out), 0);
}

static void rqbpf_str(struct rqbpf_object *ro, const struct str_io *in, struct str_io *out)
{
	struct rqbpf_map *m = rqbpf_object_find_map(ro, ".data.io");
	struct rqbpf_run_result res;
	uint32_t zero = 0;

	CHECK_EQ(rqbpf_map_update(m, &zero, in, 0), 0);
	CHECK_EQ(rqbpf_prog_run(bt_prog(ro, "copy_str"), NULL, 0, &res), 0);
	CHECK_EQ(rqbpf_map_lookup(m, &zero, out), 0);
}

/* One input in both: the same result and the same bytes in the buffer
 * (also what a copy that faults leaves: the bytes it read before). */
static void compare_str(struct bpf_object *ko, struct rqbpf_object *ro, uint64_t uptr,
                        uint32_t size, uint64_t flags)
{
	struct str_io in = {.uptr = uptr, .flags = flags, .size = size}, kout, rout;

	memset(in.buf, 0x55, sizeof(in.buf));
	kernel_str(ko, &in, &kout);
	rqbpf_str(ro, &in, &rout);
	if (rout.ret != kout.ret || memcmp(rout.buf, kout.buf, sizeof(kout.buf)) != 0)
		tu_fail(__FILE__, __LINE__,
		        "copy_from_user_str(size %u, flags %llu) of %#llx: rqbpf %d '%.16s', "
		        "kernel %d '%.16s'",
		        size, (unsigned long long)flags, (unsigned long long)uptr, rout.ret,
		        rout.buf, kout.ret, kout.buf);
}

/* bpf_copy_from_user_str from the same pointers, sizes and flags in both:
 * a short string, one longer than the buffer, NULL, a PROT_NONE page, a
 * string that ends just before that page and one that runs into it; sizes
 * 16, 5, 1 and 0; flags 0, BPF_F_PAD_ZEROS and an unknown one. */
static void test_kernel_copy_from_user_str(void)
{
	static const char short_text[] = "hello", long_text[] = "more than sixteen bytes";
	static const char ends[8] = {'e', 'n', 'd', 's', 0, 'x', 'y', 'z'};
	long page = sysconf(_SC_PAGESIZE);
	char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const uint32_t sizes[] = {16, 5, 1, 0};
	static const uint64_t flags[] = {0, 1, 2};
	int compared = 0;

	need_root("BPF_PROG_TEST_RUN");
	CHECK(two != MAP_FAILED);
	memcpy(two + page - 8, ends, sizeof(ends)); /* a string before the page */
	memset(two + page - 16, 'x', 8);            /* no NUL before "ends" */
	CHECK_EQ(mprotect(two + page, (size_t)page, PROT_NONE), 0);
	const uint64_t ptrs[] = {
	    (uintptr_t)short_text,   (uintptr_t)long_text,        0,
	    (uintptr_t)(two + page), (uintptr_t)(two + page - 8), (uintptr_t)(two + page - 3)};

	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *ro;
		struct bpf_object *ko;

		if (!load_both("copy_str", *cc, &ro, &ko))
			continue;
		for (size_t p = 0; p < sizeof(ptrs) / sizeof(ptrs[0]); p++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
				for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
					compare_str(ko, ro, ptrs[p], sizes[s], flags[f]);
					compared++;
				}
		bpf_object__close(ko);
		rqbpf_object_close(ro);
	}
	munmap(two, 2 * (size_t)page);
	printf("# %d calls compared\n", compared);
	if (!compared) {
		printf("# skipped: this kernel has no bpf_copy_from_user_str\n");
		exit(SKIP);
	}
}

/* --- packets: bootstrap_net.bpf.c against BPF_PROG_TEST_RUN --- */

struct frame {
	uint8_t b[128];
	uint32_t n;
};

/* An Ethernet frame to @dst (0: 00:..:00, 1: broadcast, 2: multicast, 3:
 * another host) of protocol @proto, then an IPv4 header (when @proto is
 * 0x0800 and @ip_len is at least 20) with @ttl, @ip_proto, fragment word
 * @frag and @ihl, then ports; @n bytes in all. */
static struct frame make_frame(int dst, uint16_t proto, uint32_t n, uint8_t ttl, uint8_t ip_proto,
                               uint16_t frag, uint8_t ihl)
{
	static const uint8_t dsts[4][6] = {{0},
	                                   {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	                                   {0x01, 0x00, 0x5e, 0, 0, 1},
	                                   {2, 0, 0, 0, 0, 7}};
	struct frame f = {.n = n};

	memcpy(f.b, dsts[dst], 6);
	memcpy(f.b + 6, (const uint8_t[]){2, 0, 0, 0, 0, 9}, 6);
	f.b[12] = (uint8_t)(proto >> 8);
	f.b[13] = (uint8_t)proto;
	for (uint32_t i = 14; i < sizeof(f.b); i++)
		f.b[i] = (uint8_t)(i * 7);
	if (proto == 0x0800) {
		uint8_t *ip = f.b + 14;

		ip[0] = (uint8_t)(0x40 | ihl);
		ip[2] = (uint8_t)((n - 14) >> 8);
		ip[3] = (uint8_t)(n - 14);
		ip[6] = (uint8_t)(frag >> 8);
		ip[7] = (uint8_t)frag;
		ip[8] = ttl;
		ip[9] = ip_proto;
		ip[10] = 0x12;
		ip[11] = 0x34;
	}
	if (proto < 0x600) { /* 802.3: a raw frame (0xffff) */
		f.b[14] = 0xff;
		f.b[15] = 0xff;
	}
	return f;
}

static int packet_frames(struct frame *f)
{
	int n = 0;

	f[n++] = make_frame(0, 0x0800, 74, 64, 6, 0, 5);      /* TCP to this host */
	f[n++] = make_frame(1, 0x0800, 60, 1, 17, 0, 5);      /* UDP broadcast, ttl 1 */
	f[n++] = make_frame(2, 0x0800, 60, 9, 17, 0x2000, 5); /* a fragment, multicast */
	f[n++] = make_frame(3, 0x0800, 64, 30, 47, 0, 5);     /* GRE to another host */
	f[n++] = make_frame(3, 0x0806, 42, 0, 0, 0, 0);       /* ARP */
	f[n++] = make_frame(0, 0x86dd, 78, 0, 0, 0, 0);       /* IPv6 */
	f[n++] = make_frame(1, 0x0040, 60, 0, 0, 0, 0);       /* 802.3, raw */
	f[n++] = make_frame(0, 0x0800, 14, 0, 0, 0, 0);       /* a header only */
	f[n++] = make_frame(0, 0x0800, 40, 7, 6, 0, 15);      /* ports past the end */
	f[n++] = make_frame(0, 0x0800, 128, 200, 6, 0, 6);    /* options */
	return n;
}

struct io {
	int err;
	uint32_t retval, data_size, ctx_size;
	uint8_t data[256];
	uint8_t ctx[sizeof(struct __sk_buff)];
};

/* How a run gets its context: none (xdp), ctx_out only, ctx_in with 4
 * bytes of metadata, ctx_in with a 20-byte linear part (the rest
 * fragments). */
enum ctx_mode { CTX_NONE, CTX_OUT, CTX_META, CTX_LINEAR };

static void xdp_ctx(const struct frame *f, enum ctx_mode m, struct xdp_md *x)
{
	memset(x, 0, sizeof(*x));
	x->data = m == CTX_META ? 4 : 0;
	x->data_end = m == CTX_LINEAR && f->n > 20 ? 20 : f->n;
}

/* libbpf's bpf_test_run_opts and rqbpf_test_run_opts name their fields
 * alike: @opts gets frame @f, @o's buffers and the context mode @m (@x holds
 * an xdp ctx_in). */
#define FILL_OPTS(opts, f, m, x, o)                                                                \
	do {                                                                                       \
		(opts).data_in = (f)->b;                                                           \
		(opts).data_size_in = (f)->n;                                                      \
		(opts).data_out = (o).data;                                                        \
		(opts).data_size_out = sizeof((o).data);                                           \
		(opts).repeat = 1;                                                                 \
		if ((m) != CTX_NONE) {                                                             \
			(opts).ctx_out = (o).ctx;                                                  \
			(opts).ctx_size_out = sizeof((o).ctx);                                     \
		}                                                                                  \
		if ((m) >= CTX_META) {                                                             \
			xdp_ctx(f, m, &(x));                                                       \
			(opts).ctx_in = &(x);                                                      \
			(opts).ctx_size_in = sizeof(x);                                            \
		}                                                                                  \
	} while (0)

static struct io kernel_packet(struct bpf_program *p, const struct frame *f, enum ctx_mode m)
{
	struct io o = {0};
	struct xdp_md x;
	struct bpf_test_run_opts opts = {.sz = sizeof(opts)};

	FILL_OPTS(opts, f, m, x, o);
	o.err = bpf_prog_test_run_opts(bpf_program__fd(p), &opts) ? -errno : 0;
	o.retval = opts.retval;
	o.data_size = opts.data_size_out;
	o.ctx_size = opts.ctx_size_out;
	return o;
}

static struct io rqbpf_packet(const struct rqbpf_prog *p, const struct frame *f, enum ctx_mode m)
{
	struct io o = {0};
	struct xdp_md x;
	struct rqbpf_test_run_opts opts = {0};

	FILL_OPTS(opts, f, m, x, o);
	o.err = rqbpf_prog_test_run(p, &opts);
	if (o.err && o.err != -EINVAL)
		printf("# rqbpf: %s\n", opts.result.msg);
	o.retval = opts.retval;
	o.data_size = opts.data_size_out;
	o.ctx_size = opts.ctx_size_out;
	return o;
}

static void dump(const char *who, const uint8_t *b, uint32_t n)
{
	printf("# %s:", who);
	for (uint32_t i = 0; i < n; i++)
		printf(" %02x", b[i]);
	printf("\n");
}

static void same_io(const char *prog, int frame, const struct io *k, const struct io *r)
{
	if (k->retval != r->retval) {
		dump("data_out kernel", k->data, 16);
		dump("data_out rqbpf", r->data, 16);
	}
	if (k->err != r->err ||
	    (!k->err && (k->retval != r->retval || k->data_size != r->data_size ||
	                 k->ctx_size != r->ctx_size)))
		tu_fail(__FILE__, __LINE__,
		        "%s, frame %d: kernel err %d ret %u data %u ctx %u, rqbpf err %d ret %u "
		        "data %u ctx %u",
		        prog, frame, k->err, k->retval, k->data_size, k->ctx_size, r->err,
		        r->retval, r->data_size, r->ctx_size);
	if (k->err)
		return;
	for (uint32_t i = 0; i < k->data_size && i < sizeof(k->data); i++)
		if (k->data[i] != r->data[i])
			tu_fail(__FILE__, __LINE__,
			        "%s, frame %d: data_out byte %u: kernel %02x rqbpf %02x", prog,
			        frame, i, k->data[i], r->data[i]);
	if (memcmp(k->ctx, r->ctx, k->ctx_size < sizeof(k->ctx) ? k->ctx_size : sizeof(k->ctx)) !=
	    0) {
		dump("ctx_out kernel", k->ctx,
		     k->ctx_size < sizeof(k->ctx) ? k->ctx_size : sizeof(k->ctx));
		dump("ctx_out rqbpf", r->ctx,
		     k->ctx_size < sizeof(k->ctx) ? k->ctx_size : sizeof(k->ctx));
	}
	for (uint32_t i = 0; i < k->ctx_size && i < sizeof(k->ctx); i++)
		if (k->ctx[i] != r->ctx[i])
			tu_fail(__FILE__, __LINE__,
			        "%s, frame %d: ctx_out byte %u: kernel %02x rqbpf %02x", prog,
			        frame, i, k->ctx[i], r->ctx[i]);
}

/* Every value of map @name in both, by the kernel's keys (4-byte keys). */
static void same_map(struct bpf_object *ko, struct rqbpf_object *ro, const char *name)
{
	int fd = bpf_map__fd(bpf_object__find_map_by_name(ko, name));
	struct rqbpf_map *rm = rqbpf_object_find_map(ro, name);
	uint32_t key, next, *prev = NULL;
	uint8_t kv[64], rv[64];
	int n = 0;

	CHECK(fd >= 0 && rm != NULL);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		memset(kv, 0, sizeof(kv));
		memset(rv, 0, sizeof(rv));
		CHECK_EQ(bpf_map_lookup_elem(fd, &key, kv), 0);
		CHECK_EQ(rqbpf_map_lookup(rm, &key, rv), 0);
		if (memcmp(kv, rv, sizeof(kv)) != 0)
			tu_fail(__FILE__, __LINE__, "map %s key %u: values differ", name, key);
		n++;
	}
	printf("# map %s: %d entries equal\n", name, n);
	CHECK_GT(n, 0);
}

/* socket_handler's events (struct so_event, 28 bytes), in ring order. */
struct events {
	uint8_t ev[64][28];
	int n;
};

static int add_event(void *ctx, void *data, size_t size)
{
	struct events *e = ctx;

	CHECK_EQ(size, sizeof(e->ev[0]));
	if (e->n < 64)
		memcpy(e->ev[e->n++], data, size);
	return 0;
}

/* The socket filter's events in both rings: the same, in the same order. */
static void same_events(struct bpf_object *ko, struct rqbpf_object *ro)
{
	struct events kr = {0}, rr = {0};
	struct rqbpf_ring_buffer *rrb;
	struct ring_buffer *krb = ring_buffer__new(
	    bpf_map__fd(bpf_object__find_map_by_name(ko, "rb")), add_event, &kr, NULL);

	CHECK(krb != NULL);
	CHECK_EQ(rqbpf_ring_buffer_new(rqbpf_object_find_map(ro, "rb"), add_event, &rr, &rrb), 0);
	CHECK_EQ(rqbpf_ring_buffer_consume(rrb), ring_buffer__consume(krb));
	printf("# ring rb: %d events each\n", kr.n);
	CHECK_EQ(rr.n, kr.n);
	CHECK_GT(kr.n, 0);
	for (int i = 0; i < kr.n; i++)
		if (memcmp(rr.ev[i], kr.ev[i], sizeof(kr.ev[i])) != 0) {
			dump("event kernel", kr.ev[i], sizeof(kr.ev[i]));
			dump("event rqbpf", rr.ev[i], sizeof(rr.ev[i]));
			tu_fail(__FILE__, __LINE__, "event %d differs", i);
		}
	ring_buffer__free(krb);
	rqbpf_ring_buffer_free(rrb);
}

/* bootstrap_net.bpf.c: each program on each frame, in the kernel
 * (BPF_PROG_TEST_RUN) and in rqbpf (rqbpf_prog_test_run): the same return
 * value, errors, packet and context after the run; then the same maps and
 * ring buffer records. */
static void test_kernel_packets(void)
{
	static const struct {
		const char *name;
		enum ctx_mode ctx;
	} progs[] = {
	    {"tc_ingress", CTX_OUT}, {"tc_ttl_dec", CTX_OUT},     {"xdp_pass", CTX_NONE},
	    {"xdp_swap", CTX_NONE},  {"xdp_swap", CTX_OUT},       {"xdp_swap", CTX_LINEAR},
	    {"xdp_meta", CTX_META},  {"socket_handler", CTX_OUT}, {"socket_addrs", CTX_OUT}};
	struct frame f[16];
	int nf = packet_frames(f), compared = 0;

	need_root("BPF_PROG_TEST_RUN");
	libbpf_set_print(silent);
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *ro;
		struct bpf_object *ko;

		if (!load_both("bootstrap_net", *cc, &ro, &ko))
			continue;
		for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
			for (int j = 0; j < nf; j++) {
				const char *name = progs[i].name;
				struct io k =
				    kernel_packet(bpf_object__find_program_by_name(ko, name), &f[j],
				                  progs[i].ctx);
				struct io r = rqbpf_packet(bt_prog(ro, name), &f[j], progs[i].ctx);

				same_io(name, j, &k, &r);
				compared++;
			}
		same_map(ko, ro, "tc_stats");
		same_map(ko, ro, "xdp_by_proto");
		same_events(ko, ro);
		bpf_object__close(ko);
		rqbpf_object_close(ro);
	}
	printf("# %d runs compared with the kernel's\n", compared);
	if (!compared) {
		printf("# skipped: this kernel loads no packet object\n");
		exit(SKIP);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_kernel_ringbuf", test_kernel_ringbuf, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_ref", test_kernel_ref, 120, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_sections", test_kernel_sections, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_copy_from_user", test_kernel_copy_from_user, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_bootstrap", test_kernel_bootstrap, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_packets", test_kernel_packets, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_percpu", test_kernel_percpu, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_map_in_map", test_kernel_map_in_map, 60, TU_SKIPPABLE),
    TU_TEST("bpf_kernel_copy_from_user_str", test_kernel_copy_from_user_str, 60, TU_SKIPPABLE),
};

TU_MAIN(tests)
