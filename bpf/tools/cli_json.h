/* SPDX-License-Identifier: MIT */
/*
 * cli_json.h: the rqbpf command's JSON writer (-j, --json), in the manner of
 * bpftool's json_writer: one document on a stream, commas and quoting done
 * here, each call one token. Not thread-safe: one writer, one thread.
 */
#ifndef RQBPF_CLI_JSON_H
#define RQBPF_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

struct jw {
	FILE *f;
	int depth;
	bool first[JW_MAX_DEPTH]; /* nothing written yet at this depth */
	bool after_name;          /* a name was written: its value comes next */
};

void jw_init(struct jw *w, FILE *f);
void jw_object_start(struct jw *w);
void jw_object_end(struct jw *w);
void jw_array_start(struct jw *w);
void jw_array_end(struct jw *w);
void jw_name(struct jw *w, const char *name);
void jw_string(struct jw *w, const char *s);
void jw_int(struct jw *w, int64_t v);
void jw_uint(struct jw *w, uint64_t v);
void jw_bool(struct jw *w, bool v);
/* A value already in JSON (a fragment another writer made). */
void jw_raw(struct jw *w, const char *json);
/* @s as a JSON string's contents (no quotes) on @f. */
void jw_escape(FILE *f, const char *s);

/* "name": value pairs */
void jw_string_field(struct jw *w, const char *name, const char *s);
void jw_int_field(struct jw *w, const char *name, int64_t v);
void jw_uint_field(struct jw *w, const char *name, uint64_t v);
void jw_bool_field(struct jw *w, const char *name, bool v);

#endif
