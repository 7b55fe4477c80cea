/* SPDX-License-Identifier: MIT */
/* Built against an installed librqbpf: `bpf [OBJ]` loads OBJ (counter.bpf.c,
 * compiled against the installed bpf_res_spin_lock.h), runs its program
 * `count` ten times and reads the counter back; without OBJ it only checks
 * that a malformed object is refused. Both check the version. */
#include <rqbpf.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct counter {
	uint32_t lock, pad;
	uint64_t hits;
};

static int run_counter(const char *path)
{
	struct rqbpf_error err;
	struct rqbpf_object *obj = NULL;
	struct rqbpf_run_result res;
	struct counter c;
	unsigned char ctx[256] = {0};
	uint32_t key = 0;
	struct rqbpf_prog *prog;
	int rc = 0;

	if (rqbpf_object_open_file(path, &obj, &err) || rqbpf_object_load(obj, 0, &err)) {
		fprintf(stderr, "bpf consumer: %s: %s\n", path, err.msg);
		rqbpf_object_close(obj);
		return 1;
	}
	prog = rqbpf_object_find_prog(obj, "count");
	if (!prog || rqbpf_prog_ctx_size(prog) > sizeof(ctx))
		rc = 2;
	for (int i = 0; !rc && i < 10; i++)
		if (rqbpf_prog_run(prog, ctx, rqbpf_prog_ctx_size(prog), &res) || res.retval != 0)
			rc = 3;
	if (!rc &&
	    (rqbpf_map_lookup(rqbpf_object_find_map(obj, "counters"), &key, &c) || c.hits != 10))
		rc = 4;
	rqbpf_object_close(obj);
	return rc;
}

int main(int argc, char **argv)
{
	static const char junk[] = "not an ELF object";
	struct rqbpf_error err;
	struct rqbpf_object *obj = NULL;
	int rc;

	if (strcmp(rqbpf_version(), RQBPF_VERSION) != 0)
		return 5;
	if (rqbpf_object_open_mem(junk, sizeof(junk), NULL, &obj, &err) != -EINVAL)
		return 6;
	rc = argc > 1 ? run_counter(argv[1]) : 0;
	if (rc == 0)
		printf("bpf consumer: rqbpf %s OK%s\n", rqbpf_version(),
		       argc > 1 ? " (ran count 10 times)" : " (no BPF object)");
	return rc;
}
