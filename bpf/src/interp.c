/* SPDX-License-Identifier: MIT */
/* interp.c: the eBPF interpreter. The whole instruction set clang 14 and 19
 * emit at -O2 (cpu v1-v4): ALU and ALU32, JMP and JMP32, ld_imm64, loads and
 * stores (sign-extending too), atomics, bswap, sdiv/smod, movsx, gotol and
 * bpf-to-bpf calls. Registers are locals and the stack is the caller's, so a
 * program runs on any number of threads at once. Every load, store and
 * atomic is checked against the run's regions first. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "run.h"

#define OP(c)    ((c)&0xf0)
#define CLASS(c) ((c)&0x07)
#define SRC_X(c) ((c)&BPF_X)

#ifndef BPF_JMP32
#define BPF_JMP32 0x06
#endif
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

/* Instruction classes and their valid opcodes, for the loader's check. */
static bool alu_ok(const struct bpf_insn *in, bool is64)
{
	uint8_t op = OP(in->code);

	switch (op) {
	case BPF_ADD:
	case BPF_SUB:
	case BPF_MUL:
	case BPF_OR:
	case BPF_AND:
	case BPF_LSH:
	case BPF_RSH:
	case BPF_XOR:
	case BPF_ARSH:
		return in->off == 0;
	case BPF_DIV:
	case BPF_MOD:
		return in->off == 0 || in->off == 1;
	case BPF_NEG:
		return !SRC_X(in->code) && in->off == 0;
	case BPF_MOV:
		if (!SRC_X(in->code))
			return in->off == 0;
		return in->off == 0 || in->off == 8 || in->off == 16 || (is64 && in->off == 32);
	case BPF_END:
		if (is64 && SRC_X(in->code))
			return false;
		return in->imm == 16 || in->imm == 32 || in->imm == 64;
	default:
		return false;
	}
}

static bool jmp_ok(const struct bpf_insn *in, bool is64)
{
	switch (OP(in->code)) {
	case BPF_JA:
		return !SRC_X(in->code);
	case BPF_CALL:
		return is64 && !SRC_X(in->code) && (in->src_reg <= BPF_PSEUDO_KFUNC_CALL);
	case BPF_EXIT:
		return is64 && !SRC_X(in->code);
	case BPF_JEQ:
	case BPF_JGT:
	case BPF_JGE:
	case BPF_JSET:
	case BPF_JNE:
	case BPF_JSGT:
	case BPF_JSGE:
	case BPF_JLT:
	case BPF_JLE:
	case BPF_JSLT:
	case BPF_JSLE:
		return true;
	default:
		return false;
	}
}

static bool atomic_ok(int32_t imm)
{
	switch (imm) {
	case BPF_ADD:
	case BPF_OR:
	case BPF_AND:
	case BPF_XOR:
	case BPF_ADD | BPF_FETCH:
	case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH:
	case BPF_XOR | BPF_FETCH:
	case BPF_XCHG:
	case BPF_CMPXCHG:
		return true;
	default:
		return false;
	}
}

static const char *mem_check(const struct bpf_insn *in)
{
	uint8_t mode = in->code & 0xe0, size = in->code & 0x18, cls = CLASS(in->code);

	if (cls == BPF_LDX && (mode == BPF_MEM || (mode == BPF_MEMSX && size != BPF_DW)))
		return NULL;
	if ((cls == BPF_ST || cls == BPF_STX) && mode == BPF_MEM)
		return NULL;
	if (cls == BPF_STX && mode == BPF_ATOMIC && (size == BPF_W || size == BPF_DW))
		return atomic_ok(in->imm) ? NULL : "unsupported atomic operation";
	if (cls == BPF_LD && (mode == BPF_ABS || mode == BPF_IND))
		return "legacy packet access (BPF_ABS/BPF_IND) is not supported";
	return "unknown load/store opcode";
}

const char *rqbpf_insn_check(const struct bpf_insn *insns, size_t cnt, size_t i)
{
	const struct bpf_insn *in = &insns[i];
	static char buf[64];

	if (in->dst_reg > BPF_REG_10 || in->src_reg > BPF_REG_10)
		return "bad register";
	switch (CLASS(in->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		if (in->dst_reg == BPF_REG_10)
			return "write to the frame pointer r10";
		return alu_ok(in, CLASS(in->code) == BPF_ALU64) ? NULL : "unknown ALU opcode";
	case BPF_JMP:
	case BPF_JMP32:
		return jmp_ok(in, CLASS(in->code) == BPF_JMP) ? NULL : "unknown jump opcode";
	case BPF_LD:
		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			return mem_check(in);
		if (i + 1 >= cnt || insns[i + 1].code || insns[i + 1].dst_reg ||
		    insns[i + 1].src_reg || insns[i + 1].off)
			return "malformed ld_imm64";
		if (in->src_reg > BPF_PSEUDO_MAP_VALUE || in->dst_reg == BPF_REG_10) {
			snprintf(buf, sizeof(buf), "ld_imm64 source %u is not supported",
			         in->src_reg);
			return in->dst_reg == BPF_REG_10 ? "write to the frame pointer r10" : buf;
		}
		return NULL;
	case BPF_LDX:
		if (in->dst_reg == BPF_REG_10)
			return "write to the frame pointer r10";
		return mem_check(in);
	default:
		return mem_check(in);
	}
}

bool rqbpf_insn_target(const struct bpf_insn *in, size_t i, int64_t *target)
{
	uint8_t cls = CLASS(in->code), op = OP(in->code);

	if (cls != BPF_JMP && cls != BPF_JMP32)
		return false;
	if (op == BPF_EXIT || (op == BPF_CALL && in->src_reg != BPF_PSEUDO_CALL))
		return false;
	if (op == BPF_CALL || (cls == BPF_JMP32 && op == BPF_JA))
		*target = (int64_t)i + in->imm + 1;
	else
		*target = (int64_t)i + in->off + 1;
	return true;
}

int rqbpf_fault(struct rqbpf_run *r, const char *fmt, ...)
{
	int n = snprintf(r->msg, r->msg_size, "insn %zu: ", r->pc);
	va_list ap;

	if (n >= 0 && (size_t)n < r->msg_size) {
		va_start(ap, fmt);
		vsnprintf(r->msg + n, r->msg_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EFAULT;
}

static bool in_region(const struct rqbpf_region *g, uintptr_t a, size_t size, bool write)
{
	return a - g->base < g->size && size <= g->size - (a - g->base) && (!write || g->writable);
}

void *rqbpf_mem_slow(struct rqbpf_run *r, uint64_t addr, size_t size, bool write)
{
	const struct rqbpf_object *obj = r->prog->obj;
	uintptr_t a = (uintptr_t)addr;
	struct rqbpf_region ctx = {r->ctx, r->ctx_size, true};

	if (in_region(&ctx, a, size, write))
		return (void *)a;
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct rqbpf_map *m = &obj->maps[i];
		struct rqbpf_region g = {(uintptr_t)m->values,
		                         (size_t)m->elem_size * m->desc.max_entries,
		                         !m->desc.read_only};

		if (m->values && in_region(&g, a, size, write))
			return (void *)a;
	}
	for (int i = 0; i < r->ndyn; i++)
		if (in_region(&r->dyn[i], a, size, write))
			return (void *)a;
	return NULL;
}

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
static uint64_t load(const void *p, uint8_t size)
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

static void store(void *p, uint8_t size, uint64_t v)
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

static uint64_t atomic64(uint64_t *p, int32_t op, uint64_t v, uint64_t *r0)
{
	uint64_t expected;

	switch (op & ~BPF_FETCH) {
	case BPF_ADD:
		return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
	case BPF_OR:
		return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
	case BPF_AND:
		return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
	case BPF_XOR:
		return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
	case BPF_XCHG & ~BPF_FETCH:
		return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
	default: /* BPF_CMPXCHG */
		expected = *r0;
		__atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST,
		                            __ATOMIC_SEQ_CST);
		return expected;
	}
}

static uint32_t atomic32(uint32_t *p, int32_t op, uint32_t v, uint64_t *r0)
{
	uint32_t expected;

	switch (op & ~BPF_FETCH) {
	case BPF_ADD:
		return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
	case BPF_OR:
		return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
	case BPF_AND:
		return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
	case BPF_XOR:
		return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
	case BPF_XCHG & ~BPF_FETCH:
		return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
	default: /* BPF_CMPXCHG */
		expected = (uint32_t)*r0;
		__atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST,
		                            __ATOMIC_SEQ_CST);
		return expected;
	}
}

/* BPF atomics are full barriers (the kernel's atomic64_fetch_add and friends). */
static int do_atomic(struct rqbpf_run *r, const struct bpf_insn *in, uint64_t *reg)
{
	bool dw = (in->code & 0x18) == BPF_DW;
	size_t n = dw ? 8 : 4;
	uint64_t addr = reg[in->dst_reg] + (uint64_t)(int64_t)in->off;
	void *p = rqbpf_mem(r, addr, n, true);
	uint64_t old;

	if (!p)
		return bad_access(r, addr, n, true);
	if (addr % n)
		return rqbpf_fault(r, "misaligned atomic at 0x%llx", (unsigned long long)addr);
	if (dw)
		old = atomic64(p, in->imm, reg[in->src_reg], &reg[BPF_REG_0]);
	else
		old = atomic32(p, in->imm, (uint32_t)reg[in->src_reg], &reg[BPF_REG_0]);
	if (in->imm == BPF_CMPXCHG)
		reg[BPF_REG_0] = old;
	else if (in->imm & BPF_FETCH)
		reg[in->src_reg] = old;
	return 0;
}

static uint64_t alu64(uint8_t op, int16_t off, uint64_t a, uint64_t b)
{
	switch (op) {
	case BPF_ADD:
		return a + b;
	case BPF_SUB:
		return a - b;
	case BPF_MUL:
		return a * b;
	case BPF_DIV:
		if (!b)
			return 0;
		if (!off)
			return a / b;
		if ((int64_t)b == -1)
			return -a;
		return (uint64_t)((int64_t)a / (int64_t)b);
	case BPF_MOD:
		if (!b)
			return a;
		if (!off)
			return a % b;
		if ((int64_t)b == -1)
			return 0;
		return (uint64_t)((int64_t)a % (int64_t)b);
	case BPF_OR:
		return a | b;
	case BPF_AND:
		return a & b;
	case BPF_LSH:
		return a << (b & 63);
	case BPF_RSH:
		return a >> (b & 63);
	case BPF_NEG:
		return -a;
	case BPF_XOR:
		return a ^ b;
	case BPF_MOV:
		return off ? sext(b, off) : b;
	default: /* BPF_ARSH */
		return (uint64_t)((int64_t)a >> (b & 63));
	}
}

static uint32_t alu32(uint8_t op, int16_t off, uint32_t a, uint32_t b)
{
	switch (op) {
	case BPF_ADD:
		return a + b;
	case BPF_SUB:
		return a - b;
	case BPF_MUL:
		return a * b;
	case BPF_DIV:
		if (!b)
			return 0;
		if (!off)
			return a / b;
		if ((int32_t)b == -1)
			return -a;
		return (uint32_t)((int32_t)a / (int32_t)b);
	case BPF_MOD:
		if (!b)
			return a;
		if (!off)
			return a % b;
		if ((int32_t)b == -1)
			return 0;
		return (uint32_t)((int32_t)a % (int32_t)b);
	case BPF_OR:
		return a | b;
	case BPF_AND:
		return a & b;
	case BPF_LSH:
		return a << (b & 31);
	case BPF_RSH:
		return a >> (b & 31);
	case BPF_NEG:
		return -a;
	case BPF_XOR:
		return a ^ b;
	case BPF_MOV:
		return off ? (uint32_t)sext(b, off) : b;
	default: /* BPF_ARSH */
		return (uint32_t)((int32_t)a >> (b & 31));
	}
}

static uint64_t endian(const struct bpf_insn *in, uint64_t v)
{
	bool swap = CLASS(in->code) == BPF_ALU64 || SRC_X(in->code); /* bswap or to-BE */

	switch (in->imm) {
	case 16:
		return swap ? __builtin_bswap16((uint16_t)v) : (uint16_t)v;
	case 32:
		return swap ? __builtin_bswap32((uint32_t)v) : (uint32_t)v;
	default:
		return swap ? __builtin_bswap64(v) : v;
	}
}

static bool cond(uint8_t op, uint64_t a, uint64_t b)
{
	switch (op) {
	case BPF_JEQ:
		return a == b;
	case BPF_JGT:
		return a > b;
	case BPF_JGE:
		return a >= b;
	case BPF_JSET:
		return a & b;
	case BPF_JNE:
		return a != b;
	case BPF_JSGT:
		return (int64_t)a > (int64_t)b;
	case BPF_JSGE:
		return (int64_t)a >= (int64_t)b;
	case BPF_JLT:
		return a < b;
	case BPF_JLE:
		return a <= b;
	case BPF_JSLT:
		return (int64_t)a < (int64_t)b;
	default:
		return (int64_t)a <= (int64_t)b; /* BPF_JSLE */
	}
}

static bool cond32(uint8_t op, uint32_t a, uint32_t b)
{
	switch (op) {
	case BPF_JSGT:
		return (int32_t)a > (int32_t)b;
	case BPF_JSGE:
		return (int32_t)a >= (int32_t)b;
	case BPF_JSLT:
		return (int32_t)a < (int32_t)b;
	case BPF_JSLE:
		return (int32_t)a <= (int32_t)b;
	default:
		return cond(op, a, b);
	}
}

struct frame {
	uint64_t saved[4]; /* r6-r9 */
	size_t ret_pc;
};

/* The main loop: runs until the outermost exit or a fault. */
static int interpret(struct rqbpf_run *r, uint64_t *reg, uint64_t *insns_run)
{
	const struct bpf_insn *code = r->prog->lp.insns;
	const uint64_t *imm64 = r->prog->imm64;
	struct frame frames[RQBPF_MAX_FRAMES];
	uint64_t n = 0;
	size_t pc = 0;
	int depth = 0, ret = 0;

	reg[BPF_REG_10] = (uintptr_t)r->stack + sizeof(r->stack);
	for (;; pc++) {
		const struct bpf_insn *in = &code[pc];
		uint8_t c = in->code, op = OP(c);
		uint64_t src, addr;
		void *p;

		n++;
		switch (CLASS(c)) {
		case BPF_ALU64:
			src = SRC_X(c) ? reg[in->src_reg] : (uint64_t)(int64_t)in->imm;
			reg[in->dst_reg] = op == BPF_END
			                       ? endian(in, reg[in->dst_reg])
			                       : alu64(op, in->off, reg[in->dst_reg], src);
			break;
		case BPF_ALU:
			src = SRC_X(c) ? reg[in->src_reg] : (uint64_t)(int64_t)in->imm;
			reg[in->dst_reg] =
			    op == BPF_END
			        ? endian(in, reg[in->dst_reg])
			        : alu32(op, in->off, (uint32_t)reg[in->dst_reg], (uint32_t)src);
			break;
		case BPF_LDX:
			addr = reg[in->src_reg] + (uint64_t)(int64_t)in->off;
			p = rqbpf_mem(r, addr, size_bytes[(c & 0x18) >> 3], false);
			if (!p) {
				r->pc = pc;
				ret = bad_access(r, addr, size_bytes[(c & 0x18) >> 3], false);
				goto out;
			}
			src = load(p, c & 0x18);
			reg[in->dst_reg] = (c & 0xe0) == BPF_MEMSX
			                       ? sext(src, 8 * size_bytes[(c & 0x18) >> 3])
			                       : src;
			break;
		case BPF_ST:
		case BPF_STX:
			if ((c & 0xe0) == BPF_ATOMIC) {
				r->pc = pc;
				ret = do_atomic(r, in, reg);
				if (ret)
					goto out;
				break;
			}
			addr = reg[in->dst_reg] + (uint64_t)(int64_t)in->off;
			p = rqbpf_mem(r, addr, size_bytes[(c & 0x18) >> 3], true);
			if (!p) {
				r->pc = pc;
				ret = bad_access(r, addr, size_bytes[(c & 0x18) >> 3], true);
				goto out;
			}
			store(p, c & 0x18,
			      CLASS(c) == BPF_STX ? reg[in->src_reg] : (uint64_t)(int64_t)in->imm);
			break;
		case BPF_LD: /* ld_imm64, resolved at load */
			reg[in->dst_reg] = imm64[pc];
			pc++;
			break;
		case BPF_JMP32:
			if (op == BPF_JA) {
				pc += (size_t)(int64_t)in->imm;
			} else {
				src = SRC_X(c) ? reg[in->src_reg] : (uint64_t)(int64_t)in->imm;
				if (cond32(op, (uint32_t)reg[in->dst_reg], (uint32_t)src))
					pc += (size_t)(int64_t)in->off;
			}
			if (n > RQBPF_INSN_LIMIT)
				goto limit;
			break;
		default: /* BPF_JMP */
			switch (op) {
			case BPF_JA:
				pc += (size_t)(int64_t)in->off;
				break;
			case BPF_CALL:
				r->pc = pc;
				if (in->src_reg == BPF_PSEUDO_CALL) {
					if (depth + 1 >= RQBPF_MAX_FRAMES) {
						ret = rqbpf_fault(r, "call depth over %d frames",
						                  RQBPF_MAX_FRAMES);
						goto out;
					}
					memcpy(frames[depth].saved, &reg[BPF_REG_6],
					       sizeof(frames[0].saved));
					frames[depth++].ret_pc = pc;
					reg[BPF_REG_10] -= RQBPF_STACK_SIZE;
					pc += (size_t)(int64_t)in->imm;
					break;
				}
				ret = in->src_reg == BPF_PSEUDO_KFUNC_CALL
				          ? rqbpf_call_kfunc(r, in->imm, reg)
				          : rqbpf_call_helper(r, in->imm, reg);
				if (ret)
					goto out;
				break;
			case BPF_EXIT:
				if (depth == 0)
					goto out;
				pc = frames[--depth].ret_pc;
				memcpy(&reg[BPF_REG_6], frames[depth].saved,
				       sizeof(frames[0].saved));
				reg[BPF_REG_10] += RQBPF_STACK_SIZE;
				break;
			default:
				src = SRC_X(c) ? reg[in->src_reg] : (uint64_t)(int64_t)in->imm;
				if (cond(op, reg[in->dst_reg], src))
					pc += (size_t)(int64_t)in->off;
			}
			if (n > RQBPF_INSN_LIMIT)
				goto limit;
		}
	}
limit:
	r->pc = pc;
	rqbpf_fault(r, "more than %llu instructions", (unsigned long long)RQBPF_INSN_LIMIT);
	ret = -E2BIG;
out:
	*insns_run = n;
	return ret;
}

int rqbpf_prog_run(const struct rqbpf_prog *prog, void *ctx, size_t ctx_size,
                   struct rqbpf_run_result *res)
{
	struct rqbpf_run r;
	uint64_t reg[11] = {0};
	int ret, rel;

	if (!prog || !res || (!ctx && ctx_size))
		return -EINVAL;
	res->msg[0] = 0;
	res->insns = 0;
	res->retval = 0;
	if (!prog->loaded)
		return -EPERM;
	r.prog = prog;
	r.ctx = (uintptr_t)ctx;
	r.ctx_size = ctx_size;
	r.pc = 0;
	r.msg = res->msg;
	r.msg_size = sizeof(res->msg);
	r.nheld = 0;
	r.ndyn = r.dyn_next = 0;
	r.rcu = false;
	reg[BPF_REG_1] = (uintptr_t)ctx;
	ret = interpret(&r, reg, &res->insns);
	rel = rqbpf_release_all(&r);
	if (!ret) {
		res->retval = reg[BPF_REG_0];
		ret = rel;
	}
	return ret;
}
