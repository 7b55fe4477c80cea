/* SPDX-License-Identifier: MIT */
/* interp.c: the eBPF interpreter. The whole instruction set clang 14 and 19
 * emit at -O2 (cpu v1-v4): ALU and ALU32, JMP and JMP32, ld_imm64, loads and
 * stores (sign-extending too), atomics, bswap, sdiv/smod, movsx, gotol and
 * bpf-to-bpf calls. Registers are locals and the stack is the caller's, so a
 * program runs on any number of threads at once. Every load, store and
 * atomic is checked against the run's regions first. */
#include <errno.h>
#include <linux/filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static int bad_access(struct rqbpf_run *r, uint64_t addr, size_t size, bool write)
{
	return rqbpf_fault(r, "%s of %zu bytes at 0x%llx outside the stack, context and map values",
	                   write ? "write" : "read", size, (unsigned long long)addr);
}

/* Sign-extended values for BPF_MEMSX and movsx. */
static uint64_t sext(uint64_t v, int bits)
{
	uint64_t m = 1ull << (bits - 1);

	v &= bits == 64 ? ~0ull : (1ull << bits) - 1;
	return (v ^ m) - m;
}

/* Loads and stores of map values race with other threads' by design (as
 * in the kernel): aligned ones are relaxed atomics (plain moves on x86,
 * defined behaviour for the C11 model and TSan); unaligned ones are copies. */
static inline __attribute__((always_inline)) uint64_t load(const void *p, uint8_t size)
{
	uint16_t h;
	uint32_t w;
	uint64_t d;

	switch (size) {
	case BPF_B:
		return __atomic_load_n((const uint8_t *)p, __ATOMIC_RELAXED);
	case BPF_H:
		if (!((uintptr_t)p % 2))
			return __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
		memcpy(&h, p, 2);
		return h;
	case BPF_W:
		if (!((uintptr_t)p % 4))
			return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
		memcpy(&w, p, 4);
		return w;
	default:
		if (!((uintptr_t)p % 8))
			return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
		memcpy(&d, p, 8);
		return d;
	}
}

static inline __attribute__((always_inline)) void store(void *p, uint8_t size, uint64_t v)
{
	uint16_t h = (uint16_t)v;
	uint32_t w = (uint32_t)v;

	switch (size) {
	case BPF_B:
		__atomic_store_n((uint8_t *)p, (uint8_t)v, __ATOMIC_RELAXED);
		break;
	case BPF_H:
		if (!((uintptr_t)p % 2))
			__atomic_store_n((uint16_t *)p, h, __ATOMIC_RELAXED);
		else
			memcpy(p, &h, 2);
		break;
	case BPF_W:
		if (!((uintptr_t)p % 4))
			__atomic_store_n((uint32_t *)p, w, __ATOMIC_RELAXED);
		else
			memcpy(p, &w, 4);
		break;
	default:
		if (!((uintptr_t)p % 8))
			__atomic_store_n((uint64_t *)p, v, __ATOMIC_RELAXED);
		else
			memcpy(p, &v, 8);
	}
}

static const uint8_t size_bytes[4] = {4, 2, 1, 8}; /* BPF_W, H, B, DW >> 3 */

/* One read-modify-write of a 32- or 64-bit word; returns the old value. */
// NOLINTBEGIN(bugprone-macro-parentheses): T is a type
#define DEFINE_ATOMIC(NAME, T)                                                                     \
	static T NAME(T *p, int32_t op, T v, uint64_t *r0)                                         \
	{                                                                                          \
		T expected;                                                                        \
                                                                                                   \
		switch (op & ~BPF_FETCH) {                                                         \
		case BPF_ADD:                                                                      \
			return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                         \
		case BPF_OR:                                                                       \
			return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                          \
		case BPF_AND:                                                                      \
			return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                         \
		case BPF_XOR:                                                                      \
			return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                         \
		case BPF_XCHG & ~BPF_FETCH:                                                        \
			return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                        \
		default: /* BPF_CMPXCHG: compares with R0 */                                       \
			expected = (T)*r0;                                                         \
			__atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST,      \
			                            __ATOMIC_SEQ_CST);                             \
			return expected;                                                           \
		}                                                                                  \
	}
DEFINE_ATOMIC(atomic64, uint64_t)
DEFINE_ATOMIC(atomic32, uint32_t)
// NOLINTEND(bugprone-macro-parentheses)

/* BPF atomics are full barriers (the kernel's atomic64_fetch_add and friends). */
static int do_atomic(struct rqbpf_run *r, const struct rqbpf_op *in, uint64_t *reg)
{
	bool dw = (in->code & 0x18) == BPF_DW;
	size_t n = dw ? 8 : 4;
	uint64_t addr = reg[in->dst] + (uint64_t)(int64_t)in->off;
	void *p = rqbpf_mem(r, addr, n, true);
	uint64_t old;

	if (!p)
		return bad_access(r, addr, n, true);
	if (addr % n)
		return rqbpf_fault(r, "misaligned atomic at 0x%llx", (unsigned long long)addr);
	if (dw)
		old = atomic64(p, in->imm, reg[in->src], &reg[BPF_REG_0]);
	else
		old = atomic32(p, in->imm, (uint32_t)reg[in->src], &reg[BPF_REG_0]);
	if (in->imm == BPF_CMPXCHG)
		reg[BPF_REG_0] = old;
	else if (in->imm & BPF_FETCH)
		reg[in->src] = old;
	return 0;
}

/* Division and modulo, unsigned (off 0) or signed (off 1, cpu v4), with
 * eBPF's rules: x / 0 = 0, x % 0 = x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. */
// NOLINTBEGIN(bugprone-macro-parentheses): U and S are types
#define DEFINE_DIVMOD(NAME, U, S)                                                                  \
	static U NAME(bool mod, int16_t off, U a, U b)                                             \
	{                                                                                          \
		if (!b)                                                                            \
			return mod ? a : 0;                                                        \
		if (!off)                                                                          \
			return mod ? a % b : a / b;                                                \
		if ((S)b == -1)                                                                    \
			return mod ? 0 : (U)(0 - a);                                               \
		return (U)(mod ? (S)a % (S)b : (S)a / (S)b);                                       \
	}
DEFINE_DIVMOD(divmod64, uint64_t, int64_t)
DEFINE_DIVMOD(divmod32, uint32_t, int32_t)
// NOLINTEND(bugprone-macro-parentheses)

/* to-LE truncates (a little-endian host), to-BE and bswap also swap. */
static uint64_t endian(int32_t bits, bool swap, uint64_t v)
{
	switch (bits) {
	case 16:
		return swap ? __builtin_bswap16((uint16_t)v) : (uint16_t)v;
	case 32:
		return swap ? __builtin_bswap32((uint32_t)v) : (uint32_t)v;
	default:
		return swap ? __builtin_bswap64(v) : v;
	}
}

/* Direct-threaded dispatch: at load every instruction is decoded into a
 * struct rqbpf_op holding the address of its handler (a label below, GNU C
 * "labels as values", which gcc and clang support); each handler ends by
 * jumping straight to the next instruction's. cppcheck does not parse label
 * addresses: it sees a stand-in. */
// The handler macros paste C fragments (labels, operators, statements): no parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#ifdef __CPPCHECK__
#define LABEL_ADDR(l)   NULL
#define GOTO_HANDLER(h) goto bad_opcode
#else
#define LABEL_ADDR(l)   &&l
#define GOTO_HANDLER(h) goto *(h)
#endif

#define DST reg[in->dst]
#define SRC reg[in->src]
#define IMM ((uint64_t)(int64_t)in->imm)
#define D32 ((uint32_t)DST)
#define S32 ((uint32_t)SRC)
#define I32 ((uint32_t)in->imm)
#define NEXT                                                                                       \
	do {                                                                                       \
		in++;                                                                              \
		n++;                                                                               \
		GOTO_HANDLER(in->handler);                                                         \
	} while (0)

/* The handlers, X(label, opcode, body...): the table and the code are both
 * generated from this list. */
#define ALU4(X, OPC, NAME, E)                                                                      \
	X(a64x_##NAME, BPF_ALU64 | OPC | BPF_X, uint64_t a = DST, b = SRC; DST = (E);)             \
	X(a64k_##NAME, BPF_ALU64 | OPC | BPF_K, uint64_t a = DST, b = IMM; DST = (E);)             \
	X(a32x_##NAME, BPF_ALU | OPC | BPF_X, uint32_t a = D32, b = S32; DST = (uint32_t)(E);)     \
	X(a32k_##NAME, BPF_ALU | OPC | BPF_K, uint32_t a = D32, b = I32; DST = (uint32_t)(E);)
/* Division and modulo, with their signed variants (off 1). */
#define ALU4_DIVMOD(X, OPC, NAME, MOD)                                                             \
	X(a64x_##NAME, BPF_ALU64 | OPC | BPF_X, DST = divmod64(MOD, in->off, DST, SRC);)           \
	X(a64k_##NAME, BPF_ALU64 | OPC | BPF_K, DST = divmod64(MOD, in->off, DST, IMM);)           \
	X(a32x_##NAME, BPF_ALU | OPC | BPF_X, DST = divmod32(MOD, in->off, D32, S32);)             \
	X(a32k_##NAME, BPF_ALU | OPC | BPF_K, DST = divmod32(MOD, in->off, D32, I32);)
#define JMP4(X, OPC, NAME, CMP, T64, T32)                                                          \
	X(j64x_##NAME, BPF_JMP | OPC | BPF_X, if ((T64)DST CMP(T64) SRC) goto jump;)               \
	X(j64k_##NAME, BPF_JMP | OPC | BPF_K, if ((T64)DST CMP(T64) IMM) goto jump;)               \
	X(j32x_##NAME, BPF_JMP32 | OPC | BPF_X, if ((T32)D32 CMP(T32) S32) goto jump;)             \
	X(j32k_##NAME, BPF_JMP32 | OPC | BPF_K, if ((T32)D32 CMP(T32) I32) goto jump;)
#define LDX1(X, SZ, T, NAME)                                                                       \
	X(ldx_##NAME, BPF_LDX | BPF_MEM | SZ, addr = SRC + (uint64_t)(int64_t)in->off;             \
	  p = rqbpf_mem(r, addr, sizeof(T), false); if (!p) goto bad_access; DST = load(p, SZ);)
#define LDSX1(X, SZ, T, NAME)                                                                      \
	X(ldsx_##NAME, BPF_LDX | BPF_MEMSX | SZ, addr = SRC + (uint64_t)(int64_t)in->off;          \
	  p = rqbpf_mem(r, addr, sizeof(T), false); if (!p) goto bad_access;                       \
	  DST = (uint64_t)(int64_t)(T)load(p, SZ);)
#define ST1(X, CLS, SZ, T, NAME, V)                                                                \
	X(NAME, CLS | BPF_MEM | SZ, addr = DST + (uint64_t)(int64_t)in->off;                       \
	  p = rqbpf_mem(r, addr, sizeof(T), true); if (!p) goto bad_access; store(p, SZ, V);)

/* LD_ABS/IND: R0 = the packet's bytes at k (IND: k = src + imm, as an int);
 * outside the packet the function returns 0, as the kernel's does. */
#define LDABS1(X, SZ, N, NAME)                                                                     \
	X(ldabs_##NAME, BPF_LD | BPF_ABS | SZ,                                                     \
	  if (!rqbpf_ld_abs(r->pkt, in->imm, N, &reg[BPF_REG_0])) goto ld_abs_fail;                \
	  reg[1] = reg[2] = reg[3] = reg[4] = reg[5] = 0;)                                         \
	X(ldind_##NAME, BPF_LD | BPF_IND | SZ,                                                     \
	  if (!rqbpf_ld_abs(r->pkt, (int32_t)(uint32_t)(SRC + IMM), N,                             \
	                    &reg[BPF_REG_0])) goto ld_abs_fail;                                    \
	  reg[1] = reg[2] = reg[3] = reg[4] = reg[5] = 0;)

#define RQBPF_OPS(X)                                                                               \
	LDABS1(X, BPF_W, 4, w)                                                                     \
	LDABS1(X, BPF_H, 2, h)                                                                     \
	LDABS1(X, BPF_B, 1, b)                                                                     \
	ALU4(X, BPF_ADD, add, a + b)                                                               \
	ALU4(X, BPF_SUB, sub, a - b)                                                               \
	ALU4(X, BPF_MUL, mul, a *b)                                                                \
	ALU4(X, BPF_OR, or, a | b)                                                                 \
	ALU4(X, BPF_AND, and, a &b)                                                                \
	ALU4(X, BPF_XOR, xor, a ^ b)                                                               \
	ALU4(X, BPF_LSH, lsh, a << (b & (8 * sizeof(a) - 1)))                                      \
	ALU4(X, BPF_RSH, rsh, a >> (b & (8 * sizeof(a) - 1)))                                      \
	ALU4_DIVMOD(X, BPF_DIV, div, false)                                                        \
	ALU4_DIVMOD(X, BPF_MOD, mod, true)                                                         \
	X(a64x_arsh, BPF_ALU64 | BPF_ARSH | BPF_X, DST = (uint64_t)((int64_t)DST >> (SRC & 63));)  \
	X(a64k_arsh, BPF_ALU64 | BPF_ARSH | BPF_K, DST = (uint64_t)((int64_t)DST >> (IMM & 63));)  \
	X(a32x_arsh, BPF_ALU | BPF_ARSH | BPF_X, DST = (uint32_t)((int32_t)D32 >> (S32 & 31));)    \
	X(a32k_arsh, BPF_ALU | BPF_ARSH | BPF_K, DST = (uint32_t)((int32_t)D32 >> (I32 & 31));)    \
	X(a64x_mov, BPF_ALU64 | BPF_MOV | BPF_X, DST = SRC;)                                       \
	X(a64k_mov, BPF_ALU64 | BPF_MOV | BPF_K, DST = IMM;)                                       \
	X(a32x_mov, BPF_ALU | BPF_MOV | BPF_X, DST = S32;)                                         \
	X(a32k_mov, BPF_ALU | BPF_MOV | BPF_K, DST = I32;)                                         \
	X(a64_neg, BPF_ALU64 | BPF_NEG, DST = 0 - DST;)                                            \
	X(a32_neg, BPF_ALU | BPF_NEG, DST = (uint32_t)(0 - D32);)                                  \
	X(a32_le, BPF_ALU | BPF_END | BPF_TO_LE, DST = endian(in->imm, false, DST);)               \
	X(a32_be, BPF_ALU | BPF_END | BPF_TO_BE, DST = endian(in->imm, true, DST);)                \
	X(a64_bswap, BPF_ALU64 | BPF_END, DST = endian(in->imm, true, DST);)                       \
	JMP4(X, BPF_JEQ, jeq, ==, uint64_t, uint32_t)                                              \
	JMP4(X, BPF_JNE, jne, !=, uint64_t, uint32_t)                                              \
	JMP4(X, BPF_JGT, jgt, >, uint64_t, uint32_t)                                               \
	JMP4(X, BPF_JGE, jge, >=, uint64_t, uint32_t)                                              \
	JMP4(X, BPF_JLT, jlt, <, uint64_t, uint32_t)                                               \
	JMP4(X, BPF_JLE, jle, <=, uint64_t, uint32_t)                                              \
	JMP4(X, BPF_JSGT, jsgt, >, int64_t, int32_t)                                               \
	JMP4(X, BPF_JSGE, jsge, >=, int64_t, int32_t)                                              \
	JMP4(X, BPF_JSLT, jslt, <, int64_t, int32_t)                                               \
	JMP4(X, BPF_JSLE, jsle, <=, int64_t, int32_t)                                              \
	JMP4(X, BPF_JSET, jset, &, uint64_t, uint32_t)                                             \
	X(ja, BPF_JMP | BPF_JA, goto jump;)                                                        \
	X(gotol, BPF_JMP32 | BPF_JA, in += in->imm; goto jumped;)                                  \
	LDX1(X, BPF_B, uint8_t, b)                                                                 \
	LDX1(X, BPF_H, uint16_t, h)                                                                \
	LDX1(X, BPF_W, uint32_t, w)                                                                \
	LDX1(X, BPF_DW, uint64_t, dw)                                                              \
	LDSX1(X, BPF_B, int8_t, b)                                                                 \
	LDSX1(X, BPF_H, int16_t, h)                                                                \
	LDSX1(X, BPF_W, int32_t, w)                                                                \
	ST1(X, BPF_STX, BPF_B, uint8_t, stx_b, SRC)                                                \
	ST1(X, BPF_STX, BPF_H, uint16_t, stx_h, SRC)                                               \
	ST1(X, BPF_STX, BPF_W, uint32_t, stx_w, SRC)                                               \
	ST1(X, BPF_STX, BPF_DW, uint64_t, stx_dw, SRC)                                             \
	ST1(X, BPF_ST, BPF_B, uint8_t, st_b, IMM)                                                  \
	ST1(X, BPF_ST, BPF_H, uint16_t, st_h, IMM)                                                 \
	ST1(X, BPF_ST, BPF_W, uint32_t, st_w, IMM)                                                 \
	ST1(X, BPF_ST, BPF_DW, uint64_t, st_dw, IMM)                                               \
	X(atomic_w, BPF_STX | BPF_ATOMIC | BPF_W, r->at = in;                                      \
	  if ((ret = do_atomic(r, in, reg))) goto out;)                                            \
	X(atomic_dw, BPF_STX | BPF_ATOMIC | BPF_DW, r->at = in;                                    \
	  if ((ret = do_atomic(r, in, reg))) goto out;)                                            \
	X(ld_imm64, BPF_LD | BPF_IMM | BPF_DW, DST = imm64[in - ops]; in++;)                       \
	X(call, BPF_JMP | BPF_CALL, r->at = in; if (!in->fn) goto subprog;                         \
	  if ((ret = in->fn(r, reg))) goto out;)                                                   \
	X(exit, BPF_JMP | BPF_EXIT, if (depth == 0) goto out; in = frames[--depth].ret;            \
	  memcpy(&reg[BPF_REG_6], frames[depth].saved, sizeof(frames[0].saved));                   \
	  reg[BPF_REG_10] += RQBPF_STACK_SIZE;)                                                    \
	X(may_goto, BPF_JMP | RQBPF_JCOND, if (!loops[depth]) goto jump; loops[depth]--;)
// NOLINTEND(bugprone-macro-parentheses)

struct frame {
	uint64_t saved[4]; /* r6-r9 */
	const struct rqbpf_op *ret;
};

/* may_goto (BPF_JMP | BPF_JCOND), newer than Debian 12's <linux/bpf.h>:
 * each function call may take its fall-through RQBPF_MAY_GOTO_LOOPS times
 * (the kernel's BPF_MAX_LOOPS, its interpreter's count; its x86-64 JIT
 * counts time instead, 250 ms), then jumps. */
#define RQBPF_JCOND          0xe0
#define RQBPF_MAY_GOTO_LOOPS (8u * 1024 * 1024)

/*
 * The interpreter. With @p table set it only fills it (256 handler
 * addresses, by opcode) for the decoder. Otherwise it runs the decoded
 * program until the outermost exit, a fault or the instruction limit.
 */
/* The decoder's table has two entries past the 256 opcodes: the handlers
 * of movsx, which shares mov's opcodes (BPF_X with a nonzero off). */
#define MOVSX64    256
#define MOVSX32    257
#define TABLE_SIZE 258

static int interpret(struct rqbpf_run *r, uint64_t *reg, const struct rqbpf_op *start, int depth0,
                     uint64_t *insns_run, const void **table)
{
#define TABLE_ENTRY(label, code, ...) [code] = LABEL_ADDR(label),
#ifdef __CPPCHECK__
	static const void *const handlers[256] = {NULL};
#else
	static const void *const handlers[256] = {RQBPF_OPS(TABLE_ENTRY)};
#endif
#undef TABLE_ENTRY
#ifdef __CPPCHECK__
	static const void *const movsx[2] = {NULL};
#else
	static const void *const movsx[TABLE_SIZE - 256] = {
	    [MOVSX64 - 256] = LABEL_ADDR(a64x_movsx), [MOVSX32 - 256] = LABEL_ADDR(a32x_movsx)};
#endif
	const struct rqbpf_op *ops, *in;
	const uint64_t *imm64;
	struct frame frames[RQBPF_MAX_FRAMES];
	uint32_t loops[RQBPF_MAX_FRAMES]; /* may_goto's count, per frame */
	uint64_t n = 1, addr = 0;
	int depth = 0, ret = 0;
	void *p;

	if (!r || !reg || !insns_run) {
		for (int i = 0; table && i < 256; i++)
			table[i] = handlers[i] ? handlers[i] : LABEL_ADDR(bad_opcode);
		for (int i = 0; table && i < TABLE_SIZE - 256; i++)
			table[256 + i] = movsx[i];
		return 0;
	}
	ops = r->prog->ops;
	in = start;
	imm64 = r->prog->imm64;
	loops[0] = RQBPF_MAY_GOTO_LOOPS;
	GOTO_HANDLER(in->handler);

#define HANDLER(label, code, ...)                                                                  \
	label : {                                                                                  \
		__VA_ARGS__                                                                        \
	}                                                                                          \
	NEXT;
	RQBPF_OPS(HANDLER)
#undef HANDLER

	/* movsx (off 8, 16, 32): mov's opcodes, chosen at decode by off */
a64x_movsx:
	DST = sext(SRC, in->off);
	NEXT;
a32x_movsx:
	DST = (uint32_t)sext(SRC, in->off);
	NEXT;
subprog:
	if (depth0 + depth + 1 >= RQBPF_MAX_FRAMES) {
		ret = rqbpf_fault(r, "call depth over %d frames", RQBPF_MAX_FRAMES);
		goto out;
	}
	memcpy(frames[depth].saved, &reg[BPF_REG_6], sizeof(frames[0].saved));
	frames[depth++].ret = in;
	loops[depth] = RQBPF_MAY_GOTO_LOOPS;
	reg[BPF_REG_10] -= RQBPF_STACK_SIZE;
	in += in->imm;
	goto jumped;
jump:
	in += in->off;
jumped:
	if (n > RQBPF_INSN_LIMIT) {
		r->at = in;
		rqbpf_fault(r, "more than %llu instructions", (unsigned long long)RQBPF_INSN_LIMIT);
		ret = -E2BIG;
		goto out;
	}
	NEXT;
ld_abs_fail:
	reg[BPF_REG_0] = 0;
	goto exit;
bad_access:
	r->at = in;
	ret = bad_access(r, addr, size_bytes[(in->code & 0x18) >> 3], CLASS(in->code) != BPF_LDX);
	goto out;
bad_opcode: /* the loader admits none; defence in depth */
	r->at = in;
	ret = rqbpf_fault(r, "unknown opcode 0x%02x", in->code);
out:
	*insns_run = n;
	return ret;
}

int rqbpf_decode(struct rqbpf_prog *prog)
{
	const void *table[TABLE_SIZE];
	struct rqbpf_op *ops = calloc(prog->lp.insn_cnt ? prog->lp.insn_cnt : 1, sizeof(*ops));

	if (!ops)
		return -ENOMEM;
	interpret(NULL, NULL, NULL, 0, NULL, table);
	for (size_t i = 0; i < prog->lp.insn_cnt; i++) {
		const struct bpf_insn *in = &prog->lp.insns[i];

		ops[i] = (struct rqbpf_op){table[in->code], NULL,    in->code, in->dst_reg,
		                           in->src_reg,     in->off, in->imm};
		if (in->off && (in->code == (BPF_ALU64 | BPF_MOV | BPF_X) ||
		                in->code == (BPF_ALU | BPF_MOV | BPF_X)))
			ops[i].handler = table[CLASS(in->code) == BPF_ALU64 ? MOVSX64 : MOVSX32];
		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg == BPF_PSEUDO_CALL)
			continue;
		/* A helper or kfunc call: bound here; an unknown one (the loader
		 * admits none) faults like an unknown opcode (0x00 is one). */
		ops[i].fn = rqbpf_call_target(in->src_reg, in->imm);
		if (!ops[i].fn)
			ops[i].handler = table[0];
	}
	prog->ops = ops;
	return 0;
}

/* Registers start at 0 (R1 and R10 are then set): one store each, where
 * gcc makes "= {0}" a rep stos whose start-up costs more than the stores. */
static inline __attribute__((always_inline)) void clear_regs(uint64_t *reg)
{
	reg[0] = reg[1] = reg[2] = reg[3] = reg[4] = reg[5] = 0;
	reg[6] = reg[7] = reg[8] = reg[9] = reg[10] = 0;
}

bool rqbpf_ld_abs(const struct rqbpf_packet *pkt, int32_t k, int size, uint64_t *v)
{
	int64_t at;
	uint64_t x = 0;

	if (!pkt)
		return false;
	if (k >= 0)
		at = (int64_t)pkt->data + k;
	else if (k >= SKF_NET_OFF)
		at = (int64_t)pkt->net + (k - SKF_NET_OFF);
	else if (k >= SKF_LL_OFF)
		at = (int64_t)pkt->mac + (k - SKF_LL_OFF);
	else
		return false;
	if (at < 0 || at + size > (int64_t)pkt->size)
		return false;
	for (int i = 0; i < size; i++)
		x = x << 8 | pkt->buf[at + i];
	*v = x;
	return true;
}

int rqbpf_prog_run(const struct rqbpf_prog *prog, void *ctx, size_t ctx_size,
                   struct rqbpf_run_result *res)
{
	return rqbpf_run_packet(prog, ctx, ctx_size, NULL, res);
}

int rqbpf_run_packet(const struct rqbpf_prog *prog, void *ctx, size_t ctx_size,
                     const struct rqbpf_packet *pkt, struct rqbpf_run_result *res)
{
	struct rqbpf_run r;
	uint64_t reg[11];
	int ret, rel;

	if (!prog || !res || (!ctx && ctx_size))
		return -EINVAL;
	res->msg[0] = 0;
	res->insns = 0;
	res->retval = 0;
	if (!prog->loaded) {
		if (prog->link_ret)
			/* The message cut to fit res->msg. */
			snprintf(res->msg, sizeof(res->msg), "not loaded: %.*s",
			         (int)sizeof(res->msg) - 13, prog->link_err.msg);
		return -EPERM;
	}
	r.prog = prog;
	r.ctx = (uintptr_t)ctx;
	r.ctx_size = ctx_size;
	r.pkt = pkt;
	r.at = prog->ops;
	r.msg = res->msg;
	r.msg_size = sizeof(res->msg);
	r.nheld = 0;
	r.irq_seq = 0;
	r.rcu = false;
	r.nrec = 0;
	/* the context, where most programs read first (as rqbpf_mem_slow() finds it) */
	r.last = (struct rqbpf_region){(uintptr_t)ctx, ctx_size, true};
	r.cb_insns = 0;
	clear_regs(reg);
	reg[BPF_REG_1] = (uintptr_t)ctx;
	reg[BPF_REG_10] = (uintptr_t)r.stack + sizeof(r.stack);
	ret = interpret(&r, reg, prog->ops, 0, &res->insns, NULL);
	res->insns += r.cb_insns;
	if (ret == RQBPF_THROWN) {
		reg[BPF_REG_0] = r.cookie;
		ret = 0;
	}
	rel = r.nheld || r.rcu || r.nrec ? rqbpf_release_all(&r) : 0;
	if (!ret) {
		res->retval = reg[BPF_REG_0];
		ret = rel;
	}
	return ret;
}

/* A callback's call (bpf_loop, bpf_for_each_map_elem): the function at
 * instruction @p target with arguments @p args (R1-R5), in a frame below
 * the caller's whose stack pointer is @p caller_fp; its R0 in *@p ret. */
int rqbpf_run_callback(struct rqbpf_run *r, uint64_t target, uint64_t caller_fp,
                       const uint64_t *args, uint64_t *ret)
{
	uintptr_t top = (uintptr_t)r->stack + sizeof(r->stack);
	const struct rqbpf_op *at = r->at;
	uint64_t reg[11], n = 0;
	int depth0, rc;

	if (target >= r->prog->lp.insn_cnt)
		return rqbpf_fault(r, "callback at instruction %llu, outside the program",
		                   (unsigned long long)target);
	if (caller_fp > top || (top - caller_fp) % RQBPF_STACK_SIZE)
		return rqbpf_fault(r, "callback from a frame not on the run's stack");
	/* the frames above the callback's: its caller's and theirs */
	depth0 = (int)((top - caller_fp) / RQBPF_STACK_SIZE) + 1;
	if (depth0 >= RQBPF_MAX_FRAMES)
		return rqbpf_fault(r, "call depth over %d frames", RQBPF_MAX_FRAMES);
	clear_regs(reg);
	memcpy(&reg[BPF_REG_1], args, 5 * sizeof(uint64_t));
	reg[BPF_REG_10] = caller_fp - RQBPF_STACK_SIZE;
	rc = interpret(r, reg, &r->prog->ops[target], depth0, &n, NULL);
	r->cb_insns += n;
	if (!rc) {
		r->at = at;
		*ret = reg[BPF_REG_0];
	}
	return rc;
}
