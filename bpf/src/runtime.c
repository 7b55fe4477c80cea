/* SPDX-License-Identifier: MIT */
/* runtime.c: the services a run's interpreter and helpers share: the fault
 * message, and the search of the memory a run may access (its packet, its
 * context and the map values) behind rqbpf_mem()'s fast checks of the stack and of the
 * region found last. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "runtime.h"

int rqbpf_fault(struct rqbpf_run *r, const char *fmt, ...)
{
	int n = snprintf(r->msg, r->msg_size, "insn %zu: ", (size_t)(r->at - r->prog->ops));
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

/* The map value [a, a + size) lies in, into *@p g: out of line, so that
 * the context's hit below pays nothing for the kinds' calls. */
static __attribute__((noinline)) bool in_map_value(const struct rqbpf_object *obj, uintptr_t a,
                                                   size_t size, bool write, struct rqbpf_region *g)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct rqbpf_map *m = &obj->maps[i];

		if (m->kind && m->ops->value_at(m, a, g) && in_region(g, a, size, write))
			return true;
	}
	return false;
}

/* The ring buffer record of the run's that [a, a + size) lies in, into *@p g. */
static bool in_record(const struct rqbpf_run *r, uintptr_t a, size_t size, struct rqbpf_region *g)
{
	for (int i = 0; i < r->nrec; i++) {
		*g = (struct rqbpf_region){(uintptr_t)r->rec[i].data, r->rec[i].size, true};
		if (in_region(g, a, size, true))
			return true;
	}
	return false;
}

/* The keys the run passed its bpf_for_each_map_elem callbacks (read-only). */
static bool in_cb_key(const struct rqbpf_run *r, uintptr_t a, size_t size, bool write,
                      struct rqbpf_region *g)
{
	*g = (struct rqbpf_region){(uintptr_t)r->cb_key, sizeof(r->cb_key), false};
	return in_region(g, a, size, write);
}

/* The packet, the context, the map values, the run's ring buffer records
 * and its callbacks' keys, searched in full; a hit other than the packet
 * is remembered. */
void *rqbpf_mem_slow(struct rqbpf_run *r, uint64_t addr, size_t size, bool write)
{
	uintptr_t a = (uintptr_t)addr;
	struct rqbpf_region g = {r->ctx, r->ctx_size, true};
	const struct rqbpf_packet *p = r->pkt;

	/* the packet, at its addresses below the host's lowest (not cached in
	 * r->last: the fast paths take host addresses as they are) */
	if (p && a - RQBPF_PKT_VA < p->size && size <= p->size - (a - RQBPF_PKT_VA) &&
	    (!write || p->writable))
		return p->buf + (a - RQBPF_PKT_VA);

	if (!in_region(&g, a, size, write) && !in_map_value(r->prog->obj, a, size, write, &g) &&
	    !in_record(r, a, size, &g) && !in_cb_key(r, a, size, write, &g))
		return NULL;
	r->last = g;
	return (void *)a;
}
