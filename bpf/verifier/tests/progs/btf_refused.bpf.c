/* SPDX-License-Identifier: MIT */
/*
 * btf_refused: an object whose BTF the kernel refuses. It checks the
 * fields of every struct with a bpf_spin_lock member and refuses the whole
 * BTF when they are invalid (here: a bpf_spin_lock beside a
 * bpf_res_spin_lock, in a type no map uses). libbpf then loads the object
 * without BTF, and no lock in any map can be used (expect.txt).
 */
#include "common.h"

struct spin_and_res {
	struct bpf_spin_lock s;
	struct bpf_res_spin_lock r;
};

/* Only a pointer: the struct is in the BTF, no map holds it. */
struct spin_and_res *unused_ptr HIDDEN SEC(".data.U");

ARRAY_OF(elems, struct elem);
struct bpf_res_spin_lock lock_x HIDDEN SEC(".data.X");

TAKE(elem_lock, elems, struct elem, lock)
TAKE_GLOBAL(global_lock, lock_x)

SEC("?tc")
int no_lock(struct __sk_buff *ctx)
{
	return unused_ptr ? 1 : 0;
}

char _license[] SEC("license") = "GPL";
