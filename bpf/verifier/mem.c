/* SPDX-License-Identifier: MIT */
/*
 * mem.c: loads, stores and helper memory arguments. Stack accesses spill
 * and fill registers and track which bytes were written; map value
 * accesses stay inside the value and off its lock; context accesses stay
 * inside the context; packet accesses stay inside the range a comparison
 * with data_end proved (jumps.c).
 */
#include <stddef.h>
#include <string.h>

#include "vstate.h"

#define MAX_VAR_OFF (1 << 29)

static const char *dir_str(bool write)
{
	return write ? " write to" : " read from";
}

/* The byte at stack offset @off (negative) of frame @f. */
static uint8_t *stack_byte(struct vframe *f, int off, struct vslot_state **slot)
{
	int spi = (-off - 1) / 8;
	int b = off + 8 * (spi + 1);

	*slot = &f->stack[spi];
	return &f->stack[spi].bytes[b];
}

void mem_note_stack(struct venv *env, const struct vframe *f, int off)
{
	uint16_t *d = &env->stack_depth[f->subprog_start];

	if (off < 0 && -off > *d)
		*d = (uint16_t)-off;
}

/* Bytes of a spilled register that is partly overwritten become misc. */
static void unspill(struct vslot_state *s)
{
	if (s->bytes[0] != S_SPILL)
		return;
	for (int i = 0; i < 8; i++)
		s->bytes[i] = S_MISC;
	reg_mark_not_init(&s->spill);
}

/* A write over a saved irq flag or an iterator destroys it, as in the
 * kernel: the slot's bytes become misc and its reference stays held, so the
 * restore (the iterator's next or destroy) that follows finds no
 * initialized flag (iterator), or the exit finds the reference. */
static void drop_irq_flag(struct vslot_state *s)
{
	if (s->bytes[0] != S_IRQ_FLAG && s->bytes[0] != S_ITER)
		return;
	memset(s->bytes, S_MISC, sizeof(s->bytes));
	s->irq_id = 0;
	s->irq_class = 0;
	s->iter_state = 0;
	s->iter_depth = 0;
}

static void stack_write_bytes(struct vframe *f, int lo, int hi, uint8_t type)
{
	for (int o = lo; o < hi; o++) {
		struct vslot_state *s;
		uint8_t *b = stack_byte(f, o, &s);

		drop_irq_flag(s);
		unspill(s);
		s->narrow = 0;
		*b = type;
	}
}

static void stack_write(struct vframe *f, int off, int size, const struct vreg *val)
{
	struct vslot_state *s;
	uint64_t v;

	stack_byte(f, off, &s);
	if (size == 8 && val && !(off % 8)) {
		drop_irq_flag(s);
		memset(s->bytes, S_SPILL, 8);
		s->spill = *val;
		s->narrow = 0;
		return;
	}
	stack_write_bytes(f, off, off + size,
	                  val && reg_is_const(val, &v) && v == 0 ? S_ZERO : S_MISC);
	if (val && reg_is_const(val, &v) && v && !(off % 8)) {
		s->narrow = (uint8_t)size;
		s->narrow_val = (uint32_t)(v & (((uint64_t)1 << (size * 8)) - 1));
	}
}

/* The constant a narrow store left at @off (a slot's start), read back at
 * its @size: *v, true. */
static bool narrow_const(struct vslot_state *s, int off, int size, bool sign_ext, uint64_t *v)
{
	if (off % 8 || s->narrow != size)
		return false;
	*v = s->narrow_val;
	if (sign_ext && size < 8 && (*v >> (size * 8 - 1)) & 1)
		*v |= ~(((uint64_t)1 << (size * 8)) - 1);
	return true;
}

static int stack_read(struct venv *env, struct vframe *f, int off, int size, struct vreg *dst,
                      bool sign_ext)
{
	struct vslot_state *s;
	bool zero = true;
	uint64_t v;

	stack_byte(f, off, &s);
	if (s->bytes[0] == S_SPILL) {
		if (size == 8 && !(off % 8)) {
			*dst = s->spill;
			return 0;
		}
		if (s->spill.type != T_SCALAR) {
			verr(env, env->insn_idx, "invalid size of register fill");
			return -1;
		}
		reg_mark_unknown(dst);
		rng_bits(&dst->r, size, sign_ext);
		return 0;
	}
	for (int i = 0; i < size; i++) {
		uint8_t *b = stack_byte(f, off + i, &s);

		if (*b != S_MISC && *b != S_ZERO && *b != S_SPILL) {
			verr(env, env->insn_idx, "invalid read from stack off %d+%d size %d", off,
			     i, size);
			return -1;
		}
		zero = zero && *b == S_ZERO;
	}
	if (zero) {
		reg_mark_const(dst, 0);
		return 0;
	}
	stack_byte(f, off, &s);
	if (narrow_const(s, off, size, sign_ext, &v)) {
		reg_mark_const(dst, v);
		return 0;
	}
	reg_mark_unknown(dst);
	rng_bits(&dst->r, size, sign_ext);
	return 0;
}

static int stack_access(struct venv *env, struct vstate *st, int regno, int off, int size,
                        bool write, struct vreg *val, bool sign_ext)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	struct vframe *f = st->frame[reg->frameno];
	int lo, hi;

	off += reg->off;
	if (rng_is_const(&reg->r)) {
		off += (int)reg->r.smin;
		if (off < -RQBPF_STACK_SIZE || off + size > 0) {
			verr(env, env->insn_idx, "invalid%s stack R%d off=%d size=%d",
			     dir_str(write), regno, off, size);
			return -1;
		}
		if (off % size) {
			verr(env, env->insn_idx,
			     "misaligned stack access off (0x0; 0x0)+%d+%d size %d", reg->off,
			     off - reg->off, size);
			return -1;
		}
		mem_note_stack(env, f, off);
		if (!write)
			return stack_read(env, f, off, size, val, sign_ext);
		stack_write(f, off, size, val);
		return 0;
	}
	if (reg->r.smin < -RQBPF_STACK_SIZE || reg->r.smax > RQBPF_STACK_SIZE) {
		verr(env, env->insn_idx, "invalid unbounded variable-offset%s stack R%d",
		     dir_str(write), regno);
		return -1;
	}
	lo = off + (int)reg->r.smin;
	hi = off + (int)reg->r.smax + size;
	if (lo < -RQBPF_STACK_SIZE || hi > 0) {
		verr(env, env->insn_idx, "invalid variable-offset%s stack R%d off=%d size=%d",
		     dir_str(write), regno, off, size);
		return -1;
	}
	mem_note_stack(env, f, lo);
	if (write) {
		stack_write_bytes(f, lo, hi, S_MISC);
		return 0;
	}
	for (int o = lo; o < hi; o++) {
		struct vslot_state *s;
		uint8_t *b = stack_byte(f, o, &s);

		if (*b == S_INVALID || *b == S_IRQ_FLAG || *b == S_ITER) {
			verr(env, env->insn_idx,
			     "invalid variable-offset read from stack R%d off=%d size=%d", regno,
			     off, size);
			return -1;
		}
	}
	reg_mark_unknown(val);
	rng_bits(&val->r, size, sign_ext);
	return 0;
}

/* [lo, hi) in the value of map @m must not overlap its lock. */
static int check_lock_overlap(struct venv *env, const struct rqbpf_map_desc *m, int64_t lo,
                              int64_t hi)
{
	if (m->res_lock_off >= 0 && lo < m->res_lock_off + 4 && m->res_lock_off < hi) {
		verr(env, env->insn_idx,
		     "bpf_res_spin_lock cannot be accessed directly by load/store");
		return -1;
	}
	if (m->spin_lock_off >= 0 && lo < m->spin_lock_off + 4 && m->spin_lock_off < hi) {
		verr(env, env->insn_idx, "bpf_spin_lock cannot be accessed directly by load/store");
		return -1;
	}
	return 0;
}

/* The kernel's out-of-bounds message for what @reg points to, @vs bytes. */
static void oob(struct venv *env, const struct vreg *reg, int64_t vs, long long off, int size)
{
	if (reg->type == T_RINGBUF_MEM || reg->type == T_MEM_RDONLY)
		verr(env, env->insn_idx, "invalid access to memory, mem_size=%u off=%lld size=%d",
		     (unsigned)vs, off, size);
	else
		verr(env, env->insn_idx,
		     "invalid access to map value, value_size=%u off=%lld size=%d", (unsigned)vs,
		     off, size);
}

/* Bounds of an access of @size at @off past a pointer to @vs bytes (a map
 * value, a ring buffer record), as the kernel's check_mem_region_access(). */
static int region_bounds(struct venv *env, const struct vreg *reg, int regno, int off, int size,
                         int64_t vs)
{
	bool var = !rng_is_const(&reg->r);

	off += reg->off;
	if (var && reg->r.smin < 0 &&
	    (reg->r.smin == INT64_MIN || reg->r.smin < -MAX_VAR_OFF || reg->r.smin + off < 0)) {
		verr(env, env->insn_idx,
		     "R%d min value is negative, either use unsigned index or do a if (index >=0) "
		     "check.",
		     regno);
		return -1;
	}
	if (reg->r.smin + off < 0 || reg->r.smin + off + size > vs) {
		oob(env, reg, vs, (long long)reg->r.smin + off, size);
		return -1;
	}
	if (var && reg->r.umax >= MAX_VAR_OFF) {
		verr(env, env->insn_idx,
		     "R%d unbounded memory access, make sure to bounds check any such access",
		     regno);
		return -1;
	}
	if ((int64_t)reg->r.umax + off + size > vs) {
		oob(env, reg, vs, (long long)reg->r.umax + off, size);
		return -1;
	}
	return 0;
}

/* Bounds of an access of @size at @off past a map value pointer. */
static int map_value_bounds(struct venv *env, const struct vreg *reg, int regno, int off, int size)
{
	const struct rqbpf_map_desc *m = &env->prog->maps[reg->map];

	if (region_bounds(env, reg, regno, off, size, m->value_size))
		return -1;
	off += reg->off;
	return check_lock_overlap(env, m, reg->r.smin + off, (int64_t)reg->r.umax + off + size);
}

/* A load from or store to a ring buffer record (any bytes: it has no lock). */
static int record_access(struct venv *env, const struct vreg *reg, int regno, int off, int size,
                         bool write, struct vreg *val, bool sign_ext)
{
	if (region_bounds(env, reg, regno, off, size, reg->mem_size))
		return -1;
	if (!write) {
		reg_mark_unknown(val);
		rng_bits(&val->r, size, sign_ext);
	}
	return 0;
}

/* A load from a map key (a bpf_for_each_map_elem callback's R2): key_size
 * bytes the program may read, not write (the kernel's messages). */
static int map_key_access(struct venv *env, const struct vreg *reg, int regno, int off, int size,
                          bool write, struct vreg *val, bool sign_ext)
{
	const struct rqbpf_map_desc *m = &env->prog->maps[reg->map];

	if (write) {
		verr(env, env->insn_idx, "write to change key R%d not allowed", regno);
		return -1;
	}
	off += reg->off;
	if (off < 0 || off + size > (int)m->key_size) {
		verr(env, env->insn_idx, "invalid access to map key, key_size=%u off=%d size=%d",
		     m->key_size, off, size);
		return -1;
	}
	reg_mark_unknown(val);
	rng_bits(&val->r, size, sign_ext);
	return 0;
}

static int map_value_access(struct venv *env, struct vstate *st, int regno, int off, int size,
                            bool write, struct vreg *val, bool sign_ext)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	const struct rqbpf_map_desc *m = &env->prog->maps[reg->map];

	if (write && m->read_only) {
		verr(env, env->insn_idx, "write into map forbidden, value_size=%u off=%d size=%d",
		     m->value_size, reg->off + off, size);
		return -1;
	}
	if (map_value_bounds(env, reg, regno, off, size))
		return -1;
	if (!write) {
		reg_mark_unknown(val);
		rng_bits(&val->r, size, sign_ext);
	}
	return 0;
}

/* The packet pointer type of the context field at @off (4 bytes: the only
 * size the table lets a program read one at), or T_SCALAR. The kernel
 * rewrites these loads; rqbpf's runtime gives the packet's addresses there. */
static uint8_t packet_field(const struct rqbpf_linked_prog *prog, int off)
{
	const struct rqbpf_prog_type *t = rqbpf_prog_type_find(prog->prog_type);

	if (!t)
		return T_SCALAR;
	if (off == (int)t->data)
		return T_PACKET;
	if (off == (int)t->data_end)
		return T_PACKET_END;
	if (off == (int)t->data_meta)
		return T_PACKET_META;
	return T_SCALAR;
}

static int ctx_access(struct venv *env, struct vstate *st, int regno, int off, int size,
                      struct vreg *val, bool write, bool sign_ext)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	uint8_t pkt;

	if (reg->off || !rng_is_const(&reg->r) || reg->r.umin) {
		verr(env, env->insn_idx, "dereference of modified ctx ptr R%d off=%d disallowed",
		     regno, reg->off);
		return -1;
	}
	pkt = packet_field(env->prog, off);
	if (off < 0 || off + size > (int)env->prog->ctx_size ||
	    !rqbpf_ctx_access_ok(env->prog->prog_type, off, size, write) ||
	    (sign_ext && pkt != T_SCALAR)) { /* a sign-extending load is a scalar's */
		verr(env, env->insn_idx, "invalid bpf_context access off=%d size=%d", off, size);
		return -1;
	}
	if (write)
		return 0;
	reg_mark_unknown(val);
	if (pkt != T_SCALAR) {
		/* the kernel's mark_reg_known_zero() and the field's type */
		rng_const(&val->r, 0);
		val->type = pkt;
		return 0;
	}
	rng_bits(&val->r, size, sign_ext);
	return 0;
}

/* May a program of the verified type write to its packet (the kernel's
 * may_access_direct_pkt_data() for a write)? */
static bool packet_writable(const struct venv *env)
{
	uint32_t t = env->prog->prog_type;

	return t == BPF_PROG_TYPE_SCHED_CLS || t == BPF_PROG_TYPE_SCHED_ACT ||
	       t == BPF_PROG_TYPE_XDP;
}

/* Bounds of @size bytes at @off past packet pointer R@regno, as the kernel's
 * check_packet_access(): inside the range a comparison proved. The kernel
 * logs two lines; the verdict is its last. */
static int packet_bounds(struct venv *env, const struct vreg *reg, int regno, int off, int size)
{
	if (reg->r.smin < 0) {
		verr(env, env->insn_idx,
		     "R%d min value is negative, either use unsigned index or do a if (index >=0) "
		     "check.",
		     regno);
		return -1;
	}
	off += reg->off;
	if (off >= 0 && size > 0 && (int64_t)off + size <= (int64_t)reg->mem_size)
		return 0;
	vlogf(env, "invalid access to packet, off=%d size=%d, R%d(id=%u,off=%d,r=%u)\n", off, size,
	      regno, reg->id, off, reg->mem_size);
	verr(env, env->insn_idx, "R%d offset is outside of the packet", regno);
	return -1;
}

static int packet_access(struct venv *env, const struct vreg *reg, int regno, int off, int size,
                         bool write, struct vreg *val, bool sign_ext)
{
	if (write && !packet_writable(env)) {
		verr(env, env->insn_idx, "cannot write into packet");
		return -1;
	}
	if (packet_bounds(env, reg, regno, off, size))
		return -1;
	if (!write) {
		reg_mark_unknown(val);
		rng_bits(&val->r, size, sign_ext);
	}
	return 0;
}

/*
 * A load (into *val) or a store (of *val, NULL for unknown bytes) of @size
 * bytes at R@regno + @off.
 */
int mem_access(struct venv *env, struct vstate *st, int regno, int off, int size, bool write,
               struct vreg *val, bool sign_ext)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];

	switch (reg->type) {
	case T_STACK:
		return stack_access(env, st, regno, off, size, write, val, sign_ext);
	case T_MAP_VALUE:
		return map_value_access(env, st, regno, off, size, write, val, sign_ext);
	case T_CTX:
		return ctx_access(env, st, regno, off, size, val, write, sign_ext);
	case T_RINGBUF_MEM:
		return record_access(env, reg, regno, off, size, write, val, sign_ext);
	case T_PACKET:
	case T_PACKET_META:
		return packet_access(env, reg, regno, off, size, write, val, sign_ext);
	case T_MEM_RDONLY:
		if (write) {
			verr(env, env->insn_idx, "R%d cannot write into rdonly_mem", regno);
			return -1;
		}
		return record_access(env, reg, regno, off, size, write, val, sign_ext);
	case T_MAP_KEY:
		return map_key_access(env, reg, regno, off, size, write, val, sign_ext);
	case T_NOT_INIT:
		verr(env, env->insn_idx, "R%d !read_ok", regno);
		return -1;
	default:
		verr(env, env->insn_idx, "R%d invalid mem access '%s'", regno,
		     vtype_name(reg->type));
		return -1;
	}
}

static void helper_mem_expected(struct venv *env, const struct vreg *reg, int regno)
{
	verr(env, env->insn_idx,
	     "R%d type=%s expected=fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, "
	     "buf, trusted_ptr_",
	     regno, vtype_name(reg->type));
}

/* The constant stack offset (*@p off, in frame *@p f) of the @p size bytes a
 * helper reads or writes at R@p regno, inside the stack; -1 after an error. */
static int helper_stack_range(struct venv *env, struct vstate *st, int regno, int size, bool write,
                              int *off, struct vframe **f)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];

	if (!rng_is_const(&reg->r)) {
		verr(env, env->insn_idx, "R%d variable stack access prohibited", regno);
		return -1;
	}
	*off = reg->off + (int)reg->r.smin;
	*f = st->frame[reg->frameno];
	if (*off < -RQBPF_STACK_SIZE || *off + size > 0 || size <= 0) {
		verr(env, env->insn_idx, "invalid%s stack R%d off=%d size=%d", dir_str(write),
		     regno, *off, size);
		return -1;
	}
	mem_note_stack(env, *f, *off);
	return 0;
}

/* A helper writes @size bytes at R@regno (bpf_map_pop_elem's value): stack,
 * initialised or not, which it leaves initialised; a writable map value; a
 * ring buffer record. */
int mem_check_writable(struct venv *env, struct vstate *st, int regno, int size)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	struct vframe *f;
	int off;

	if (reg->type == T_MAP_VALUE || reg->type == T_RINGBUF_MEM || vtype_is_pkt(reg->type)) {
		struct vreg ignored;

		return mem_access(env, st, regno, 0, size, true, &ignored, false);
	}
	if (reg->type != T_STACK) {
		helper_mem_expected(env, reg, regno);
		return -1;
	}
	if (helper_stack_range(env, st, regno, size, true, &off, &f))
		return -1;
	stack_write_bytes(f, off, off + size, S_MISC);
	return 0;
}

/* A helper reads @size bytes at R@regno: initialised stack or map value. */
int mem_check_readable(struct venv *env, struct vstate *st, int regno, int size)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	struct vframe *f;
	int off;

	if (reg->type == T_MAP_VALUE)
		return map_value_bounds(env, reg, regno, 0, size);
	if (reg->type == T_RINGBUF_MEM || reg->type == T_MEM_RDONLY)
		return region_bounds(env, reg, regno, 0, size, reg->mem_size);
	if (vtype_is_pkt(reg->type))
		return packet_bounds(env, reg, regno, 0, size);
	if (reg->type == T_MAP_KEY) {
		struct vreg ignored;

		return map_key_access(env, reg, regno, 0, size, false, &ignored, false);
	}
	if (reg->type != T_STACK) {
		helper_mem_expected(env, reg, regno);
		return -1;
	}
	if (helper_stack_range(env, st, regno, size, false, &off, &f))
		return -1;
	for (int i = 0; i < size; i++) {
		struct vslot_state *s;
		uint8_t *b = stack_byte(f, off + i, &s);

		if (*b == S_INVALID || *b == S_IRQ_FLAG || *b == S_ITER) {
			verr(env, env->insn_idx, "invalid read from stack R%d off %d+%d size %d",
			     regno, off, i, size);
			return -1;
		}
	}
	return 0;
}

/*
 * The constant a helper would read as a map key at R@regno: known-zero
 * bytes, or the low bytes of a spilled constant at the start of a slot.
 * False when the key is not known.
 */
bool mem_const_key(struct vstate *st, int regno, int size, uint64_t *key)
{
	const struct vreg *reg = &cur_frame(st)->regs[regno];
	struct vframe *f;
	struct vslot_state *s;
	int off;
	bool zero = true;

	if (reg->type != T_STACK || !rng_is_const(&reg->r) || size < 1 || size > 8)
		return false;
	off = reg->off + (int)reg->r.smin;
	if (off < -RQBPF_STACK_SIZE || off + size > 0)
		return false;
	f = st->frame[reg->frameno];
	for (int i = 0; i < size; i++)
		zero = zero && *stack_byte(f, off + i, &s) == S_ZERO;
	if (zero) {
		*key = 0;
		return true;
	}
	stack_byte(f, off, &s);
	if (!(off % 8) && s->bytes[0] != S_SPILL && s->narrow && size <= s->narrow) {
		*key = s->narrow_val;
		if (size < 4)
			*key &= ((uint64_t)1 << (size * 8)) - 1;
		return true;
	}
	if (off % 8 || s->bytes[0] != S_SPILL || !reg_is_const(&s->spill, key))
		return false;
	if (size < 8)
		*key &= ((uint64_t)1 << (size * 8)) - 1;
	return true;
}
