/* SPDX-License-Identifier: MIT */
/*
 * btf_deep: a struct with a bpf_spin_lock member and 16^8 nested members
 * (a type no map uses; only a pointer to it is global). The kernel refuses
 * such a BTF, so no lock of the object can be used (expect.txt); the
 * loader's search for locks must give up on it in bounded time instead of
 * visiting every member.
 */
#include "common.h"

#define SIXTEEN(T) T m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15

struct deep0 {
	int x;
};
struct deep1 {
	SIXTEEN(struct deep0);
};
struct deep2 {
	SIXTEEN(struct deep1);
};
struct deep3 {
	SIXTEEN(struct deep2);
};
struct deep4 {
	SIXTEEN(struct deep3);
};
struct deep5 {
	SIXTEEN(struct deep4);
};
struct deep6 {
	SIXTEEN(struct deep5);
};
struct deep7 {
	SIXTEEN(struct deep6);
};
struct deep8 {
	SIXTEEN(struct deep7);
};
struct deep_with_lock {
	struct bpf_spin_lock lock;
	struct deep8 members;
};

struct deep_with_lock *deep_ptr HIDDEN SEC(".data.D");
struct bpf_res_spin_lock lock_x HIDDEN SEC(".data.X");

TAKE_GLOBAL(global_lock, lock_x)

SEC("?tc")
int no_lock(struct __sk_buff *ctx)
{
	return deep_ptr ? 1 : 0;
}

char _license[] SEC("license") = "GPL";
