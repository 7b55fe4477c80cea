/* SPDX-License-Identifier: MIT */
/* Command line: locktorture-style knobs, modes, output formats. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rqtorture.h"
#include "rqu_parse.h"

static const char usage_text[] =
    "Usage: rqtorture [MODE] [OPTIONS]\n"
    "Lock torture test and benchmark for rqspinlock (resilient queued spin lock).\n"
    "\n"
    "Modes (default: torture run):\n"
    "      --sweep              benchmark: every lock at every thread count, interleaved,\n"
    "                           repeated; tables of medians and the RQL/QL ratio\n"
    "      --uncontended        one thread: ns per lock+unlock pair, interleaved\n"
    "      --tight              with --uncontended: each type's tight loop, its lock\n"
    "                           and unlock called directly (or inline), no indirect\n"
    "                           call; for rqspinlock, rqspinlock-tas, rqspinlock-inline,\n"
    "                           ql, pthread-spin, pthread-mutex (the default list, less\n"
    "                           rqspinlock-tas) and the unlock experiments word-byte,\n"
    "                           word-store, word-cas, rqspinlock-casunlock\n"
    "      --hammer             short critical sections: -t threads (default 2) each\n"
    "                           take the lock --iters times (default 500000), one shared\n"
    "                           increment inside; ns per acquisition, interleaved, with\n"
    "                           ratios to ql, pthread-spin and pthread-mutex\n"
    "      --inject KIND        deadlock injection: aa, abba or abbcca; recovery report\n"
    "      --list               list lock types and whether they are available\n"
    "\n"
    "Locks and threads:\n"
    "  -l, --lock LIST          comma-separated lock types or 'all' (see --list);\n"
    "                           default rqspinlock (torture, inject), all (sweep,\n"
    "                           uncontended) or rqspinlock,ql,pthread-spin,\n"
    "                           pthread-mutex (hammer)\n"
    "  -t, --threads LIST       writer threads; a list for --sweep (default: number of\n"
    "                           CPUs; sweep: 1,2,4,... up to 4x the CPUs)\n"
    "      --pin POLICY         none (default), spread (thread i on CPU i mod n), single\n"
    "\n"
    "Run shape (locktorture's knobs):\n"
    "  -d, --duration SEC       measured time per run (default 5; sweep 0.3; inject 2)\n"
    "      --warmup SEC         unmeasured start of each run (default 0.1; sweep 0.05)\n"
    "      --cs-ns NS           critical-section length (default 0)\n"
    "      --ncs-ns NS          non-critical work between acquisitions (default 0)\n"
    "      --long-hold-every N  one acquisition in N (random) holds for --long-hold-ns\n"
    "      --long-hold-ns NS    length of a long hold (default 1000000)\n"
    "      --stutter-ms MS      alternate MS running and MS paused (default 0: off)\n"
    "      --nested N           each acquisition takes a random in-order subset of N\n"
    "                           locks (1..8, default 1)\n"
    "      --seed N             seed of the per-thread random streams (default 1)\n"
    "      --lat-every N        time one acquisition in N (default 16; 0: off)\n"
    "      --timeout-us US      rqspinlock timeout per critical section (default: the\n"
    "                           library's, 250 ms)\n"
    "      --timeout-cap-us US  wall-clock cap of one wait, extensions included\n"
    "                           (default: the library's, 8 timeouts; at or below the\n"
    "                           timeout: no extensions)\n"
    "      --overload N         N extra threads spin on the first CPU for the whole run\n"
    "                           (CPU overload; with -t NCPUS --pin spread: one writer\n"
    "                           per CPU, the owner often preempted); default 0\n"
    "      --reps N             repetitions per cell (sweep 5, uncontended 11, hammer 9)\n"
    "      --iters N            pairs per uncontended run (default 1000000), or\n"
    "                           acquisitions per thread per hammer run (500000)\n"
    "      --gaps N             hammer: scan gaps 0..N-1 (1..64) instead, a gap of g\n"
    "                           being a loop of g nops after each unlock; per gap\n"
    "                           ns per acquisition and acquisitions per hand-over\n"
    "\n"
    "      --storm HZ[,HZ...]   a profiler's signal storm: a process-wide ITIMER_PROF\n"
    "                           at each rate; threads take L, handlers take H then L;\n"
    "                           handler and normal-context results and the handlers'\n"
    "                           latency; -t thread counts (default 8,16), -d per run\n"
    "                           (default 2). Fails if a caller that holds nothing\n"
    "                           times out.\n"
    "Deadlock injection (--inject, resilient locks only):\n"
    "      --via direct|signal  direct: threads build the cycle at a barrier each round;\n"
    "                           signal: a per-thread timer (SIGALRM) fires while the\n"
    "                           thread holds its lock and the handler takes the next\n"
    "                           lock (the kernel module's NMI analogue). Default direct.\n"
    "      --hold-us US         signal mode: how long each hold lasts (default 200)\n"
    "      --timer-us US        signal mode: timer period (default 50)\n"
    "\n"
    "Output:\n"
    "      --json FILE          also write JSON ('-': stdout instead of the text)\n"
    "      --csv FILE           also write CSV ('-': stdout instead of the text)\n"
    "      --report             install the library's stderr reporter for failed\n"
    "                           acquisitions (res_spin_report_stderr)\n"
    "  -q, --quiet              no progress line, no text tables\n"
    "  -h, --help               this text\n"
    "      --version            print 'rqtorture VERSION' (the library's) and exit\n"
    "\n"
    "Every run ends with '--- End of test: SUCCESS' or '--- End of test: FAILURE'.\n"
    "Exit status: 0 success, 1 failure (also a report that could not be written),\n"
    "2 bad usage (also a --json or --csv file that cannot be written) or\n"
    "unavailable lock type,\n"
    "3 hang detected (a thread did not finish; the tool exits instead of hanging).\n";

enum {
	OPT_SWEEP = 256,
	OPT_UNCONTENDED,
	OPT_HAMMER,
	OPT_INJECT,
	OPT_STORM,
	OPT_LIST,
	OPT_PIN,
	OPT_WARMUP,
	OPT_CS,
	OPT_NCS,
	OPT_LH_EVERY,
	OPT_LH_NS,
	OPT_STUTTER,
	OPT_NESTED,
	OPT_SEED,
	OPT_LAT,
	OPT_TIMEOUT,
	OPT_REPS,
	OPT_ITERS,
	OPT_VIA,
	OPT_HOLD,
	OPT_TIMER,
	OPT_JSON,
	OPT_CSV,
	OPT_REPORT,
	OPT_OVERLOAD,
	OPT_CAP,
	OPT_GAPS,
	OPT_TIGHT,
	OPT_VERSION,
};

static const struct option long_opts[] = {
    {"sweep", no_argument, NULL, OPT_SWEEP},
    {"uncontended", no_argument, NULL, OPT_UNCONTENDED},
    {"hammer", no_argument, NULL, OPT_HAMMER},
    {"inject", required_argument, NULL, OPT_INJECT},
    {"storm", required_argument, NULL, OPT_STORM},
    {"list", no_argument, NULL, OPT_LIST},
    {"lock", required_argument, NULL, 'l'},
    {"threads", required_argument, NULL, 't'},
    {"pin", required_argument, NULL, OPT_PIN},
    {"duration", required_argument, NULL, 'd'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"cs-ns", required_argument, NULL, OPT_CS},
    {"ncs-ns", required_argument, NULL, OPT_NCS},
    {"long-hold-every", required_argument, NULL, OPT_LH_EVERY},
    {"long-hold-ns", required_argument, NULL, OPT_LH_NS},
    {"stutter-ms", required_argument, NULL, OPT_STUTTER},
    {"nested", required_argument, NULL, OPT_NESTED},
    {"seed", required_argument, NULL, OPT_SEED},
    {"lat-every", required_argument, NULL, OPT_LAT},
    {"timeout-us", required_argument, NULL, OPT_TIMEOUT},
    {"reps", required_argument, NULL, OPT_REPS},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"via", required_argument, NULL, OPT_VIA},
    {"hold-us", required_argument, NULL, OPT_HOLD},
    {"timer-us", required_argument, NULL, OPT_TIMER},
    {"json", required_argument, NULL, OPT_JSON},
    {"csv", required_argument, NULL, OPT_CSV},
    {"report", no_argument, NULL, OPT_REPORT},
    {"overload", required_argument, NULL, OPT_OVERLOAD},
    {"timeout-cap-us", required_argument, NULL, OPT_CAP},
    {"gaps", required_argument, NULL, OPT_GAPS},
    {"tight", no_argument, NULL, OPT_TIGHT},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "rqtorture: invalid %s '%s' (see --help)\n", what, arg);
	return -EINVAL;
}

static int parse_secs(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0) || v > 86400)
		return -EINVAL;
	*out = v;
	return 0;
}

static int add_lock(struct config *cfg, const struct lk_ops *ops)
{
	if (!ops->available) {
		fprintf(stderr, "rqtorture: lock type '%s' is unavailable: %s\n", ops->name,
		        ops->unavailable);
		return -ENOTSUP;
	}
	if (cfg->nlocks >= RQT_MAX_LIST) {
		fprintf(stderr, "rqtorture: more than %d locks listed\n", RQT_MAX_LIST);
		return -E2BIG;
	}
	cfg->locks[cfg->nlocks++] = ops;
	return 0;
}

/* Every lock type that is not named-only; unavailable ones are skipped
 * with a note. */
static int add_all_locks(struct config *cfg)
{
	size_t n;
	const struct lk_ops *t = lk_table(&n);

	for (size_t i = 0; i < n; i++) {
		if (t[i].flags & LK_NAMED_ONLY)
			continue;
		if (!t[i].available) {
			fprintf(stderr, "rqtorture: skipping %s: %s\n", t[i].name,
			        t[i].unavailable);
			continue;
		}
		if (add_lock(cfg, &t[i]))
			return -E2BIG;
	}
	return 0;
}

static int parse_locks(struct config *cfg, const char *arg)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "all") == 0) {
			if (add_all_locks(cfg))
				return -E2BIG;
			continue;
		}
		const struct lk_ops *ops = lk_find(tok);
		if (ops == NULL)
			return bad("lock type", tok);
		int err = add_lock(cfg, ops);
		if (err)
			return err;
	}
	return cfg->nlocks ? 0 : bad("lock list", arg);
}

static int parse_threads(struct config *cfg, const char *arg)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", arg);
	cfg->nthreads = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (cfg->nthreads >= RQT_MAX_LIST) {
			fprintf(stderr, "rqtorture: more than %d thread counts listed\n",
			        RQT_MAX_LIST);
			return -E2BIG;
		}
		if (rqu_parse_decimal(tok, RQT_MAX_THR, &v) || v == 0)
			return bad("thread count", tok);
		cfg->threads[cfg->nthreads++] = (int)v;
	}
	return cfg->nthreads ? 0 : bad("thread list", arg);
}

/* --storm HZ[,HZ...]: SIGPROF rates, 1..100000 per second. */
static int parse_storm(struct config *cfg, const char *arg)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", arg);
	cfg->mode = MODE_STORM;
	cfg->nstorm = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (cfg->nstorm >= RQT_MAX_LIST || rqu_parse_decimal(tok, 100000, &v) || v == 0)
			return bad("storm rate", tok);
		cfg->storm_hz[cfg->nstorm++] = (unsigned)v;
	}
	return cfg->nstorm ? 0 : bad("storm rates", arg);
}

static int parse_inject(struct config *cfg, const char *arg)
{
	cfg->mode = MODE_INJECT;
	if (strcmp(arg, "aa") == 0)
		cfg->inject = INJ_AA;
	else if (strcmp(arg, "abba") == 0)
		cfg->inject = INJ_ABBA;
	else if (strcmp(arg, "abbcca") == 0)
		cfg->inject = INJ_ABBCCA;
	else
		return bad("injection mode", arg);
	return 0;
}

static int parse_choice(const char *arg, const char *what, const char *const *choices)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(arg, choices[i]) == 0)
			return i;
	return bad(what, arg);
}

/* Numeric options: one table instead of one case each. */
static int parse_number(struct config *cfg, int opt, const char *arg)
{
	uint64_t v = 0;
	int err = 0;

	switch (opt) {
	case 'd':
		return parse_secs(arg, &cfg->duration_s) ? bad("duration", arg) : 0;
	case OPT_WARMUP:
		return parse_secs(arg, &cfg->warmup_s) ? bad("warm-up", arg) : 0;
	case OPT_NESTED:
		err = rqu_parse_decimal(arg, RQT_MAX_NEST, &v) || v == 0;
		cfg->nested = (int)v;
		break;
	case OPT_REPS:
		err = rqu_parse_decimal(arg, 255, &v) || v == 0;
		cfg->reps = (int)v;
		break;
	case OPT_OVERLOAD:
		err = rqu_parse_decimal(arg, RQT_MAX_OVERLOAD, &v);
		cfg->overload = (int)v;
		break;
	case OPT_LAT:
		err = rqu_parse_decimal(arg, 1u << 30, &v);
		cfg->lat_every = (unsigned)v;
		break;
	case OPT_GAPS:
		err = rqu_parse_decimal(arg, RQT_MAX_GAPS, &v) || v == 0;
		cfg->gaps = (int)v;
		break;
	case OPT_CAP:
		err = rqu_parse_decimal(arg, 3600ull * 1000000, &v) || v == 0;
		cfg->cap_ns = v * 1000;
		break;
	case OPT_TIMEOUT:
	case OPT_HOLD:
	case OPT_TIMER:
		err = rqu_parse_decimal(arg, 3600ull * 1000000, &v) || (opt == OPT_TIMER && v == 0);
		*(opt == OPT_TIMEOUT ? &cfg->timeout_ns
		  : opt == OPT_HOLD  ? &cfg->hold_ns
		                     : &cfg->timer_ns) = v * 1000;
		break;
	default: {
		uint64_t *dst = opt == OPT_CS         ? &cfg->cs_ns
		                : opt == OPT_NCS      ? &cfg->ncs_ns
		                : opt == OPT_LH_EVERY ? &cfg->long_hold_every
		                : opt == OPT_LH_NS    ? &cfg->long_hold_ns
		                : opt == OPT_STUTTER  ? &cfg->stutter_ms
		                : opt == OPT_SEED     ? &cfg->seed
		                                      : &cfg->iters;
		err = rqu_parse_decimal(arg, opt == OPT_SEED ? UINT64_MAX : 1ull << 40, dst);
		if (opt == OPT_ITERS && *dst == 0)
			err = 1;
	}
	}
	return err ? bad("number", arg) : 0;
}

static void defaults_for_mode(struct config *cfg, bool dur_set, bool warm_set)
{
	bool sweep = cfg->mode == MODE_SWEEP, hammer = cfg->mode == MODE_HAMMER;

	if (!dur_set)
		cfg->duration_s = sweep                                                 ? 0.3
		                  : cfg->mode == MODE_INJECT || cfg->mode == MODE_STORM ? 2.0
		                                                                        : 5.0;
	if (!warm_set)
		cfg->warmup_s = sweep ? 0.05 : 0.1;
	if (cfg->reps == 0)
		cfg->reps = cfg->mode == MODE_UNCONTENDED ? 11 : hammer ? 9 : 5;
	if (cfg->iters == 0)
		cfg->iters = hammer ? 500000 : 1000000;
	if (cfg->nlocks == 0) {
		if (cfg->tight)
			(void)parse_locks(cfg, "rqspinlock,rqspinlock-inline,ql,pthread-spin,"
			                       "pthread-mutex");
		else if (sweep || cfg->mode == MODE_UNCONTENDED)
			add_all_locks(cfg);
		else if (hammer)
			(void)parse_locks(cfg, "rqspinlock,ql,pthread-spin,pthread-mutex");
		else
			cfg->locks[cfg->nlocks++] = lk_find("rqspinlock");
	}
	if (cfg->nthreads == 0 && hammer)
		cfg->threads[cfg->nthreads++] = 2;
	if (cfg->nthreads == 0 && cfg->mode != MODE_INJECT && cfg->mode != MODE_STORM) {
		int max = 4 * ncpus();
		if (sweep) {
			for (int t = 1; t < max && cfg->nthreads < RQT_MAX_LIST - 1; t *= 2)
				cfg->threads[cfg->nthreads++] = t;
			cfg->threads[cfg->nthreads++] = max;
		} else {
			cfg->threads[cfg->nthreads++] = ncpus();
		}
	}
}

static void config_init(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = MODE_TORTURE;
	cfg->nested = 1;
	cfg->pin = "none";
	cfg->seed = 1;
	cfg->lat_every = 16;
	cfg->long_hold_ns = 1000000;
	cfg->hold_ns = 200000;
	cfg->timer_ns = 50000;
}

static int parse_one(struct config *cfg, int c, const char *arg)
{
	static const char *const pins[] = {"none", "spread", "single", NULL};
	static const char *const vias[] = {"direct", "signal", NULL};
	int i;

	switch (c) {
	case OPT_SWEEP:
		cfg->mode = MODE_SWEEP;
		return 0;
	case OPT_UNCONTENDED:
		cfg->mode = MODE_UNCONTENDED;
		return 0;
	case OPT_HAMMER:
		cfg->mode = MODE_HAMMER;
		return 0;
	case OPT_LIST:
		cfg->mode = MODE_LIST;
		return 0;
	case OPT_STORM:
		return parse_storm(cfg, arg);
	case OPT_INJECT:
		return parse_inject(cfg, arg);
	case 'l':
		return parse_locks(cfg, arg);
	case 't':
		return parse_threads(cfg, arg);
	case OPT_PIN:
		i = parse_choice(arg, "pinning policy", pins);
		cfg->pin = i >= 0 ? pins[i] : cfg->pin;
		return i < 0 ? i : 0;
	case OPT_VIA:
		i = parse_choice(arg, "injection path", vias);
		cfg->via_signal = i == 1;
		return i < 0 ? i : 0;
	case OPT_JSON:
		cfg->json_path = arg;
		return 0;
	case OPT_CSV:
		cfg->csv_path = arg;
		return 0;
	case 'q':
		cfg->quiet = true;
		return 0;
	case OPT_TIGHT:
		cfg->tight = true;
		return 0;
	case OPT_REPORT:
		res_spin_set_report_hook(res_spin_report_stderr, NULL);
		return 0;
	default:
		return parse_number(cfg, c, arg);
	}
}

/* @return 0 to run, 1 when --help or --version was printed, -errno on bad usage. */
int parse_options(int argc, char **argv, struct config *cfg)
{
	bool dur_set = false, warm_set = false;
	int c;

	config_init(cfg);
	while ((c = getopt_long(argc, argv, "l:t:d:qh", long_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 1;
		}
		if (c == OPT_VERSION) {
			printf("rqtorture %s\n", rqspinlock_version());
			return 1;
		}
		if (c == '?')
			return -EINVAL;
		dur_set |= c == 'd';
		warm_set |= c == OPT_WARMUP;
		int err = parse_one(cfg, c, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		return bad("argument", argv[optind]);
	if (cfg->mode == MODE_HAMMER && cfg->nthreads > 1) {
		fputs("rqtorture: --hammer takes one thread count, not a list\n", stderr);
		return -EINVAL;
	}
	if (cfg->gaps && cfg->mode != MODE_HAMMER) {
		fputs("rqtorture: --gaps belongs to --hammer\n", stderr);
		return -EINVAL;
	}
	if (cfg->tight && cfg->mode != MODE_UNCONTENDED) {
		fputs("rqtorture: --tight belongs to --uncontended\n", stderr);
		return -EINVAL;
	}
	if (!check_out_path(cfg->json_path) || !check_out_path(cfg->csv_path))
		return -EINVAL;
	defaults_for_mode(cfg, dur_set, warm_set);
	for (int l = 0; cfg->tight && l < cfg->nlocks; l++)
		if (lk_tight(cfg->locks[l]) == NULL) {
			fprintf(stderr, "rqtorture: --tight: lock type '%s' has no tight loop\n",
			        cfg->locks[l]->name);
			return -EINVAL;
		}
	bool stdout_data = (cfg->json_path && strcmp(cfg->json_path, "-") == 0) ||
	                   (cfg->csv_path && strcmp(cfg->csv_path, "-") == 0);
	cfg->text = stdout_data ? stderr : stdout;
	cfg->progress = !cfg->quiet; /* a line in place on a terminal, log lines otherwise */
	return 0;
}
