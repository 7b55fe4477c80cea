/* SPDX-License-Identifier: MIT */
/*
 * The loader: programs, sections, maps and lock offsets of compiled objects
 * (names and sizes as libbpf's open-only mode reports them), global data,
 * '?tc' autoload, the C map API, a program's link error kept as its own;
 * and bad objects, each of which must give a
 * clear error and never crash: truncated ELF, unknown helper, unknown
 * instruction, bad jump, bad relocation, missing section, and run-time
 * faults (out-of-bounds read, exit holding a lock, unlock of a lock not held).
 */
#include <bpf/libbpf.h>
#include <gelf.h>
#include <sys/mman.h>

#include "bpftest.h"
#include "object.h"

static void check_libbpf_names(const char *path, struct rqbpf_object *obj)
{
	struct bpf_object *lo = bpf_object__open_file(path, NULL);
	struct bpf_program *p;
	struct bpf_map *m;
	size_t np = 0, nm = 0;

	CHECK(lo != NULL);
	bpf_object__for_each_program(p, lo)
	{
		struct rqbpf_prog *rp = rqbpf_object_find_prog(obj, bpf_program__name(p));

		CHECK(rp != NULL);
		/* libbpf drops the '?' of sections it does not autoload; rqbpf keeps it. */
		CHECK(!strcmp(rqbpf_prog_section(rp) + (rqbpf_prog_section(rp)[0] == '?'),
		              bpf_program__section_name(p)));
		CHECK_GE(rqbpf_prog_insn_count(rp), bpf_program__insn_cnt(p));
		np++;
	}
	bpf_object__for_each_map(m, lo)
	{
		struct rqbpf_map *rm = rqbpf_object_find_map(obj, bpf_map__name(m));
		struct rqbpf_map_info mi;

		if (!rm)
			tu_fail(__FILE__, __LINE__, "libbpf map %s not in rqbpf", bpf_map__name(m));
		CHECK_EQ(rqbpf_map_get_info(rm, &mi), 0);
		CHECK_EQ(mi.type, bpf_map__type(m));
		CHECK_EQ(mi.key_size, bpf_map__key_size(m));
		CHECK_EQ(mi.value_size, bpf_map__value_size(m));
		CHECK_EQ(mi.max_entries, bpf_map__max_entries(m));
		nm++;
	}
	CHECK_EQ(np, rqbpf_object_prog_count(obj));
	CHECK_EQ(nm, rqbpf_object_map_count(obj));
	bpf_object__close(lo);
}

static void test_load(void)
{
	static const char *const objs[] = {"res_lock", "irqsave", "counter",   "conform",
	                                   "bad",      "hash",    "spin_lock", "local_irq"};

	for (const char *const *cc = bt_compilers; *cc; cc++)
		for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
			char path[512];
			struct rqbpf_object *obj = bt_open(objs[i], *cc);

			if (!obj)
				continue;
			bt_obj_path(path, sizeof(path), objs[i], *cc);
			check_libbpf_names(path, obj);
			rqbpf_object_close(obj);
		}
}

/* spin_lock.bpf.c: a bpf_spin_lock at 0 of the array, hash and .data.G values. */
static void check_spin_offsets(const char *cc)
{
	struct rqbpf_object *obj = bt_open("spin_lock", cc);
	const struct rqbpf_linked_prog *lp;
	int found = 0;

	if (!obj)
		return;
	lp = rqbpf_prog_linked(bt_prog(obj, "spin_count"));
	for (size_t i = 0; i < lp->map_cnt; i++) {
		const struct rqbpf_map_desc *d = &lp->maps[i];
		bool spin = !strcmp(d->name, "spins") || !strcmp(d->name, "hspins") ||
		            !strcmp(d->name, ".data.G");

		CHECK_EQ(d->spin_lock_off, spin ? 0 : -1);
		CHECK_EQ(d->res_lock_off, -1);
		found += spin;
	}
	CHECK_EQ(found, 3);
	rqbpf_object_close(obj);
}

/* Lock offsets, as the verifier sees them (prog.h). */
static void test_lock_offsets(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("res_lock", *cc);
		const struct rqbpf_linked_prog *lp;

		if (!obj)
			continue;
		lp = rqbpf_prog_linked(bt_prog(obj, "order_ab"));
		CHECK_EQ(lp->map_cnt, 4);
		for (size_t i = 0; i < lp->map_cnt; i++) {
			const struct rqbpf_map_desc *d = &lp->maps[i];

			if (!strcmp(d->name, "slots") || !strcmp(d->name, ".data.A") ||
			    !strcmp(d->name, ".data.B"))
				CHECK_EQ(d->res_lock_off, 0);
			else
				CHECK_EQ(d->res_lock_off, -1);
			CHECK_EQ(d->spin_lock_off, -1);
			CHECK_EQ(d->global_data,
			         d->name[0] == '.' || strstr(d->name, ".bss") != NULL);
		}
		rqbpf_object_close(obj);
		obj = bt_open("irqsave", *cc);
		lp = rqbpf_prog_linked(bt_prog(obj, "hold_long"));
		CHECK(!strcmp(lp->maps[0].name, "elems"));
		CHECK_EQ(lp->maps[0].res_lock_off, 0);
		CHECK_EQ(lp->maps[0].value_size, 16);
		CHECK_EQ(lp->prog_type, BPF_PROG_TYPE_SCHED_CLS);
		CHECK_EQ(lp->ctx_size, sizeof(struct __sk_buff));
		rqbpf_object_close(obj);
		check_spin_offsets(*cc);
	}
}

/* Global data: .rodata and .data initial values, .bss zeroed, '?tc'. */
static void test_globals(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("conform", *cc);
		struct rqbpf_error err;
		struct rqbpf_run_result res;
		uint32_t cb[5] = {0, 0, 0, 0, 2}, key = 0;
		struct rqbpf_map *bss;
		uint64_t total;

		if (!obj)
			continue;
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), 0);
		/* old bss (0) + data_counter after increment (6), then 33 + 7 */
		CHECK_EQ(bt_run_cb(obj, "globals", cb), 0 + 6);
		CHECK_EQ(bt_run_cb(obj, "globals", cb), 33 + 7);
		bss = rqbpf_object_find_map(obj, "conform.bss");
		CHECK(bss != NULL);
		CHECK_EQ(rqbpf_map_lookup(bss, &key, &total), 0);
		CHECK_EQ(total, 66);
		CHECK_EQ(rqbpf_prog_run(bt_prog(obj, "not_autoloaded"), NULL, 0, &res), -EPERM);
		rqbpf_object_close(obj);

		obj = bt_open("conform", *cc);
		CHECK_EQ(rqbpf_prog_set_autoload(bt_prog(obj, "not_autoloaded"), 1), 0);
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), 0);
		CHECK_EQ(bt_run(obj, "not_autoloaded"), 42);
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), -EALREADY);
		rqbpf_object_close(obj);
	}
}

static void test_map_api(void)
{
	struct rqbpf_object *obj = bt_load("res_lock", "clang14", 0);
	struct rqbpf_map *m;
	uint32_t key = 3, next, v[2] = {0xffffffff, 7}, out[2];

	if (!obj)
		obj = bt_load("res_lock", "clang19", 0);
	CHECK(obj != NULL);
	m = rqbpf_object_find_map(obj, "slots");
	CHECK_EQ(rqbpf_map_update(m, &key, v, BPF_ANY), 0);
	CHECK_EQ(rqbpf_map_lookup(m, &key, out), 0);
	CHECK_EQ(out[0], 0); /* the lock field is left alone, and reads as 0 */
	CHECK_EQ(out[1], 7);
	CHECK_EQ(rqbpf_map_update(m, &key, v, BPF_NOEXIST), -EEXIST);
	key = 40;
	CHECK_EQ(rqbpf_map_update(m, &key, v, BPF_ANY), -E2BIG);
	CHECK_EQ(rqbpf_map_lookup(m, &key, out), -ENOENT);
	CHECK_EQ(rqbpf_map_delete(m, &key), -EINVAL);
	CHECK_EQ(rqbpf_map_get_next_key(m, NULL, &next), 0);
	CHECK_EQ(next, 0);
	key = 38;
	CHECK_EQ(rqbpf_map_get_next_key(m, &key, &next), 0);
	CHECK_EQ(next, 39);
	key = 39;
	CHECK_EQ(rqbpf_map_get_next_key(m, &key, &next), -ENOENT);
	rqbpf_object_close(obj);
}

/* trace_printk's formats (progs/printk.bpf.c; bpf_kernel.c compares every
 * one with the kernel): the length printed, or -EINVAL for a format the
 * kernel refuses. */
static void test_printk_formats(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("printk", *cc, 0);

		if (!obj)
			continue;
		CHECK_EQ(bt_run(obj, "str"), (long long)strlen("hello world!"));
		CHECK_EQ(bt_run(obj, "str_unreadable"), (long long)strlen("[]"));
		CHECK_EQ(bt_run(obj, "width"), (long long)strlen("   42|42   |0000beef"));
		CHECK_EQ(bt_run(obj, "ptr"), (long long)strlen("p=0000000000000000:"));
		CHECK_EQ(bt_run(obj, "ptr_swallows"), (long long)strlen("0000000000001234|0x1234"));
		CHECK_EQ(bt_run(obj, "ip"), (long long)strlen("192.168.1.7 192.168.001.007"));
		CHECK_EQ(bt_run(obj, "ip6_full"),
		         (long long)strlen("2001:0db8:0000:0000:0000:0000:0000:ab01"));
		CHECK_EQ(bt_run(obj, "str_then_letter"), -EINVAL);
		CHECK_EQ(bt_run(obj, "precision"), -EINVAL);
		CHECK_EQ(bt_run(obj, "control_char"), -EINVAL);
		rqbpf_object_close(obj);
	}
}

/* Runs @p prog of @p obj; its context's cb[] into @p cb. */
static int64_t run_cb_out(struct rqbpf_object *obj, const char *prog, uint32_t *cb)
{
	struct __sk_buff ctx;
	struct rqbpf_run_result res;

	memset(&ctx, 0, sizeof(ctx));
	CHECK_EQ(rqbpf_prog_run(bt_prog(obj, prog), &ctx, sizeof(ctx), &res), 0);
	memcpy(cb, ctx.cb, sizeof(ctx.cb));
	return (int32_t)(uint32_t)res.retval;
}

/* On a thread of its own (its pid is not the tgid) named "rqbpf-helpers-x"
 * (15 characters, the longest name): the ids and the name the helpers give. */
static void *current_thread(void *p)
{
	struct rqbpf_object *obj = p;
	uint32_t cb[5];

	CHECK_EQ(pthread_setname_np(pthread_self(), "rqbpf-helpers-x"), 0);
	CHECK_EQ(run_cb_out(obj, "current_ids", cb), 0);
	CHECK_EQ(cb[0], (uint32_t)getpid());
	CHECK_EQ(cb[1], (uint32_t)gettid());
	CHECK(cb[0] != cb[1]);
	CHECK_EQ(cb[2], (uint32_t)getuid());
	CHECK_EQ(cb[3], (uint32_t)getgid());
	CHECK_EQ(run_cb_out(obj, "current_comm", cb), 0);
	CHECK_EQ(memcmp(cb, "rqbpf-helpers-x", 16), 0);
	CHECK_EQ(run_cb_out(obj, "current_comm_short", cb), 0);
	CHECK_EQ(memcmp(cb, "rqbpf\0\0\0", 8), 0);
	return NULL;
}

/* copy_user (a syscall program) reading @p uptr: its retval; io.buf into @p buf. */
static int copy_user(struct rqbpf_object *obj, const void *uptr, char *buf)
{
	struct rqbpf_map *m = rqbpf_object_find_map(obj, ".data.io");
	struct rqbpf_run_result res;
	uint8_t io[32] = {0};
	uint32_t zero = 0;
	uint64_t p = (uintptr_t)uptr;

	memcpy(io, &p, sizeof(p));
	memset(io + 8, 0x55, 16);
	CHECK_EQ(rqbpf_map_update(m, &zero, io, 0), 0);
	CHECK_EQ(rqbpf_prog_run(bt_prog(obj, "copy_user"), NULL, 0, &res), 0);
	CHECK_EQ(rqbpf_map_lookup(m, &zero, io), 0);
	memcpy(buf, io + 8, 16);
	return (int)(uint32_t)res.retval;
}

/* bpf_copy_from_user: readable bytes are copied; NULL, a PROT_NONE page and
 * a range running into it give -EFAULT and zeros, never a fault. */
static void check_copy_from_user(struct rqbpf_object *obj)
{
	static const char text[] = "copy_from_user: 16 bytes";
	static const char zeros[16];
	long page = sysconf(_SC_PAGESIZE);
	char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[16];

	CHECK(two != MAP_FAILED);
	CHECK_EQ(mprotect(two + page, (size_t)page, PROT_NONE), 0);
	CHECK_EQ(copy_user(obj, text, buf), 0);
	CHECK_EQ(memcmp(buf, text, 16), 0);
	CHECK_EQ(copy_user(obj, NULL, buf), -EFAULT);
	CHECK_EQ(memcmp(buf, zeros, 16), 0);
	CHECK_EQ(copy_user(obj, two + page, buf), -EFAULT);
	CHECK_EQ(copy_user(obj, two + page - 8, buf), -EFAULT);
	CHECK_EQ(memcmp(buf, zeros, 16), 0);
	munmap(two, 2 * (size_t)page);
}

/* The helpers besides the map ones (progs/helpers.bpf.c). */
static void test_helpers(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("helpers", *cc, 0);

		if (!obj)
			continue;
		CHECK_EQ(bt_run(obj, "printk"), (long long)strlen("rqbpf 7 -3 ff\n"));
		CHECK_EQ(bt_run(obj, "time_and_random"), 1);
		CHECK_EQ(bt_run(obj, "cpu_id"), res_spin_thread_slot());
		pthread_t t;

		tu_thread_start(&t, current_thread, obj);
		tu_thread_join(t);
		check_copy_from_user(obj);
		rqbpf_object_close(obj);
	}
}

/* libbpf-bootstrap's minimal and minimal_legacy (bootstrap_minimal.bpf.c):
 * with this process's id set (a global, an array element) each prints its
 * line and returns 0; with another id, 1. */
static void test_bootstrap_minimal(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("bootstrap_minimal", *cc, 0);
		uint32_t zero = 0;

		if (!obj)
			continue;
		for (int other = 0; other < 2; other++) {
			int32_t pid = (int32_t)getpid() + other;

			CHECK_EQ(rqbpf_map_update(rqbpf_object_find_map(obj, ".data.pid"), &zero,
			                          &pid, 0),
			         0);
			CHECK_EQ(
			    rqbpf_map_update(rqbpf_object_find_map(obj, "pid_map"), &zero, &pid, 0),
			    0);
			CHECK_EQ(bt_run(obj, "minimal"), other);
			CHECK_EQ(bt_run(obj, "minimal_legacy"), other);
		}
		rqbpf_object_close(obj);
	}
}

/* multi.bpf.c: trace_pid calls a helper rqbpf does not have. The object
 * opens; trace_pid's error is its own (listed, verified, loaded, run), and
 * with its autoload off the others load and run. */
#define PID_HELPER_ERR                                                                             \
	"insn 2: helper bpf_probe_read_kernel#113 is not supported (it reads kernel memory, "      \
	"which a program run in userspace has none of)"

static void check_multi_bad_prog(struct rqbpf_object *obj)
{
	struct rqbpf_prog *bad = bt_prog(obj, "trace_pid");
	struct rqbpf_run_result res;
	struct rqbpf_error err;

	CHECK(rqbpf_prog_error(bt_prog(obj, "ingress")) == NULL);
	CHECK(rqbpf_prog_error(bad) != NULL);
	BT_CHECK_STREQ(rqbpf_prog_error(bad), PID_HELPER_ERR);
	CHECK_EQ(rqbpf_prog_insn_count(bad), 0);
	CHECK_EQ(rqbpf_prog_verify(bad, NULL, NULL, &err), -ENOTSUP);
	BT_CHECK_STREQ(err.msg, PID_HELPER_ERR);
	CHECK_EQ(rqbpf_object_load(obj, 0, &err), -ENOTSUP);
	BT_CHECK_STREQ(err.msg, "trace_pid: " PID_HELPER_ERR);
	CHECK_EQ(rqbpf_prog_run(bad, NULL, 0, &res), -EPERM);
	BT_CHECK_STREQ(res.msg, "not loaded: " PID_HELPER_ERR);
}

static void test_multi(void)
{
	int opened = 0;

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("multi", *cc);
		struct rqbpf_error err;

		if (!obj)
			continue;
		opened++;
		check_multi_bad_prog(obj);
		CHECK_EQ(rqbpf_prog_set_autoload(bt_prog(obj, "trace_pid"), 0), 0);
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), 0);
		CHECK_EQ(bt_run(obj, "ingress"), 7);
		CHECK_EQ(bt_run(obj, "xdp_count"), 7);
		rqbpf_object_close(obj);
	}
	CHECK_GT(opened, 0); /* the test objects were built */
}

/* sections.bpf.c: the sections the libbpf rqbpf is built with does not
 * know (classifier/x, tc/x; before libbpf 1.3 also tc/ingress, tc/egress,
 * tcx/ingress, tcx/egress) are each that program's error, given at load;
 * the others have their program type's context. */
static bool section_refused(const char *name)
{
	static const char *const refused[] = {"sec_tc_ingress",   "sec_tc_egress",
	                                      "sec_tcx_ingress",  "sec_tcx_egress",
	                                      "sec_classifier_x", "sec_tc_x"};
	size_t k = libbpf_major_version() == 1 && libbpf_minor_version() < 3 ? 0 : 4;

	for (; k < sizeof(refused) / sizeof(refused[0]); k++)
		if (!strcmp(name, refused[k]))
			return true;
	return false;
}

static void test_sections(void)
{
	int opened = 0;

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("sections", *cc);
		struct rqbpf_error err;

		if (!obj)
			continue;
		opened++;
		for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
			const struct rqbpf_prog *p = rqbpf_object_prog(obj, i);
			char want[128];

			snprintf(want, sizeof(want), "unknown program type for section '%s'",
			         rqbpf_prog_section(p));
			if (section_refused(rqbpf_prog_name(p)))
				BT_CHECK_STREQ(rqbpf_prog_error(p), want);
			else
				CHECK(rqbpf_prog_error(p) == NULL && rqbpf_prog_ctx_size(p) > 0);
		}
		CHECK_EQ(rqbpf_prog_set_autoload(bt_prog(obj, "sec_classifier_x"), 1), 0);
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), -EINVAL);
		BT_CHECK_STREQ(err.msg, section_refused("sec_tc_ingress")
		                            ? "sec_tc_ingress: unknown program type for section "
		                              "'tc/ingress'"
		                            : "sec_classifier_x: unknown program type for section "
		                              "'classifier/x'");
		rqbpf_object_close(obj);
	}
	CHECK_GT(opened, 0); /* the test objects were built */
}

/* Program @p name's error is "insn N: " then exactly @p what (N depends on
 * the compiler). */
static void check_prog_error(struct rqbpf_object *obj, const char *name, const char *what)
{
	const char *msg = rqbpf_prog_error(bt_prog(obj, name));
	unsigned insn;
	int n = 0;

	if (!msg || sscanf(msg, "insn %u: %n", &insn, &n) != 1 || n == 0)
		tu_fail(__FILE__, __LINE__, "%s: error '%s'", name, msg ? msg : "(none)");
	printf("# %s: %s\n", name, msg);
	BT_CHECK_STREQ(msg + n, what);
}

/* unsupported.bpf.c's use_inner: twice, the count in its array map. */
static void run_use_inner(struct rqbpf_object *obj)
{
	struct rqbpf_prog *p = bt_prog(obj, "use_inner");
	struct rqbpf_run_result res;
	struct __sk_buff skb = {0};
	struct rqbpf_map *jmp_table = rqbpf_object_find_map(obj, "jmp_table");
	uint32_t k = 0;
	uint64_t v;

	for (uint64_t i = 1; i <= 2; i++) {
		CHECK_EQ(rqbpf_prog_run(p, &skb, sizeof(skb), &res), 0);
		CHECK_EQ(res.retval, i);
	}
	CHECK_EQ(rqbpf_map_lookup(rqbpf_object_find_map(obj, "inner"), &k, &v), 0);
	CHECK_EQ(v, 2);
	/* The map rqbpf does not have is never created. */
	CHECK(jmp_table != NULL);
	CHECK_EQ(rqbpf_map_lookup(jmp_table, &k, &v), -EPERM);
}

/* unsupported.bpf.c: what each unsupported construct is called. */
static void test_unsupported(void)
{
	int opened = 0;

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("unsupported", *cc);
		struct rqbpf_error err;
		char want[sizeof(err.msg)];

		if (!obj)
			continue;
		opened++;
		check_prog_error(obj, "printk4",
		                 "helper bpf_trace_vprintk#177 is not supported (bpf_printk with "
		                 "more than 3 arguments)");
		check_prog_error(obj, "use_devmap",
		                 "map devs: map type devmap (14) is not supported");
		check_prog_error(obj, "use_jmp_table",
		                 "map jmp_table: map type prog_array (3) is not supported");
		/* The object loads; the programs that use other maps run. */
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), 0);
		run_use_inner(obj);
		CHECK_EQ(rqbpf_prog_set_autoload(bt_prog(obj, "use_devmap"), 1), -EBUSY);
		rqbpf_object_close(obj);
		/* Autoloaded, a program that uses one fails the load, naming it. */
		obj = bt_open("unsupported", *cc);
		CHECK_EQ(rqbpf_prog_set_autoload(bt_prog(obj, "use_jmp_table"), 1), 0);
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), -ENOTSUP);
		snprintf(want, sizeof(want), "use_jmp_table: %s",
		         rqbpf_prog_error(bt_prog(obj, "use_jmp_table")));
		BT_CHECK_STREQ(err.msg, want);
		rqbpf_object_close(obj);
	}
	CHECK_GT(opened, 0); /* the test objects were built */
}

/* packet.bpf.c: a read of a packet pointer field is refused as packet
 * access, which rqbpf does not support. */
static void test_packet(void)
{
	/* the verdict's message starts with the second string, or "" accepted */
	static const char *const progs[][2] = {
	    {"skb_data", "R"},      /* Rn offset is outside of the packet */
	    {"skb_data_meta", "R"}, /* the same, for data_meta */
	    {"xdp_data_end", "R"},  /* Rn invalid mem access 'pkt_end' */
	    {"parse_eth", ""},
	};
	static const char *const msgs[] = {"offset is outside of the packet",
	                                   "offset is outside of the packet",
	                                   "invalid mem access 'pkt_end'", NULL};
	int opened = 0;

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("packet", *cc);

		opened += obj != NULL;
		for (size_t i = 0; obj && i < sizeof(progs) / sizeof(progs[0]); i++) {
			struct rqbpf_error err;
			int ret = rqbpf_prog_verify(bt_prog(obj, progs[i][0]), NULL, NULL, &err);

			printf("# %s: %s\n", progs[i][0], ret ? err.msg : "accepted");
			if (!msgs[i]) {
				CHECK_EQ(ret, 0);
				continue;
			}
			CHECK_EQ(ret, -EACCES);
			CHECK(!strncmp(err.msg, progs[i][1], strlen(progs[i][1])));
			CHECK(strstr(err.msg, msgs[i]) != NULL);
		}
		rqbpf_object_close(obj);
	}
	CHECK_GT(opened, 0); /* the test objects were built */
}

/* --- bad objects --- */

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);

	CHECK(f && buf);
	*size = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* Opening (and loading) @p img must fail with a message containing @p want. */
static void expect_open_error(const uint8_t *img, size_t size, const char *want)
{
	struct rqbpf_object *obj = NULL;
	struct rqbpf_error err;
	int ret = rqbpf_object_open_mem(img, size, "bad", &obj, &err);

	if (!ret) {
		ret = rqbpf_object_load(obj, 0, &err);
		rqbpf_object_close(obj);
	}
	if (!ret)
		tu_fail(__FILE__, __LINE__, "bad object accepted (want '%s')",
		        want ? want : "any error");
	CHECK(ret < 0);
	CHECK(err.msg[0] != 0);
	if (want && !strstr(err.msg, want))
		tu_fail(__FILE__, __LINE__, "error '%s' lacks '%s'", err.msg, want);
}

static void test_truncated(void)
{
	char path[512];
	size_t size;
	uint8_t *img;

	CHECK(bt_obj_path(path, sizeof(path), "res_lock", "clang14") ||
	      bt_obj_path(path, sizeof(path), "res_lock", "clang19"));
	img = read_file(path, &size);
	for (size_t n = 0; n < size; n += n < 128 ? 1 : 61)
		expect_open_error(img, n, NULL);
	free(img);
}

/* The object opens; its one program's link error is given by the load. */
static void expect_insns_error(const struct bpf_insn *insns, size_t cnt, const char *want)
{
	struct rqbpf_object *obj;
	struct rqbpf_error err;
	int ret = bt_open_insns(insns, cnt, &obj, &err);

	if (ret)
		tu_fail(__FILE__, __LINE__, "open: %s", err.msg);
	CHECK(rqbpf_prog_error(bt_prog(obj, "prog")) != NULL);
	ret = rqbpf_object_load(obj, 0, &err);
	rqbpf_object_close(obj);
	if (!ret)
		tu_fail(__FILE__, __LINE__, "accepted (want '%s')", want);
	printf("# rejected: %s\n", err.msg);
	if (!strstr(err.msg, want))
		tu_fail(__FILE__, __LINE__, "error '%s' lacks '%s'", err.msg, want);
}

static void test_bad_insns(void)
{
	const struct bpf_insn helper[] = {BT_CALL(BPF_FUNC_probe_read_kernel), BT_EXIT};
	const struct bpf_insn no_helper[] = {BT_CALL(999), BT_EXIT};
	const struct bpf_insn opcode[] = {BT_MOV64_IMM(0, 0), BT_I(0xff, 0, 0, 0, 0), BT_EXIT};
	const struct bpf_insn jump[] = {BT_I(BPF_JMP | BPF_JA, 0, 0, 100, 0), BT_EXIT};
	const struct bpf_insn into_imm64[] = {BT_I(BPF_JMP | BPF_JA, 0, 0, 1, 0), BT_LD_IMM64(0, 1),
	                                      BT_EXIT};
	const struct bpf_insn falls[] = {BT_MOV64_IMM(0, 0)};
	const struct bpf_insn r10[] = {BT_MOV64_IMM(BPF_REG_10, 0), BT_EXIT};
	const struct bpf_insn pseudo[] = {
	    BT_I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), BT_I(0, 0, 0, 0, 0),
	    BT_EXIT};
	const struct bpf_insn kfunc[] = {BT_I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 1),
	                                 BT_EXIT};

	expect_insns_error(helper, 2,
	                   "prog: insn 0: helper bpf_probe_read_kernel#113 is not supported (it "
	                   "reads kernel memory, which a program run in userspace has none of)");
	expect_insns_error(no_helper, 2, "prog: insn 0: unknown helper unknown#999");
	expect_insns_error(opcode, 3, "prog: insn 1: unknown");
	expect_insns_error(jump, 2, "prog: insn 0: jump or call to bad instruction 101");
	expect_insns_error(into_imm64, 4, "prog: insn 0: jump or call to bad instruction 2");
	expect_insns_error(falls, 1, "prog: insn 0: function falls through its end");
	expect_insns_error(r10, 2, "prog: insn 0: write to the frame pointer");
	expect_insns_error(pseudo, 3, "prog: insn 0: ld_imm64 with source 1 and no relocation");
	expect_insns_error(kfunc, 2, "prog: insn 0: call with source register 2 and no relocation");
}

/* Find section @p name in @p img; returns its header (in place) or NULL. */
static Elf64_Shdr *find_section(uint8_t *img, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;

	for (int i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

static void test_bad_sections(void)
{
	char path[512];
	size_t size;
	uint8_t *img, *copy;
	Elf64_Shdr *sh;
	Elf64_Rel *rel;

	CHECK(bt_obj_path(path, sizeof(path), "res_lock", "clang14") ||
	      bt_obj_path(path, sizeof(path), "res_lock", "clang19"));
	img = read_file(path, &size);
	copy = malloc(size);

	/* Missing .BTF (renamed): the BTF-defined map cannot be read. */
	memcpy(copy, img, size);
	sh = find_section(copy, ".BTF");
	CHECK(sh != NULL);
	((char *)copy +
	 ((Elf64_Shdr *)(copy + ((Elf64_Ehdr *)copy)->e_shoff))[((Elf64_Ehdr *)copy)->e_shstrndx]
	     .sh_offset)[sh->sh_name + 3] = 'X';
	expect_open_error(copy, size, "map slots: missing section .BTF");

	/* Missing symbol table. */
	memcpy(copy, img, size);
	find_section(copy, ".symtab")->sh_type = SHT_PROGBITS;
	expect_open_error(copy, size, "missing section .symtab");

	/* Relocation against a symbol index past the table. */
	memcpy(copy, img, size);
	sh = find_section(copy, ".reltc");
	CHECK(sh != NULL);
	rel = (Elf64_Rel *)(copy + sh->sh_offset);
	rel->r_info = ELF64_R_INFO(0xffff, ELF64_R_TYPE(rel->r_info));
	expect_open_error(copy, size, "relocation with bad symbol index 65535");

	/* Relocation of a type the linker does not apply. */
	memcpy(copy, img, size);
	rel = (Elf64_Rel *)(copy + find_section(copy, ".reltc")->sh_offset);
	rel->r_info = ELF64_R_INFO(ELF64_R_SYM(rel->r_info), 3);
	expect_open_error(copy, size, "bad relocation (type 3");

	/* Relocation offset inside an instruction. */
	memcpy(copy, img, size);
	rel = (Elf64_Rel *)(copy + find_section(copy, ".reltc")->sh_offset);
	rel->r_offset += 3;
	expect_open_error(copy, size, "misaligned relocation offset");

	/* Not BPF. */
	memcpy(copy, img, size);
	((Elf64_Ehdr *)copy)->e_machine = 62;
	expect_open_error(copy, size, "is not BPF");
	free(copy);
	free(img);
}

static void expect_fault(struct rqbpf_object *obj, const char *name, const char *want)
{
	struct __sk_buff ctx;
	struct rqbpf_run_result res;
	int ret;

	memset(&ctx, 0, sizeof(ctx));
	ret = rqbpf_prog_run(bt_prog(obj, name), &ctx, sizeof(ctx), &res);
	printf("# %s: %d %s\n", name, ret, res.msg);
	CHECK_EQ(ret, -EFAULT);
	if (!strstr(res.msg, want))
		tu_fail(__FILE__, __LINE__, "fault '%s' lacks '%s'", res.msg, want);
}

static bool signals_blocked(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, SIGALRM) == 1;
}

/* bpf_spin_lock runs that fault: each releases the lock and restores the
 * signal mask (lock_again then takes the lock). */
static void spin_faults(struct rqbpf_object *obj)
{
	static const char *const progs[][2] = {
	    {"spin_exit_holding", "exit with 1 lock held (released)"},
	    {"spin_unlock_by_res", "res_spin_unlock: R1 was taken by bpf_spin_lock"},
	    {"res_unlock_by_spin", "spin_unlock: R1 was taken by bpf_res_spin_lock"},
	    {"spin_aa", "spin_lock: not acquired (-EDEADLK"},
	};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		expect_fault(obj, progs[i][0], progs[i][1]);
		CHECK(!signals_blocked());
		CHECK_EQ(bt_run(obj, "lock_again"), 0);
	}
}

/* bpf_local_irq_save/restore misused: each run faults, and signals are not
 * left blocked (the release restores the mask the first save kept). */
static void irq_faults(struct rqbpf_object *obj)
{
	static const char *const progs[][2] = {
	    {"irq_exit_open", "exit with 1 irq region open (released)"},
	    {"irq_restore_garbage", "local_irq_restore: the flag (0x7271697100000002) is not from "
	                            "an open bpf_local_irq_save of this run"},
	    {"irq_restore_unsaved", "local_irq_restore: the flag (0x0) is not from"},
	    {"irq_restore_twice", "local_irq_restore: the flag (0x7271697100000001) is not from"},
	    {"irq_out_of_order",
	     "local_irq_restore: out of order, a newer bpf_local_irq_save region is open"},
	};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		expect_fault(obj, progs[i][0], progs[i][1]);
		CHECK(!signals_blocked());
		CHECK_EQ(bt_run(obj, "lock_again"), 0);
	}
	/* bpf_spin_lock blocks no signals: its unlock inside a newer irq
	 * region restores no mask, and the region's restore then does */
	CHECK_EQ(bt_run(obj, "spin_unlock_in_irq"), 0);
	CHECK(!signals_blocked());
	CHECK_EQ(bt_run(obj, "lock_again"), 0);
}

/*
 * fuzz-regressions/stack_value_past_stack.bin: a hash map value larger than
 * the program's stack, updated from a pointer on the stack. The memory check
 * must refuse it (the run faults) instead of letting the map copy past the
 * run's frame; ASan (bpf_fuzz_loader_regressions) sees the overflow itself.
 */
static void test_value_past_stack(void)
{
	const char *path = RQBPF_REGRESSIONS_DIR "/stack_value_past_stack.bin";
	struct rqbpf_object *obj;
	struct rqbpf_error err;
	int faults = 0;
	long size;
	char *buf;
	FILE *f;

	f = fopen(path, "rb");
	CHECK(f != NULL);
	CHECK_EQ(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	CHECK_GT(size, 0);
	rewind(f);
	buf = malloc((size_t)size);
	CHECK(buf != NULL);
	CHECK_EQ(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	if (rqbpf_object_open_mem(buf, (size_t)size, "regression", &obj, &err))
		tu_fail(__FILE__, __LINE__, "%s", err.msg);
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++)
		rqbpf_prog_set_autoload(rqbpf_object_prog(obj, i), 1);
	CHECK_EQ(rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err), 0);
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
		const struct rqbpf_prog *p = rqbpf_object_prog(obj, i);
		struct rqbpf_run_result res;
		struct __sk_buff ctx;

		memset(&ctx, 0, sizeof(ctx));
		if (rqbpf_prog_run(p, &ctx, sizeof(ctx), &res) == -EFAULT &&
		    strstr(res.msg, "value outside the program's memory")) {
			printf("# %s: %s\n", rqbpf_prog_name(p), res.msg);
			faults++;
		}
	}
	CHECK_GE(faults, 1);
	rqbpf_object_close(obj);
	free(buf);
}

static void test_runtime_faults(void)
{
	const struct bpf_insn stack_top[] = {BT_LDX(BPF_DW, 0, BPF_REG_10, 0), BT_EXIT};
	const struct bpf_insn ctx_end[] = {BT_LDX(BPF_W, 0, BPF_REG_1, sizeof(struct __sk_buff)),
	                                   BT_EXIT};
	const struct bpf_insn wild[] = {BT_LD_IMM64(1, 0x1000), BT_ST(BPF_DW, 1, 0, 1), BT_EXIT};
	const struct bpf_insn misaligned[] = {
	    BT_MOV64_IMM(1, 1), BT_I(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_10, 1, -12, BPF_ADD),
	    BT_EXIT};
	const struct bpf_insn *progs[] = {stack_top, ctx_end, wild, misaligned};
	const size_t cnts[] = {2, 2, 4, 3};
	const char *wants[] = {"insn 0: read of 8 bytes", "insn 0: read of 4 bytes",
	                       "insn 2: write of 8 bytes at 0x1000", "insn 1: misaligned atomic"};

	for (int i = 0; i < 4; i++) {
		struct rqbpf_object *obj;
		struct rqbpf_error err;

		if (bt_open_insns(progs[i], cnts[i], &obj, &err) ||
		    rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err))
			tu_fail(__FILE__, __LINE__, "%s", err.msg);
		expect_fault(obj, "prog", wants[i]);
		rqbpf_object_close(obj);
	}
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("bad", *cc);
		struct rqbpf_error err;

		if (!obj)
			continue;
		for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++)
			rqbpf_prog_set_autoload(rqbpf_object_prog(obj, i), 1);
		CHECK_EQ(rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err), 0);
		expect_fault(obj, "read_past_value", "read of 4 bytes");
		expect_fault(obj, "exit_holding_lock", "exit with 1 lock held (released)");
		CHECK_EQ(bt_run(obj, "lock_again"), 0); /* it was released */
		expect_fault(obj, "unlock_not_held", "not a lock this run holds");
		expect_fault(
		    obj, "irqsave_flag_garbage",
		    "res_spin_unlock_irqrestore: the flag (0xffffffffffffffff) is not what "
		    "bpf_res_spin_lock_irqsave saved");
		CHECK(!signals_blocked());
		CHECK_EQ(bt_run(obj, "lock_again"), 0);
		spin_faults(obj);
		irq_faults(obj);
		rqbpf_object_close(obj);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_load_libbpf", test_load, 60, 0),
    TU_TEST("bpf_load_lock_offsets", test_lock_offsets, 60, 0),
    TU_TEST("bpf_load_globals", test_globals, 60, 0),
    TU_TEST("bpf_load_map_api", test_map_api, 60, 0),
    TU_TEST("bpf_load_helpers", test_helpers, 60, 0),
    TU_TEST("bpf_load_bootstrap_minimal", test_bootstrap_minimal, 60, 0),
    TU_TEST("bpf_load_printk_formats", test_printk_formats, 60, 0),
    TU_TEST("bpf_load_multi", test_multi, 60, 0),
    TU_TEST("bpf_load_sections", test_sections, 60, 0),
    TU_TEST("bpf_load_unsupported", test_unsupported, 60, 0),
    TU_TEST("bpf_load_packet", test_packet, 60, 0),
    TU_TEST("bpf_bad_truncated", test_truncated, 60, 0),
    TU_TEST("bpf_bad_insns", test_bad_insns, 60, 0),
    TU_TEST("bpf_bad_sections", test_bad_sections, 60, 0),
    TU_TEST("bpf_bad_runtime", test_runtime_faults, 60, 0),
    TU_TEST("bpf_value_past_stack", test_value_past_stack, 30, 0),
};

TU_MAIN(tests)
