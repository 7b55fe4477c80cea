/* SPDX-License-Identifier: GPL-2.0 */
/*
 * upstream_verifier_spin_lock: Linux's verifier_spin_lock.c (itself
 * converted from the older verifier/spin_lock.c), adapted to build without
 * bpf_misc.h, so that rqbpf's verdicts are compared with the kernel's
 * (expect.txt; verifier_kernel). Adapted, with the program names kept,
 * from repository torvalds/linux, path
 * tools/testing/selftests/bpf/progs/verifier_spin_lock.c, commit
 * 0d21364c6e8dc1f62c34bbc49d49935c8b01844c. The test attributes
 * (__success, __msg, __flag(BPF_F_TEST_STATE_FREQ), __log_level) are
 * dropped: expect.txt holds the verdicts. GPL-2.0, as that file; only the
 * tests build it.
 */
#include "common.h"

#define __naked                 __attribute__((naked))
#define __imm(name)             [name] "i"(name)
#define __imm_addr(v)           [v] "i"(&v)
#define __imm_const(name, expr) [name] "i"(expr)
#define __clobber_all           "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "memory"

struct val {
	int cnt;
	struct bpf_spin_lock l;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct val);
} map_spin_lock SEC(".maps");

/* Looks the one value up into r6 (exits when NULL). */
#define LOOKUP_R6                                                                                  \
	"r1 = 0; *(u32 *)(r10 - 4) = r1; r2 = r10; r2 += -4;"                                      \
	"r1 = %[map_spin_lock] ll; call %[bpf_map_lookup_elem];"                                   \
	"if r0 != 0 goto 1f; exit; 1: r6 = r0;"

#define PROG(sec, name, body, ...)                                                                 \
	SEC(sec) __naked void name(void)                                                           \
	{                                                                                          \
		asm volatile(body::__imm(bpf_map_lookup_elem), __imm(bpf_spin_lock),               \
		             __imm(bpf_spin_unlock), __imm_addr(map_spin_lock), ##__VA_ARGS__      \
		             : __clobber_all);                                                     \
	}

PROG("?cgroup/skb", spin_lock_test1_success,
     LOOKUP_R6 "r1 = r0; r1 += 4; call %[bpf_spin_lock]; r1 = r6; r1 += 4;"
               "r0 = *(u32 *)(r6 + 0); call %[bpf_spin_unlock]; r0 = 0; exit;")
PROG("?cgroup/skb", lock_test2_direct_ld_st,
     LOOKUP_R6 "r1 = r0; r1 += 4; call %[bpf_spin_lock]; r1 = r6; r1 += 4;"
               "r0 = *(u32 *)(r1 + 0); call %[bpf_spin_unlock]; r0 = 0; exit;")
PROG("?cgroup/skb", lock_test3_direct_ld_st,
     LOOKUP_R6 "r1 = r0; r1 += 4; call %[bpf_spin_lock]; r1 = r6; r1 += 4;"
               "r0 = *(u32 *)(r6 + 1); call %[bpf_spin_unlock]; r0 = 0; exit;")
PROG("?cgroup/skb", lock_test4_direct_ld_st,
     LOOKUP_R6 "r1 = r0; r1 += 4; call %[bpf_spin_lock]; r1 = r6; r1 += 4;"
               "r0 = *(u16 *)(r6 + 3); call %[bpf_spin_unlock]; r0 = 0; exit;")
PROG("?cgroup/skb", call_within_a_locked_region,
     LOOKUP_R6 "r1 = r0; r1 += 4; call %[bpf_spin_lock]; call %[bpf_get_prandom_u32];"
               "r1 = r6; r1 += 4; call %[bpf_spin_unlock]; r0 = 0; exit;",
     __imm(bpf_get_prandom_u32))
PROG("?cgroup/skb", spin_lock_test6_missing_unlock,
     LOOKUP_R6 "r1 = r0; r1 += 4; call %[bpf_spin_lock]; r1 = r6; r1 += 4;"
               "r0 = *(u32 *)(r6 + 0); if r0 != 0 goto 2f; call %[bpf_spin_unlock];"
               "2: r0 = 0; exit;")
PROG("?cgroup/skb", lock_test7_unlock_without_lock,
     LOOKUP_R6 "r1 = r0; r1 += 4; if r1 != 0 goto 2f; call %[bpf_spin_lock];"
               "2: r1 = r6; r1 += 4; r0 = *(u32 *)(r6 + 0); call %[bpf_spin_unlock];"
               "r0 = 0; exit;")
PROG("?cgroup/skb", spin_lock_test8_double_lock,
     LOOKUP_R6 "r1 = r0; r1 += 4; call %[bpf_spin_lock]; r1 = r6; r1 += 4;"
               "call %[bpf_spin_lock]; r1 = r6; r1 += 4; r0 = *(u32 *)(r6 + 0);"
               "call %[bpf_spin_unlock]; r0 = 0; exit;")
PROG("?cgroup/skb", spin_lock_test9_different_lock,
     LOOKUP_R6 "r2 = r10; r2 += -4; r1 = %[map_spin_lock] ll; call %[bpf_map_lookup_elem];"
               "if r0 != 0 goto 2f; exit; 2: r7 = r0; r1 = r6; r1 += 4;"
               "call %[bpf_spin_lock]; r1 = r7; r1 += 4; call %[bpf_spin_unlock];"
               "r0 = 0; exit;")

static __naked __noinline __attribute__((used)) void lock_in_subprog_without_unlock__1(void)
{
	asm volatile("call %[bpf_spin_lock]; r0 = 0; exit;" ::__imm(bpf_spin_lock) : __clobber_all);
}

PROG("?cgroup/skb", lock_in_subprog_without_unlock,
     LOOKUP_R6 "r1 = r0; r1 += 4; call lock_in_subprog_without_unlock__1;"
               "r1 = r6; r1 += 4; call %[bpf_spin_unlock]; r0 = 1; exit;")
PROG("?tc", test11_ld_abs_under_lock,
     "r6 = r1; r1 = 0; *(u32 *)(r10 - 4) = r1; r2 = r10; r2 += -4;"
     "r1 = %[map_spin_lock] ll; call %[bpf_map_lookup_elem];"
     "if r0 != 0 goto 1f; exit; 1: r7 = r0; r1 = r0; r1 += 4; call %[bpf_spin_lock];"
     "r0 = *(u8 *)skb[0]; r1 = r7; r1 += 4; call %[bpf_spin_unlock]; r0 = 0; exit;")
PROG("?tc", reg_id_for_map_value,
     "r6 = r1; r6 = *(u32 *)(r6 + %[__sk_buff_mark]); r1 = %[map_spin_lock] ll; r9 = r1;"
     "r2 = 0; *(u32 *)(r10 - 4) = r2; r2 = r10; r2 += -4; call %[bpf_map_lookup_elem];"
     "if r0 != 0 goto 1f; exit; 1: r7 = r0; r1 = r9; r2 = r10; r2 += -4;"
     "call %[bpf_map_lookup_elem]; if r0 != 0 goto 2f; exit; 2: r8 = r0; r1 = r7;"
     "r1 += 4; call %[bpf_spin_lock]; if r6 == 0 goto 3f; goto 4f; 3: r7 = r8;"
     "4: r1 = r7; r1 += 4; call %[bpf_spin_unlock]; r0 = 0; exit;",
     __imm_const(__sk_buff_mark, offsetof(struct __sk_buff, mark)))
PROG("?cgroup/skb", check_ids_similar_id_mappings,
     "r1 = 0; *(u32 *)(r10 - 4) = r1; r2 = r10; r2 += -4; r1 = %[map_spin_lock] ll;"
     "call %[bpf_map_lookup_elem]; if r0 == 0 goto 5f; r9 = r0; r2 = r10; r2 += -4;"
     "r1 = %[map_spin_lock] ll; call %[bpf_map_lookup_elem]; if r0 == 0 goto 6f;"
     "r8 = r0; call %[bpf_ktime_get_ns]; r7 = r0; call %[bpf_ktime_get_ns]; r6 = r0;"
     "if r6 > r7 goto 2f; r1 = r8; r1 += 4; call %[bpf_spin_lock]; r9 = r8; goto 3f;"
     "2: r1 = r9; r1 += 4; call %[bpf_spin_lock];"
     "3: r1 = r9; r1 += 4; call %[bpf_spin_unlock];"
     "5: r0 = 0; 6: exit;",
     __imm(bpf_ktime_get_ns))

char _license[] SEC("license") = "GPL";
