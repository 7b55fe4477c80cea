#!/usr/bin/env bash
# Smoke test of rqtorture (CTest): a short run, its verdict parsed, its JSON
# validated with python3 -m json.tool. Throughput figures are never asserted.
# Usage: smoke.sh RQTORTURE KIND [rqtorture options]
#   KIND: torture | inject | sweep | uncontended | uncontended-tight |
#         overload | hammer | hammer-unlock |
#         hammer-gaps | hammer-table | storm | usage
set -uo pipefail
bin=$1 kind=$2; shift 2
scale=${RQ_TEST_SCALE:-1}
dur=$(awk -v s="$scale" 'BEGIN { d = 0.5 * s; if (d < 0.1) d = 0.1; print d }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" 2>/dev/null; exit 1; }

# A 2 s lock timeout: on a loaded CI machine a preempted owner must not turn
# into a -ETIMEDOUT that the test would count as a false error. (The
# overload check empties it: it is about the default timeout.)
lock_timeout=(--timeout-us 2000000)
check_run() { # expected-rc, then rqtorture arguments
	local want=$1; shift
	timeout 50 "$bin" -q "${lock_timeout[@]}" "$@" --json "$tmp/run.json" >"$tmp/out" 2>&1
	local rc=$?
	[ "$rc" -eq "$want" ] || fail "exit status $rc, expected $want: $*"
	grep -q -- '--- End of test: SUCCESS' "$tmp/out" || fail "no SUCCESS verdict: $*"
	! grep -q -- '--- End of test: FAILURE' "$tmp/out" || fail "FAILURE verdict: $*"
	python3 -m json.tool "$tmp/run.json" >/dev/null || fail "invalid JSON: $*"
	python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["meta"]
assert m["tool"] == "rqtorture" and m["version"] and m["commit"] and m["kernel"], m' \
		"$tmp/run.json" || fail "JSON metadata incomplete: $*"
	grep -q '"verdict":"SUCCESS"' "$tmp/run.json" || fail "JSON verdict not SUCCESS: $*"
}

case $kind in
torture)
	check_run 0 -d "$dur" --warmup 0.02 --cs-ns 50 --long-hold-every 1000 \
		--long-hold-ns 20000 --stutter-ms 50 --seed 7 "$@"
	grep -q '"per_thread":\[' "$tmp/run.json" || fail "no per-thread counts"
	# lockhammer's metrics, consistent with the counts they come from
	python3 - "$tmp/run.json" <<'PY' || fail "lockhammer metrics inconsistent"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["host"] and d["meta"]["cpu_model"], d["meta"]
for r in d["runs"]:
    per = r["per_thread"]
    # (secs is printed to 0.1 ms: a relative tolerance)
    wall = r["secs"] * 1e9 * r["threads"] / r["total"]
    assert abs(r["wall_ns_per_lock"] - wall) <= 0.001 * wall + 0.1, (wall, r)
    assert 0 < r["cpu_ns_per_lock"] <= r["wall_ns_per_lock"] * 1.05, r
    cv = statistics.pstdev(per) / statistics.mean(per)
    assert abs(r["fairness"] - cv) < 1e-3, (r["fairness"], cv)
PY
	;;
output)
	# The text report as a log gets it (stderr not a terminal): a progress
	# line once 5 s have passed, lockhammer's metrics, and no long_hold
	# ratio when there are no long holds.
	timeout 50 "$bin" "${lock_timeout[@]}" -l rqspinlock -t 2 -d 5.5 --warmup 0.02 \
		>"$tmp/out" 2>"$tmp/err" || fail "exit status $?"
	cat "$tmp/out" "$tmp/err"
	grep -q '^rqtorture: progress: rqspinlock  *2 thr  *5\.[0-9]/5\.5 s  acq  *[0-9]*  [0-9.]* Mop/s$' \
		"$tmp/err" || fail "no progress line in the log"
	grep -q ' long_hold=off ' "$tmp/out" || fail "long_hold without long holds"
	grep -q '^  Per lock: [0-9.]* ns wall (.*), [0-9.]* ns CPU (.*)  Fairness: [0-9.]* (' \
		"$tmp/out" || fail "no lockhammer metrics line"
	;;
inject)
	check_run 0 -d "$dur" "$@"
	python3 - "$tmp/run.json" <<'PY' || fail "injection report inconsistent"
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["injected"] > 0, r
assert r["missed"] == 0 and r["false_errors"] == 0 and r["violations"] == 0, r
failing_calls = r["by_EDEADLK"] + r["by_ETIMEDOUT"]
assert sum(r["histogram"].values()) == failing_calls, r
if r["via"] == "direct":
    # every injected cycle is broken; more than one member may fail in a round
    assert r["recovered"] == r["injected"] and failing_calls >= r["recovered"], r
else:
    assert r["recovered"] == failing_calls, r
PY
	;;
sweep)
	check_run 0 --sweep -l rqspinlock,ql,tas -t 1,3 --reps 2 -d 0.05 --warmup 0.01 "$@"
	;;
uncontended)
	check_run 0 --uncontended --reps 3 --iters 20000 "$@"
	;;
uncontended-tight)
	# every type with a tight loop, the unlock experiments included
	check_run 0 --uncontended --tight --reps 3 --iters 20000 \
		-l rqspinlock,rqspinlock-tas,rqspinlock-inline,ql,pthread-spin,pthread-mutex,word-byte,word-store,word-cas,rqspinlock-casunlock "$@"
	python3 - "$tmp/run.json" <<'PY' || fail "tight-loop report inconsistent"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "uncontended-tight" and r["reps"] == 3, r
assert len(r["locks"]) == 10 and r["errors"] == 0, r
assert all(l["median_ns"] > 0 and l["ratio_vs_pthread_spin"] > 0 for l in r["locks"]), r
assert [l["ratio_vs_pthread_spin"] for l in r["locks"]][4] == 1.0, r
PY
	"$bin" --uncontended --tight -l ticket >/dev/null 2>&1; [ $? -eq 2 ] || fail "--tight on a type without a tight loop must exit 2"
	"$bin" --hammer --tight >/dev/null 2>&1; [ $? -eq 2 ] || fail "--tight without --uncontended must exit 2"
	;;
hammer-unlock)
	# the unlock experiments keep mutual exclusion in the hand-over: no
	# error, and the shared count exact (a lost update fails the run)
	check_run 0 --hammer -l rqspinlock,word-byte,word-store,word-cas,rqspinlock-casunlock \
		--reps 2 --iters 20000 "$@"
	;;
overload)
	# The issue's proof at full size: 128 busy threads on one CPU, one
	# writer per CPU, the DEFAULT timeout. A preempted owner must cost
	# deadline extensions, not -ETIMEDOUT (a FAILURE verdict).
	lock_timeout=()
	check_run 0 -l rqspinlock -t 2 --pin spread --overload 128 -d 3 "$@"
	grep -q '"ETIMEDOUT":0' "$tmp/run.json" || fail "timeouts under overload"
	;;
hammer)
	check_run 0 --hammer --reps 3 --iters 20000 "$@"
	python3 - "$tmp/run.json" <<'PY' || fail "hammer report inconsistent"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "hammer" and r["threads"] == 2, r
names = [l["lock"] for l in r["locks"]]
assert names == ["rqspinlock", "ql", "pthread-spin", "pthread-mutex"], names
assert all(l["errors"] == 0 and l["median_ns"] > 0 for l in r["locks"]), r
assert r["locks"][1]["ratio_vs_ql"] == 1.0, r
# runs where a thread waited for a CPU (flagged, not asserted absent)
assert all(0 <= l["preempted_runs"] <= 3 for l in r["locks"]), r
PY
	;;
hammer-gaps)
	check_run 0 --hammer -l rqspinlock,ql --gaps 3 --reps 2 --iters 20000 "$@"
	python3 - "$tmp/run.json" <<'PY' || fail "hammer gap scan report inconsistent"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "hammer-gaps" and r["gaps"] == 3 and r["threads"] == 2, r
assert [l["lock"] for l in r["locks"]] == ["rqspinlock", "ql"], r
for l in r["locks"]:
    assert l["errors"] == 0 and [g["gap"] for g in l["per_gap"]] == [0, 1, 2], l
    # every thread starts at least one run: 1 <= acquisitions per run <= iters
    assert all(g["median_ns"] > 0 and 1 <= g["acq_per_handover"] <= 20000
               for g in l["per_gap"]), l
assert all(g["throughput_vs_ql"] == 1.0 for g in r["locks"][1]["per_gap"]), r
assert all(0 <= l["preempted_runs"] <= 2 * 3 for l in r["locks"]), r
assert r["geomean_throughput_rql_vs_ql"] > 0, r
assert r["geomean_throughput_rql_vs_pthread_mutex"] is None, r  # no mutex in the list
PY
	;;
hammer-table)
	# the held-table and owner-byte experiments keep QL's mutual exclusion:
	# no error, and the shared count exact (a lost update fails the run)
	check_run 0 --hammer -l ql,ql-notable,ql-ktable,ql-rqtable,ql-owner,ql-owner-check,rqspinlock-inline \
		--reps 2 --iters 20000 "$@"
	python3 - "$tmp/run.json" <<'PY' || fail "held-table hammer report inconsistent"
import json, sys
r = json.load(open(sys.argv[1]))
names = ["ql", "ql-notable", "ql-ktable", "ql-rqtable", "ql-owner", "ql-owner-check",
         "rqspinlock-inline"]
assert [l["lock"] for l in r["locks"]] == names, r
assert all(l["errors"] == 0 and l["ratio_vs_ql"] > 0 for l in r["locks"]), r
assert r["locks"][0]["ratio_vs_ql"] == 1.0, r
PY
	;;
storm)
	# A profiler's SIGPROF storm at 10 kHz over 8 threads, the default
	# timeout: a normal-context call holds nothing, so any -ETIMEDOUT there
	# is a cycle that detection missed (the tool's FAILURE verdict).
	timeout 50 "$bin" --storm 10000 -t 8 -d "$dur" >"$tmp/out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	grep -q -- '--- End of test: SUCCESS' "$tmp/out" || fail "no SUCCESS verdict"
	cat "$tmp/out"
	;;
usage)
	help=$("$bin" --help) || fail "--help exit status"
	grep -q '^Usage: rqtorture' <<<"$help" || fail "--help text"
	ver=$("$bin" --version) || fail "--version exit status"
	grep -qx 'rqtorture [0-9]*\.[0-9]*\.[0-9]*' <<<"$ver" || fail "--version: $ver"
	"$bin" --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option must exit 2"
	"$bin" -l nosuchlock >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown lock must exit 2"
	"$bin" --inject aa -l ql >/dev/null 2>&1; [ $? -eq 2 ] || fail "inject on QL must exit 2"
	"$bin" -t 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "zero threads must exit 2"
	"$bin" --hammer -t 1,2 >/dev/null 2>&1; [ $? -eq 2 ] || fail "hammer thread list must exit 2"
	for g in 0 65 x; do
		"$bin" --hammer --gaps "$g" >/dev/null 2>&1; [ $? -eq 2 ] || fail "--gaps $g must exit 2"
	done
	"$bin" --sweep --gaps 2 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--gaps without --hammer must exit 2"
	# Lists past their 32 entries, and numbers with a sign or a space.
	many=$(printf 'tas,%.0s' $(seq 32))tas
	out=$("$bin" -l "$many" -d 0.01 2>&1 >/dev/null); [ $? -eq 2 ] || fail "33 locks must exit 2"
	grep -q 'more than 32 locks' <<<"$out" || fail "33 locks: say why ($out)"
	"$bin" --seed ' -1' -d 0.01 >/dev/null 2>&1; [ $? -eq 2 ] || fail "a signed seed must exit 2"
	"$bin" -t ' 1' -d 0.01 >/dev/null 2>&1; [ $? -eq 2 ] || fail "a spaced count must exit 2"
	# A report that cannot be written: refused before the run (2), or the
	# run fails when writing it does (1).
	"$bin" -q -l tas -t 1 -d 0.01 --warmup 0 --json /nonexistent/dir/x.json >/dev/null 2>&1
	[ $? -eq 2 ] || fail "unwritable --json path must exit 2"
	if [ -w /dev/full ]; then
		"$bin" -q -l tas -t 1 -d 0.01 --warmup 0 --csv /dev/full >/dev/null 2>&1
		[ $? -eq 1 ] || fail "a failed --csv write must exit 1"
		"$bin" -q -l tas -t 1 -d 0.01 --warmup 0 >/dev/full 2>/dev/null
		[ $? -eq 1 ] || fail "a failed write to stdout must exit 1"
	fi
	list=$("$bin" --list) || fail "--list exit status"
	grep -q '^rqspinlock ' <<<"$list" || fail "--list text"
	;;
*)
	fail "unknown kind $kind"
	;;
esac
echo "ok: $kind $*"
