/* SPDX-License-Identifier: MIT */
/*
 * Interpreter conformance: every instruction class, hand-assembled, against
 * values computed here in C (a second, independent statement of the eBPF
 * semantics), then compiled programs (clang 14 and 19, cpu v3 and v4)
 * against the same functions compiled for the host (progs/conform_fns.h).
 */
#include "bpftest.h"
#include "progs/conform_fns.h"
#include "progs/conform_v4_fns.h"

#define NVALS (sizeof(vals) / sizeof(vals[0]))

static const uint64_t vals[] = {
    0,
    1,
    2,
    3,
    7,
    0x7f,
    0x80,
    0xff,
    0x8000,
    0xffff,
    0x12345678,
    0x7fffffff,
    0x80000000,
    0xffffffff,
    0x100000000ull,
    0xdeadbeefcafef00dull,
    0x7fffffffffffffffull,
    0x8000000000000000ull,
    0xffffffffffffffffull,
    (uint64_t)-2,
    (uint64_t)-7,
    31,
    32,
    63,
    64,
};

/* A program computing r0 = a OP b (a, b at ctx + 0 and + 8). */
static struct rqbpf_object *alu_prog(uint8_t cls, uint8_t op, uint8_t src, int16_t off, int32_t imm)
{
	const struct bpf_insn insns[] = {
	    BT_LDX(BPF_DW, BPF_REG_2, BPF_REG_1, 8),
	    BT_LDX(BPF_DW, BPF_REG_0, BPF_REG_1, 0),
	    BT_I(cls | op | src, BPF_REG_0, src == BPF_X ? BPF_REG_2 : 0, off, imm),
	    BT_EXIT,
	};
	struct rqbpf_object *obj;
	struct rqbpf_error err;

	if (bt_open_insns(insns, 4, &obj, &err))
		tu_fail(__FILE__, __LINE__, "op 0x%x off %d: %s", cls | op | src, off, err.msg);
	if (rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err))
		tu_fail(__FILE__, __LINE__, "load: %s", err.msg);
	return obj;
}

static uint64_t run2(struct rqbpf_object *obj, uint64_t a, uint64_t b)
{
	uint64_t ctx[2] = {a, b};
	struct rqbpf_run_result res;
	int ret = rqbpf_prog_run(rqbpf_object_prog(obj, 0), ctx, sizeof(ctx), &res);

	if (ret)
		tu_fail(__FILE__, __LINE__, "run: %d %s", ret, res.msg);
	return res.retval;
}

static uint64_t sx(uint64_t v, int bits)
{
	if (bits == 64)
		return v;
	v &= (1ull << bits) - 1;
	return v & (1ull << (bits - 1)) ? v | ~((1ull << bits) - 1) : v;
}

static uint64_t ref_div(uint64_t a, uint64_t b, int sgn, int mod, int bits)
{
	uint64_t m = bits == 64 ? ~0ull : 0xffffffffull;
	int64_t sa = (int64_t)sx(a & m, bits), sb = (int64_t)sx(b & m, bits);

	a &= m;
	b &= m;
	if (b == 0)
		return mod ? a : 0;
	if (!sgn)
		return mod ? a % b : a / b;
	if (sb == -1)
		return mod ? 0 : (0 - (uint64_t)sa) & m;
	return (uint64_t)(mod ? sa % sb : sa / sb) & m;
}

/* The reference: eBPF ALU semantics, 64 or 32 bits. */
static uint64_t ref_alu(uint8_t op, int bits, int16_t off, uint64_t a, uint64_t b)
{
	uint64_t m = bits == 64 ? ~0ull : 0xffffffffull, r;
	unsigned sh = (unsigned)(b & (uint64_t)(bits - 1));

	switch (op) {
	case BPF_ADD:
		r = a + b;
		break;
	case BPF_SUB:
		r = a - b;
		break;
	case BPF_MUL:
		r = (a & m) * (b & m);
		break;
	case BPF_DIV:
		return ref_div(a, b, off, 0, bits);
	case BPF_MOD:
		return ref_div(a, b, off, 1, bits);
	case BPF_OR:
		r = a | b;
		break;
	case BPF_AND:
		r = a & b;
		break;
	case BPF_LSH:
		r = (a & m) << sh;
		break;
	case BPF_RSH:
		r = (a & m) >> sh;
		break;
	case BPF_NEG:
		r = 0 - a;
		break;
	case BPF_XOR:
		r = a ^ b;
		break;
	case BPF_MOV:
		r = off ? sx(b, off) : b;
		break;
	default: /* ARSH */
		r = (uint64_t)((int64_t)sx(a & m, bits) >> sh);
	}
	return r & m;
}

static const struct {
	uint8_t op;
	int16_t off;
} alu_ops[] = {
    {BPF_ADD, 0}, {BPF_SUB, 0}, {BPF_MUL, 0}, {BPF_DIV, 0},  {BPF_DIV, 1},  {BPF_OR, 0},
    {BPF_AND, 0}, {BPF_LSH, 0}, {BPF_RSH, 0}, {BPF_NEG, 0},  {BPF_MOD, 0},  {BPF_MOD, 1},
    {BPF_XOR, 0}, {BPF_MOV, 0}, {BPF_MOV, 8}, {BPF_MOV, 16}, {BPF_MOV, 32}, {BPF_ARSH, 0},
};

static void check_alu(uint8_t cls, uint8_t op, int16_t off)
{
	int bits = cls == BPF_ALU64 ? 64 : 32;
	struct rqbpf_object *obj;

	if ((op == BPF_MOV && off == 32 && bits == 32))
		return;
	if (op != BPF_NEG) { /* register source */
		obj = alu_prog(cls, op, BPF_X, off, 0);
		for (size_t i = 0; i < NVALS; i++)
			for (size_t j = 0; j < NVALS; j++) {
				uint64_t want = ref_alu(op, bits, off, vals[i], vals[j]);
				uint64_t got = run2(obj, vals[i], vals[j]);

				if (got != want)
					tu_fail(__FILE__, __LINE__,
					        "alu%d op 0x%x off %d X: %llx, %llx: got %llx want "
					        "%llx",
					        bits, op, off, (unsigned long long)vals[i],
					        (unsigned long long)vals[j],
					        (unsigned long long)got, (unsigned long long)want);
			}
		rqbpf_object_close(obj);
	}
	if (op == BPF_MOV && off)
		return;                      /* movsx has no immediate form */
	for (size_t j = 0; j < NVALS; j++) { /* immediate, sign-extended to 64 bits */
		int32_t imm = (int32_t)(uint32_t)vals[j];
		uint64_t b = (uint64_t)(int64_t)imm;

		obj = alu_prog(cls, op, BPF_K, off, imm);
		for (size_t i = 0; i < NVALS; i++) {
			uint64_t want = ref_alu(op, bits, off, vals[i], b);
			uint64_t got = run2(obj, vals[i], 0);

			if (got != want)
				tu_fail(__FILE__, __LINE__,
				        "alu%d op 0x%x off %d K %d: %llx: got %llx want %llx", bits,
				        op, off, imm, (unsigned long long)vals[i],
				        (unsigned long long)got, (unsigned long long)want);
		}
		rqbpf_object_close(obj);
	}
}

static void test_alu(void)
{
	for (size_t k = 0; k < sizeof(alu_ops) / sizeof(alu_ops[0]); k++) {
		check_alu(BPF_ALU64, alu_ops[k].op, alu_ops[k].off);
		check_alu(BPF_ALU, alu_ops[k].op, alu_ops[k].off);
	}
}

static uint64_t ref_end(uint8_t cls, uint8_t src, int32_t imm, uint64_t v)
{
	int swap = cls == BPF_ALU64 || src == BPF_TO_BE;

	switch (imm) {
	case 16:
		return swap ? __builtin_bswap16((uint16_t)v) : (uint16_t)v;
	case 32:
		return swap ? __builtin_bswap32((uint32_t)v) : (uint32_t)v;
	default:
		return swap ? __builtin_bswap64(v) : v;
	}
}

static void test_endian(void)
{
	static const struct {
		uint8_t cls, src;
	} kinds[] = {{BPF_ALU, BPF_TO_LE}, {BPF_ALU, BPF_TO_BE}, {BPF_ALU64, BPF_TO_LE}};

	for (size_t k = 0; k < 3; k++)
		for (int32_t imm = 16; imm <= 64; imm *= 2) {
			struct rqbpf_object *obj =
			    alu_prog(kinds[k].cls, BPF_END, kinds[k].src, 0, imm);

			for (size_t i = 0; i < NVALS; i++)
				CHECK_EQ(run2(obj, vals[i], 0),
				         ref_end(kinds[k].cls, kinds[k].src, imm, vals[i]));
			CHECK_EQ(run2(obj, 0x0102030405060708ull, 0),
			         ref_end(kinds[k].cls, kinds[k].src, imm, 0x0102030405060708ull));
			rqbpf_object_close(obj);
		}
}

static int ref_cond(uint8_t op, int bits, uint64_t a, uint64_t b)
{
	uint64_t m = bits == 64 ? ~0ull : 0xffffffffull;
	int64_t sa = (int64_t)sx(a & m, bits), sb = (int64_t)sx(b & m, bits);

	a &= m;
	b &= m;
	switch (op) {
	case BPF_JEQ:
		return a == b;
	case BPF_JGT:
		return a > b;
	case BPF_JGE:
		return a >= b;
	case BPF_JSET:
		return (a & b) != 0;
	case BPF_JNE:
		return a != b;
	case BPF_JSGT:
		return sa > sb;
	case BPF_JSGE:
		return sa >= sb;
	case BPF_JLT:
		return a < b;
	case BPF_JLE:
		return a <= b;
	case BPF_JSLT:
		return sa < sb;
	default:
		return sa <= sb;
	}
}

static struct rqbpf_object *jmp_prog(uint8_t cls, uint8_t op, uint8_t src, int32_t imm)
{
	const struct bpf_insn insns[] = {
	    BT_LDX(BPF_DW, BPF_REG_2, BPF_REG_1, 8),
	    BT_LDX(BPF_DW, BPF_REG_3, BPF_REG_1, 0),
	    BT_MOV64_IMM(BPF_REG_0, 1),
	    BT_I(cls | op | src, BPF_REG_3, src == BPF_X ? BPF_REG_2 : 0, 1, imm),
	    BT_MOV64_IMM(BPF_REG_0, 0),
	    BT_EXIT,
	};
	struct rqbpf_object *obj;
	struct rqbpf_error err;

	if (bt_open_insns(insns, 6, &obj, &err) ||
	    rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err))
		tu_fail(__FILE__, __LINE__, "jump 0x%x: %s", cls | op | src, err.msg);
	return obj;
}

static void test_jmp(void)
{
	static const uint8_t ops[] = {BPF_JEQ,  BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
	                              BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE};

	for (size_t k = 0; k < sizeof(ops); k++)
		for (int c = 0; c < 2; c++) {
			uint8_t cls = c ? BPF_JMP32 : BPF_JMP;
			int bits = c ? 32 : 64;
			struct rqbpf_object *obj = jmp_prog(cls, ops[k], BPF_X, 0);

			for (size_t i = 0; i < NVALS; i++)
				for (size_t j = 0; j < NVALS; j++)
					CHECK_EQ(run2(obj, vals[i], vals[j]),
					         ref_cond(ops[k], bits, vals[i], vals[j]));
			rqbpf_object_close(obj);
			for (size_t j = 0; j < NVALS; j += 3) {
				int32_t imm = (int32_t)(uint32_t)vals[j];

				obj = jmp_prog(cls, ops[k], BPF_K, imm);
				for (size_t i = 0; i < NVALS; i++)
					CHECK_EQ(run2(obj, vals[i], 0),
					         ref_cond(ops[k], bits, vals[i],
					                  (uint64_t)(int64_t)imm));
				rqbpf_object_close(obj);
			}
		}
}

static uint64_t run_insns(const struct bpf_insn *insns, size_t cnt, uint64_t a, uint64_t b)
{
	struct rqbpf_object *obj;
	struct rqbpf_error err;
	uint64_t r;

	if (bt_open_insns(insns, cnt, &obj, &err) ||
	    rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err))
		tu_fail(__FILE__, __LINE__, "%s", err.msg);
	r = run2(obj, a, b);
	rqbpf_object_close(obj);
	return r;
}

/* ja forward and backward (a loop), gotol, and a 64-bit immediate. */
static void test_control(void)
{
	const struct bpf_insn loop[] = {
	    BT_MOV64_IMM(BPF_REG_0, 0),
	    BT_MOV64_IMM(BPF_REG_1, 10),
	    BT_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
	    BT_ALU64_IMM(BPF_SUB, BPF_REG_1, 1),
	    BT_I(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, -3, 0),
	    BT_I(BPF_JMP | BPF_JA, 0, 0, 1, 0),
	    BT_MOV64_IMM(BPF_REG_0, -1),
	    BT_EXIT,
	};
	const struct bpf_insn gotol[] = {
	    BT_MOV64_IMM(BPF_REG_0, 1),           BT_I(BPF_JMP32 | BPF_JA, 0, 0, 0, 2),
	    BT_ALU64_IMM(BPF_ADD, BPF_REG_0, 2),  BT_EXIT,
	    BT_ALU64_IMM(BPF_ADD, BPF_REG_0, 40), BT_I(BPF_JMP32 | BPF_JA, 0, 0, 0, -4),
	};
	const struct bpf_insn imm64[] = {
	    BT_LD_IMM64(BPF_REG_0, 0xfedcba9876543210ull),
	    BT_EXIT,
	};

	CHECK_EQ(run_insns(loop, 8, 0, 0), 55);
	CHECK_EQ(run_insns(gotol, 6, 0, 0), 43);
	CHECK(run_insns(imm64, 3, 0, 0) == 0xfedcba9876543210ull);
}

/* Stores of every size and kind, then loads of every size, plain and
 * sign-extending, all on the stack. */
static void test_mem(void)
{
	static const uint8_t sizes[] = {BPF_B, BPF_H, BPF_W, BPF_DW};
	static const int nbytes[] = {1, 2, 4, 8};

	for (size_t s = 0; s < 4; s++)
		for (size_t i = 0; i < NVALS; i++) {
			uint64_t v = vals[i],
			         mask = nbytes[s] == 8 ? ~0ull : (1ull << 8 * nbytes[s]) - 1;
			const struct bpf_insn stx[] = {
			    BT_LDX(BPF_DW, BPF_REG_2, BPF_REG_1, 0),
			    BT_ST(BPF_DW, BPF_REG_10, -16, -1),
			    BT_STX(sizes[s], BPF_REG_10, BPF_REG_2, -16),
			    BT_LDX(BPF_DW, BPF_REG_0, BPF_REG_10, -16),
			    BT_EXIT,
			};
			const struct bpf_insn st[] = {
			    BT_ST(BPF_DW, BPF_REG_10, -8, 0),
			    BT_ST(sizes[s], BPF_REG_10, -8, (int32_t)(uint32_t)v),
			    BT_LDX(BPF_DW, BPF_REG_0, BPF_REG_10, -8),
			    BT_EXIT,
			};
			const struct bpf_insn ld[] = {
			    BT_LDX(BPF_DW, BPF_REG_2, BPF_REG_1, 0),
			    BT_STX(BPF_DW, BPF_REG_10, BPF_REG_2, -8),
			    BT_LDX(sizes[s], BPF_REG_0, BPF_REG_10, -8),
			    BT_EXIT,
			};
			const struct bpf_insn ldsx[] = {
			    BT_LDX(BPF_DW, BPF_REG_2, BPF_REG_1, 0),
			    BT_STX(BPF_DW, BPF_REG_10, BPF_REG_2, -8),
			    BT_I(BPF_LDX | BPF_MEMSX | sizes[s], BPF_REG_0, BPF_REG_10, -8, 0),
			    BT_EXIT,
			};
			uint64_t imm = (uint64_t)(int64_t)(int32_t)(uint32_t)v;

			CHECK(run_insns(stx, 5, v, 0) == ((~0ull & ~mask) | (v & mask)));
			CHECK(run_insns(st, 4, 0, 0) == (imm & mask));
			CHECK(run_insns(ld, 4, v, 0) == (v & mask));
			if (sizes[s] != BPF_DW)
				CHECK(run_insns(ldsx, 4, v, 0) == sx(v, 8 * nbytes[s]));
		}
}

static uint64_t ref_atomic(int32_t op, uint64_t mem, uint64_t v)
{
	switch (op & ~BPF_FETCH) {
	case BPF_ADD:
		return mem + v;
	case BPF_OR:
		return mem | v;
	case BPF_AND:
		return mem & v;
	case BPF_XOR:
		return mem ^ v;
	default:
		return v; /* xchg */
	}
}

/* mem = a; r3 = b; r0 = cmp; atomic op; returns mem, fetched r3 or r0 per @p what. */
static uint64_t run_atomic(uint8_t size, int32_t op, uint64_t a, uint64_t b, int what)
{
	const struct bpf_insn insns[] = {
	    BT_LDX(BPF_DW, BPF_REG_2, BPF_REG_1, 0),
	    BT_LDX(BPF_DW, BPF_REG_3, BPF_REG_1, 8),
	    BT_STX(BPF_DW, BPF_REG_10, BPF_REG_2, -8),
	    BT_ALU64_REG(BPF_MOV, BPF_REG_0, what == 3 ? BPF_REG_3 : BPF_REG_2),
	    BT_I(BPF_STX | BPF_ATOMIC | size, BPF_REG_10, BPF_REG_3, -8, op),
	    what == 0 ? BT_LDX(size, BPF_REG_0, BPF_REG_10, -8)
	              : BT_ALU64_REG(BPF_MOV, BPF_REG_0, what == 1 ? BPF_REG_3 : BPF_REG_0),
	    BT_EXIT,
	};

	return run_insns(insns, 7, a, b);
}

static void test_atomic(void)
{
	static const int32_t ops[] = {BPF_ADD, BPF_OR, BPF_AND, BPF_XOR};

	for (int w = 0; w < 2; w++) {
		uint8_t size = w ? BPF_DW : BPF_W;
		uint64_t m = w ? ~0ull : 0xffffffffull;

		for (size_t i = 0; i < NVALS; i += 2)
			for (size_t j = 0; j < NVALS; j += 3) {
				uint64_t a = vals[i], b = vals[j];

				for (size_t k = 0; k < 4; k++) {
					CHECK(run_atomic(size, ops[k], a, b, 0) ==
					      (ref_atomic(ops[k], a, b) & m));
					CHECK(run_atomic(size, ops[k] | BPF_FETCH, a, b, 0) ==
					      (ref_atomic(ops[k], a, b) & m));
					CHECK(run_atomic(size, ops[k] | BPF_FETCH, a, b, 1) ==
					      (a & m));
				}
				CHECK(run_atomic(size, BPF_XCHG, a, b, 0) == (b & m));
				CHECK(run_atomic(size, BPF_XCHG, a, b, 1) == (a & m));
				/* cmpxchg: r0 == mem swaps in b; r0 != mem leaves mem. */
				CHECK(run_atomic(size, BPF_CMPXCHG, a, b, 0) == (b & m));
				CHECK(run_atomic(size, BPF_CMPXCHG, a, b, 2) == (a & m));
				if ((a & m) != (b & m)) {
					CHECK(run_atomic(size, BPF_CMPXCHG, a, b, 3 /* r0 = b */) ==
					      (a & m));
				}
			}
	}
}

/* bpf-to-bpf calls: arguments, return value, callee-saved r6-r9, a stack per
 * frame; recursion past the frame limit faults. */
static void test_calls(void)
{
	const struct bpf_insn main_insns[] = {
	    BT_MOV64_IMM(BPF_REG_6, 11),
	    BT_MOV64_IMM(BPF_REG_1, 5),
	    BT_ST(BPF_DW, BPF_REG_10, -8, 99),
	    BT_I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 4), /* to sub */
	    BT_LDX(BPF_DW, BPF_REG_1, BPF_REG_10, -8),
	    BT_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
	    BT_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_6),
	    BT_EXIT,
	};
	const struct bpf_insn sub_insns[] = {
	    BT_MOV64_IMM(BPF_REG_6, 1000),
	    BT_ST(BPF_DW, BPF_REG_10, -8, 7),
	    BT_ALU64_REG(BPF_MOV, BPF_REG_0, BPF_REG_1),
	    BT_ALU64_IMM(BPF_MUL, BPF_REG_0, 3),
	    BT_EXIT,
	};
	const struct bpf_insn recurse[] = {
	    BT_I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, -1),
	    BT_EXIT,
	};
	struct bt_func f[] = {{"prog", main_insns, 8}, {"sub", sub_insns, 5}};
	static uint8_t img[8192];
	size_t n = bt_build_elf(img, sizeof(img), "tc", f, 2);
	struct rqbpf_object *obj;
	struct rqbpf_error err;
	struct rqbpf_run_result res;
	uint64_t ctx[2] = {0, 0};

	if (rqbpf_object_open_mem(img, n, "calls", &obj, &err) ||
	    rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err))
		tu_fail(__FILE__, __LINE__, "%s", err.msg);
	CHECK_EQ(rqbpf_prog_insn_count(bt_prog(obj, "prog")), 8 + 5);
	CHECK_EQ(run2(obj, 0, 0), 15 + 99 + 11);
	rqbpf_object_close(obj);

	if (bt_open_insns(recurse, 2, &obj, &err) ||
	    rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err))
		tu_fail(__FILE__, __LINE__, "%s", err.msg);
	CHECK_EQ(rqbpf_prog_run(rqbpf_object_prog(obj, 0), ctx, sizeof(ctx), &res), -EFAULT);
	CHECK(strstr(res.msg, "call depth") != NULL);
	rqbpf_object_close(obj);
}

/* Compiled programs against the same C functions on the host. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

typedef uint32_t (*ref_fn)(uint64_t a, uint64_t b, uint64_t c);
static uint32_t r_arith(uint64_t a, uint64_t b, uint64_t c)
{
	return conform_fold(conform_arith(a, b, c));
}
static uint32_t r_branches(uint64_t a, uint64_t b, uint64_t c)
{
	return conform_fold(conform_branches(a, b, c));
}
static uint32_t r_loop(uint64_t a, uint64_t b, uint64_t c)
{
	(void)b;
	return conform_fold(conform_loop(a, c));
}
static uint32_t r_bytes(uint64_t a, uint64_t b, uint64_t c)
{
	(void)c;
	return conform_fold(conform_bytes(a, b));
}
static uint32_t r_calls(uint64_t a, uint64_t b, uint64_t c)
{
	return conform_fold(conform_calls(a, b, c));
}
static uint32_t r_signed(uint64_t a, uint64_t b, uint64_t c)
{
	return conform_fold(conform_signed(a, b, c));
}

static void check_compiled(struct rqbpf_object *obj, const char *name, ref_fn ref, const char *cc)
{
	uint64_t seed = 0x1234567;

	for (int k = 0; k < 600; k++) {
		uint64_t a = k < (int)NVALS ? vals[k] : next_rand(&seed);
		uint64_t b = k < (int)NVALS ? vals[((size_t)k * 7) % NVALS] : next_rand(&seed);
		uint32_t c = k < (int)NVALS ? (uint32_t)vals[((size_t)k * 3) % NVALS]
		                            : (uint32_t)next_rand(&seed);
		uint32_t cb[5] = {(uint32_t)(a >> 32), (uint32_t)a, (uint32_t)(b >> 32),
		                  (uint32_t)b, c};
		uint32_t got = (uint32_t)bt_run_cb(obj, name, cb), want = ref(a, b, c);

		if (got != want)
			tu_fail(__FILE__, __LINE__, "%s (%s): a %llx b %llx c %x: got %x want %x",
			        name, cc, (unsigned long long)a, (unsigned long long)b, c, got,
			        want);
	}
}

static void test_compiled(void)
{
	int objects = 0;

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("conform", *cc, 0);

		if (obj) {
			objects++;
			check_compiled(obj, "arith", r_arith, *cc);
			check_compiled(obj, "branches", r_branches, *cc);
			check_compiled(obj, "loop", r_loop, *cc);
			check_compiled(obj, "bytes", r_bytes, *cc);
			check_compiled(obj, "calls", r_calls, *cc);
			rqbpf_object_close(obj);
		}
		obj = bt_load("conform_v4", *cc, 0);
		if (obj) {
			objects++;
			check_compiled(obj, "signed_ops", r_signed, *cc);
			check_compiled(obj, "bytes_v4", r_bytes, *cc);
			check_compiled(obj, "arith_v4", r_arith, *cc);
			rqbpf_object_close(obj);
		} else {
			printf("# conform_v4 (%s): not built (needs clang-19)\n", *cc);
		}
	}
	CHECK_GT(objects, 0);
}

/* The atomics program against the same operations done here on plain memory. */
static uint32_t ref_atomics(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t v64 = a, r = 0, old;
	uint32_t v32 = (uint32_t)b, o32;

	r += v64, v64 += 3;
	r ^= v64, v64 |= 0x100;
	r += v64, v64 &= ~0xfull;
	r ^= v64, v64 ^= c;
	r += v64, v64 = 77;
	old = v64, v64 = old == 1 ? 99 : v64, r += old;
	old = v64, v64 = r, r += old;
	r += v32, v32 += 7;
	r ^= v32, v32 |= 0x30;
	r += v32, v32 &= 0xff00ff;
	r ^= v32, v32 ^= 5;
	r += v32, v32 = 8;
	o32 = v32, v32 = (uint32_t)r, r += o32;
	v64 += 1;
	return conform_fold(r + v64 + v32);
}

static void test_compiled_atomics(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("conform", *cc, 0);

		if (obj) {
			check_compiled(obj, "atomics", ref_atomics, *cc);
			rqbpf_object_close(obj);
		}
	}
}

/* loops.bpf.c: iterators, may_goto, callbacks; the results its comments
 * give (bpf_kernel_ref compares them with the kernel's, as root). */
static void test_loops(void)
{
	static const struct {
		const char *prog;
		int64_t want;
	} cases[] = {
	    {"iter_sum", 45},        {"iter_repeat", 5},          {"iter_ranges", -2979},
	    {"iter_errors", -22070}, {"iter_nested", 9},          {"iter_under_lock", 2},
	    {"mg_bounded", 10},      {"mg_count", 8388608},       {"mg_two_calls", 16777216},
	    {"loop_sum", 55},        {"loop_results", 397793},    {"loop_iter_in_cb", 30},
	    {"loop_nested", 6},      {"foreach_array", 66043003}, {"foreach_hash", 110478},
	    {"foreach_lock", 4},     {"throw_cookie", 64},        {"throw_in_subprog", 9},
	};
	int objects = 0;

	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("loops", *cc, 0);

		if (!obj)
			continue;
		objects++;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			int64_t got = bt_run(obj, cases[i].prog);

			if (got != cases[i].want)
				tu_fail(__FILE__, __LINE__, "%s (%s): %lld, want %lld",
				        cases[i].prog, *cc, (long long)got,
				        (long long)cases[i].want);
		}
		rqbpf_object_close(obj);
	}
	CHECK_GT(objects, 0);
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_conform_alu", test_alu, 120, 0),
    TU_TEST("bpf_conform_endian", test_endian, 120, 0),
    TU_TEST("bpf_conform_jmp", test_jmp, 120, 0),
    TU_TEST("bpf_conform_control", test_control, 120, 0),
    TU_TEST("bpf_conform_mem", test_mem, 120, 0),
    TU_TEST("bpf_conform_atomic", test_atomic, 120, 0),
    TU_TEST("bpf_conform_calls", test_calls, 120, 0),
    TU_TEST("bpf_conform_compiled", test_compiled, 120, 0),
    TU_TEST("bpf_conform_compiled_atomics", test_compiled_atomics, 120, 0),
    TU_TEST("bpf_conform_loops", test_loops, 120, 0),
};

TU_MAIN(tests)
