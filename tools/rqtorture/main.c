/* SPDX-License-Identifier: MIT */
/* rqtorture: entry point; dispatches to the torture, sweep, uncontended, hammer and inject
 * modes. */
#include <stdlib.h>
#include <string.h>

#include "rqtorture.h"

static int list_locks(void)
{
	size_t n;
	const struct lk_ops *t = lk_table(&n);

	for (size_t i = 0; i < n; i++)
		printf("%-17s %-11s %s%s%s\n", t[i].name,
		       t[i].available ? "available" : "UNAVAILABLE", t[i].desc,
		       t[i].available ? "" : "\n                  ",
		       t[i].available ? "" : t[i].unavailable);
	return 0;
}

static int torture_all(const struct config *cfg)
{
	FILE *json = open_out(cfg->json_path), *csv = open_out(cfg->csv_path);
	int total = cfg->nlocks * cfg->nthreads, k = 0;
	bool ok = true;

	if (json) {
		print_json_open(json, "torture");
		fprintf(json, "\"ncpus\":%d,\"runs\":[\n", ncpus());
	}
	if (csv)
		print_run_csv_header(csv);
	for (int l = 0; l < cfg->nlocks; l++)
		for (int t = 0; t < cfg->nthreads; t++) {
			struct run_result r;
			if (torture_run(cfg, cfg->locks[l], cfg->threads[t], &r) != 0) {
				fprintf(stderr, "rqtorture: could not start %d threads\n",
				        cfg->threads[t]);
				return 2;
			}
			ok &= !run_failed(&r);
			if (!cfg->quiet)
				print_run_text(cfg->text, cfg, &r);
			if (json)
				print_run_json(json, cfg, &r, ++k == total);
			if (csv)
				print_run_csv(csv, &r);
			run_result_free(&r);
		}
	if (json)
		fprintf(json, "],\"verdict\":\"%s\"}\n", ok ? "SUCCESS" : "FAILURE");
	close_out(json);
	close_out(csv);
	if (cfg->nlocks * cfg->nthreads > 1 || cfg->quiet)
		print_verdict(cfg->text, ok, "all runs");
	return ok ? 0 : 1;
}

static int inject_all(const struct config *cfg)
{
	FILE *json = open_out(cfg->json_path), *csv = open_out(cfg->csv_path);
	bool ok = true;

	for (int l = 0; l < cfg->nlocks; l++)
		if (!lk_is_rq(cfg->locks[l])) {
			fprintf(stderr,
			        "rqtorture: --inject needs a resilient lock (rqspinlock, "
			        "rqspinlock-tas); %s would hang\n",
			        cfg->locks[l]->name);
			return 2;
		}
	if (json) {
		print_json_open(json, "inject");
		fprintf(json, "\"ncpus\":%d,\"runs\":[\n", ncpus());
	}
	for (int l = 0; l < cfg->nlocks; l++) {
		struct inject_result r;
		if (inject_run(cfg, cfg->locks[l], &r) != 0) {
			fprintf(stderr, "rqtorture: could not start the injection threads\n");
			return 2;
		}
		ok &= !inject_failed(&r);
		if (!cfg->quiet)
			print_inject_text(cfg->text, cfg, &r);
		if (json)
			print_inject_json(json, &r, l == cfg->nlocks - 1);
		if (csv)
			print_inject_csv(csv, &r, l == 0);
	}
	if (json)
		fprintf(json, "],\"verdict\":\"%s\"}\n", ok ? "SUCCESS" : "FAILURE");
	close_out(json);
	close_out(csv);
	if (cfg->nlocks > 1 || cfg->quiet)
		print_verdict(cfg->text, ok, "all injection runs");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct config cfg;
	int rc = parse_options(argc, argv, &cfg);

	if (rc == 1)
		return 0;
	if (rc < 0)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	delay_calibrate();
	switch (cfg.mode) {
	case MODE_LIST:
		rc = list_locks();
		break;
	case MODE_SWEEP:
		rc = bench_sweep(&cfg);
		break;
	case MODE_UNCONTENDED:
		rc = bench_uncontended(&cfg);
		break;
	case MODE_HAMMER:
		rc = bench_hammer(&cfg);
		break;
	case MODE_INJECT:
		rc = inject_all(&cfg);
		break;
	case MODE_STORM:
		rc = storm_all(&cfg);
		break;
	case MODE_TORTURE:
	default:
		rc = torture_all(&cfg);
		break;
	}
	return output_status(rc);
}
