/* SPDX-License-Identifier: MIT */
/*
 * spin_lock: the bpf_spin_lock helpers. Two programs the verifier (and the
 * kernel) accept, then one per rule they break, with that rule's message
 * (see expect.txt).
 */
#include "common.h"

struct sval {
	struct bpf_spin_lock lock;
	__u32 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct sval);
} svals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct elem);
} res_elems SEC(".maps");

struct bpf_spin_lock glock HIDDEN SEC(".data.G");
__u32 gcount HIDDEN SEC(".data.G");
/* Two locks in one section: the kernel finds no valid lock there. */
struct bpf_spin_lock slock_p HIDDEN SEC(".data.S");
struct bpf_spin_lock slock_q HIDDEN SEC(".data.S");

static struct sval *sval0(void)
{
	int key = 0;

	return bpf_map_lookup_elem(&svals, &key);
}

SEC("?tc")
int spin_counter(struct __sk_buff *ctx)
{
	struct sval *v = sval0();

	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	v->n++;
	bpf_spin_unlock(&v->lock);
	return 0;
}

SEC("?tc")
int spin_global(struct __sk_buff *ctx)
{
	bpf_spin_lock(&glock);
	gcount++;
	bpf_spin_unlock(&glock);
	return 0;
}

SEC("?tc")
int spin_lock_under_lock(struct __sk_buff *ctx)
{
	struct sval *v = sval0();

	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	bpf_spin_lock(&glock);
	bpf_spin_unlock(&glock);
	bpf_spin_unlock(&v->lock);
	return 0;
}

SEC("?tc")
int spin_helper_under_lock(struct __sk_buff *ctx)
{
	struct sval *v = sval0();

	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	v->n = bpf_get_prandom_u32();
	bpf_spin_unlock(&v->lock);
	return 0;
}

SEC("?tc")
int spin_exit_under_lock(struct __sk_buff *ctx)
{
	struct sval *v = sval0();

	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	return 1;
}

SEC("?tc")
int spin_read_lock_word(struct __sk_buff *ctx)
{
	struct sval *v = sval0();

	if (!v)
		return 0;
	return *(volatile __u32 *)&v->lock;
}

SEC("?tc")
int spin_unlock_unlocked(struct __sk_buff *ctx)
{
	struct sval *v = sval0();

	if (!v)
		return 0;
	bpf_spin_unlock(&v->lock);
	return 0;
}

SEC("?tc")
int spin_on_res_lock(struct __sk_buff *ctx)
{
	int key = 0;
	struct elem *e = bpf_map_lookup_elem(&res_elems, &key);

	if (!e)
		return 0;
	bpf_spin_lock((struct bpf_spin_lock *)&e->lock);
	bpf_spin_unlock((struct bpf_spin_lock *)&e->lock);
	return 0;
}

SEC("?tc")
int two_spin_locks_one_section(struct __sk_buff *ctx)
{
	bpf_spin_lock(&slock_p);
	bpf_spin_unlock(&slock_p);
	return 0;
}

char _license[] SEC("license") = "GPL";
