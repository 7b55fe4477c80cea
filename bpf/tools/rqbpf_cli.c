/* SPDX-License-Identifier: MIT */
/*
 * rqbpf_cli.c: the rqbpf command (its binary is named rqbpf; the library's
 * header is bpf/include/rqbpf.h): list, run, verify and dump the programs
 * and maps of an eBPF object.
 *
 *   rqbpf list OBJ
 *   rqbpf run OBJ --prog NAME [--threads N] [--repeat R] [--no-verify]
 *             [--set MAP:KEY=HEXVALUE]... [--dump MAP] [--ringbuf MAP[:FILE]]
 *             [data_in FILE] [data_out FILE] [data_size_out L]
 *             [ctx_in FILE] [ctx_out FILE] [repeat R]   (as bpftool prog run)
 *   rqbpf verify OBJ [--prog NAME]... [-v]
 *   rqbpf dump OBJ --map NAME
 *
 * Exit status: 0 success (run: the program ran, whatever it returned;
 * verify: every program accepted), 1 the object could not be loaded, a run
 * faulted or a program was rejected, 2 bad usage.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>
#include "rqbpf.h"
#include "rqu_clock.h"
#include "rqu_parse.h"

#define MAX_SETS    16
#define MAX_VERIFY  64
#define MAX_RETVALS 64
#define MAX_PACKET  65536 /* data_in's and data_out's bytes at most */

static const char usage[] =
    "usage: rqbpf list OBJ\n"
    "       rqbpf run OBJ --prog NAME [--threads N] [--repeat R] [--no-verify]\n"
    "                 [--set MAP:KEY=HEXVALUE]... [--dump MAP] [--ringbuf MAP[:FILE]]\n"
    "                 [data_in FILE] [data_out FILE] [data_size_out L]\n"
    "                 [ctx_in FILE] [ctx_out FILE] [repeat R]\n"
    "       rqbpf verify OBJ [--prog NAME]... [-v]\n"
    "       rqbpf dump OBJ --map NAME\n"
    "       rqbpf --version | --help\n";

struct options {
	const char *cmd, *obj, *prog, *dump;
	const char *ringbuf;            /* MAP or MAP:FILE: read its records during the runs */
	const char *ctx_in, *ctx_out;   /* bpftool's keywords: the context's files */
	const char *data_in, *data_out; /* ... and the packet's */
	long data_size_out;             /* bytes data_out may take */
	const char *progs[MAX_VERIFY];
	int nprogs;
	const char *sets[MAX_SETS];
	int nsets;
	long threads, repeat;
	int verbose, no_verify;
	char why[160]; /* what is wrong with the arguments */
};

static int bad_usage(const char *why)
{
	fprintf(stderr, "rqbpf: %s\n%s", why, usage);
	return 2;
}

static int parse_count(const char *s, long *out)
{
	uint64_t v;

	if (!s || rqu_parse_decimal(s, 100000000, &v) || v < 1)
		return -1;
	*out = (long)v;
	return 0;
}

static int arg_error(struct options *o, const char *fmt, const char *arg)
{
	snprintf(o->why, sizeof(o->why), fmt, arg);
	return -1;
}

/* The options that take a value. */
static bool takes_value(const char *a)
{
	static const char *const with_value[] = {
	    "--prog", "--threads", "--repeat", "--dump",  "--map",    "--set",        "--ringbuf",
	    "repeat", "ctx_in",    "ctx_out",  "data_in", "data_out", "data_size_out"};

	for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (strcmp(a, with_value[i]) == 0)
			return true;
	return false;
}

static int parse_opt(struct options *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;

	if (!strcmp(a, "-v")) {
		o->verbose = 1;
		return 0;
	}
	if (!strcmp(a, "--no-verify")) {
		o->no_verify = 1;
		return 0;
	}
	if (!takes_value(a))
		return arg_error(o, "unknown option '%s'", a);
	if (!v)
		return arg_error(o, "%s needs a value", a);
	(*i)++;
	if (!strcmp(a, "--prog")) {
		if (o->nprogs >= MAX_VERIFY)
			return arg_error(o, "too many --prog (at %s)", v);
		o->prog = o->progs[o->nprogs++] = v;
	} else if (!strcmp(a, "--threads") || !strcmp(a, "--repeat") || !strcmp(a, "repeat")) {
		if (parse_count(v, a[2] == 't' ? &o->threads : &o->repeat))
			return arg_error(o, "bad count '%s' (1 to 100000000)", v);
	} else if (!strcmp(a, "ctx_in") || !strcmp(a, "ctx_out")) {
		*(a[4] == 'i' ? &o->ctx_in : &o->ctx_out) = v;
	} else if (!strcmp(a, "data_in") || !strcmp(a, "data_out")) {
		*(a[5] == 'i' ? &o->data_in : &o->data_out) = v;
	} else if (!strcmp(a, "data_size_out")) {
		if (parse_count(v, &o->data_size_out))
			return arg_error(o, "bad size '%s' (1 to 100000000)", v);
	} else if (!strcmp(a, "--dump") || !strcmp(a, "--map")) {
		o->dump = v;
	} else if (!strcmp(a, "--ringbuf")) {
		o->ringbuf = v;
	} else if (o->nsets >= MAX_SETS) {
		return arg_error(o, "too many --set (at %s)", v);
	} else {
		o->sets[o->nsets++] = v;
	}
	return 0;
}

static int parse_args(struct options *o, int argc, char **argv)
{
	*o = (struct options){.threads = 1, .repeat = 1, .data_size_out = MAX_PACKET};
	if (argc < 3)
		return arg_error(o, "%s", "missing arguments");
	o->cmd = argv[1];
	o->obj = argv[2];
	for (int i = 3; i < argc; i++)
		if (parse_opt(o, argc, argv, &i))
			return -1;
	if (!strcmp(o->cmd, "run"))
		return o->prog && o->nprogs == 1 ? 0 : arg_error(o, "%s", "run takes one --prog");
	if (!strcmp(o->cmd, "dump"))
		return o->dump ? 0 : arg_error(o, "%s", "dump takes --map NAME");
	if (!strcmp(o->cmd, "list") || !strcmp(o->cmd, "verify"))
		return 0;
	return arg_error(o, "unknown command '%s'", o->cmd);
}

/* libbpf's name of a map type ("array", "percpu_array"), or its number. */
static const char *map_type_name(uint32_t type, char *buf, size_t size)
{
	const char *name = libbpf_bpf_map_type_str((enum bpf_map_type)type);

	if (name)
		return name;
	snprintf(buf, size, "%u", type);
	return buf;
}

static int cmd_list(struct rqbpf_object *obj)
{
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
		const struct rqbpf_prog *p = rqbpf_object_prog(obj, i);
		const char *why = rqbpf_prog_error(p);

		if (why)
			printf("prog %s section=%s error: %s\n", rqbpf_prog_name(p),
			       rqbpf_prog_section(p), why);
		else
			printf("prog %s section=%s insns=%zu\n", rqbpf_prog_name(p),
			       rqbpf_prog_section(p), rqbpf_prog_insn_count(p));
	}
	for (size_t i = 0; i < rqbpf_object_map_count(obj); i++) {
		struct rqbpf_map_info mi;
		char num[16];

		rqbpf_map_get_info(rqbpf_object_map(obj, i), &mi);
		printf("map %s type=%s key=%u value=%u max_entries=%u\n", mi.name,
		       map_type_name(mi.type, num, sizeof(num)), mi.key_size, mi.value_size,
		       mi.max_entries);
	}
	return 0;
}

static int cmd_verify(struct rqbpf_object *obj, const struct options *o)
{
	int rejected = 0;

	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
		const struct rqbpf_prog *p = rqbpf_object_prog(obj, i);
		struct rqbpf_error err;
		uint64_t n = 0;
		int want = o->nprogs == 0;

		for (int k = 0; k < o->nprogs; k++)
			want |= !strcmp(o->progs[k], rqbpf_prog_name(p));
		if (!want)
			continue;
		if (rqbpf_prog_verify(p, o->verbose ? stdout : NULL, &n, &err)) {
			printf("%s: rejected: %s\n", rqbpf_prog_name(p), err.msg);
			rejected++;
		} else {
			printf("%s: accepted (%llu insns processed)\n", rqbpf_prog_name(p),
			       (unsigned long long)n);
		}
	}
	for (int k = 0; k < o->nprogs; k++)
		if (!rqbpf_object_find_prog(obj, o->progs[k])) {
			fprintf(stderr, "rqbpf: no program named %s\n", o->progs[k]);
			rejected++;
		}
	return rejected ? 1 : 0;
}

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static int dump_map(struct rqbpf_object *obj, const char *name)
{
	struct rqbpf_map *m = rqbpf_object_find_map(obj, name);
	struct rqbpf_map_info mi;
	uint8_t *key, *next, *val;
	int ret;

	if (!m) {
		fprintf(stderr, "rqbpf: no map named %s\n", name);
		return 1;
	}
	rqbpf_map_get_info(m, &mi);
	key = malloc(mi.key_size);
	next = malloc(mi.key_size);
	val = malloc(rqbpf_map_value_bytes(m)); /* a per-CPU map: every CPU's value */
	ret = key && next && val ? rqbpf_map_get_next_key(m, NULL, next) : -ENOMEM;
	while (!ret) {
		memcpy(key, next, mi.key_size);
		if (!rqbpf_map_lookup(m, key, val)) {
			printf("key=");
			print_hex(key, mi.key_size);
			printf(" value=");
			print_hex(val, rqbpf_map_value_bytes(m));
			printf("\n");
		}
		ret = rqbpf_map_get_next_key(m, key, next);
	}
	free(key);
	free(next);
	free(val);
	return ret == -ENOENT ? 0 : 1;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly 2 * @n hex digits into @n bytes; -1 for anything else. */
static int hex_bytes(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* --set MAP:KEY=VALUE, KEY a decimal index for arrays, VALUE hex bytes. */
static int set_map(struct rqbpf_object *obj, const char *spec)
{
	char name[64];
	const char *colon = strchr(spec, ':'), *eq = strchr(spec, '=');
	struct rqbpf_map *m;
	struct rqbpf_map_info mi;
	uint8_t *val;
	uint64_t key;
	uint32_t k;
	int ret;

	if (!colon || !eq || eq < colon || (size_t)(colon - spec) >= sizeof(name))
		return -EINVAL;
	snprintf(name, sizeof(name), "%.*s", (int)(colon - spec), spec);
	if (rqu_parse_decimal_n(colon + 1, (size_t)(eq - colon - 1), UINT32_MAX, &key))
		return -EINVAL;
	k = (uint32_t)key;
	m = rqbpf_object_find_map(obj, name);
	if (!m || rqbpf_map_get_info(m, &mi) || mi.key_size != 4 ||
	    !(val = malloc(rqbpf_map_value_bytes(m))))
		return -EINVAL;
	ret = hex_bytes(eq + 1, val, rqbpf_map_value_bytes(m)) ? -EINVAL
	                                                       : rqbpf_map_update(m, &k, val, 0);
	free(val);
	return ret;
}

/* The context each thread's runs start from (ctx_in, zeros past it), and
 * where the first thread's context goes after its last run (ctx_out). */
struct run_ctx {
	uint8_t *init;
	size_t size; /* the program's context size */
	uint8_t *out;
	/* data_in: runs through rqbpf_prog_test_run(), each from the packet
	 * and context the run before left, as the kernel's repeat does */
	const uint8_t *data;
	uint32_t data_size;
	uint8_t *data_out;       /* the first thread's packet after its last run */
	uint32_t *data_out_size; /* ... its size */
	uint32_t data_cap;
	bool has_ctx_in, has_ctx_out; /* ctx_in, ctx_out given (as the kernel has them) */
};

struct worker {
	pthread_t tid;
	const struct rqbpf_prog *prog;
	pthread_barrier_t *start;
	long repeat;
	const struct run_ctx *ctx;
	const struct worker *first; /* the thread whose context is ctx_out */
	uint32_t *ns;
	int64_t retvals[MAX_RETVALS];
	long counts[MAX_RETVALS];
	int nret;
	long others; /* runs whose value came after MAX_RETVALS distinct ones */
	int faults;
	char fault[160];
};

static void count_retval(struct worker *w, int64_t v)
{
	for (int i = 0; i < w->nret; i++)
		if (w->retvals[i] == v) {
			w->counts[i]++;
			return;
		}
	if (w->nret == MAX_RETVALS) {
		w->others++;
	} else {
		w->retvals[w->nret] = v;
		w->counts[w->nret++] = 1;
	}
}

/* One thread's buffers for runs with a packet: in and out swap after each
 * run, for the packet and the context both. */
struct packet_bufs {
	uint8_t *pkt[2], *ctx[2];
	uint32_t pkt_size, ctx_size;
	int cur;
};

/* One run of the packet program of @p w from @p b's current buffers. */
static int run_packet(struct worker *w, struct packet_bufs *b, struct rqbpf_run_result *res,
                      int64_t *retval)
{
	const struct run_ctx *c = w->ctx;
	int in = b->cur, out = !b->cur, ret;
	struct rqbpf_test_run_opts opts = {.data_in = b->pkt[in],
	                                   .data_size_in = b->pkt_size,
	                                   .data_out = b->pkt[out],
	                                   .data_size_out = c->data_cap,
	                                   .repeat = 1};

	if (c->has_ctx_in) {
		opts.ctx_in = b->ctx[in];
		opts.ctx_size_in = b->ctx_size;
	}
	if (c->has_ctx_in || c->has_ctx_out) {
		opts.ctx_out = b->ctx[out];
		opts.ctx_size_out = (uint32_t)c->size;
	}
	ret = rqbpf_prog_test_run(w->prog, &opts);
	*res = opts.result;
	if (ret == -EINVAL || ret == -ENOSPC)
		snprintf(res->msg, sizeof(res->msg), "%s",
		         ret == -EINVAL ? "the packet or context breaks the kernel's rules (EINVAL)"
		                        : "data_out is too small (ENOSPC)");
	if (ret)
		return ret;
	b->pkt_size = opts.data_size_out;
	b->ctx_size = opts.ctx_size_out;
	b->cur = out;
	*retval = (int32_t)opts.retval;
	return 0;
}

static bool packet_bufs_init(const struct run_ctx *c, struct packet_bufs *b)
{
	uint32_t cap = c->data_cap > c->data_size ? c->data_cap : c->data_size;

	*b = (struct packet_bufs){.pkt_size = c->data_size, .ctx_size = (uint32_t)c->size};
	for (int i = 0; i < 2; i++) {
		b->pkt[i] = calloc(1, cap + 1);
		b->ctx[i] = calloc(1, c->size + 1);
		if (!b->pkt[i] || !b->ctx[i])
			return false;
	}
	memcpy(b->pkt[0], c->data, c->data_size);
	memcpy(b->ctx[0], c->init, c->size);
	return true;
}

static void packet_bufs_done(struct worker *w, struct packet_bufs *b)
{
	const struct run_ctx *c = w->ctx;

	if (w == w->first && b->pkt[b->cur] && b->ctx[b->cur]) {
		memcpy(c->data_out, b->pkt[b->cur],
		       b->pkt_size < c->data_cap ? b->pkt_size : c->data_cap);
		memcpy(c->out, b->ctx[b->cur], c->size);
		*c->data_out_size = b->pkt_size;
	}
	for (int i = 0; i < 2; i++) {
		free(b->pkt[i]);
		free(b->ctx[i]);
	}
}

static void *work(void *arg)
{
	struct worker *w = arg;
	size_t ctx_size = w->ctx->size;
	void *ctx = calloc(1, ctx_size ? ctx_size : 1);

	if (ctx)
		memcpy(ctx, w->ctx->init, ctx_size);

	struct packet_bufs pb = {0};
	bool packet = w->ctx->data && ctx;

	if (packet && !packet_bufs_init(w->ctx, &pb)) {
		free(ctx);
		ctx = NULL;
	}
	pthread_barrier_wait(w->start);
	for (long i = 0; ctx && i < w->repeat; i++) {
		struct rqbpf_run_result res;
		int64_t retval = 0;
		uint64_t t0 = rqu_now_ns();
		int ret = packet ? run_packet(w, &pb, &res, &retval)
		                 : rqbpf_prog_run(w->prog, ctx, ctx_size, &res);
		uint64_t dt = rqu_now_ns() - t0;

		if (!packet)
			retval = (int32_t)(uint32_t)res.retval;

		w->ns[i] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
		if (ret) {
			if (!w->faults++)
				snprintf(w->fault, sizeof(w->fault), "%s", res.msg);
			continue;
		}
		/* The program's return value is 32 bits, as BPF_PROG_TEST_RUN reports it. */
		count_retval(w, retval);
	}
	if (packet)
		packet_bufs_done(w, &pb);
	else if (ctx && w == w->first)
		memcpy(w->ctx->out, ctx, ctx_size);
	free(ctx);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void report(struct worker *w, long nthreads, long repeat, uint32_t *all)
{
	struct worker sum = {0};
	size_t total = (size_t)nthreads * (size_t)repeat;

	for (long t = 0; t < nthreads; t++) {
		for (int i = 0; i < w[t].nret; i++)
			for (long c = 0; c < w[t].counts[i]; c++)
				count_retval(&sum, w[t].retvals[i]);
		sum.others += w[t].others;
	}
	for (int i = 0; i < sum.nret; i++)
		printf("retval=%lld count=%ld\n", (long long)sum.retvals[i], sum.counts[i]);
	if (sum.others)
		printf("retval=other count=%ld (values past the first %d distinct ones)\n",
		       sum.others, MAX_RETVALS);
	qsort(all, total, sizeof(*all), cmp_u32);
	printf("runs=%zu ns_per_run=%u\n", total, all[total / 2]);
}

static int run_threads(const struct rqbpf_prog *prog, long nthreads, long repeat,
                       const struct run_ctx *ctx)
{
	struct worker *w = calloc((size_t)nthreads, sizeof(*w));
	uint32_t *ns = calloc((size_t)nthreads * (size_t)repeat, sizeof(*ns));
	pthread_barrier_t start;
	int faults = 0;

	if (!w || !ns) {
		free(w);
		free(ns);
		fprintf(stderr, "rqbpf: out of memory\n");
		return 1;
	}
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (long t = 0; t < nthreads; t++) {
		w[t] = (struct worker){.prog = prog,
		                       .start = &start,
		                       .repeat = repeat,
		                       .ctx = ctx,
		                       .first = &w[0],
		                       .ns = ns + t * repeat};
		if (pthread_create(&w[t].tid, NULL, work, &w[t])) {
			fprintf(stderr, "rqbpf: cannot start thread %ld\n", t);
			exit(1);
		}
	}
	for (long t = 0; t < nthreads; t++) {
		pthread_join(w[t].tid, NULL);
		if (w[t].faults && !faults)
			fprintf(stderr, "rqbpf: %s: fault: %s\n", rqbpf_prog_name(prog),
			        w[t].fault);
		faults += w[t].faults;
	}
	pthread_barrier_destroy(&start);
	report(w, nthreads, repeat, ns);
	free(w);
	free(ns);
	return faults ? 1 : 0;
}

/* --ringbuf: a consumer thread reads the ring's records while the program
 * runs, and after: each printed as "ringbuf MAP size=N data=HEX", or with
 * :FILE written to FILE as a 4-byte little-endian size and the bytes. */
struct ring_reader {
	char map[64];
	FILE *out; /* NULL: print */
	struct rqbpf_ring_buffer *rb;
	pthread_t tid;
	atomic_int stop;
	long records;
};

static int print_record(void *ctx, void *data, size_t size)
{
	struct ring_reader *rr = ctx;
	const uint8_t *b = data;
	uint32_t n = (uint32_t)size;
	uint8_t le[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};

	rr->records++;
	if (rr->out)
		return fwrite(le, 4, 1, rr->out) == 1 && fwrite(b, 1, size, rr->out) == size ? 0
		                                                                             : -EIO;
	/* One line, whole: the runs' own output may come from another thread. */
	flockfile(stdout);
	printf("ringbuf %s size=%zu data=", rr->map, size);
	for (size_t i = 0; i < size; i++)
		printf("%02x", b[i]);
	printf("\n");
	funlockfile(stdout);
	return 0;
}

static void *read_ring(void *arg)
{
	struct ring_reader *rr = arg;

	/* relaxed: a flag; pthread_join() orders what follows */
	while (!atomic_load_explicit(&rr->stop, memory_order_relaxed) &&
	       rqbpf_ring_buffer_poll(rr->rb, 50) >= 0)
		;
	return NULL;
}

static int ring_start(struct rqbpf_object *obj, const char *spec, struct ring_reader *rr)
{
	const char *colon = strchr(spec, ':');
	int ret;

	snprintf(rr->map, sizeof(rr->map), "%.*s", (int)(colon ? colon - spec : 63), spec);
	if (colon && !(rr->out = fopen(colon + 1, "wb"))) {
		fprintf(stderr, "rqbpf: %s: %s\n", colon + 1, strerror(errno));
		return 1;
	}
	ret = rqbpf_ring_buffer_new(rqbpf_object_find_map(obj, rr->map), print_record, rr, &rr->rb);
	if (!ret && pthread_create(&rr->tid, NULL, read_ring, rr))
		ret = -EAGAIN;
	if (ret) {
		fprintf(stderr, "rqbpf: --ringbuf %s: %s\n", rr->map,
		        ret == -EINVAL ? "no ring buffer map of that name" : strerror(-ret));
		rqbpf_ring_buffer_free(rr->rb);
		if (rr->out)
			fclose(rr->out);
		return 1;
	}
	return 0;
}

/* Stop the reader, read what is left; 1 when a record could not be saved. */
static int ring_stop(struct ring_reader *rr)
{
	int ret;

	atomic_store_explicit(&rr->stop, 1, memory_order_relaxed);
	pthread_join(rr->tid, NULL);
	ret = rqbpf_ring_buffer_consume(rr->rb);
	rqbpf_ring_buffer_free(rr->rb);
	if (rr->out && fclose(rr->out))
		ret = -EIO;
	printf("ringbuf %s records=%ld\n", rr->map, rr->records);
	return ret < 0 ? 1 : 0;
}

/* Reads ctx_in into @p c->init (at most the program's context size);
 * returns 2 (bad usage) with a message when it cannot. */
static int read_ctx_in(const char *path, struct run_ctx *c)
{
	FILE *f = fopen(path, "rb");
	size_t n;
	int extra;

	if (!f) {
		fprintf(stderr, "rqbpf: ctx_in %s: %s\n", path, strerror(errno));
		return 2;
	}
	n = fread(c->init, 1, c->size, f);
	extra = fgetc(f);
	fclose(f);
	if (extra != EOF) {
		fprintf(stderr, "rqbpf: ctx_in %s: larger than the program's context (%zu bytes)\n",
		        path, c->size);
		return 2;
	}
	(void)n; /* shorter: zeros past it (calloc) */
	return 0;
}

/* Reads the whole of @p path (at most MAX_PACKET bytes) into *@p buf. */
static int read_data_in(const char *path, uint8_t **buf, uint32_t *size)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	*buf = calloc(1, MAX_PACKET + 1);
	if (!f || !*buf) {
		fprintf(stderr, "rqbpf: data_in %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return 2;
	}
	n = fread(*buf, 1, MAX_PACKET + 1, f);
	fclose(f);
	if (n > MAX_PACKET) {
		fprintf(stderr, "rqbpf: data_in %s: larger than %d bytes\n", path, MAX_PACKET);
		return 2;
	}
	*size = (uint32_t)n;
	return 0;
}

static int write_file(const char *what, const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(buf, 1, n, f) == n;

	if (f && fclose(f))
		ok = false;
	if (!ok)
		fprintf(stderr, "rqbpf: %s %s: %s\n", what, path, strerror(errno));
	return ok ? 0 : 1;
}

/* data_in, data_out: the packet's files (@p c->data, @p c->data_out). */
static int packet_files(const struct options *o, struct run_ctx *c)
{
	if (o->data_out && !o->data_in) {
		fprintf(stderr, "rqbpf: data_out needs data_in\n");
		return 2;
	}
	if (!o->data_in)
		return 0;
	c->data_cap = (uint32_t)o->data_size_out;
	c->data_out = calloc(1, c->data_cap + 1);
	c->has_ctx_in = o->ctx_in != NULL;
	c->has_ctx_out = o->ctx_out != NULL;
	if (!c->data_out)
		return 1;
	return read_data_in(o->data_in, (uint8_t **)&c->data, &c->data_size);
}

/* The runs, their context read from ctx_in and written to ctx_out, their
 * packet read from data_in and written to data_out. */
static int run_with_ctx(const struct rqbpf_prog *prog, const struct options *o)
{
	struct run_ctx c = {.size = rqbpf_prog_ctx_size(prog)};
	uint32_t out_size = 0;
	int ret = 0;

	c.data_out_size = &out_size;
	if ((o->ctx_in || o->ctx_out) && !c.size) {
		fprintf(stderr, "rqbpf: %s: the program's type has no context\n",
		        o->ctx_in ? "ctx_in" : "ctx_out");
		return 2;
	}
	c.init = calloc(1, c.size + 1);
	c.out = calloc(1, c.size + 1);
	if (!c.init || !c.out)
		ret = 1;
	if (!ret && o->ctx_in)
		ret = read_ctx_in(o->ctx_in, &c);
	if (!ret)
		ret = packet_files(o, &c);
	if (!ret)
		ret = run_threads(prog, o->threads, o->repeat, &c);
	if (!ret && o->ctx_out)
		ret = write_file("ctx_out", o->ctx_out, c.out, c.size);
	if (!ret && o->data_out)
		ret = write_file("data_out", o->data_out, c.data_out,
		                 out_size < c.data_cap ? out_size : c.data_cap);
	free(c.init);
	free(c.out);
	free((void *)c.data);
	free(c.data_out);
	return ret;
}

static int cmd_run(struct rqbpf_object *obj, const struct options *o)
{
	struct ring_reader rr = {0};
	struct rqbpf_prog *prog = rqbpf_object_find_prog(obj, o->prog);
	struct rqbpf_error err;
	int ret;

	if (!prog) {
		fprintf(stderr, "rqbpf: no program named %s\n", o->prog);
		return 1;
	}
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
		struct rqbpf_prog *p = rqbpf_object_prog(obj, i);

		rqbpf_prog_set_autoload(p, p == prog);
	}
	if (rqbpf_object_load(obj, o->no_verify ? RQBPF_LOAD_NO_VERIFY : 0, &err)) {
		fprintf(stderr, "rqbpf: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < o->nsets; i++)
		if (set_map(obj, o->sets[i])) {
			fprintf(stderr, "rqbpf: bad --set %s\n", o->sets[i]);
			return 2;
		}
	if (o->ringbuf && ring_start(obj, o->ringbuf, &rr))
		return 1;
	ret = run_with_ctx(prog, o);
	if (o->ringbuf && ring_stop(&rr))
		ret = 1;
	if (o->dump && dump_map(obj, o->dump))
		ret = 1;
	return ret;
}

int main(int argc, char **argv)
{
	struct options o;
	struct rqbpf_object *obj;
	struct rqbpf_error err;
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("rqbpf %s\n", rqbpf_version());
		return 0;
	}
	if (parse_args(&o, argc, argv))
		return bad_usage(o.why);
	if (rqbpf_object_open_file(o.obj, &obj, &err)) {
		fprintf(stderr, "rqbpf: %s\n", err.msg);
		return 1;
	}
	if (!strcmp(o.cmd, "list")) {
		ret = cmd_list(obj);
	} else if (!strcmp(o.cmd, "verify")) {
		ret = cmd_verify(obj, &o);
	} else if (!strcmp(o.cmd, "run")) {
		ret = cmd_run(obj, &o);
	} else if (rqbpf_object_load(obj, 0, &err)) {
		fprintf(stderr, "rqbpf: %s\n", err.msg);
		ret = 1;
	} else {
		ret = dump_map(obj, o.dump);
	}
	rqbpf_object_close(obj);
	return ret;
}
