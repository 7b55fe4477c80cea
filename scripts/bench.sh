#!/usr/bin/env bash
# make bench: build rqtorture (Release, in build/bench), then
#   1. sweep every lock type over thread counts 1..4x the CPUs (interleaved,
#      repeated, medians), with the RQL/QL table of the kernel cover letter;
#      and the RQL/pthread_mutex table (goal at 1 and 2 threads, reported
#      beyond the CPUs);
#   2. uncontended lock+unlock cost: in each type's tight loop (direct calls)
#      against glibc, with the unlock experiments, ns and instructions; then
#      through rqtorture's lock table: ns (interleaved) and callgrind
#      instruction counts (also of the opt-in RQSPINLOCK_INLINE fast path
#      and of QL with the kernel's and rqspinlock's held-table work);
#      then the two-thread hammer (critical section one shared increment,
#      500k acquisitions per thread, 9 interleaved repetitions): ns per
#      acquisition, ratios to QL, pthread_spin and pthread_mutex; the
#      same loop with 0..15 nops after each unlock (--gaps 16), with the
#      acquisitions per hand-over; and the hammer on QL with the held-table
#      work alone (the table's share of the gap);
#   3. deadlock injection AA / ABBA / ABBCCA, direct and from signal handlers,
#      with recovery-latency histograms;
#   4. the pthread drop-in: glibc pthread_spin_lock against the same calls with
#      LD_PRELOAD=librqspinlock-pthread.so (uncontended and 1..4x CPUs threads,
#      interleaved, medians, ratios, callgrind counts);
#   5. BPF-style maps (rqmapbench): update, replace-heavy and lookup throughput
#      of the hash map for three lock designs, with the issue's goals checked;
#   6. BPF: a program that takes a value's bpf_res_spin_lock, increments a
#      counter and unlocks, run by rqbpf, by plain C on rqspinlock and by the
#      kernel's BPF_PROG_TEST_RUN (root only), on 1..4x the CPUs; and the
#      interpreter's ns per instruction (skipped if rqbpf is not built);
#   7. PNG plots with gnuplot (skipped, with a message, if gnuplot is absent);
#   8. the summary (headline ratios printed; every result, one row each, in
#      summary.txt and summary.csv) and the results page index.html with its
#      plots (scripts/bench_report.py).
# Results: build/bench-results/ (text, CSV, JSON, PNG). About 6 minutes on 2 CPUs.
# The experiments (rqtorture's table and unlock experiments on QL, the
# hammer's gap scan) run only with --experiments (BENCH_EXPERIMENTS=1) and
# with --core.
# scripts/bench.sh --plots redraws the plots of the last run; --report redoes
# its summary and page; --dropin runs only section 4; --hammer only the
# two-thread hammer; --core only the tight loop, the uncontended pair and the
# hammer, with the goals (the CPU and the goals against glibc and QL, in
# goals.txt, also printed at the end of a full run); --publish copies
# the last run into docs/bench-results/ and docs/img/ and refreshes docs/BENCHMARKS.md.
# Exit status: 0 when every step ran (FAILURE verdicts are reported, not fatal),
# 1 when the tool could not run or detected a hang.
#
# Knobs (environment): BENCH_THREADS (list, default 1,2,4,..,4xCPUs plus 8xCPUs),
# BENCH_REPS (5), BENCH_DURATION (0.3 s per run), BENCH_INJECT_DURATION (2 s),
# BENCH_LOCKS (all), BENCH_OUT (build/bench-results), BENCH_CALLGRIND_ITERS (100000),
# BENCH_PIN (none; spread pins thread i to CPU i mod n), BENCH_ARGS (more rqtorture
# options for the sweep, e.g. "--cs-ns 100 --ncs-ns 200"), BENCH_MAPS_REPS (5),
# BENCH_MAPS_MS (200 ms per map run; 0 skips the maps step), BENCH_HAMMER_REPS (9),
# BENCH_HAMMER_ITERS (500000 acquisitions per thread and run).
set -euo pipefail
cd "$(dirname "$0")/.."

ncpu=$(nproc)
default_threads() {
	local t=1 list=""
	while [ "$t" -lt $((4 * ncpu)) ]; do list+="$t,"; t=$((t * 2)); done
	echo "${list}$((4 * ncpu)),$((8 * ncpu))"
}
threads=${BENCH_THREADS:-$(default_threads)}
reps=${BENCH_REPS:-5}
dur=${BENCH_DURATION:-0.3}
idur=${BENCH_INJECT_DURATION:-2}
locks=${BENCH_LOCKS:-all}
out=${BENCH_OUT:-build/bench-results}
cg_iters=${BENCH_CALLGRIND_ITERS:-100000}
pin=${BENCH_PIN:-none}
maps_reps=${BENCH_MAPS_REPS:-5}
maps_ms=${BENCH_MAPS_MS:-200}
bin=build/bench/tools/rqtorture
mapbin=build/bench/maps/rqmapbench
status=0
# rqtorture's experiment types on QL, named only (docs/BENCHMARKS.md, "The
# table's share"): measured uncontended and in a hammer of their own; and the
# unlock experiments (locks_unlock.c). Run only with --experiments (or
# BENCH_EXPERIMENTS=1) and by --core: a plain `make bench` compares the
# locks people use.
experiments=ql-notable,ql-ktable,ql-rqtable,ql-owner,ql-owner-check
unlock_experiments=word-byte,word-store,word-cas,rqspinlock-casunlock
with_experiments=${BENCH_EXPERIMENTS:-0}

say() { printf '\n=== %s ===\n' "$*"; }

# Run rqtorture, teeing its report to a file (-a: append). Exit status 1 is
# a FAILURE verdict (reported, not fatal); 2 or more means the tool could not
# run or detected a hang: make bench then fails.
verdict_failures=0
run() {
	local tee_opt=() rc
	if [ "$1" = -a ]; then tee_opt=(-a); shift; fi
	local file=$1; shift
	set +e
	"$bin" "$@" | tee "${tee_opt[@]}" "$file"
	rc=${PIPESTATUS[0]}
	set -e
	if [ "$rc" -eq 1 ]; then
		verdict_failures=$((verdict_failures + 1))
	elif [ "$rc" -ne 0 ]; then
		echo "bench: rqtorture $* exited with status $rc" >&2
		status=1
	fi
}

# build_targets T...: builds them in build/bench, printing only warnings and
# errors (no progress lines, and no make's directory lines, which a make
# called from make prints).
build_targets() {
	cmake --build build/bench --target "$@" -j"$ncpu" 2>&1 |
		{ grep -Ev '^\[|^-- |^g?make\[[0-9]+\]: (Entering|Leaving) directory' || true; }
}

build() {
	say "build (Release, build/bench)"
	cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
	build_targets rqtorture rqspinlock_pthread
	test -x "$bin"
	# rqmapbench exists only when liburcu was found (maps/ is skipped otherwise)
	cmake --build build/bench --target rqmapbench -j"$ncpu" >/dev/null 2>&1 || true
	mkdir -p "$out"
}

# The CPU as /proc/cpuinfo names it, with its family, model and stepping
# (a guest's model name may be generic: "AMD EPYC"; the family tells the
# core generation, e.g. AMD 23 Zen 1/2, 25 Zen 3/4, 26 Zen 5).
cpu_model() {
	awk -F': *' '/^vendor_id/ && !v { v = $2 } /^cpu family/ && !f { f = $2 }
		/^model\t/ && !m { m = $2 } /^model name/ && !n { n = $2 }
		/^stepping/ && !s { s = $2 }
		END { printf "%s (%s, family %s, model %s, stepping %s)\n", n, v, f, m, s }' /proc/cpuinfo
}

describe_machine() {
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "online CPUs (nproc): $ncpu"
		echo "CPU: $(cpu_model)"
		lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Hypervisor vendor|L2 cache|L3 cache)' || true
		echo "kernel: $(uname -sr)"
		echo "compiler: $(cc --version | head -1)"
		echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$out/machine.txt"
	cat "$out/machine.txt"
}

sweep() {
	say "throughput sweep: threads $threads, $reps reps x ${dur}s, locks $locks, pinning $pin ${BENCH_ARGS:-}"
	# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
	run "$out/sweep.txt" --sweep -l "$locks" -t "$threads" --reps "$reps" -d "$dur" --pin "$pin" \
		${BENCH_ARGS:-} --csv "$out/sweep.csv" --json "$out/sweep.json"
}

uncontended() {
	say "uncontended lock+unlock pair"
	# Named-only types ("all" leaves them out of the sweep), measured beside
	# rqspinlock: rqspinlock-inline (the opt-in RQSPINLOCK_INLINE fast path)
	# and the experiments on QL (docs/BENCHMARKS.md, "The table's share"):
	# what the kernel's and rqspinlock's table work cost on QL, and an owner
	# in the lock word instead; with QL itself, their reference.
	local ulocks=$locks named
	local named_list="rqspinlock-inline ql"
	[ "$with_experiments" = 1 ] && named_list+=" ${experiments//,/ }"
	if [[ ",$locks," == *",all,"* || ",$locks," == *",rqspinlock,"* ]]; then
		for named in $named_list; do
			[[ ",$ulocks," == *",$named,"* ]] && continue
			[[ $named == ql && ",$ulocks," == *",all,"* ]] && continue # "all" has it
			ulocks+=",$named"
		done
	fi
	run "$out/uncontended.txt" --uncontended -l "$ulocks" --reps 11 --pin spread \
		--csv "$out/uncontended.csv" --json "$out/uncontended.json"
	if ! command -v valgrind >/dev/null; then
		echo "bench: valgrind not found (Debian package valgrind): skipping instruction counts"
		return
	fi
	{
		echo
		echo "Instructions per uncontended lock+unlock pair (callgrind, lkop_* wrappers" \
			"included: +2 per pair for every lock)"
		printf '%-18s %10s %8s %8s\n' lock instr "vs ql" "vs pspin"
	} | tee -a "$out/uncontended.txt"
	local tmp l ir
	tmp=$(mktemp -d)
	echo "lock,instructions_per_pair" >"$tmp/cg.csv"
	# the locks the run above measured, in its order
	for l in $(awk -F, 'NR > 1 { print $1 }' "$out/uncontended.csv"); do
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect='lkop_*' \
			"$bin" -q --uncontended -l "$l" --reps 1 --iters "$cg_iters" >/dev/null 2>&1 || continue
		ir=$(awk '/^summary:/ { print $2 }' "$tmp/cg.out")
		echo "$l,$(awk -v i="$ir" -v n="$cg_iters" 'BEGIN { printf "%.2f", i / n }')" >>"$tmp/cg.csv"
	done
	awk -F, 'NR > 1 { v[$1] = $2; o[++n] = $1 }
		END { for (i = 1; i <= n; i++) { l = o[i]
			printf "%-18s %10.2f %8.2f %8.2f\n", l, v[l], v["ql"] ? v[l] / v["ql"] : 0,
				v["pthread-spin"] ? v[l] / v["pthread-spin"] : 0 } }' "$tmp/cg.csv" |
		tee -a "$out/uncontended.txt"
	cp "$tmp/cg.csv" "$out/callgrind.csv"
	rm -rf "$tmp"
}

# The uncontended pair in each type's tight loop (direct calls, no lk_ops
# indirection) against glibc, with the unlock experiments (locks_unlock.c):
# a word lock released by a byte store, a 32-bit store or a CAS, and
# rqspinlock released by that CAS (docs/BENCHMARKS.md, "Core speed against
# glibc"); then their instructions per pair (the loop's 3 included).
tight_locks=rqspinlock,rqspinlock-inline,ql,pthread-spin,pthread-mutex
tight() {
	[ "$with_experiments" = 1 ] && tight_locks+=",$unlock_experiments"
	say "uncontended pair, tight loop: 21 interleaved reps x 2000000 pairs"
	run "$out/tight.txt" --uncontended --tight -l "$tight_locks" --reps 21 --iters 2000000 \
		--pin spread --csv "$out/tight.csv" --json "$out/tight.json"
	command -v valgrind >/dev/null || return 0
	{
		echo
		echo "Instructions per pair in the tight loop (callgrind, tight_* loops: the loop's" \
			"3 included)"
		printf '%-22s %10s %8s\n' lock instr "vs pspin"
	} | tee -a "$out/tight.txt"
	local l ir tmp
	tmp=$(mktemp -d)
	for l in ${tight_locks//,/ }; do
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect='tight_*' \
			"$bin" -q --uncontended --tight -l "$l" --reps 1 --iters "$cg_iters" >/dev/null 2>&1 ||
			continue
		ir=$(awk '/^summary:/ { print $2 }' "$tmp/cg.out")
		echo "$l $(awk -v i="$ir" -v n="$cg_iters" 'BEGIN { printf "%.2f", i / n }')"
	done | awk '{ v[$1] = $2; o[++n] = $1 } END { for (i = 1; i <= n; i++)
		printf "%-22s %10.2f %8.2f\n", o[i], v[o[i]], v["pthread-spin"] ? v[o[i]] / v["pthread-spin"] : 0 }' |
		tee -a "$out/tight.txt"
	rm -rf "$tmp"
}

hammer() {
	local hreps=${BENCH_HAMMER_REPS:-9} hiters=${BENCH_HAMMER_ITERS:-500000}
	say "two-thread hammer: $hreps interleaved reps x $hiters acquisitions per thread"
	run "$out/hammer.txt" --hammer --reps "$hreps" --iters "$hiters" --pin spread \
		--csv "$out/hammer.csv" --json "$out/hammer.json"
	if [ "$with_experiments" != 1 ]; then
		echo "(the hammer's gap scan and the held-table and unlock experiments: bench.sh --experiments)"
		# an earlier run's, which the report and --publish would take for this one's
		rm -f "$out"/hammer-gaps.* "$out"/hammer-table.* "$out"/hammer-unlock.*
		return
	fi
	# The same loop with 0..15 nops after each unlock: how much of the
	# figure above is the loop's shape (docs/BENCHMARKS.md, "Two-thread hammer").
	say "two-thread hammer, gap scan: 16 gaps x 5 interleaved reps x 200000 acquisitions"
	run "$out/hammer-gaps.txt" --hammer -l rqspinlock,ql,pthread-spin,pthread-mutex --gaps 16 --reps 5 \
		--iters 200000 --pin spread --csv "$out/hammer-gaps.csv" --json "$out/hammer-gaps.json"
	# QL with a held-lock table's fast-path work and nothing else (the
	# kernel's, rqspinlock's), QL naming its owner in the lock word instead,
	# and rqspinlock's inline fast path: what the table alone costs in this
	# loop (docs/BENCHMARKS.md, "The table's share").
	say "two-thread hammer, the held table's share: $hreps interleaved reps x $hiters acquisitions"
	run "$out/hammer-table.txt" --hammer -l "ql,$experiments,rqspinlock-inline" \
		--reps "$hreps" --iters "$hiters" --pin spread --json "$out/hammer-table.json"
	# The unlock experiments in the hand-over (the tight loop's, above).
	say "two-thread hammer, the unlock's share: $hreps interleaved reps x $hiters acquisitions"
	run "$out/hammer-unlock.txt" --hammer \
		-l "rqspinlock,$unlock_experiments,pthread-spin,pthread-mutex" \
		--reps "$hreps" --iters "$hiters" --pin spread --json "$out/hammer-unlock.json"
}

# The goals: the CPU, and the goals against glibc and QL (docs/BENCHMARKS.md,
# "Goals"), from the reports above, into goals.txt.
goals() {
	say "goals against glibc and QL"
	{
		echo "CPU: $(cpu_model), $ncpu online; load average at start:" \
			"$(awk -F': ' '/^load average at start/ { print $2 }' "$out/machine.txt" 2>/dev/null)"
		local f
		for f in tight uncontended hammer sweep; do
			[ -f "$out/$f.txt" ] || continue
			echo
			echo "$f:"
			case $f in
			hammer) awk '/^(lock|rqspinlock|ql|pthread-spin|pthread-mutex) / { print "  " $0 }' \
				"$out/hammer.txt" ;;
			esac
			awk '/^Goals/ { keep = 1 } keep && (/^$/ || /^---/) { keep = 0 }
				keep { print "  " $0 }' "$out/$f.txt"
		done
	} | tee "$out/goals.txt"
}

inject() {
	local k via
	say "deadlock injection (rqspinlock), ${idur}s each"
	: >"$out/inject.txt"
	echo "inject,via,bucket,upper_ns,count" >"$out/recovery.csv"
	for k in aa abba abbcca; do
		for via in direct signal; do
			run -a "$out/inject.txt" --inject "$k" --via "$via" -d "$idur" \
				--json "$out/inject-$k-$via.json" --csv "$out/inject-$k-$via.csv"
			tail -n +2 "$out/inject-$k-$via.csv" >>"$out/recovery.csv"
			rm -f "$out/inject-$k-$via.csv"
		done
	done
	{
		echo
		echo "Recovery latency summary (ns; failing calls, start of res_spin_lock to its return)"
		printf '%-8s %-7s %10s %10s %8s %8s %10s %12s\n' mode via injected recovered p50 p99 \
			p99.9 max
	} | tee -a "$out/inject.txt"
	for k in aa abba abbcca; do
		for via in direct signal; do
			python3 - "$out/inject-$k-$via.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
l = r["recovery_latency_ns"]
print("%-8s %-7s %10d %10d %8d %8d %10d %12d" % (r["inject"], r["via"], r["injected"],
      r["recovered"], l["p50"], l["p99"], l["p999"], l["max"]))
PY
		done
	done | tee -a "$out/inject.txt"
}

# glibc's pthread_spin_lock against the drop-in, on rqtorture's pthread-spin
# lock type: the same binary, run plain and with LD_PRELOAD, alternating.
dropin() {
	local lib=build/bench/pthread/librqspinlock-pthread.so r t tlist="" ir err="$out/dropin-stderr.txt"
	say "pthread drop-in: glibc vs LD_PRELOAD=librqspinlock-pthread.so, $reps reps"
	t=1
	while [ "$t" -lt $((4 * ncpu)) ]; do tlist+="$t,"; t=$((t * 2)); done
	tlist+=$((4 * ncpu))
	echo "mode,rep,threads,value" >"$out/dropin-raw.csv"
	: >"$err"
	for r in $(seq "$reps"); do
		for mode in glibc preload; do
			local pre=()
			[ "$mode" = preload ] && pre=(env "LD_PRELOAD=$PWD/$lib")
			"${pre[@]}" "$bin" -q --uncontended -l pthread-spin --reps 1 --csv - 2>>"$err" |
				awk -F, -v m="$mode" -v r="$r" '$1 == "pthread-spin" { print m "," r ",0," $2 }' \
					>>"$out/dropin-raw.csv"
			"${pre[@]}" "$bin" -q --sweep -l pthread-spin -t "$tlist" --reps 1 -d "$dur" --csv - 2>>"$err" |
				awk -F, -v m="$mode" -v r="$r" '$2 == "pthread-spin" { print m "," r "," $1 "," $3 }' \
					>>"$out/dropin-raw.csv"
		done
	done
	echo "mode,instructions_per_pair" >"$out/dropin-callgrind.csv"
	if command -v valgrind >/dev/null; then
		for mode in glibc preload; do
			local pre=()
			[ "$mode" = preload ] && pre=(env "LD_PRELOAD=$PWD/$lib")
			"${pre[@]}" valgrind --tool=callgrind --callgrind-out-file="$out/dropin.cg" \
				--toggle-collect='lkop_*' "$bin" -q --uncontended -l pthread-spin --reps 1 \
				--iters "$cg_iters" >/dev/null 2>&1 || continue
			ir=$(awk '/^summary:/ { print $2 }' "$out/dropin.cg")
			echo "$mode,$(awk -v i="$ir" -v n="$cg_iters" 'BEGIN { printf "%.2f", i / n }')" \
				>>"$out/dropin-callgrind.csv"
		done
		rm -f "$out/dropin.cg"
	fi
	python3 - "$out" "$ncpu" <<'PY' | tee "$out/dropin.txt"
import csv, statistics, sys
out, ncpu = sys.argv[1], int(sys.argv[2])
v = {}
for row in csv.DictReader(open(f"{out}/dropin-raw.csv")):
    v.setdefault((row["mode"], int(row["threads"])), []).append(float(row["value"]))
cg = {r["mode"]: float(r["instructions_per_pair"]) for r in csv.DictReader(open(f"{out}/dropin-callgrind.csv"))}
med = {k: statistics.median(x) for k, x in v.items()}
print("pthread drop-in (rqtorture pthread-spin; medians of interleaved runs);")
print("ratio = speed ratio drop-in / glibc (glibc ns / drop-in ns, drop-in ops/s / glibc ops/s):")
print("above 1 the drop-in is faster")
g, p = med[("glibc", 0)], med[("preload", 0)]
print(f"uncontended lock+unlock pair: glibc {g:.2f} ns, drop-in {p:.2f} ns, ratio {g / p:.2f}")
if cg:
    print("instructions per pair (callgrind, +2 lkop wrapper): glibc %s, drop-in %s" %
          (cg.get("glibc", "-"), cg.get("preload", "-")))
print("%-8s %14s %14s %8s" % ("threads", "glibc ops/s", "drop-in ops/s", "ratio"))
over = []
for t in sorted({t for (_, t) in med if t}):
    r = med[("preload", t)] / med[("glibc", t)]
    if t > ncpu:
        over.append(r)
    print("%-8d %14.0f %14.0f %8.2f" % (t, med[("glibc", t)], med[("preload", t)], r))
print("Goals (drop-in vs glibc)")
print("  uncontended speed ratio >= 0.83 (at most 1.20x the time): %.2f %s" %
      (g / p, "PASS" if p / g <= 1.2 else "FAIL"))
if over:
    print("  oversubscribed (threads > %d) throughput >= 1.00x: min %.2f %s" %
          (ncpu, min(over), "PASS" if min(over) >= 1.0 else "FAIL"))
PY
}

maps() {
	say "maps: rqmapbench, $maps_reps reps x ${maps_ms} ms"
	if [ "$maps_ms" = 0 ]; then
		echo "bench: BENCH_MAPS_MS=0: skipping the maps"
		return
	fi
	if [ ! -x "$mapbin" ]; then
		echo "bench: rqmapbench not built (maps need liburcu-dev): skipping the maps"
		return
	fi
	if ! "$mapbin" -r "$maps_reps" -d "$maps_ms" -c "$out/maps.csv" | tee "$out/maps.txt"; then
		echo "bench: rqmapbench failed" >&2
		status=1
	fi
}

# gnuplot's y axis for data files (a header line, then a label or x column
# and values): a log scale where the positive values span a factor of 3 or
# more, else linear from 0 (a log scale over a narrow span hides the
# differences).
y_axis() { # [--log-floor Y] FILE...: with a log scale, the axis starts at Y
	local floor=
	if [ "$1" = --log-floor ]; then
		floor=$2
		shift 2
	fi
	awk -v floor="$floor" 'FNR > 1 { for (i = 2; i <= NF; i++) { v = $i + 0
			if (v > 0) { if (!n++ || v < lo) lo = v; if (v > hi) hi = v } } }
		END { if (n && hi / lo >= 3) {
				print "set logscale y 10"
				if (floor != "") print "set yrange [" floor ":*]"
			} else print "unset logscale y; set yrange [0:*]" }' "$@"
}

# Maps plot: one panel per mix, throughput of the three lock designs.
plot_maps() {
	[ -f "$out/maps.csv" ] || return 0
	local mix
	for mix in update replace lookup; do
		awk -F, -v m="$mix" 'NR == 1 { print "threads rq-bucket pthread-bucket global-lock" }
			$1 == m { print $2, $3, $4, $5 }' "$out/maps.csv" >"$out/maps-$mix.dat"
	done
	gnuplot <<EOF
set terminal pngcairo size 1500,520 font ",11"
set output "$out/maps.png"
set termoption noenhanced
set multiplot layout 1,3 title "rqmaps hash map: ops/s vs threads (${ncpu}-CPU VM, median of ${maps_reps} interleaved runs of ${maps_ms} ms)"
set grid
set logscale x 2
$(y_axis "$out"/maps-*.dat)
set key bottom left
set xlabel "threads"
set ylabel "operations per second (median)"
do for [m in "update replace lookup"] {
	set title m
	plot for [i=2:4] sprintf("$out/maps-%s.dat", m) using 1:i with linespoints lw 2 \
		title columnheader(i)
}
unset multiplot
EOF
}

# Hammer plot: ns per acquisition per lock (median), one bar each.
plot_hammer() {
	[ -f "$out/hammer.csv" ] || return 0
	awk -F, 'NR > 1 { print $2, $3 }' "$out/hammer.csv" >"$out/hammer.dat"
	gnuplot <<EOF
set terminal pngcairo size 800,480 font ",11"
set output "$out/hammer.png"
set termoption noenhanced
set title "Two-thread hammer: ns per acquisition (median of interleaved runs; lower is faster)"
set style data histograms
set style fill solid 0.8 border -1
set grid ytics
set yrange [0:*]
set ylabel "ns per acquisition"
plot "$out/hammer.dat" using 2:xtic(1) notitle
EOF
}

plots() {
	say "plots"
	if ! command -v gnuplot >/dev/null; then
		echo "bench: gnuplot not found; install gnuplot-nox (make deps, as root)" \
			"to get the PNG plots. Skipping plots; the tables above are complete."
		return
	fi
	local nlocks
	# Throughput, one column per lock: threads, then the medians ("-" = none).
	awk -F, 'NR > 1 { if (!($2 in col)) { col[$2] = ++nc; name[nc] = $2 }
		if (!($1 in row)) { row[$1] = ++nr; th[nr] = $1 }
		v[row[$1], col[$2]] = $3 }
		END { printf "threads"; for (j = 1; j <= nc; j++) printf " %s", name[j]; print ""
			for (i = 1; i <= nr; i++) { printf "%s", th[i]
				for (j = 1; j <= nc; j++) printf " %s", (v[i, j] > 0 ? v[i, j] : "-"); print "" } }' \
		"$out/sweep.csv" >"$out/throughput.dat"
	nlocks=$(($(head -1 "$out/throughput.dat" | wc -w) - 1))
	# RQL/pthread_mutex: ratio of the medians (the paired one is in sweep.txt)
	awk -F, 'NR > 1 && $2 == "rqspinlock" { r[$1] = $6; m[$1] = $3; o[++n] = $1 }
		NR > 1 && $2 == "rqspinlock-tas" { t[$1] = $6 }
		NR > 1 && $2 == "pthread-mutex" { x[$1] = $3 }
		END { print "threads RQL/QL RQL-TAS/QL RQL/pthread_mutex"
			for (i = 1; i <= n; i++) print o[i], r[o[i]], (o[i] in t ? t[o[i]] : "-"),
				(x[o[i]] > 0 ? m[o[i]] / x[o[i]] : "-") }' \
		"$out/sweep.csv" >"$out/ratio.dat"
	# Recovery histogram, one column per mode: bucket label, then counts.
	awk -F, 'NR > 1 { key = $1 "-" $2; if (!(key in col)) { col[key] = ++nc; hdr[nc] = key }
		if (!($3 in row)) { row[$3] = ++nr; lab[nr] = $3 }
		c[row[$3], col[key]] = $5 }
		END { printf "bucket"; for (j = 1; j <= nc; j++) printf " %s", hdr[j]; print ""
			for (i = 1; i <= nr; i++) { any = 0
				for (j = 1; j <= nc; j++) if (c[i, j] > 0) any = 1
				if (!any) continue
				printf "%s", lab[i]; for (j = 1; j <= nc; j++) printf " %d", c[i, j] + 0; print "" } }' \
		"$out/recovery.csv" >"$out/recovery.dat"
	gnuplot <<EOF
set terminal pngcairo size 1000,620 font ",11"
set datafile missing "-"
set key outside right noenhanced
set termoption noenhanced
set grid
set logscale x 2
$(y_axis "$out/throughput.dat")
set xlabel "threads ($ncpu CPUs; right of x=$ncpu is oversubscribed)"
set ylabel "acquisitions per second (median)"
set title "Throughput vs threads, all locks ($ncpu-CPU VM, ${reps} interleaved runs of ${dur}s)"
set output "$out/throughput.png"
plot for [i=2:$((nlocks + 1))] "$out/throughput.dat" using 1:i with linespoints lw 2 \
	title columnheader(i)
set output "$out/ratio.png"
unset logscale y
set yrange [*:*]
set ylabel "throughput ratio (to QL: median of paired runs)"
set title "rqspinlock / qspinlock-baseline (QL) and / pthread_mutex throughput ratios"
plot for [i=2:4] "$out/ratio.dat" using 1:i with linespoints lw 2 title columnheader(i), \
	0.95 with lines dt 2 lc rgb "red" title "goal 0.95", 1 with lines dt 3 lc rgb "gray" notitle
set output "$out/recovery.png"
unset logscale x
$(y_axis --log-floor 0.8 "$out/recovery.dat")
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -45
set xlabel "recovery latency bucket (start of the failing res_spin_lock to its return)"
set ylabel "failed acquisitions"
set title "Deadlock recovery latency: AA / ABBA / ABBCCA, direct and from signal handlers"
plot for [i=2:7] "$out/recovery.dat" using i:xtic(1) title columnheader(i)
EOF
	plot_maps
	plot_hammer
	ls -1 "$out"/*.png
}

# --publish: copy the last run into the repository (docs/bench-results/, docs/img/)
# and refresh the generated tables of docs/BENCHMARKS.md between its
# <!-- bench:NAME --> markers.
publish() {
	mkdir -p docs/bench-results docs/img
	cp "$out"/*.txt "$out"/*.csv "$out"/*.json "$out"/*.dat docs/bench-results/
	cp "$out"/*.png docs/img/
	python3 - "$out" docs/BENCHMARKS.md <<'PY'
import re, sys
out, doc = sys.argv[1], sys.argv[2]
def read(name):
    with open(f"{out}/{name}") as f:
        return f.read()
def block(text, start, stop=None):
    """Lines from the one starting with start up to (not including) a blank line or stop."""
    lines, keep = [], False
    for line in text.splitlines():
        if line.startswith(start):
            keep = True
        elif keep and (line.strip() == "" or (stop and line.startswith(stop))):
            break
        if keep:
            lines.append(line)
    return "\n".join(lines)
sweep, unc, inj = read("sweep.txt"), read("uncontended.txt"), read("inject.txt")
hammer = read("hammer.txt")
parts = {
    "mutex": block(sweep, "rqspinlock (RQL) vs glibc pthread_mutex"),
    "hammer": block(hammer, "Hammer") + "\n\n" + block(hammer, "Goals"),
    # The machine, not the date: the doc describes the present run (git dates it).
    "machine": "\n".join(l for l in read("machine.txt").strip().splitlines()
                         if not l.startswith("date:")),
    "throughput": block(sweep, "Throughput"),
    "ratio": block(sweep, "rqspinlock (RQL) vs qspinlock"),
    "goals": block(sweep, "Goals"),
    "uncontended": block(unc, "Uncontended") + "\n\n" + block(unc, "Instructions"),
    "recovery": block(inj, "Recovery latency summary"),
    "histogram": read("recovery.dat").strip(),
}
try:  # results of a run before the gap scan existed have none
    gaps = read("hammer-gaps.txt")
    parts["hammer-gaps"] = block(gaps, "Hammer gap scan") + "\n\n" + block(gaps, "Over the")
except FileNotFoundError:
    pass
try:  # nor one before the tight loop
    tight = read("tight.txt")
    parts["tight"] = "\n\n".join(block(tight, h) for h in
                                 ("Uncontended lock+unlock pair, tight", "Goals", "Instructions"))
except FileNotFoundError:
    pass
try:  # nor one before the table's share
    table = read("hammer-table.txt")
    parts["hammer-table"] = block(table, "Hammer") + "\n\n" + block(table, "The held table")
except FileNotFoundError:
    pass
try:
    maps = read("maps.txt")
    parts["maps"] = "\n\n".join(block(maps, h) for h in
                                ("rqmapbench", "update throughput", "replace throughput",
                                 "lookup throughput", "Goals"))
except FileNotFoundError:
    pass
for name in ("dropin", "bpf"):  # each step's whole report (absent when skipped)
    try:
        parts[name] = read(name + ".txt").strip()
    except FileNotFoundError:
        pass
text = open(doc).read()
for name, body in parts.items():
    text = re.sub(r"(<!-- bench:%s -->\n```\n).*?(```\n<!-- /bench:%s -->)" % (name, name),
                  lambda m: m.group(1) + body + "\n" + m.group(2), text, flags=re.S)
open(doc, "w").write(text)
PY
	echo "bench: results copied to docs/bench-results/ and docs/img/; docs/BENCHMARKS.md tables refreshed"
}

bpf_section() {
	local bthreads t=1
	say "BPF: rqbpf vs plain C vs kernel BPF_PROG_TEST_RUN"
	build_targets rqbpfbench || true
	if [ ! -x build/bench/bpf/rqbpfbench ] || [ ! -f build/bench/bpf/counter.bpf.o ]; then
		echo "bench: rqbpf not built (needs libbpf-dev, libelf-dev, liburcu-dev, clang): skipping"
		return
	fi
	bthreads=
	while [ "$t" -lt $((4 * ncpu)) ]; do bthreads+="$t,"; t=$((t * 2)); done
	bthreads+=$((4 * ncpu))
	set +e
	build/bench/bpf/rqbpfbench build/bench/bpf/counter.bpf.o --threads "${BENCH_BPF_THREADS:-$bthreads}" \
		--reps "$reps" --duration "$dur" --csv "$out/bpf-raw.csv" | tee "$out/bpf.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "bench: rqbpfbench reported errors" >&2; status=1; }
	set -e
	command -v valgrind >/dev/null || return 0
	local v ir rq=0
	echo "Instructions per run (callgrind, one thread, 100000 runs):" | tee -a "$out/bpf.txt"
	for v in rqbpf rqbpf-spin C; do
		valgrind --tool=callgrind --callgrind-out-file="$out/bpf-cg.out" --toggle-collect=cg_region \
			build/bench/bpf/rqbpfbench build/bench/bpf/counter.bpf.o --callgrind "$v" \
			--iters 100000 >/dev/null 2>&1 || continue
		ir=$(awk '/^summary:/ { printf "%.1f", $2 / 100000 }' "$out/bpf-cg.out")
		[ "$v" = rqbpf ] && rq=$ir
		printf '%-8s %10s\n' "$v" "$ir" | tee -a "$out/bpf.txt"
	done
	rm -f "$out/bpf-cg.out"
	awk -v a="$rq" -v b="$ir" 'BEGIN { if (b > 0) printf "rqbpf/C instructions: %.2f\n", a / b }' |
		tee -a "$out/bpf.txt"
}

# The summary and the results page, from the result files above.
report() {
	say "summary (every result: $out/summary.txt; the page: $out/index.html)"
	python3 scripts/bench_report.py "$out" || status=1
}

case "${1:-}" in
--experiments) # the whole run, with the experiments
	with_experiments=1
	shift
	;;
esac
case "${1:-}" in
--plots) # redraw the plots of an earlier run
	plots
	exit 0
	;;
--report) # the summary and page of an earlier run
	report
	exit $status
	;;
--publish)
	publish
	exit 0
	;;
--dropin) # the pthread drop-in section only
	build
	dropin
	exit $status
	;;
--hammer) # the two-thread hammer only
	build
	hammer
	exit $status
	;;
--core) # the core speed against glibc only: tight loop, uncontended, hammer
	with_experiments=1
	build
	describe_machine
	tight
	uncontended
	hammer
	goals
	exit $status
	;;
esac
build
describe_machine
sweep
tight
uncontended
hammer
inject
dropin
maps
bpf_section
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
plots
goals
say "done: results in $out/"
grep -hs -- '--- End of test' "$out"/sweep.txt "$out"/tight.txt "$out"/uncontended.txt "$out"/hammer.txt \
	"$out"/hammer-gaps.txt "$out"/hammer-table.txt "$out"/inject.txt | sort | uniq -c
if [ "$verdict_failures" -gt 0 ]; then
	echo "bench: $verdict_failures run(s) ended with a FAILURE verdict: see the reports above"
fi
report
exit $status
