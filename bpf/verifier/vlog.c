/* SPDX-License-Identifier: MIT */
/*
 * vlog.c: the verdict message and the kernel-style log: one line per
 * processed instruction, its disassembly and the registers it leaves.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vstate.h"

/* The source line instruction @insn belongs to (the last line info at or
 * before it), or NULL. */
static const struct rqbpf_line *line_of(const struct venv *env, int insn)
{
	const struct rqbpf_line *v = env->prog->lines;
	size_t lo = 0, hi = env->prog->line_cnt;

	while (lo < hi) { /* the first line past insn */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].insn <= (uint32_t)insn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &v[lo - 1] : NULL;
}

/* "; <source line> @ file.c:LINE", as the kernel's verbose_linfo(): the
 * text without its leading blanks, the file without its directories. */
static void format_line(const struct rqbpf_line *l, char *out, size_t size)
{
	const char *src = l->src, *file = strrchr(l->file, '/');

	while (*src == ' ' || *src == '\t')
		src++;
	snprintf(out, size, "; %s @ %s:%u", src, file ? file + 1 : l->file, l->line);
}

void verr(struct venv *env, int insn, const char *fmt, ...)
{
	va_list ap;

	if (env->failed)
		return;
	env->failed = true;
	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
	vsnprintf(env->out->msg, sizeof(env->out->msg), fmt, ap);
	va_end(ap);
	env->out->insn = insn < 0 ? 0 : (uint32_t)insn;
	if (line_of(env, (int)env->out->insn))
		format_line(line_of(env, (int)env->out->insn), env->out->line,
		            sizeof(env->out->line));
	if (env->log)
		fprintf(env->log, "%s\n", env->out->msg);
}

void vlogf(struct venv *env, const char *fmt, ...)
{
	va_list ap;

	if (!env->log)
		return;
	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start is right above */
	vfprintf(env->log, fmt, ap);
	va_end(ap);
}

const char *vtype_name(uint8_t type)
{
	static const char *const names[] = {
	    [T_NOT_INIT] = "?",
	    [T_SCALAR] = "scalar",
	    [T_CTX] = "ctx",
	    [T_STACK] = "fp",
	    [T_MAP_PTR] = "map_ptr",
	    [T_MAP_VALUE] = "map_value",
	    [T_MAP_VALUE_OR_NULL] = "map_value_or_null",
	    [T_RINGBUF_MEM] = "ringbuf_mem",
	    [T_RINGBUF_MEM_OR_NULL] = "ringbuf_mem_or_null",
	    [T_PACKET] = "pkt",
	    [T_PACKET_META] = "pkt_meta",
	    [T_PACKET_END] = "pkt_end",
	    [T_MAP_PTR_OR_NULL] = "map_ptr_or_null",
	    [T_MEM_RDONLY] = "rdonly_mem",
	    [T_FUNC_PTR] = "func",
	    [T_MAP_KEY] = "map_key",
	};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

static void print_range(FILE *f, const struct vrange *r)
{
	const char *sep = "";

	if (r->smin != INT64_MIN) {
		fprintf(f, "%ssmin=%" PRId64, sep, r->smin);
		sep = ",";
	}
	if (r->smax != INT64_MAX) {
		fprintf(f, "%ssmax=%" PRId64, sep, r->smax);
		sep = ",";
	}
	if (r->umin) {
		fprintf(f, "%sumin=%" PRIu64, sep, r->umin);
		sep = ",";
	}
	if (r->umax != UINT64_MAX) {
		fprintf(f, "%sumax=%" PRIu64, sep, r->umax);
		sep = ",";
	}
	if (r->s32min != INT32_MIN && r->s32min != r->smin) {
		fprintf(f, "%ssmin32=%d", sep, r->s32min);
		sep = ",";
	}
	if (r->s32max != INT32_MAX && r->s32max != r->smax)
		fprintf(f, "%ssmax32=%d", sep, r->s32max);
}

void vlog_reg(FILE *f, const struct venv *env, const struct vreg *r)
{
	const struct rqbpf_map_desc *m = NULL;

	if (r->type == T_MAP_PTR || r->type == T_MAP_VALUE || r->type == T_MAP_VALUE_OR_NULL ||
	    r->type == T_MAP_PTR_OR_NULL)
		m = &env->prog->maps[r->map];
	switch (r->type) {
	case T_SCALAR:
		if (rng_is_const(&r->r)) {
			fprintf(f, "%" PRId64, r->r.smin);
			return;
		}
		fprintf(f, "scalar(");
		print_range(f, &r->r);
		fprintf(f, ")");
		return;
	case T_STACK:
		fprintf(f, "fp%d", r->off);
		if (!rng_is_const(&r->r)) {
			fprintf(f, "(");
			print_range(f, &r->r);
			fprintf(f, ")");
		}
		return;
	case T_CTX:
		fprintf(f, "ctx(");
		if (r->off)
			fprintf(f, "off=%d", r->off);
		fprintf(f, ")");
		return;
	case T_PACKET:
	case T_PACKET_META:
		fprintf(f, "%s(", vtype_name(r->type));
		if (r->id)
			fprintf(f, "id=%u,", r->id);
		if (r->off)
			fprintf(f, "off=%d,", r->off);
		fprintf(f, "r=%u", r->mem_size);
		if (!rng_is_const(&r->r)) {
			fprintf(f, ",");
			print_range(f, &r->r);
		}
		fprintf(f, ")");
		return;
	case T_RINGBUF_MEM:
	case T_RINGBUF_MEM_OR_NULL:
		fprintf(f, "%s(ref_obj_id=%u,sz=%u", vtype_name(r->type), r->id, r->mem_size);
		if (r->off)
			fprintf(f, ",off=%d", r->off);
		fprintf(f, ")");
		return;
	default:
		break;
	}
	if (!m) {
		fprintf(f, "%s", vtype_name(r->type));
		return;
	}
	fprintf(f, "%s(", vtype_name(r->type));
	if (r->id)
		fprintf(f, "id=%u,", r->id);
	fprintf(f, "map=%s,ks=%u,vs=%u", m->name ? m->name : "?", m->key_size, m->value_size);
	if (r->off)
		fprintf(f, ",off=%d", r->off);
	if (!rng_is_const(&r->r)) {
		fprintf(f, ",");
		print_range(f, &r->r);
	}
	fprintf(f, ")");
}

static const char *const alu_ops[16] = {"+=",  "-=", "*=", "/=", "|=",   "&=",     "<<=", ">>=",
                                        "neg", "%=", "^=", "=",  "s>>=", "endian", "?",   "?"};
static const char *const jmp_ops[16] = {"goto", "==",   ">", ">=", "&",  "!=",  "s>", "s>=",
                                        "call", "exit", "<", "<=", "s<", "s<=", "?",  "?"};
static const char *const sizes[4] = {"u32", "u16", "u8", "u64"};

/* The kernel's names for the helpers and kfuncs the table of calls has. */
static const char *call_name(const struct bpf_insn *in)
{
	bool kfunc = in->src_reg == BPF_PSEUDO_KFUNC_CALL;
	const struct rqbpf_call *c =
	    rqbpf_call_find(kfunc ? RQBPF_CALL_KFUNC : RQBPF_CALL_HELPER, in->imm, NULL);

	if (c)
		return c->name;
	return kfunc ? "kfunc" : "unknown";
}

static void disasm(FILE *f, const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	char r = cls == BPF_ALU || cls == BPF_JMP32 ? 'w' : 'r';

	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (op == BPF_NEG)
			fprintf(f, "%c%d = -%c%d", r, in->dst_reg, r, in->dst_reg);
		else if (op == BPF_END)
			fprintf(f, "r%d = %s%d r%d", in->dst_reg,
			        cls == BPF_ALU64    ? "bswap"
			        : BPF_SRC(in->code) ? "be"
			                            : "le",
			        in->imm, in->dst_reg);
		else if (BPF_SRC(in->code) == BPF_X)
			fprintf(f, "%c%d %s %c%d", r, in->dst_reg, alu_ops[op >> 4], r,
			        in->src_reg);
		else
			fprintf(f, "%c%d %s %d", r, in->dst_reg, alu_ops[op >> 4], in->imm);
		break;
	case BPF_LDX:
		fprintf(f, "r%d = *(%s%s *)(r%d %+d)", in->dst_reg,
		        BPF_MODE(in->code) == BPF_MEMSX ? "s" : "", sizes[BPF_SIZE(in->code) >> 3],
		        in->src_reg, in->off);
		break;
	case BPF_ST:
		fprintf(f, "*(%s *)(r%d %+d) = %d", sizes[BPF_SIZE(in->code) >> 3], in->dst_reg,
		        in->off, in->imm);
		break;
	case BPF_STX:
		if (BPF_MODE(in->code) == BPF_ATOMIC)
			fprintf(f, "atomic(0x%x) *(%s *)(r%d %+d), r%d", (unsigned)in->imm,
			        sizes[BPF_SIZE(in->code) >> 3], in->dst_reg, in->off, in->src_reg);
		else
			fprintf(f, "*(%s *)(r%d %+d) = r%d", sizes[BPF_SIZE(in->code) >> 3],
			        in->dst_reg, in->off, in->src_reg);
		break;
	case BPF_LD:
		fprintf(f, "r%d = 0x%x ll (src %d)", in->dst_reg, (unsigned)in->imm, in->src_reg);
		break;
	default:
		if (op == BPF_EXIT)
			fprintf(f, "exit");
		else if (op == BPF_CALL && in->src_reg == BPF_PSEUDO_CALL)
			fprintf(f, "call pc%+d", in->imm);
		else if (op == BPF_CALL)
			fprintf(f, "call %s#%d", call_name(in), in->imm);
		else if (op == BPF_JA)
			fprintf(f, "goto pc%+d", cls == BPF_JMP32 ? in->imm : in->off);
		else if (BPF_SRC(in->code) == BPF_X)
			fprintf(f, "if %c%d %s %c%d goto pc%+d", r, in->dst_reg, jmp_ops[op >> 4],
			        r, in->src_reg, in->off);
		else
			fprintf(f, "if %c%d %s 0x%x goto pc%+d", r, in->dst_reg, jmp_ops[op >> 4],
			        (unsigned)in->imm, in->off);
		break;
	}
}

void vlog_insn(struct venv *env, int idx, const struct vstate *st)
{
	FILE *f = env->log;
	const struct vframe *fr;

	if (!f)
		return;
	fr = st->frame[st->curframe];
	if (line_of(env, idx) && line_of(env, idx) != env->prev_line) {
		const struct rqbpf_line *prev = env->prev_line;
		char line[512];

		/* A new record of the same line (another column) is not shown again. */
		env->prev_line = line_of(env, idx);
		format_line(env->prev_line, line, sizeof(line));
		if (!prev || prev->line != env->prev_line->line ||
		    strcmp(prev->file, env->prev_line->file) != 0)
			fprintf(f, "%s\n", line);
	}
	fprintf(f, "%d: (%02x) ", idx, env->prog->insns[idx].code);
	disasm(f, &env->prog->insns[idx]);
	fprintf(f, "\t;");
	if (st->curframe)
		fprintf(f, " frame%d:", st->curframe);
	for (int i = 0; i < V_NREGS; i++) {
		if (fr->regs[i].type == T_NOT_INIT)
			continue;
		fprintf(f, " R%d=", i);
		vlog_reg(f, env, &fr->regs[i]);
	}
	for (int i = 0; i < V_SLOTS; i++) {
		const struct vslot_state *s = &fr->stack[i];

		if (s->bytes[0] == S_SPILL) {
			fprintf(f, " fp%d=", -8 * (i + 1));
			vlog_reg(f, env, &s->spill);
		} else if (s->bytes[0] == S_IRQ_FLAG) {
			fprintf(f, " fp%d=irq_flag(id=%u)", -8 * (i + 1), s->irq_id);
		} else if (s->bytes[0] == S_ITER) {
			fprintf(f, " fp%d=iter_num(ref_id=%u,state=%s,depth=%u)", -8 * (i + 1),
			        s->irq_id, s->iter_state == ITER_ACTIVE ? "active" : "drained",
			        s->iter_depth);
		}
	}
	for (int i = 0; i < st->nrefs; i++)
		fprintf(f, " refs[%d]=%s(id=%u)", i,
		        st->refs[i].type == REF_IRQ                                   ? "irq"
		        : st->refs[i].type == REF_PTR || st->refs[i].type == REF_ITER ? "ptr"
		                                                                      : "lock",
		        st->refs[i].id);
	fprintf(f, "\n");
}
