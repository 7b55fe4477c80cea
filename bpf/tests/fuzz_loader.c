/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the loader: open any bytes as an object; when the
 * open succeeds, load it without the verifier and run each program once on a
 * zeroed context (the run-time checks must contain whatever it does). Seeds:
 * the compiled test objects.
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
			    !strstr(rqbpf_prog_name(p), "beyond"))
				(void)rqbpf_prog_run(p, memset(ctx, 0, sizeof(ctx)), n, &res);
		}
	}
	rqbpf_object_close(obj);
	return 0;
}
