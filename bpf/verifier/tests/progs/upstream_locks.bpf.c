/* SPDX-License-Identifier: GPL-2.0 */
/*
 * upstream_locks: Linux's own lock selftests, adapted to build without
 * vmlinux.h and bpf_misc.h, so that rqbpf's verdicts on programs other
 * people wrote are compared with the kernel's (expect.txt; the kernel
 * comparison, verifier_kernel). Adapted from
 * repository torvalds/linux, tools/testing/selftests/bpf/progs/:
 *  - res_spin_lock_fail.c, commit 844e31bbaef7c8a6ff2c0fbac45c0c85b5484482
 *    (its cases written anew, as programs rs_*, each naming its upstream
 *    case; not adapted: res_spin_lock_arg, which needs bpf_core_cast;
 *    res_spin_lock_var_off, bpf_throw; res_spin_lock_no_lock_kptr,
 *    bpf_obj_new);
 *  - res_spin_lock.c, commit 844e31bbaef7c8a6ff2c0fbac45c0c85b5484482
 *    (written anew as rs_run_*; held_lock_max without its static assertion
 *    on a kernel struct);
 *  - test_spin_lock_fail.c, commit 5fc5768c7ca92895ccd1de94dc521e5a55ae7896
 *    (the lock identity checks between globals and map values, and the
 *    global subprogram calls under a lock; not those with bpf_obj_new,
 *    maps of maps, bpf_this_cpu_ptr, callbacks or sleepable programs);
 *  - test_map_lock.c, commit 0b77b97066628deef03a6eac7b29e5c3756f4ab0
 *    (in section "tc": upstream's "map_lock_demo" is no section libbpf
 *    knows, its test sets the type by hand);
 *  - test_spin_lock.c, commit 0604aa87b098740f2e517a584552591cbf2209d7
 *    (without its cgroup local storage, a map kind rqbpf does not have);
 *  - irq.c, commit 0410c6121529409b08e81a77ae3ee58c657e2243 (not the
 *    sleepable, iterator and bpf_obj_new programs).
 * Those files are GPL-2.0, as this one, which only the tests build.
 */
#include "common.h"

#define EDEADLK   35
#define ETIMEDOUT 110

/*
 * ---- res_spin_lock_fail.c and res_spin_lock.c ----
 * The same cases as upstream's, written anew for this project (programs
 * named rs_*; upstream's name in each comment).
 */

struct slot {
	struct bpf_res_spin_lock lock;
};

struct {
	__uint(max_entries, 64);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(value, struct slot);
	__type(key, int);
} slots SEC(".maps");

long plain; /* a global with no lock in its map (.bss) */
int rs_err;

struct bpf_res_spin_lock glock HIDDEN SEC(".data.B");
struct bpf_res_spin_lock first_lock HIDDEN SEC(".data.OO1");
struct bpf_res_spin_lock second_lock HIDDEN SEC(".data.OO2");
struct bpf_res_spin_lock lock_a HIDDEN SEC(".data.A");
struct bpf_res_spin_lock lock_b HIDDEN SEC(".data.RB");

/* The slot of @k, or NULL. */
static __always_inline struct slot *slot_at(int k)
{
	return bpf_map_lookup_elem(&slots, &k);
}

/* res_spin_lock_AA: the same lock twice, the first result unchecked. */
SEC("?tc")
int rs_aa_twice(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);

	if (s) {
		bpf_res_spin_lock(&s->lock);
		bpf_res_spin_lock(&s->lock);
	}
	return 0;
}

/* res_spin_lock_cond_AA: the same lock again on the path where it was taken. */
SEC("?tc")
int rs_aa_after_success(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);

	if (!s || bpf_res_spin_lock(&s->lock))
		return 0;
	bpf_res_spin_lock(&s->lock);
	return 0;
}

/* res_spin_lock_mismatch_1: a value's lock taken, the global's released. */
SEC("?tc")
int rs_unlock_global_not_held(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);

	if (!s || bpf_res_spin_lock(&s->lock))
		return 0;
	bpf_res_spin_unlock(&glock);
	return 0;
}

/* res_spin_lock_mismatch_2: the global's lock taken, a value's released. */
SEC("?tc")
int rs_unlock_value_not_held(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);

	if (!s || bpf_res_spin_lock(&glock))
		return 0;
	bpf_res_spin_unlock(&s->lock);
	return 0;
}

/* res_spin_lock_irq_mismatch_1: an irq region, then a plain lock released
 * with irqrestore. */
SEC("?tc")
int rs_irqrestore_of_plain_lock(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);
	unsigned long saved;

	if (!s)
		return 0;
	bpf_local_irq_save(&saved);
	if (bpf_res_spin_lock(&glock))
		return 0;
	bpf_res_spin_unlock_irqrestore(&glock, &saved);
	return 0;
}

/* res_spin_lock_irq_mismatch_2: taken with irqsave, released plainly. */
SEC("?tc")
int rs_plain_unlock_of_irqsave(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);
	unsigned long saved;

	if (!s || bpf_res_spin_lock_irqsave(&glock, &saved))
		return 0;
	bpf_res_spin_unlock(&glock);
	return 0;
}

/* res_spin_lock_ooo: two locks nested and released in order. */
SEC("?tc")
int rs_nested_in_order(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);

	if (!s || bpf_res_spin_lock(&glock))
		return 0;
	if (!bpf_res_spin_lock(&s->lock))
		bpf_res_spin_unlock(&s->lock);
	bpf_res_spin_unlock(&glock);
	return 0;
}

/* res_spin_lock_ooo_irq: the same with irqsave. */
SEC("?tc")
int rs_nested_irqsave_in_order(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);
	unsigned long outer, inner;

	if (!s || bpf_res_spin_lock_irqsave(&glock, &outer))
		return 0;
	if (!bpf_res_spin_lock_irqsave(&s->lock, &inner))
		bpf_res_spin_unlock_irqrestore(&s->lock, &inner);
	bpf_res_spin_unlock_irqrestore(&glock, &outer);
	return 0;
}

/* res_spin_lock_ooo_unlock: the outer lock released first. */
SEC("?tc")
int rs_unlock_out_of_order(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&first_lock))
		return 0;
	if (bpf_res_spin_lock(&second_lock))
		goto out;
	bpf_res_spin_unlock(&first_lock);
	bpf_res_spin_unlock(&second_lock);
	return 0;
out:
	bpf_res_spin_unlock(&first_lock);
	return 0;
}

/* res_spin_lock_bad_off: one byte into the lock. */
SEC("?tc")
int rs_lock_at_odd_offset(struct __sk_buff *ctx)
{
	struct slot *s = slot_at(0);

	if (s)
		bpf_res_spin_lock((void *)s + 1);
	return 0;
}

/* res_spin_lock_no_lock_map: a global whose map has no lock. */
SEC("?tc")
int rs_lock_in_plain_global(struct __sk_buff *ctx)
{
	bpf_res_spin_lock((void *)&plain + 1);
	return 0;
}

/* res_spin_lock_test: one value's lock taken through two lookups: the
 * second take must fail with -EDEADLK (returns 0 then). */
SEC("?tc")
int rs_run_aa(struct __sk_buff *ctx)
{
	struct slot *x = slot_at(0), *y = slot_at(0);
	int again, first;

	if (!x || !y)
		return -1;
	first = bpf_res_spin_lock(&x->lock);
	if (first)
		return first;
	again = bpf_res_spin_lock(&y->lock);
	if (again == 0) {
		bpf_res_spin_unlock(&y->lock);
		bpf_res_spin_unlock(&x->lock);
		return -1;
	}
	bpf_res_spin_unlock(&x->lock);
	return again != -EDEADLK;
}

/* res_spin_lock_test_AB and _BA: A then B, and B then A. */
SEC("?tc")
int rs_run_ab(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&lock_a))
		return 0;
	if (bpf_res_spin_lock(&lock_b) == 0)
		bpf_res_spin_unlock(&lock_b);
	bpf_res_spin_unlock(&lock_a);
	return 0;
}

SEC("?tc")
int rs_run_ba(struct __sk_buff *ctx)
{
	if (bpf_res_spin_lock(&lock_b))
		return 0;
	if (bpf_res_spin_lock(&lock_a) == 0)
		bpf_res_spin_unlock(&lock_a);
	else
		rs_err = -EDEADLK;
	bpf_res_spin_unlock(&lock_b);
	return rs_err;
}

/*
 * res_spin_lock_test_held_lock_max: 34 distinct locks held (more than the
 * kernel's table of 31), then the 35th, slot 32 again: an AA past the
 * table. Returns 0 for -ETIMEDOUT after at least a quarter second, 1 if the
 * lock was granted or the wait was short, 2 for another error.
 */
#define HELD_MAX_LOCKS 34

SEC("?tc")
int rs_run_held_max(struct __sk_buff *ctx)
{
	struct bpf_res_spin_lock *held[HELD_MAX_LOCKS + 1] = {};
	__u64 start, elapsed;
	int ret = 0, n;

	for (n = 0; n <= HELD_MAX_LOCKS; n++) {
		struct slot *s = slot_at(n < HELD_MAX_LOCKS ? n : n - 2);

		if (!s)
			return 1;
		held[n] = &s->lock;
	}
	start = bpf_ktime_get_ns();
	for (n = 0; n < HELD_MAX_LOCKS; n++)
		if (bpf_res_spin_lock(held[n]))
			goto release;
	ret = bpf_res_spin_lock(held[HELD_MAX_LOCKS]);
	if (ret == 0) {
		bpf_res_spin_unlock(held[HELD_MAX_LOCKS]);
		ret = 1;
	} else {
		ret = ret == -ETIMEDOUT ? 0 : 2;
	}
release:
	while (n-- > 0)
		bpf_res_spin_unlock(held[n]);
	elapsed = bpf_ktime_get_ns() - start;
	if (ret)
		return ret;
	return elapsed > 1000000000 / 4 ? 0 : 1;
}

/* ---- test_spin_lock_fail.c ---- */

struct foo {
	struct bpf_spin_lock lock;
	int data;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, struct foo);
	__uint(max_entries, 1);
} array_map SEC(".maps");

static struct bpf_spin_lock slockA SEC(".data.SA");
static struct bpf_spin_lock slockB SEC(".data.SB");

#define CHECK(test, A, B)                                                                          \
	SEC("?tc")                                                                                 \
	int lock_id_mismatch_##test(void *ctx)                                                     \
	{                                                                                          \
		struct foo *v;                                                                     \
		int key = 0;                                                                       \
                                                                                                   \
		v = bpf_map_lookup_elem(&array_map, &key);                                         \
		if (!v)                                                                            \
			return 0;                                                                  \
		bpf_spin_lock(A);                                                                  \
		bpf_spin_unlock(B);                                                                \
		return 0;                                                                          \
	}

CHECK(global_global, &slockA, &slockB);
CHECK(global_mapval, &slockA, &v->lock);
CHECK(mapval_global, &v->lock, &slockB);

#undef CHECK

SEC("?tc")
int lock_id_mismatch_mapval_mapval(void *ctx)
{
	struct foo *f1, *f2;
	int key = 0;

	f1 = bpf_map_lookup_elem(&array_map, &key);
	if (!f1)
		return 0;
	f2 = bpf_map_lookup_elem(&array_map, &key);
	if (!f2)
		return 0;

	bpf_spin_lock(&f1->lock);
	f1->data = 42;
	bpf_spin_unlock(&f2->lock);

	return 0;
}

__noinline int global_subprog(struct __sk_buff *ctx)
{
	volatile int ret = 0;

	if (ctx->protocol)
		ret += ctx->protocol;
	return ret + ctx->mark;
}

__noinline static int static_subprog_call_global(struct __sk_buff *ctx)
{
	volatile int ret = 0;

	if (ctx->protocol)
		return ret;
	return ret + ctx->len + global_subprog(ctx);
}

SEC("?tc")
int lock_global_subprog_call1(struct __sk_buff *ctx)
{
	int ret = 0;

	bpf_spin_lock(&slockA);
	if (ctx->mark == 42)
		ret = global_subprog(ctx);
	bpf_spin_unlock(&slockA);
	return ret;
}

SEC("?tc")
int lock_global_subprog_call2(struct __sk_buff *ctx)
{
	int ret = 0;

	bpf_spin_lock(&slockA);
	if (ctx->mark == 42)
		ret = static_subprog_call_global(ctx);
	bpf_spin_unlock(&slockA);
	return ret;
}

/* ---- test_map_lock.c ---- */

#define VAR_NUM 16

struct hmap_elem {
	struct bpf_spin_lock lock;
	int var[VAR_NUM];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hmap_elem);
} hash_map SEC(".maps");

struct array_elem {
	struct bpf_spin_lock lock;
	int var[VAR_NUM];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct array_elem);
} array_map_lock SEC(".maps");

SEC("?tc")
int bpf_map_lock_test(struct __sk_buff *skb)
{
	int rnd = bpf_get_prandom_u32();
	int key = 0, err = 1, i;
	struct hmap_elem *val;
	struct array_elem *q;

	val = bpf_map_lookup_elem(&hash_map, &key);
	if (!val)
		goto err;
	bpf_spin_lock(&val->lock);
	for (i = 0; i < VAR_NUM; i++)
		val->var[i] = rnd;
	bpf_spin_unlock(&val->lock);

	q = bpf_map_lookup_elem(&array_map_lock, &key);
	if (!q)
		goto err;
	bpf_spin_lock(&q->lock);
	for (i = 0; i < VAR_NUM; i++)
		q->var[i] = rnd;
	bpf_spin_unlock(&q->lock);
	err = 0;
err:
	return err;
}

/* ---- test_spin_lock.c ---- */

struct hmap_elem2 {
	volatile int cnt;
	struct bpf_spin_lock lock;
	int test_padding;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct hmap_elem2);
} hmap SEC(".maps");

struct bpf_vqueue {
	struct bpf_spin_lock lock;
	/* 4 byte hole */
	unsigned long long lasttime;
	int credit;
	unsigned int rate;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct bpf_vqueue);
} vqueue SEC(".maps");

#define CREDIT_PER_NS(delta, rate) (((delta)*rate) >> 20)

SEC("?cgroup_skb/ingress")
int bpf_spin_lock_test(struct __sk_buff *skb)
{
	volatile int credit = 0, max_credit = 100, pkt_len = 64;
	struct hmap_elem2 zero = {}, *val;
	unsigned long long curtime;
	struct bpf_vqueue *q;
	int key = 0;
	int err = 0;

	val = bpf_map_lookup_elem(&hmap, &key);
	if (!val) {
		bpf_map_update_elem(&hmap, &key, &zero, 0);
		val = bpf_map_lookup_elem(&hmap, &key);
		if (!val) {
			err = 1;
			goto err;
		}
	}
	bpf_spin_lock(&val->lock);
	if (val->cnt)
		val->cnt--;
	else
		val->cnt++;
	if (val->cnt != 0 && val->cnt != 1)
		err = 1;
	bpf_spin_unlock(&val->lock);

	q = bpf_map_lookup_elem(&vqueue, &key);
	if (!q)
		goto err;
	curtime = bpf_ktime_get_ns();
	bpf_spin_lock(&q->lock);
	q->credit += CREDIT_PER_NS(curtime - q->lasttime, q->rate);
	q->lasttime = curtime;
	if (q->credit > max_credit)
		q->credit = max_credit;
	q->credit -= pkt_len;
	credit = q->credit;
	bpf_spin_unlock(&q->lock);
	(void)credit;
err:
	return err;
}

/* ---- irq.c ---- */

unsigned long global_flags;

SEC("?tc")
int irq_save_not_on_stack(struct __sk_buff *ctx)
{
	bpf_local_irq_save(&global_flags);
	return 0;
}

SEC("?tc")
int irq_restore_bad_arg(struct __sk_buff *ctx)
{
	bpf_local_irq_restore(&global_flags);
	return 0;
}

SEC("?tc")
int irq_restore_missing_2(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;

	bpf_local_irq_save(&fl_a);
	bpf_local_irq_save(&fl_b);
	return 0;
}

SEC("?tc")
int irq_restore_missing_3_minus_2(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;
	unsigned long fl_c;

	bpf_local_irq_save(&fl_a);
	bpf_local_irq_save(&fl_b);
	bpf_local_irq_save(&fl_c);
	bpf_local_irq_restore(&fl_c);
	bpf_local_irq_restore(&fl_b);
	return 0;
}

static __noinline void local_irq_save(unsigned long *flags)
{
	bpf_local_irq_save(flags);
}

static __noinline void local_irq_restore(unsigned long *flags)
{
	bpf_local_irq_restore(flags);
}

SEC("?tc")
int irq_restore_missing_1_subprog(struct __sk_buff *ctx)
{
	unsigned long flags;

	local_irq_save(&flags);
	return 0;
}

SEC("?tc")
int irq_restore_missing_3_minus_2_subprog(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;
	unsigned long fl_c;

	local_irq_save(&fl_a);
	local_irq_save(&fl_b);
	local_irq_save(&fl_c);
	local_irq_restore(&fl_c);
	local_irq_restore(&fl_b);
	return 0;
}

SEC("?tc")
int irq_balance(struct __sk_buff *ctx)
{
	unsigned long flags;

	local_irq_save(&flags);
	local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_balance_n(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;
	unsigned long fl_c;

	local_irq_save(&fl_a);
	local_irq_save(&fl_b);
	local_irq_save(&fl_c);
	local_irq_restore(&fl_c);
	local_irq_restore(&fl_b);
	local_irq_restore(&fl_a);
	return 0;
}

static __noinline void local_irq_balance(void)
{
	unsigned long flags;

	local_irq_save(&flags);
	local_irq_restore(&flags);
}

static __noinline void local_irq_balance_n(void)
{
	unsigned long fl_a;
	unsigned long fl_b;
	unsigned long fl_c;

	local_irq_save(&fl_a);
	local_irq_save(&fl_b);
	local_irq_save(&fl_c);
	local_irq_restore(&fl_c);
	local_irq_restore(&fl_b);
	local_irq_restore(&fl_a);
}

SEC("?tc")
int irq_balance_subprog(struct __sk_buff *ctx)
{
	local_irq_balance();
	return 0;
}

int __noinline global_local_irq_balance(void)
{
	local_irq_balance_n();
	return 0;
}

SEC("?tc")
int irq_global_subprog(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	global_local_irq_balance();
	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_restore_ooo(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;

	bpf_local_irq_save(&fl_a);
	bpf_local_irq_save(&fl_b);
	bpf_local_irq_restore(&fl_a);
	bpf_local_irq_restore(&fl_b);
	return 0;
}

SEC("?tc")
int irq_restore_ooo_3(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;
	unsigned long fl_c;

	bpf_local_irq_save(&fl_a);
	bpf_local_irq_save(&fl_b);
	bpf_local_irq_restore(&fl_b);
	bpf_local_irq_save(&fl_c);
	bpf_local_irq_restore(&fl_a);
	bpf_local_irq_restore(&fl_c);
	return 0;
}

static __noinline void local_irq_save_3(unsigned long *fl_a, unsigned long *fl_b,
                                        unsigned long *fl_c)
{
	local_irq_save(fl_a);
	local_irq_save(fl_b);
	local_irq_save(fl_c);
}

SEC("?tc")
int irq_restore_3_subprog(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;
	unsigned long fl_c;

	local_irq_save_3(&fl_a, &fl_b, &fl_c);
	bpf_local_irq_restore(&fl_c);
	bpf_local_irq_restore(&fl_b);
	bpf_local_irq_restore(&fl_a);
	return 0;
}

SEC("?tc")
int irq_restore_4_subprog(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long fl_b;
	unsigned long fl_c;
	unsigned long fl_d;

	local_irq_save_3(&fl_a, &fl_b, &fl_c);
	bpf_local_irq_restore(&fl_c);
	bpf_local_irq_save(&fl_d);
	bpf_local_irq_restore(&fl_d);
	bpf_local_irq_restore(&fl_a);
	return 0;
}

SEC("?tc")
int irq_restore_invalid(struct __sk_buff *ctx)
{
	unsigned long fl_a;
	unsigned long flags = 0xfaceb00c;

	bpf_local_irq_save(&fl_a);
	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_save_invalid(struct __sk_buff *ctx)
{
	unsigned long fl_a;

	bpf_local_irq_save(&fl_a);
	bpf_local_irq_save(&fl_a);
	return 0;
}

SEC("?tc")
int irq_flag_overwrite(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	flags = 0xdeadbeef;
	bpf_local_irq_restore(&flags);
	return 0;
}

SEC("?tc")
int irq_flag_overwrite_partial(struct __sk_buff *ctx)
{
	unsigned long flags;

	bpf_local_irq_save(&flags);
	*(((char *)&flags) + 1) = 0xff;
	bpf_local_irq_restore(&flags);
	return 0;
}

char _license[] SEC("license") = "GPL";
