/* SPDX-License-Identifier: MIT */
/*
 * Layer 0, symbols for the stock reporter (symbolize.c): the function,
 * source file:line and module of a return address, and the symbol a lock's
 * address falls in ("foo_lock", "table+0x40"), read with elfutils' libdwfl.
 * Not async-signal-safe: report.c calls it outside signal handlers only.
 */
#ifndef RQ_SYMBOLIZE_H
#define RQ_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

struct rq_symbol {
	const char *name;        /* the symbol it falls in, or NULL */
	uintptr_t offset;        /* from the symbol's start */
	const char *file;        /* source file (code addresses), or NULL */
	int line;                /* its line, 0: none */
	const char *module;      /* the object's file name, or NULL */
	uintptr_t module_offset; /* from the module's load address */
};

/* Takes the symbolizer for this thread: false when libdw cannot be loaded
 * or another thread holds it (that report then prints addresses). Rereads
 * the process's modules (a library loaded since the last report). */
bool rq_symbols_begin(void);
/* @addr's symbol; @code: a return address (the call before it is looked
 * up). Strings stay valid until rq_symbols_end(). False: no module holds
 * @addr. */
bool rq_symbol_of(const void *addr, bool code, struct rq_symbol *out);
void rq_symbols_end(void);
/* In a child forked while another thread held the symbolizer: free it. */
void rq_symbols_after_fork_child(void);

#endif
