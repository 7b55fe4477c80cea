/* SPDX-License-Identifier: MIT */
/*
 * bpf_run.c: runs counter.bpf.o's program `count` with librqbpf, from four
 * threads at once, then reads its map back:
 *
 *   ./bpf_run counter.bpf.o
 *
 * The rqbpf command does the same from the shell (rqbpf(1)).
 */
#include <linux/bpf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rqbpf.h>

#define THREADS 4
#define RUNS    10000

struct counter {
	uint32_t lock, pad; /* the program's struct bpf_res_spin_lock */
	uint64_t calls;
};

static struct rqbpf_prog *prog;

static void *runner(void *arg)
{
	struct __sk_buff ctx;
	struct rqbpf_run_result res;
	long failed = 0;

	memset(&ctx, 0, sizeof(ctx));
	for (int i = 0; i < RUNS; i++) {
		ctx.cb[0] = (uint32_t)((uintptr_t)arg * RUNS + (uintptr_t)i);
		if (rqbpf_prog_run(prog, &ctx, sizeof(ctx), &res) != 0 || res.retval != 0)
			failed++;
	}
	return (void *)failed;
}

/* The sum of every key's calls, read through the map API. */
static int total_calls(struct rqbpf_map *map, uint64_t *total)
{
	struct counter c;

	*total = 0;
	for (uint32_t key = 0; key < 16; key++) {
		int err = rqbpf_map_lookup(map, &key, &c);
		if (err)
			return err;
		*total += c.calls;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rqbpf_object *obj = NULL;
	struct rqbpf_error err;
	pthread_t t[THREADS];
	uint64_t total;
	long failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s counter.bpf.o\n", argv[0]);
		return 2;
	}
	/* Open, then load: every program is linked and verified. */
	if (rqbpf_object_open_file(argv[1], &obj, &err) || rqbpf_object_load(obj, 0, &err)) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		rqbpf_object_close(obj);
		return 1;
	}
	prog = rqbpf_object_find_prog(obj, "count");
	if (!prog || rqbpf_prog_ctx_size(prog) > sizeof(struct __sk_buff)) {
		rqbpf_object_close(obj);
		return 1;
	}
	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, runner, (void *)i) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		failed += (long)r;
	}
	if (total_calls(rqbpf_object_find_map(obj, "counts"), &total) != 0)
		total = 0;
	rqbpf_object_close(obj);
	printf("rqbpf %s: count ran %d times, %ld failed, the map counted %llu\n", rqbpf_version(),
	       THREADS * RUNS, failed, (unsigned long long)total);
	return total == (uint64_t)(THREADS * RUNS - failed) && failed == 0 ? 0 : 1;
}
