/* SPDX-License-Identifier: MIT */
/*
 * expect_aa.h: the AA scenario shared by the array and hash test programs.
 * @a and @b are two lookups of the same element: taking @b's lock while
 * holding @a's must fail with -EDEADLK. Returns 0 when it did, -2 when the
 * first lock failed, -3 when the second one was (wrongly) taken, else the
 * second lock's error.
 */
#ifndef RQBPF_TEST_EXPECT_AA_H
#define RQBPF_TEST_EXPECT_AA_H

#ifndef EDEADLK
#define EDEADLK 35
#endif

static __always_inline int expect_aa(struct bpf_res_spin_lock *a, struct bpf_res_spin_lock *b)
{
	int err;

	if (bpf_res_spin_lock(a))
		return -2;
	err = bpf_res_spin_lock(b);
	if (!err) {
		bpf_res_spin_unlock(b);
		bpf_res_spin_unlock(a);
		return -3;
	}
	bpf_res_spin_unlock(a);
	return err == -EDEADLK ? 0 : err;
}

#endif /* RQBPF_TEST_EXPECT_AA_H */
