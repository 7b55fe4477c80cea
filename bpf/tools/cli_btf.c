/* SPDX-License-Identifier: MIT */
/* cli_btf.c: typed map keys and values for the rqbpf command (cli_btf.h). */
#include "cli_btf.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cli_json.h"

#define MAX_DEPTH 16 /* nested types printed; deeper is refused */

struct cli_btf {
	struct bpf_object *obj;
	const struct btf *btf;
};

/* libbpf's warnings about the object are rqbpf's to give, not its. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

struct cli_btf *cli_btf_open(const char *path)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct cli_btf *b = NULL;

	libbpf_set_print(old);
	if (!obj || libbpf_get_error(obj))
		return NULL;
	if (bpf_object__btf(obj) && (b = calloc(1, sizeof(*b)))) {
		b->obj = obj;
		b->btf = bpf_object__btf(obj);
		return b;
	}
	bpf_object__close(obj);
	return NULL;
}

void cli_btf_close(struct cli_btf *b)
{
	if (b) {
		bpf_object__close(b->obj);
		free(b);
	}
}

/* A type id whose size is @size, or 0. */
static uint32_t sized(const struct btf *btf, uint32_t id, size_t size)
{
	long s = id ? btf__resolve_size(btf, id) : -1;

	return s >= 0 && (size_t)s == size ? id : 0;
}

void cli_btf_map_types(const struct cli_btf *b, const char *map, size_t key_size, size_t value_size,
                       uint32_t *key_id, uint32_t *value_id)
{
	struct bpf_map *m = b ? bpf_object__find_map_by_name(b->obj, map) : NULL;

	*key_id = *value_id = 0;
	if (!m)
		return;
	if (bpf_map__is_internal(m)) {
		/* A data section's map: "obj.rodata" holds the DATASEC ".rodata";
		 * a ".data.X" section's map is named as the section. */
		const char *sec = map[0] == '.' ? map : strchr(map, '.');
		int id = sec ? btf__find_by_name_kind(b->btf, sec, BTF_KIND_DATASEC) : -1;

		*value_id = id > 0 ? sized(b->btf, (uint32_t)id, value_size) : 0;
		return;
	}
	*key_id = sized(b->btf, bpf_map__btf_key_type_id(m), key_size);
	*value_id = sized(b->btf, bpf_map__btf_value_type_id(m), value_size);
}

struct printer {
	const struct btf *btf;
	FILE *f;
	bool json;
	const uint8_t *end; /* past the data */
	bool bad;           /* a read past the data or an unprintable type */
};

static void put_name(struct printer *pr, const char *name, bool *first)
{
	if (!*first)
		fputs(pr->json ? "," : ", ", pr->f);
	*first = false;
	if (!name)
		return;
	if (pr->json) {
		fputc('"', pr->f);
		jw_escape(pr->f, name);
		fputs("\":", pr->f);
	} else {
		fprintf(pr->f, ".%s = ", name);
	}
}

/* @bits bits from @bit_off bits into @p, little-endian, as an unsigned. */
static uint64_t read_bits(struct printer *pr, const uint8_t *p, uint32_t bit_off, uint32_t bits)
{
	uint32_t nbytes = (bit_off % 8 + bits + 7) / 8;
	size_t left = p < pr->end ? (size_t)(pr->end - p) : 0;
	uint64_t v = 0;

	if (bits == 0 || bits > 64 || nbytes > 8 || bit_off / 8 >= left ||
	    nbytes > left - bit_off / 8) {
		pr->bad = true;
		return 0;
	}
	p += bit_off / 8;
	for (uint32_t i = 0; i < nbytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	v >>= bit_off % 8;
	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

static void put_int(struct printer *pr, const struct btf_type *t, const uint8_t *p,
                    uint32_t bit_off, uint32_t bits)
{
	uint8_t enc = btf_int_encoding(t);
	uint64_t v;

	if (!bits)
		bits = btf_int_bits(t);
	bit_off += btf_int_offset(t);
	v = read_bits(pr, p, bit_off, bits);
	if (pr->bad)
		return;
	if (enc & BTF_INT_BOOL)
		fputs(v ? "true" : "false", pr->f);
	else if ((enc & BTF_INT_SIGNED) && bits < 64 && (v >> (bits - 1)) & 1)
		fprintf(pr->f, "%" PRId64, (int64_t)(v | ~((1ull << bits) - 1)));
	else if (enc & BTF_INT_SIGNED)
		fprintf(pr->f, "%" PRId64, (int64_t)v);
	else
		fprintf(pr->f, "%" PRIu64, v);
}

static void put_enum(struct printer *pr, const struct btf_type *t, const uint8_t *p,
                     uint32_t bit_off, uint32_t bits)
{
	const struct btf_enum *e = btf_enum(t);
	uint64_t v = read_bits(pr, p, bit_off, bits ? bits : 8 * t->size);

	for (uint16_t i = 0; i < btf_vlen(t); i++)
		if ((uint32_t)e[i].val == (uint32_t)v) {
			const char *name = btf__name_by_offset(pr->btf, e[i].name_off);

			fprintf(pr->f, pr->json ? "\"%s\"" : "%s", name ? name : "");
			return;
		}
	fprintf(pr->f, "%" PRIu64, v);
}

static void put_type(struct printer *pr, uint32_t id, const uint8_t *p, uint32_t bit_off,
                     uint32_t bits, int depth);

/* The members of struct or union @t, anonymous ones' members inline. */
static void put_members(struct printer *pr, const struct btf_type *t, const uint8_t *p, bool *first,
                        int depth)
{
	const struct btf_member *m = btf_members(t);

	if (depth > MAX_DEPTH)
		pr->bad = true;
	for (uint16_t i = 0; i < btf_vlen(t) && !pr->bad; i++) {
		const char *name = btf__name_by_offset(pr->btf, m[i].name_off);
		uint32_t off = btf_member_bit_offset(t, i), bits = btf_member_bitfield_size(t, i);
		uint32_t mid = (uint32_t)btf__resolve_type(pr->btf, m[i].type);
		const struct btf_type *mt = btf__type_by_id(pr->btf, mid);

		if ((!name || !*name) && mt && (btf_is_struct(mt) || btf_is_union(mt))) {
			put_members(pr, mt, p + off / 8, first, depth + 1);
			continue;
		}
		put_name(pr, name, first);
		put_type(pr, m[i].type, p, off, bits, depth + 1);
	}
}

/* A char array holding a string (printable bytes, then a NUL), printed
 * as one, as bpftool does; false for any other array. */
static bool put_string(struct printer *pr, const struct btf_array *a, const uint8_t *p)
{
	int rid = btf__resolve_type(pr->btf, a->type);
	const struct btf_type *e = rid >= 0 ? btf__type_by_id(pr->btf, (uint32_t)rid) : NULL;
	const char *name = e ? btf__name_by_offset(pr->btf, e->name_off) : NULL;
	size_t n = 0;

	if (!e || !btf_is_int(e) || e->size != 1 || !name || strcmp(name, "char") != 0 ||
	    a->nelems > (size_t)(pr->end - p))
		return false;
	while (n < a->nelems && p[n] >= 0x20 && p[n] < 0x7f)
		n++;
	if (n == 0 || n == a->nelems || p[n])
		return false;
	if (pr->json) {
		fputc('"', pr->f);
		jw_escape(pr->f, (const char *)p);
		fputc('"', pr->f);
	} else {
		fputc('"', pr->f);
		for (size_t i = 0; i < n; i++) {
			if (p[i] == '"' || p[i] == '\\')
				fputc('\\', pr->f);
			fputc(p[i], pr->f);
		}
		fputc('"', pr->f);
	}
	return true;
}

static void put_array(struct printer *pr, const struct btf_type *t, const uint8_t *p, int depth)
{
	const struct btf_array *a = btf_array(t);
	long esize = btf__resolve_size(pr->btf, a->type);
	bool first = true;

	if (esize <= 0) {
		pr->bad = true;
		return;
	}
	if (put_string(pr, a, p))
		return;
	fputc(pr->json ? '[' : '{', pr->f);
	for (uint32_t i = 0; i < a->nelems && !pr->bad; i++) {
		put_name(pr, NULL, &first);
		put_type(pr, a->type, p + (size_t)i * (size_t)esize, 0, 0, depth + 1);
	}
	fputc(pr->json ? ']' : '}', pr->f);
}

static void put_datasec(struct printer *pr, const struct btf_type *t, const uint8_t *p, int depth)
{
	const struct btf_var_secinfo *v = btf_var_secinfos(t);
	bool first = true;

	fputc('{', pr->f);
	for (uint16_t i = 0; i < btf_vlen(t) && !pr->bad; i++) {
		const struct btf_type *var = btf__type_by_id(pr->btf, v[i].type);

		if (!var || !btf_is_var(var)) {
			pr->bad = true;
			break;
		}
		put_name(pr, btf__name_by_offset(pr->btf, var->name_off), &first);
		put_type(pr, var->type, p + v[i].offset, 0, 0, depth + 1);
	}
	fputc('}', pr->f);
}

/* A struct, union, array or data section (never a bitfield); false for
 * another type. */
static bool put_aggregate(struct printer *pr, const struct btf_type *t, const uint8_t *p,
                          uint32_t bit_off, uint32_t bits, int depth)
{
	bool first = true;

	if (bit_off % 8 || bits)
		return false;
	p += bit_off / 8;
	if (btf_is_struct(t) || btf_is_union(t)) {
		fputc('{', pr->f);
		put_members(pr, t, p, &first, depth);
		fputc('}', pr->f);
		return true;
	}
	if (btf_is_array(t)) {
		put_array(pr, t, p, depth);
		return true;
	}
	if (btf_is_datasec(t)) {
		put_datasec(pr, t, p, depth);
		return true;
	}
	return false;
}

static void put_type(struct printer *pr, uint32_t id, const uint8_t *p, uint32_t bit_off,
                     uint32_t bits, int depth)
{
	int rid = btf__resolve_type(pr->btf, id);
	const struct btf_type *t = rid >= 0 ? btf__type_by_id(pr->btf, (uint32_t)rid) : NULL;

	if (!t || depth > MAX_DEPTH || p >= pr->end) {
		pr->bad = true;
		return;
	}
	if (btf_is_int(t)) {
		put_int(pr, t, p, bit_off, bits);
	} else if (btf_is_enum(t)) {
		put_enum(pr, t, p, bit_off, bits);
	} else if (btf_is_ptr(t)) {
		fprintf(pr->f, pr->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64,
		        read_bits(pr, p, bit_off, 64));
	} else if (!put_aggregate(pr, t, p, bit_off, bits, depth)) {
		pr->bad = true; /* float, enum64, func ...: left to the hex form */
	}
}

int cli_btf_print(const struct cli_btf *b, uint32_t id, const void *data, size_t size, bool json,
                  FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct printer pr = {b ? b->btf : NULL, mem, json, (const uint8_t *)data + size, false};

	if (!mem || !b || !id) {
		if (mem)
			fclose(mem);
		free(buf);
		return -1;
	}
	put_type(&pr, id, data, 0, 0, 0);
	fclose(mem);
	if (!pr.bad && buf)
		fputs(buf, f);
	free(buf);
	return pr.bad ? -1 : 0;
}
