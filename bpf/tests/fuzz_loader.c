/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the loader: open any bytes as an object; when the
 * open succeeds, load it without the verifier and run each program once on a
 * zeroed context, and once more on a packet (rqbpf_prog_test_run()) (the
 * run-time checks must contain whatever it does). Seeds: the compiled test
 * objects (bootstrap_net's packet programs among them).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rqbpf_object *obj;
	struct rqbpf_error err;
	uint8_t ctx[256];
	/* a 64-byte IPv4 frame, for programs of the types that have a packet
	 * (unverified: the run-time packet bounds must hold) */
	static const uint8_t frame[64] = {[12] = 0x08, [14] = 0x45, [17] = 50, [22] = 64};
	struct rqbpf_test_run_opts pkt = {.data_in = frame, .data_size_in = sizeof(frame)};

	if (rqbpf_object_open_mem(data, size, "fuzz", &obj, &err))
		return 0;
	for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++)
		rqbpf_prog_set_autoload(rqbpf_object_prog(obj, i), 1);
	if (!rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err)) {
		for (size_t i = 0; i < rqbpf_object_prog_count(obj); i++) {
			const struct rqbpf_prog *p = rqbpf_object_prog(obj, i);
			struct rqbpf_run_result res;
			size_t n = rqbpf_prog_ctx_size(p) < sizeof(ctx) ? rqbpf_prog_ctx_size(p)
			                                                : sizeof(ctx);

			/* Programs that loop for long or wait on locks are not the loader's
			 * business: the held-max object would time out by design. */
			if (rqbpf_prog_insn_count(p) < 4096 &&
			    !strstr(rqbpf_prog_name(p), "held") &&
			    !strstr(rqbpf_prog_name(p), "beyond")) {
				(void)rqbpf_prog_run(p, memset(ctx, 0, sizeof(ctx)), n, &res);
				(void)rqbpf_prog_test_run(p, &pkt); /* with a packet */
			}
		}
	}
	rqbpf_object_close(obj);
	return 0;
}
