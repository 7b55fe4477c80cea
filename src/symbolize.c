/* SPDX-License-Identifier: MIT */
/*
 * Layer 0, symbols for the stock reporter (symbolize.h), with elfutils'
 * libdwfl: the process's modules from /proc/self/maps, each one's symbol
 * table (static symbols included: a `static struct rqspinlock foo_lock` is
 * named) and, where its file has DWARF (built with -g), its line table. libdw.so.1 is loaded with
 * dlopen() on the first report that asks for symbols, so the library links nothing more; without it
 * (or built without libdw-dev's headers: RQ_HAVE_LIBDW unset) every lookup fails and the report
 * prints addresses and the names dladdr() knows.
 *
 * Not async-signal-safe (malloc, files, the dynamic loader): the stock
 * reporter calls it only where the failing call did not come from a signal
 * handler (report.c). One thread symbolizes at a time; another thread's
 * report prints addresses meanwhile rather than wait.
 */
#include "symbolize.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#ifdef RQ_HAVE_LIBDW
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>
#endif

/* 1 while a thread symbolizes. */
static atomic_int rq_sym_busy;

#ifdef RQ_HAVE_LIBDW

/* libdw's entry points, from dlopen("libdw.so.1"). */
static struct {
	__typeof__(&dwfl_begin) begin;
	__typeof__(&dwfl_report_begin) report_begin;
	__typeof__(&dwfl_linux_proc_report) proc_report;
	__typeof__(&dwfl_report_end) report_end;
	__typeof__(&dwfl_addrmodule) addrmodule;
	__typeof__(&dwfl_module_addrinfo) addrinfo;
	__typeof__(&dwfl_module_info) module_info;
	__typeof__(&dwfl_module_getsrc) getsrc;
	__typeof__(&dwfl_lineinfo) lineinfo;
	__typeof__(&dwfl_module_nextcu) nextcu;
	__typeof__(&dwarf_haspc) haspc;
	__typeof__(&dwarf_getsrc_die) getsrc_die;
	__typeof__(&dwarf_lineno) lineno;
	__typeof__(&dwarf_linesrc) linesrc;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
} dw;
static Dwfl *rq_dwfl;
static int rq_dw_state; /* 0 not tried, 1 loaded, -1 unavailable */

/*
 * Separate debug files (/usr/lib/debug, a distribution's -dbg packages) are
 * not looked for: reading libc's takes a third of a second, and the report
 * is made while the failing thread still holds its other locks, which
 * other threads may be waiting for. The program's own debug information
 * (built with -g) is in its file and is read; a library without it is
 * named by its symbol table.
 */
static int no_separate_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                                 Dwarf_Addr base, const char *file, const char *debuglink,
                                 GElf_Word crc, char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file;
	(void)debuglink;
	(void)crc;
	(void)debuginfo_file_name;
	return -1;
}

#define DW_SYM(field, name) ((*(void **)&dw.field = dlsym(lib, name)) != NULL)

static bool load_libdw(void)
{
	void *lib;

	if (rq_dw_state)
		return rq_dw_state > 0;
	rq_dw_state = -1;
	lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return false;
	if (!(DW_SYM(begin, "dwfl_begin") && DW_SYM(report_begin, "dwfl_report_begin") &&
	      DW_SYM(proc_report, "dwfl_linux_proc_report") &&
	      DW_SYM(report_end, "dwfl_report_end") && DW_SYM(addrmodule, "dwfl_addrmodule") &&
	      DW_SYM(addrinfo, "dwfl_module_addrinfo") && DW_SYM(module_info, "dwfl_module_info") &&
	      DW_SYM(getsrc, "dwfl_module_getsrc") && DW_SYM(lineinfo, "dwfl_lineinfo") &&
	      DW_SYM(nextcu, "dwfl_module_nextcu") && DW_SYM(haspc, "dwarf_haspc") &&
	      DW_SYM(getsrc_die, "dwarf_getsrc_die") && DW_SYM(lineno, "dwarf_lineno") &&
	      DW_SYM(linesrc, "dwarf_linesrc") &&
	      DW_SYM(callbacks.find_elf, "dwfl_linux_proc_find_elf"))) {
		dlclose(lib);
		return false;
	}
	dw.callbacks.find_debuginfo = no_separate_debuginfo;
	dw.callbacks.debuginfo_path = &dw.debuginfo_path;
	rq_dwfl = dw.begin(&dw.callbacks);
	if (!rq_dwfl)
		return false;
	rq_dw_state = 1;
	return true;
}

/* The modules as they are now (the session is kept between reports). */
static bool report_modules(void)
{
	dw.report_begin(rq_dwfl);
	if (dw.proc_report(rq_dwfl, getpid()) != 0) {
		dw.report_end(rq_dwfl, NULL, NULL);
		return false;
	}
	return dw.report_end(rq_dwfl, NULL, NULL) == 0;
}

bool rq_symbols_begin(void)
{
	int idle = 0;

	/* acquire: pairs with rq_symbols_end()'s release; the session's
	 * state the last user left is seen whole */
	if (!atomic_compare_exchange_strong_explicit(&rq_sym_busy, &idle, 1, memory_order_acquire,
	                                             memory_order_relaxed))
		return false;
	if (load_libdw() && report_modules())
		return true;
	rq_symbols_end();
	return false;
}

/*
 * The source line of @a when libdwfl's lookup found none: elfutils before
 * 0.191 finds an address's unit through .debug_aranges only, which clang
 * does not emit by default (DWARF 5); look through the units instead.
 */
static const char *line_by_units(Dwfl_Module *mod, Dwarf_Addr a, int *line)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = NULL;

	while ((cu = dw.nextcu(mod, cu, &bias)) != NULL) {
		Dwarf_Line *l;

		if (dw.haspc(cu, a - bias) <= 0)
			continue;
		l = dw.getsrc_die(cu, a - bias);
		return l && dw.lineno(l, line) == 0 ? dw.linesrc(l, NULL, NULL) : NULL;
	}
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

bool rq_symbol_of(const void *addr, bool code, struct rq_symbol *out)
{
	/* A return address is one past its call: look at the call. */
	Dwarf_Addr a = (Dwarf_Addr)(uintptr_t)addr - (code ? 1 : 0), start = 0;
	Dwfl_Module *mod = dw.addrmodule(rq_dwfl, a);
	Dwfl_Line *line;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *modname;

	Dl_info di;

	memset(out, 0, sizeof(*out));
	/* A global past the module's file-backed pages (.bss): libdwfl's
	 * module ends there, the loader's (dladdr()) covers it. */
	if (!mod && !code && dladdr(addr, &di) && di.dli_fbase)
		mod = dw.addrmodule(rq_dwfl, (Dwarf_Addr)(uintptr_t)di.dli_fbase);
	if (!mod)
		return false;
	modname = dw.module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	out->module = base_name(modname);
	out->module_offset = (uintptr_t)(a - start) + (code ? 1 : 0);
	out->name = dw.addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	out->offset = (uintptr_t)off + (code ? 1 : 0);
	line = code ? dw.getsrc(mod, a) : NULL;
	if (line)
		out->file = dw.lineinfo(line, NULL, &out->line, NULL, NULL, NULL);
	else if (code)
		out->file = line_by_units(mod, a, &out->line);
	return true;
}

#else /* !RQ_HAVE_LIBDW */

bool rq_symbols_begin(void)
{
	return false;
}

bool rq_symbol_of(const void *addr, bool code, struct rq_symbol *out)
{
	(void)addr;
	(void)code;
	memset(out, 0, sizeof(*out));
	return false;
}

#endif

void rq_symbols_end(void)
{
	/* release: pairs with rq_symbols_begin()'s acquire */
	atomic_store_explicit(&rq_sym_busy, 0, memory_order_release);
}

void rq_symbols_after_fork_child(void)
{
	/* relaxed: the child has one thread */
	atomic_store_explicit(&rq_sym_busy, 0, memory_order_relaxed);
}
