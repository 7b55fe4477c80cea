/* SPDX-License-Identifier: MIT */
/* runtime.c: the services a run's interpreter and helpers share: the fault
 * message, and the search of the memory a run may access (its context and
 * the map values) behind rqbpf_mem()'s fast checks of the stack and of the
 * region found last. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "runtime.h"

int rqbpf_fault(struct rqbpf_run *r, const char *fmt, ...)
{
	int n = snprintf(r->msg, r->msg_size, "insn %zu: ", r->pc);
	va_list ap;

	if (n >= 0 && (size_t)n < r->msg_size) {
		va_start(ap, fmt);
		/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
		vsnprintf(r->msg + n, r->msg_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EFAULT;
}

static bool in_region(const struct rqbpf_region *g, uintptr_t a, size_t size, bool write)
{
	return a - g->base < g->size && size <= g->size - (a - g->base) && (!write || g->writable);
}

/* The value of the hash element @p a lies in, if it lies in one: any value
 * of the map, as a verified program only reaches one through a lookup, and
 * elements are recycled, never freed, while the map lives. */
static bool hash_value_at(const struct rqmap_hash_values *v, uintptr_t a, struct rqbpf_region *out)
{
	uintptr_t off = a - (uintptr_t)v->base, in;

	if (!v->base || off >= (uintptr_t)v->count * v->stride)
		return false;
	in = off % v->stride;
	if (in < v->value_off || in - v->value_off >= v->value_size)
		return false;
	*out = (struct rqbpf_region){a - (in - v->value_off), v->value_size, true};
	return true;
}

/* The map regions and the context, searched in full; a hit is remembered. */
void *rqbpf_mem_slow(struct rqbpf_run *r, uint64_t addr, size_t size, bool write)
{
	const struct rqbpf_object *obj = r->prog->obj;
	uintptr_t a = (uintptr_t)addr;
	struct rqbpf_region g = {r->ctx, r->ctx_size, true};

	if (in_region(&g, a, size, write))
		goto hit;
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct rqbpf_map *m = &obj->maps[i];

		g = (struct rqbpf_region){(uintptr_t)m->values,
		                          (size_t)m->elem_size * m->desc.max_entries,
		                          !m->desc.read_only};
		if (m->values && in_region(&g, a, size, write))
			goto hit;
		if (m->hash && hash_value_at(&m->hash_values, a, &g) &&
		    in_region(&g, a, size, write))
			goto hit;
	}
	return NULL;
hit:
	r->last = g;
	return (void *)a;
}
