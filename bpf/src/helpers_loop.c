/* SPDX-License-Identifier: MIT */
/* helpers_loop.c: the calls that loop or leave, as the kernel's: the numeric
 * iterator (bpf_iter_num_new/next/destroy, kernel/bpf/bpf_iter.c), and the
 * helpers that call a callback of the program, bpf_loop and
 * bpf_for_each_map_elem, whose callback runs in a frame below the caller's
 * (interp.c, rqbpf_run_callback()); and bpf_throw, which ends the run. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "runtime.h"

/* The kernel's BPF_MAX_LOOPS: the most iterations bpf_loop and an iterator
 * may be asked for. */
#define MAX_LOOPS ((int64_t)8 * 1024 * 1024)

/* struct bpf_iter_num's 8 bytes: the value last returned and the end. */
struct iter_num {
	int32_t cur, end;
};

static struct iter_num *iter_arg(struct rqbpf_run *r, uint64_t addr, const char *who)
{
	struct iter_num *it = rqbpf_mem(r, addr, sizeof(*it), true);

	if (!it)
		rqbpf_fault(r, "%s: iterator outside the program's memory", who);
	return it;
}

/* start .. end - 1; an empty range when start == end; -EINVAL when start >
 * end, -E2BIG past MAX_LOOPS values (and then nothing). */
int rqbpf_call_iter_num_new(struct rqbpf_run *r, uint64_t *reg)
{
	struct iter_num *it = iter_arg(r, reg[BPF_REG_1], "bpf_iter_num_new");
	int32_t start = (int32_t)reg[BPF_REG_2], end = (int32_t)reg[BPF_REG_3];
	int ret = 0;

	if (!it)
		return -EFAULT;
	if (start > end)
		ret = -EINVAL;
	else if ((int64_t)end - start > MAX_LOOPS)
		ret = -E2BIG;
	*it =
	    ret ? (struct iter_num){0, 0} : (struct iter_num){(int32_t)((uint32_t)start - 1), end};
	reg[BPF_REG_0] = (uint64_t)(int64_t)ret;
	return 0;
}

/* A pointer to the next value (the iterator's own cur), or NULL at the end. */
int rqbpf_call_iter_num_next(struct rqbpf_run *r, uint64_t *reg)
{
	struct iter_num *it = iter_arg(r, reg[BPF_REG_1], "bpf_iter_num_next");
	int32_t next;

	if (!it)
		return -EFAULT;
	next = (int32_t)((uint32_t)it->cur + 1);
	if (next >= it->end) {
		*it = (struct iter_num){0, 0};
		reg[BPF_REG_0] = 0;
		return 0;
	}
	it->cur = next;
	reg[BPF_REG_0] = reg[BPF_REG_1] + offsetof(struct iter_num, cur);
	return 0;
}

int rqbpf_call_iter_num_destroy(struct rqbpf_run *r, uint64_t *reg)
{
	struct iter_num *it = iter_arg(r, reg[BPF_REG_1], "bpf_iter_num_destroy");

	if (!it)
		return -EFAULT;
	*it = (struct iter_num){0, 0};
	return 0;
}

/* bpf_loop(nr_loops, callback, ctx, flags): callback(i, ctx) for i from 0
 * while it returns 0; R0 the calls made (nr_loops when none stopped it),
 * -EINVAL for flags, -E2BIG for more than MAX_LOOPS. */
int rqbpf_call_loop(struct rqbpf_run *r, uint64_t *reg)
{
	uint32_t nr = (uint32_t)reg[BPF_REG_1];
	uint64_t args[5] = {0, reg[BPF_REG_3], 0, 0, 0}, stop = 0;

	if (reg[BPF_REG_4] || nr > MAX_LOOPS) {
		reg[BPF_REG_0] = (uint64_t)(int64_t)(reg[BPF_REG_4] ? -EINVAL : -E2BIG);
		return 0;
	}
	for (uint32_t i = 0; i < nr; i++) {
		int ret;

		args[0] = i;
		ret = rqbpf_run_callback(r, reg[BPF_REG_2], reg[BPF_REG_10], args, &stop);
		if (ret)
			return ret;
		if (stop) {
			reg[BPF_REG_0] = (uint64_t)i + 1;
			return 0;
		}
	}
	reg[BPF_REG_0] = nr;
	return 0;
}

/* The key buffer of the callback frame below the caller's at @p fp. */
static uint8_t *callback_key(struct rqbpf_run *r, uint64_t fp)
{
	uintptr_t top = (uintptr_t)r->stack + sizeof(r->stack);
	uint64_t depth = (top - fp) / RQBPF_STACK_SIZE;

	return fp <= top && depth < RQBPF_MAX_FRAMES ? r->cb_key[depth] : NULL;
}

/*
 * bpf_for_each_map_elem(map, callback, ctx, flags): callback(map, key,
 * value, ctx) on the map's elements in its key order, while it returns 0;
 * R0 the elements visited, -EINVAL for flags. At most max_entries calls (a
 * callback that deletes and adds elements cannot make it loop; the kernel
 * walks a hash map's buckets, each element once).
 */
int rqbpf_call_for_each_map_elem(struct rqbpf_run *r, uint64_t *reg)
{
	struct rqbpf_map *m = rqbpf_helper_map(r, reg[BPF_REG_1]);
	uint8_t *key = callback_key(r, reg[BPF_REG_10]), prev[RQBPF_CB_KEY_MAX];
	uint64_t args[5] = {reg[BPF_REG_1], (uintptr_t)key, 0, reg[BPF_REG_3], 0}, stop = 0, n = 0;
	bool first = true;

	if (!m || !m->kind || !m->ops->next_key)
		return rqbpf_fault(r, "for_each_map_elem: R1 is not a map it can walk");
	if (!key || m->desc.key_size > RQBPF_CB_KEY_MAX)
		return rqbpf_fault(r, "for_each_map_elem: keys over %d bytes are not supported",
		                   RQBPF_CB_KEY_MAX);
	if (reg[BPF_REG_4]) {
		reg[BPF_REG_0] = (uint64_t)(int64_t)-EINVAL;
		return 0;
	}
	for (uint32_t calls = 0; calls < m->desc.max_entries && !stop; calls++) {
		void *value;
		int ret;

		if (m->ops->next_key(m, first ? NULL : prev, key))
			break;
		first = false;
		memcpy(prev, key, m->desc.key_size);
		ret = rqbpf_helper_lookup(r, m, key, &value);
		if (ret)
			return ret;
		if (!value)
			continue;
		n++;
		args[2] = (uintptr_t)value;
		ret = rqbpf_run_callback(r, reg[BPF_REG_2], reg[BPF_REG_10], args, &stop);
		if (ret)
			return ret;
	}
	reg[BPF_REG_0] = n;
	return 0;
}

/* bpf_throw(cookie): the run ends here, from any frame, and returns the
 * cookie (the kernel's default exception callback). */
int rqbpf_call_throw(struct rqbpf_run *r, uint64_t *reg)
{
	r->cookie = reg[BPF_REG_1];
	return RQBPF_THROWN;
}
