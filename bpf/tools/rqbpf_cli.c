/* SPDX-License-Identifier: MIT */
/*
 * rqbpf_cli.c: the rqbpf command (its binary is named rqbpf; the library's
 * header is bpf/include/rqbpf.h): list, run, verify and dump the programs
 * and maps of an eBPF object, in bpftool's manner: `rqbpf help [VERB]` and
 * `VERB --help`, --version, -j/--json output for every verb (cli_json.c),
 * map keys and values printed with their BTF types (cli_btf.c).
 *
 *   rqbpf [-j] list OBJ
 *   rqbpf [-j] run OBJ --prog NAME [--threads N] [--repeat R] [--no-verify]
 *             [--set MAP:KEY=HEXVALUE]... [--dump MAP]... [--ringbuf MAP[:FILE]]
 *             [data_in FILE] [data_out FILE] [data_size_out L]
 *             [ctx_in FILE] [ctx_out FILE] [repeat R]   (as bpftool prog run)
 *   rqbpf [-j] verify OBJ [--prog NAME]... [-v]
 *   rqbpf [-j] dump OBJ --map NAME...
 *
 * Exit status: 0 success (run: the program ran, whatever it returned;
 * verify: every program accepted), 1 the object could not be loaded, a
 * program or map named is not in it, a run faulted or a program was
 * rejected, 2 bad usage.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>
#include "cli_btf.h"
#include "cli_json.h"
#include "rqbpf.h"
#include "rqu_clock.h"
#include "rqu_parse.h"

#define MAX_SETS    16
#define MAX_VERIFY  64
#define MAX_DUMPS   16
#define MAX_RETVALS 64
#define MAX_PACKET  65536 /* data_in's and data_out's bytes at most */

enum verb { VERB_LIST, VERB_RUN, VERB_VERIFY, VERB_DUMP, NR_VERBS };
#define V_LIST   (1u << VERB_LIST)
#define V_RUN    (1u << VERB_RUN)
#define V_VERIFY (1u << VERB_VERIFY)
#define V_DUMP   (1u << VERB_DUMP)
#define V_ALL    (V_LIST | V_RUN | V_VERIFY | V_DUMP)

static const struct {
	const char *name, *synopsis, *about;
} verbs[NR_VERBS] = {
    [VERB_LIST] = {"list", "OBJ",
                   "Print the object's programs (section and instructions, or why one cannot\n"
                   "be linked) and maps (type, key and value sizes, entries)."},
    [VERB_RUN] =
        {"run",
         "OBJ --prog NAME [--threads N] [--repeat R] [--no-verify]\n"
         "                 [--set MAP:KEY=HEXVALUE]... [--dump MAP]... [--ringbuf MAP[:FILE]]\n"
         "                 [data_in FILE] [data_out FILE] [data_size_out L]\n"
         "                 [ctx_in FILE] [ctx_out FILE] [repeat R]",
         "Load and verify program NAME alone, run it R times on each of N threads,\n"
         "print each distinct return value's count and the median ns per run."},
    [VERB_VERIFY] = {"verify", "OBJ [--prog NAME]... [-v]",
                     "Verify each program (or those named) with the kernel's rules and messages."},
    [VERB_DUMP] = {"dump", "OBJ --map NAME...",
                   "Load the object's maps (not its programs: a rejected program does not stop\n"
                   "it) and print each named map's elements, typed by the object's BTF."},
};

enum opt_id {
	O_PROG,
	O_THREADS,
	O_REPEAT,
	O_NO_VERIFY,
	O_SET,
	O_DUMP,
	O_RINGBUF,
	O_CTX_IN,
	O_CTX_OUT,
	O_DATA_IN,
	O_DATA_OUT,
	O_DATA_SIZE_OUT,
	O_MAP,
	O_VERBOSE,
	O_JSON,
	O_HELP,
	NR_OPTS
};

/* Each option: its names, its value's name (NULL: a flag), the verbs that
 * take it and those where it may be given more than once (flags always
 * may: once or twice means the same). */
static const struct {
	const char *name, *alias, *arg;
	unsigned verbs, many;
	const char *help;
} opts[NR_OPTS] = {
    [O_PROG] = {"--prog", NULL, "NAME", V_RUN | V_VERIFY, V_VERIFY,
                "the program (run: exactly one; verify: each one named)"},
    [O_THREADS] = {"--threads", NULL, "N", V_RUN, 0, "threads running it at once (1)"},
    [O_REPEAT] = {"--repeat", "repeat", "R", V_RUN, 0, "runs per thread (1)"},
    [O_NO_VERIFY] = {"--no-verify", NULL, NULL, V_RUN, 0, "load without the verifier"},
    [O_SET] = {"--set", NULL, "MAP:KEY=HEXVALUE", V_RUN, V_RUN,
               "write an array element before the runs"},
    [O_DUMP] = {"--dump", NULL, "MAP", V_RUN, V_RUN, "print a map after the runs"},
    [O_RINGBUF] = {"--ringbuf", NULL, "MAP[:FILE]", V_RUN, 0,
                   "print (or save to FILE) a ring buffer's records"},
    [O_CTX_IN] = {"ctx_in", NULL, "FILE", V_RUN, 0, "each thread's context starts from FILE"},
    [O_CTX_OUT] = {"ctx_out", NULL, "FILE", V_RUN, 0,
                   "the first thread's context after its runs, to FILE"},
    [O_DATA_IN] = {"data_in", NULL, "FILE", V_RUN, 0,
                   "run on the packet in FILE (as BPF_PROG_TEST_RUN)"},
    [O_DATA_OUT] = {"data_out", NULL, "FILE", V_RUN, 0,
                    "the first thread's packet after its runs, to FILE"},
    [O_DATA_SIZE_OUT] = {"data_size_out", NULL, "L", V_RUN, 0, "bytes data_out may take (65536)"},
    [O_MAP] = {"--map", NULL, "NAME", V_DUMP, V_DUMP, "the map to print (one or more)"},
    [O_VERBOSE] = {"-v", NULL, NULL, V_VERIFY, 0, "print the verifier's log"},
    [O_JSON] = {"--json", "-j", NULL, V_ALL, 0, "JSON output, one document on stdout"},
    [O_HELP] = {"--help", "-h", NULL, V_ALL, 0, "this verb's help"},
};

struct options {
	enum verb verb;
	const char *obj, *prog;
	const char *ringbuf;            /* MAP or MAP:FILE: read its records during the runs */
	const char *ctx_in, *ctx_out;   /* bpftool's keywords: the context's files */
	const char *data_in, *data_out; /* ... and the packet's */
	long data_size_out;             /* bytes data_out may take */
	const char *progs[MAX_VERIFY];
	int nprogs;
	const char *sets[MAX_SETS];
	int nsets;
	const char *dumps[MAX_DUMPS]; /* run --dump, dump --map */
	int ndumps;
	long threads, repeat;
	int verbose, no_verify, help;
	int given[NR_OPTS];
	char why[160]; /* what is wrong with the arguments */
};

/* -j: every verb writes one JSON document on stdout, errors included. */
static bool json;
static struct jw jw;

/* With -j, run's document: {"prog":..,"threads":..,"repeat":..,"runs":..,
 * "ns_per_run":..,"retvals":[{"retval":..,"count":..}],"faults":..}, then
 * "ringbuf" and "maps" as asked; opened here, closed by cmd_run(). */
static bool run_doc_open;

/* An error: "rqbpf: MESSAGE" on stderr, or with -j {"error":"MESSAGE"}, in
 * run's document once it is open. */
__attribute__((format(printf, 1, 2))) static void cli_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!json) {
		fprintf(stderr, "rqbpf: %s\n", msg);
		return;
	}
	if (run_doc_open) {
		jw_string_field(&jw, "error", msg);
		return;
	}
	jw_init(&jw, stdout);
	jw_object_start(&jw);
	jw_string_field(&jw, "error", msg);
	jw_object_end(&jw);
}

static void print_usage(FILE *f)
{
	for (int v = 0; v < NR_VERBS; v++)
		fprintf(f, "%s rqbpf %s %s\n", v ? "      " : "usage:", verbs[v].name,
		        verbs[v].synopsis);
	fputs("       rqbpf help [VERB] | rqbpf VERB --help\n"
	      "       rqbpf --version\n"
	      "options: -j, --json   JSON output for every verb\n"
	      "exit status: 0 success, 1 failure (cannot load, no such program or map,\n"
	      "             a program rejected, a run faulted), 2 bad usage\n",
	      f);
}

static void print_verb_help(enum verb v)
{
	printf("usage: rqbpf %s %s\n\n%s\n\noptions:\n", verbs[v].name, verbs[v].synopsis,
	       verbs[v].about);
	for (int i = 0; i < NR_OPTS; i++) {
		char left[40];

		if (!(opts[i].verbs & (1u << v)))
			continue;
		snprintf(left, sizeof(left), "%s%s%s%s%s", opts[i].alias ? opts[i].alias : "",
		         opts[i].alias ? ", " : "", opts[i].name, opts[i].arg ? " " : "",
		         opts[i].arg ? opts[i].arg : "");
		printf("  %-26s %s%s\n", left, opts[i].help,
		       opts[i].many & (1u << v) ? " (may be repeated)" : "");
	}
}

static int bad_usage(const char *why)
{
	if (json) {
		cli_error("%s", why);
	} else {
		fprintf(stderr, "rqbpf: %s\n", why);
		print_usage(stderr);
	}
	return 2;
}

static int find_verb(const char *name)
{
	for (int v = 0; v < NR_VERBS; v++)
		if (!strcmp(name, verbs[v].name))
			return v;
	return -1;
}

static int find_opt(const char *a)
{
	for (int i = 0; i < NR_OPTS; i++)
		if (!strcmp(a, opts[i].name) || (opts[i].alias && !strcmp(a, opts[i].alias)))
			return i;
	return -1;
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

/* An option's value into its slot. */
static int take_value(struct options *o, int id, const char *v)
{
	switch (id) {
	case O_PROG:
		if (o->nprogs >= MAX_VERIFY)
			return arg_error(o, "too many --prog (at %s)", v);
		o->prog = o->progs[o->nprogs++] = v;
		return 0;
	case O_THREADS:
	case O_REPEAT:
		if (parse_count(v, id == O_THREADS ? &o->threads : &o->repeat))
			return arg_error(o, "bad count '%s' (1 to 100000000)", v);
		return 0;
	case O_CTX_IN:
		o->ctx_in = v;
		return 0;
	case O_CTX_OUT:
		o->ctx_out = v;
		return 0;
	case O_DATA_IN:
		o->data_in = v;
		return 0;
	case O_DATA_OUT:
		o->data_out = v;
		return 0;
	case O_DATA_SIZE_OUT:
		if (parse_count(v, &o->data_size_out))
			return arg_error(o, "bad size '%s' (1 to 100000000)", v);
		return 0;
	case O_DUMP:
	case O_MAP:
		if (o->ndumps >= MAX_DUMPS)
			return arg_error(o, "too many maps to print (at %s)", v);
		o->dumps[o->ndumps++] = v;
		return 0;
	case O_RINGBUF:
		o->ringbuf = v;
		return 0;
	default: /* O_SET */
		if (o->nsets >= MAX_SETS)
			return arg_error(o, "too many --set (at %s)", v);
		o->sets[o->nsets++] = v;
		return 0;
	}
}

static int parse_opt(struct options *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	int id = find_opt(a);
	unsigned bit = 1u << o->verb;

	if (id < 0)
		return arg_error(o, "unknown option '%s'", a);
	if (!(opts[id].verbs & bit)) {
		snprintf(o->why, sizeof(o->why), "%s does not take %s", verbs[o->verb].name, a);
		return -1;
	}
	if (o->given[id]++ && opts[id].arg && !(opts[id].many & bit)) {
		if (id == O_PROG)
			return arg_error(o, "%s", "run takes one --prog");
		return arg_error(o, "%s given twice", opts[id].name);
	}
	if (!opts[id].arg) {
		o->verbose |= id == O_VERBOSE;
		o->no_verify |= id == O_NO_VERIFY;
		o->help |= id == O_HELP;
		json |= id == O_JSON;
		return 0;
	}
	if (!v)
		return arg_error(o, "%s needs a value", a);
	(*i)++;
	return take_value(o, id, v);
}

static int parse_args(struct options *o, int argc, char **argv, int first)
{
	int verb = find_verb(argv[first]);

	if (verb < 0)
		return arg_error(o, "unknown command '%s'", argv[first]);
	o->verb = (enum verb)verb;
	for (int i = first + 1; i < argc; i++) {
		if (argv[i][0] == '-' || find_opt(argv[i]) >= 0) {
			if (parse_opt(o, argc, argv, &i))
				return -1;
		} else if (!o->obj) {
			o->obj = argv[i];
		} else {
			return arg_error(o, "unexpected argument '%s'", argv[i]);
		}
	}
	if (o->help)
		return 0;
	if (!o->obj)
		return arg_error(o, "%s", "missing the object file");
	if (o->verb == VERB_RUN && !o->prog)
		return arg_error(o, "%s", "run takes one --prog");
	if (o->verb == VERB_DUMP && !o->ndumps)
		return arg_error(o, "%s", "dump takes --map NAME");
	return 0;
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

static void list_prog(const struct rqbpf_prog *p)
{
	const char *why = rqbpf_prog_error(p);

	if (json) {
		jw_object_start(&jw);
		jw_string_field(&jw, "name", rqbpf_prog_name(p));
		jw_string_field(&jw, "section", rqbpf_prog_section(p));
		if (why)
			jw_string_field(&jw, "error", why);
		else
			jw_uint_field(&jw, "insns", rqbpf_prog_insn_count(p));
		jw_object_end(&jw);
	} else if (why) {
		printf("prog %s section=%s error: %s\n", rqbpf_prog_name(p), rqbpf_prog_section(p),
		       why);
	} else {
		printf("prog %s section=%s insns=%zu\n", rqbpf_prog_name(p), rqbpf_prog_section(p),
		       rqbpf_prog_insn_count(p));
	}
}

static void list_map(const struct rqbpf_map *m)
{
	struct rqbpf_map_info mi;
	char num[16];
	const char *type;

	rqbpf_map_get_info(m, &mi);
	type = map_type_name(mi.type, num, sizeof(num));
	if (!json) {
		printf("map %s type=%s key=%u value=%u max_entries=%u\n", mi.name, type,
		       mi.key_size, mi.value_size, mi.max_entries);
		return;
	}
	jw_object_start(&jw);
	jw_string_field(&jw, "name", mi.name);
	jw_string_field(&jw, "type", type);
	jw_uint_field(&jw, "key_size", mi.key_size);
	jw_uint_field(&jw, "value_size", mi.value_size);
	jw_uint_field(&jw, "max_entries", mi.max_entries);
	jw_object_end(&jw);
}

/* list: {"progs":[...],"maps":[...]} with -j. */
static int cmd_list(struct rqbpf_object *obj)
{
	if (json) {
		jw_object_start(&jw);
		jw_name(&jw, "progs");
		jw_array_start(&jw);
	}
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++)
		list_prog(rqbpf_object_prog(obj, i));
	if (json) {
		jw_array_end(&jw);
		jw_name(&jw, "maps");
		jw_array_start(&jw);
	}
	for (size_t i = 0; i < rqbpf_object_map_count(obj); i++)
		list_map(rqbpf_object_map(obj, i));
	if (json) {
		jw_array_end(&jw);
		jw_object_end(&jw);
	}
	return 0;
}

/* One program's verdict; with -j and -v, the log is captured into the
 * document (a stream of its own, so stdout stays one JSON document). */
static int verify_one(const struct rqbpf_prog *p, int verbose)
{
	char *log = NULL;
	size_t len = 0;
	FILE *logf = verbose ? (json ? open_memstream(&log, &len) : stdout) : NULL;
	struct rqbpf_error err;
	uint64_t n = 0;
	int rejected = rqbpf_prog_verify(p, logf, &n, &err) != 0;

	if (logf && logf != stdout)
		fclose(logf);
	if (json) {
		jw_object_start(&jw);
		jw_string_field(&jw, "name", rqbpf_prog_name(p));
		jw_bool_field(&jw, "accepted", !rejected);
		if (rejected)
			jw_string_field(&jw, "error", err.msg);
		else
			jw_uint_field(&jw, "insns_processed", n);
		if (log)
			jw_string_field(&jw, "log", log);
		jw_object_end(&jw);
	} else if (rejected) {
		printf("%s: rejected: %s\n", rqbpf_prog_name(p), err.msg);
	} else {
		printf("%s: accepted (%llu insns processed)\n", rqbpf_prog_name(p),
		       (unsigned long long)n);
	}
	free(log);
	return rejected;
}

/* verify: [{"name":..,"accepted":..},...] with -j; a program named that
 * is not in the object: {"name":..,"error":"no program named NAME"}. */
static int cmd_verify(struct rqbpf_object *obj, const struct options *o)
{
	int rejected = 0;

	if (json)
		jw_array_start(&jw);
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
		const struct rqbpf_prog *p = rqbpf_object_prog(obj, i);
		int want = o->nprogs == 0;

		for (int k = 0; k < o->nprogs; k++)
			want |= !strcmp(o->progs[k], rqbpf_prog_name(p));
		if (want)
			rejected += verify_one(p, o->verbose);
	}
	for (int k = 0; k < o->nprogs; k++) {
		if (rqbpf_object_find_prog(obj, o->progs[k]))
			continue;
		rejected++;
		if (!json) {
			fprintf(stderr, "rqbpf: no program named %s\n", o->progs[k]);
			continue;
		}
		jw_object_start(&jw);
		jw_string_field(&jw, "name", o->progs[k]);
		jw_string_field(&jw, "error", "no program named that");
		jw_object_end(&jw);
	}
	if (json)
		jw_array_end(&jw);
	return rejected ? 1 : 0;
}

/* ---- dump: each element, its key and value typed by the object's BTF ---- */

/* The object's BTF, read once by libbpf (NULL: none; values in hex). */
static struct cli_btf *obj_btf;

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static void json_hex_bytes(const uint8_t *p, size_t n)
{
	char b[8];

	jw_array_start(&jw);
	for (size_t i = 0; i < n; i++) {
		snprintf(b, sizeof(b), "0x%02x", p[i]);
		jw_string(&jw, b);
	}
	jw_array_end(&jw);
}

/* A typed key or value as a JSON fragment, or NULL (no type, or one that
 * cannot be printed). */
static char *typed_json(uint32_t id, const uint8_t *p, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = id ? open_memstream(&buf, &len) : NULL;
	int ret = f ? cli_btf_print(obj_btf, id, p, n, true, f) : -1;

	if (f)
		fclose(f);
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The types of a map's key and value; a 4-byte key without one (a data
 * section's, an array's without BTF) is its index. */
struct elem_types {
	uint32_t key, value;
	size_t key_size, value_size;
};

/* Text: "key=K value=V", each typed (decimal, {.field = ...}) where the
 * object's BTF gives its type, hex bytes otherwise. */
static void print_elem_text(const struct elem_types *t, const uint8_t *key, const uint8_t *val)
{
	uint32_t index;

	printf("key=");
	if (!t->key || cli_btf_print(obj_btf, t->key, key, t->key_size, false, stdout)) {
		if (t->value && t->key_size == 4) {
			memcpy(&index, key, 4);
			printf("%u", index);
		} else {
			print_hex(key, t->key_size);
		}
	}
	printf(" value=");
	if (!t->value || cli_btf_print(obj_btf, t->value, val, t->value_size, false, stdout))
		print_hex(val, t->value_size);
	printf("\n");
}

/* JSON, as bpftool map dump -j: {"key":[bytes],"value":[bytes],
 * "formatted":{"key":K,"value":V}}, "formatted" where BTF types them. */
static void print_elem_json(const struct elem_types *t, const uint8_t *key, const uint8_t *val)
{
	char *k = typed_json(t->key, key, t->key_size);
	char *v = typed_json(t->value, val, t->value_size);
	uint32_t index;

	jw_object_start(&jw);
	jw_name(&jw, "key");
	json_hex_bytes(key, t->key_size);
	jw_name(&jw, "value");
	json_hex_bytes(val, t->value_size);
	if (v) {
		jw_name(&jw, "formatted");
		jw_object_start(&jw);
		if (k) {
			jw_name(&jw, "key");
			jw_raw(&jw, k);
		} else if (t->key_size == 4) {
			memcpy(&index, key, 4);
			jw_uint_field(&jw, "key", index);
		}
		jw_name(&jw, "value");
		jw_raw(&jw, v);
		jw_object_end(&jw);
	}
	jw_object_end(&jw);
	free(k);
	free(v);
}

static int dump_elems(struct rqbpf_map *m, const struct elem_types *t)
{
	uint8_t *key = malloc(t->key_size), *next = malloc(t->key_size);
	uint8_t *val = malloc(t->value_size);
	int ret = key && next && val ? rqbpf_map_get_next_key(m, NULL, next) : -ENOMEM;

	while (!ret) {
		memcpy(key, next, t->key_size);
		if (!rqbpf_map_lookup(m, key, val)) {
			if (json)
				print_elem_json(t, key, val);
			else
				print_elem_text(t, key, val);
		}
		ret = rqbpf_map_get_next_key(m, key, next);
	}
	free(key);
	free(next);
	free(val);
	return ret == -ENOENT ? 0 : ret;
}

/* One map: its lines, or with -j {"name":..,"elements":[...]}. */
static int dump_map(struct rqbpf_object *obj, const char *name)
{
	struct rqbpf_map *m = rqbpf_object_find_map(obj, name);
	struct rqbpf_map_info mi;
	struct elem_types t;
	int ret;

	if (json) {
		jw_object_start(&jw);
		jw_string_field(&jw, "name", name);
	}
	if (!m) {
		if (json) {
			jw_string_field(&jw, "error", "no map named that");
			jw_object_end(&jw);
		} else {
			fprintf(stderr, "rqbpf: no map named %s\n", name);
		}
		return 1;
	}
	rqbpf_map_get_info(m, &mi);
	t = (struct elem_types){0, 0, mi.key_size, mi.value_size};
	cli_btf_map_types(obj_btf, name, mi.key_size, mi.value_size, &t.key, &t.value);
	if (json) {
		jw_name(&jw, "elements");
		jw_array_start(&jw);
	}
	ret = dump_elems(m, &t);
	if (json) {
		jw_array_end(&jw);
		if (ret)
			jw_string_field(&jw, "error", strerror(-ret));
		jw_object_end(&jw);
	} else if (ret) {
		fprintf(stderr, "rqbpf: %s: %s\n", name, strerror(-ret));
	}
	return ret ? 1 : 0;
}

/* The maps named, in order; 1 when one is not there or cannot be read. */
static int dump_maps(struct rqbpf_object *obj, const struct options *o)
{
	int ret = 0;

	if (json)
		jw_array_start(&jw);
	for (int i = 0; i < o->ndumps; i++)
		ret |= dump_map(obj, o->dumps[i]);
	if (json)
		jw_array_end(&jw);
	return ret;
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
	if (rqu_parse_decimal_n(colon + 1, (size_t)(eq - (colon + 1)), UINT32_MAX, &key))
		return -EINVAL;
	k = (uint32_t)key;
	m = rqbpf_object_find_map(obj, name);
	if (!m || rqbpf_map_get_info(m, &mi) || mi.key_size != 4 || !(val = malloc(mi.value_size)))
		return -EINVAL;
	ret = hex_bytes(eq + 1, val, mi.value_size) ? -EINVAL : rqbpf_map_update(m, &k, val, 0);
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
	struct rqbpf_test_run_opts topts = {.data_in = b->pkt[in],
	                                    .data_size_in = b->pkt_size,
	                                    .data_out = b->pkt[out],
	                                    .data_size_out = c->data_cap,
	                                    .repeat = 1};

	if (c->has_ctx_in) {
		topts.ctx_in = b->ctx[in];
		topts.ctx_size_in = b->ctx_size;
	}
	if (c->has_ctx_in || c->has_ctx_out) {
		topts.ctx_out = b->ctx[out];
		topts.ctx_size_out = (uint32_t)c->size;
	}
	ret = rqbpf_prog_test_run(w->prog, &topts);
	*res = topts.result;
	if (ret == -EINVAL || ret == -ENOSPC)
		snprintf(res->msg, sizeof(res->msg), "%s",
		         ret == -EINVAL ? "the packet or context breaks the kernel's rules (EINVAL)"
		                        : "data_out is too small (ENOSPC)");
	if (ret)
		return ret;
	b->pkt_size = topts.data_size_out;
	b->ctx_size = topts.ctx_size_out;
	b->cur = out;
	*retval = (int32_t)topts.retval;
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

static void report_json(const struct worker *sum, long nthreads, long repeat, uint32_t median)
{
	jw_int_field(&jw, "threads", nthreads);
	jw_int_field(&jw, "repeat", repeat);
	jw_uint_field(&jw, "runs", (uint64_t)nthreads * (uint64_t)repeat);
	jw_uint_field(&jw, "ns_per_run", median);
	jw_name(&jw, "retvals");
	jw_array_start(&jw);
	for (int i = 0; i < sum->nret; i++) {
		jw_object_start(&jw);
		jw_int_field(&jw, "retval", sum->retvals[i]);
		jw_int_field(&jw, "count", sum->counts[i]);
		jw_object_end(&jw);
	}
	jw_array_end(&jw);
	/* the runs whose value came after MAX_RETVALS distinct ones */
	jw_int_field(&jw, "other_count", sum->others);
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
	qsort(all, total, sizeof(*all), cmp_u32);
	if (json) {
		report_json(&sum, nthreads, repeat, all[total / 2]);
		return;
	}
	for (int i = 0; i < sum.nret; i++)
		printf("retval=%lld count=%ld\n", (long long)sum.retvals[i], sum.counts[i]);
	if (sum.others)
		printf("retval=other count=%ld (values past the first %d distinct ones)\n",
		       sum.others, MAX_RETVALS);
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
		if (w[t].faults && !faults && !json)
			fprintf(stderr, "rqbpf: %s: fault: %s\n", rqbpf_prog_name(prog),
			        w[t].fault);
		faults += w[t].faults;
	}
	pthread_barrier_destroy(&start);
	report(w, nthreads, repeat, ns);
	if (json) {
		jw_int_field(&jw, "faults", faults);
		for (long t = 0; t < nthreads && faults; t++)
			if (w[t].faults) {
				jw_string_field(&jw, "fault", w[t].fault);
				break;
			}
	}
	free(w);
	free(ns);
	return faults ? 1 : 0;
}

/* --ringbuf: a consumer thread reads the ring's records while the program
 * runs, and after: each printed as "ringbuf MAP size=N data=HEX", or with
 * :FILE written to FILE as a 4-byte little-endian size and the bytes. */
struct ring_reader {
	char map[64];
	FILE *out;     /* NULL: print */
	FILE *records; /* -j: the records' JSON strings, comma-separated */
	char *records_buf;
	size_t records_len;
	struct rqbpf_ring_buffer *rb;
	pthread_t tid;
	atomic_int stop;
	long nrecords;
};

static int print_record(void *ctx, void *data, size_t size)
{
	struct ring_reader *rr = ctx;
	const uint8_t *b = data;
	uint32_t n = (uint32_t)size;
	uint8_t le[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};

	rr->nrecords++;
	if (rr->out)
		return fwrite(le, 4, 1, rr->out) == 1 && fwrite(b, 1, size, rr->out) == size ? 0
		                                                                             : -EIO;
	if (rr->records) { /* -j: one JSON string of hex digits */
		fputs(rr->nrecords > 1 ? ",\"" : "\"", rr->records);
		for (size_t i = 0; i < size; i++)
			fprintf(rr->records, "%02x", b[i]);
		fputc('"', rr->records);
		fflush(rr->records);
		return 0;
	}
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
		cli_error("%s: %s", colon + 1, strerror(errno));
		return 1;
	}
	if (json && !rr->out &&
	    !(rr->records = open_memstream(&rr->records_buf, &rr->records_len))) {
		cli_error("%s", "out of memory");
		return 1;
	}
	ret = rqbpf_ring_buffer_new(rqbpf_object_find_map(obj, rr->map), print_record, rr, &rr->rb);
	if (!ret && pthread_create(&rr->tid, NULL, read_ring, rr))
		ret = -EAGAIN;
	if (ret) {
		cli_error("--ringbuf %s: %s", rr->map,
		          ret == -EINVAL ? "no ring buffer map of that name" : strerror(-ret));
		if (rr->records)
			fclose(rr->records);
		free(rr->records_buf);
		rqbpf_ring_buffer_free(rr->rb);
		if (rr->out)
			fclose(rr->out);
		return 1;
	}
	return 0;
}

static void ring_json(const struct ring_reader *rr);

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
	if (rr->records)
		fclose(rr->records);
	if (!json)
		printf("ringbuf %s records=%ld\n", rr->map, rr->nrecords);
	if (json && run_doc_open)
		ring_json(rr);
	free(rr->records_buf);
	return ret < 0 ? 1 : 0;
}

static void ring_json(const struct ring_reader *rr)
{
	jw_name(&jw, "ringbuf");
	jw_object_start(&jw);
	jw_string_field(&jw, "map", rr->map);
	jw_int_field(&jw, "records", rr->nrecords);
	if (rr->records) {
		jw_name(&jw, "data");
		jw_array_start(&jw);
		if (rr->records_buf && rr->records_buf[0])
			jw_raw(&jw, rr->records_buf);
		jw_array_end(&jw);
	}
	jw_object_end(&jw);
}

/* Reads ctx_in into @p c->init (at most the program's context size);
 * returns 2 (bad usage) with a message when it cannot. */
static int read_ctx_in(const char *path, struct run_ctx *c)
{
	FILE *f = fopen(path, "rb");
	size_t n;
	int extra;

	if (!f) {
		cli_error("ctx_in %s: %s", path, strerror(errno));
		return 2;
	}
	n = fread(c->init, 1, c->size, f);
	extra = fgetc(f);
	fclose(f);
	if (extra != EOF) {
		cli_error("ctx_in %s: larger than the program's context (%zu bytes)", path,
		          c->size);
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
		cli_error("%s %s: %s", what, path, strerror(errno));
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
		cli_error("%s: the program's type has no context",
		          o->ctx_in ? "ctx_in" : "ctx_out");
		return 2;
	}
	c.init = calloc(1, c.size + 1);
	c.out = calloc(1, c.size + 1);
	if (!c.init || !c.out)
		ret = 1;
	if (!ret && o->ctx_in)
		ret = read_ctx_in(o->ctx_in, &c);
	if (!ret && json) {
		jw_init(&jw, stdout);
		jw_object_start(&jw);
		run_doc_open = true;
		jw_string_field(&jw, "prog", rqbpf_prog_name(prog));
	}
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
		cli_error("no program named %s", o->prog);
		return 1;
	}
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
		struct rqbpf_prog *p = rqbpf_object_prog(obj, i);

		rqbpf_prog_set_autoload(p, p == prog);
	}
	if (rqbpf_object_load(obj, o->no_verify ? RQBPF_LOAD_NO_VERIFY : 0, &err)) {
		cli_error("%s", err.msg);
		return 1;
	}
	for (int i = 0; i < o->nsets; i++)
		if (set_map(obj, o->sets[i])) {
			cli_error("bad --set %s", o->sets[i]);
			return 2;
		}
	if (o->ringbuf && ring_start(obj, o->ringbuf, &rr))
		return 1;
	ret = run_with_ctx(prog, o);
	if (o->ringbuf && ring_stop(&rr))
		ret = 1;
	if (o->ndumps && json && run_doc_open)
		jw_name(&jw, "maps");
	if (o->ndumps && (!json || run_doc_open) && dump_maps(obj, o))
		ret = 1;
	if (run_doc_open)
		jw_object_end(&jw);
	return ret;
}

/* dump: the maps alone are loaded, so a program the verifier rejects (or
 * one that cannot be linked) does not keep them from being printed. */
static int cmd_dump(struct rqbpf_object *obj, const struct options *o)
{
	struct rqbpf_error err;

	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++)
		rqbpf_prog_set_autoload(rqbpf_object_prog(obj, i), 0);
	if (rqbpf_object_load(obj, 0, &err)) {
		cli_error("%s", err.msg);
		return 1;
	}
	return dump_maps(obj, o);
}

/* The options before the verb (bpftool's place for them): -j, --help,
 * --version; returns the verb's index, or -1 after printing what was
 * asked, with *@rc the exit status. */
static int global_options(int argc, char **argv, int *rc)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		*rc = 0;
		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage(stdout);
			return -1;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			if (json)
				printf("{\"name\":\"rqbpf\",\"version\":\"%s\"}\n",
				       rqbpf_version());
			else
				printf("rqbpf %s\n", rqbpf_version());
			return -1;
		} else {
			char why[96];

			snprintf(why, sizeof(why), "unknown option '%.60s'", a);
			*rc = bad_usage(why);
			return -1;
		}
	}
	if (i == argc) {
		*rc = bad_usage("missing the command");
		return -1;
	}
	return i;
}

/* rqbpf help [VERB] */
static int cmd_help(int argc, char **argv, int first)
{
	int v = first + 1 < argc ? find_verb(argv[first + 1]) : -1;

	if (first + 2 < argc || (first + 1 < argc && v < 0)) {
		char why[96];

		snprintf(why, sizeof(why), "help: no command '%.60s'", argv[argc - 1]);
		return bad_usage(why);
	}
	if (v < 0)
		print_usage(stdout);
	else
		print_verb_help((enum verb)v);
	return 0;
}

static int run_verb(const struct options *o)
{
	struct rqbpf_object *obj;
	struct rqbpf_error err;
	int ret;

	if (rqbpf_object_open_file(o->obj, &obj, &err)) {
		cli_error("%s", err.msg);
		return 1;
	}
	if (json)
		jw_init(&jw, stdout);
	if (o->ndumps) /* typed keys and values: read the BTF with libbpf */
		obj_btf = cli_btf_open(o->obj);
	switch (o->verb) {
	case VERB_LIST:
		ret = cmd_list(obj);
		break;
	case VERB_VERIFY:
		ret = cmd_verify(obj, o);
		break;
	case VERB_RUN:
		ret = cmd_run(obj, o);
		break;
	default:
		ret = cmd_dump(obj, o);
		break;
	}
	cli_btf_close(obj_btf);
	rqbpf_object_close(obj);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = {.threads = 1, .repeat = 1, .data_size_out = MAX_PACKET};
	int rc = 0, first = global_options(argc, argv, &rc);

	if (first < 0)
		return rc;
	if (!strcmp(argv[first], "help"))
		return cmd_help(argc, argv, first);
	if (parse_args(&o, argc, argv, first))
		return bad_usage(o.why);
	if (o.help) {
		print_verb_help(o.verb);
		return 0;
	}
	return run_verb(&o);
}
