/* SPDX-License-Identifier: MIT */
/* cli_json.c: the rqbpf command's JSON writer (cli_json.h). */
#include "cli_json.h"

#include <inttypes.h>

void jw_init(struct jw *w, FILE *f)
{
	*w = (struct jw){.f = f};
	w->first[0] = true;
}

/* The comma before a value or a name, unless it is the first at its depth
 * or the value of a name just written. */
static void separate(struct jw *w)
{
	if (w->after_name) {
		w->after_name = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
}

static void open_level(struct jw *w, char c)
{
	separate(w);
	fputc(c, w->f);
	if (w->depth + 1 < JW_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_level(struct jw *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
	if (w->depth == 0)
		fputc('\n', w->f);
}

void jw_object_start(struct jw *w)
{
	open_level(w, '{');
}

void jw_object_end(struct jw *w)
{
	close_level(w, '}');
}

void jw_array_start(struct jw *w)
{
	open_level(w, '[');
}

void jw_array_end(struct jw *w)
{
	close_level(w, ']');
}

void jw_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	jw_escape(f, s);
	fputc('"', f);
}

void jw_name(struct jw *w, const char *name)
{
	separate(w);
	quoted(w->f, name);
	fputc(':', w->f);
	w->after_name = true;
}

void jw_string(struct jw *w, const char *s)
{
	separate(w);
	quoted(w->f, s);
}

void jw_int(struct jw *w, int64_t v)
{
	separate(w);
	fprintf(w->f, "%" PRId64, v);
}

void jw_uint(struct jw *w, uint64_t v)
{
	separate(w);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_bool(struct jw *w, bool v)
{
	separate(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_raw(struct jw *w, const char *json)
{
	separate(w);
	fputs(json, w->f);
}

void jw_string_field(struct jw *w, const char *name, const char *s)
{
	jw_name(w, name);
	jw_string(w, s);
}

void jw_int_field(struct jw *w, const char *name, int64_t v)
{
	jw_name(w, name);
	jw_int(w, v);
}

void jw_uint_field(struct jw *w, const char *name, uint64_t v)
{
	jw_name(w, name);
	jw_uint(w, v);
}

void jw_bool_field(struct jw *w, const char *name, bool v)
{
	jw_name(w, name);
	jw_bool(w, v);
}
