#!/usr/bin/env bash
# model/check.sh [WORKDIR]: run every Spin configuration of the lock model.
#
# Each line of CHECKS below is one run: name, the spin -D flags (model
# configuration / variant), extra pan compile flags, pan run flags, the
# expected outcome: "pass" (errors: 0, exhaustive) or "fail" (a counterexample
# must be found), and optionally the model file (default rqspinlock.pml; the
# design model owner_word.pml is a proposal's, docs/MODEL.md says which).
# Prints a summary table; exits 1 on any unexpected outcome, 77 (CTest skip)
# when spin or a C compiler is missing.
# docs/MODEL.md explains the configurations, properties and variants.
# Work files go to WORKDIR (default: a fresh temporary directory), never to
# the source tree. RQ_MODEL_JOBS (default 2) runs that many checks at once.
# PAN_CC names the compiler for the verifiers (default: clang if installed,
# else $CC, else cc).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/rq-model.XXXXXX")}
jobs=${RQ_MODEL_JOBS:-2}
# clang builds pan.c (2 MB of generated C) at -O0 in 2 s where gcc takes 5,
# and at -O1 -fno-inline in 7 s where gcc's -O1 takes 16, for the same
# search speed: on the 2-core VM, a third of the model's CPU time.
cc=${PAN_CC:-$(command -v clang || echo "${CC:-cc}")}

if ! command -v spin >/dev/null 2>&1; then
	echo "model/check.sh: spin is not installed (Debian package spin): skipped"
	exit 77
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "model/check.sh: no C compiler ($cc) to build the verifier: skipped"
	exit 77
fi
mkdir -p "$work"

# name | spin defines | pan cc flags | pan flags | expect
# Good models: -O1 -fno-inline (5 s more to build than -O0, a third less
# search: queue's pan CPU is 51 s instead of 74 with clang; inlining would
# double the build and gain nothing). Broken ones stop at the first
# counterexample: -O0. The longest checks come first, so that the two jobs
# end together.
CHECKS=(
	"queue|-DCFG_QUEUE -DTIMEOUTS|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"handoff|-DCFG_HANDOFF -DTIMEOUTS|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"nofault|-DCFG_NOFAULT|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"nest|-DCFG_NEST -DTIMEOUTS|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"nest-relock|-DCFG_NEST -DTIMEOUTS -DNEST_RELOCK|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"abba|-DCFG_ABBA -DTIMEOUTS|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"vanish|-DCFG_VANISH -DTIMEOUTS -DTMO_BUDGET=0|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"frozen|-DCFG_FROZEN -DTIMEOUTS -DTMO_BUDGET=0|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"frozen-claims|-DCFG_FROZEN -DTIMEOUTS -DTMO_BUDGET=0 -DC_FROZEN_CLAIMS -DC_SCAN_HOLDERS|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"abba-claims|-DCFG_ABBA -DTIMEOUTS -DC_FROZEN_CLAIMS -DC_SCAN_HOLDERS|-O1 -fno-inline -DSAFETY|-m400000|pass"
	"broken-no-signal|-DCFG_QUEUE -DTIMEOUTS -DBROKEN_NO_SIGNAL -DBROKEN_NO_OWN_DEADLINE|-O0 -DSAFETY|-m400000|fail"
	"broken-no-tail-reset|-DCFG_QUEUE -DTIMEOUTS -DBROKEN_NO_TAIL_RESET|-O0 -DSAFETY|-m400000|fail"
	"broken-entry-after-cas|-DCFG_NEST -DTIMEOUTS -DBROKEN_ENTRY_AFTER_CAS|-O0 -DSAFETY|-m400000|fail"
	"broken-clear-before-unlock|-DCFG_NEST -DTIMEOUTS -DBROKEN_CLEAR_BEFORE_UNLOCK|-O0 -DSAFETY|-m400000|fail"
	"broken-no-verify|-DCFG_ABBA -DTIMEOUTS -DBROKEN_NO_VERIFY|-O0 -DSAFETY|-m400000|fail"
	"broken-untagged-held|-DCFG_ABBA -DTIMEOUTS -DBROKEN_UNTAGGED_HELD|-O0 -DSAFETY|-m400000|fail"
	"c-aa-exact|-DCFG_NEST -DTIMEOUTS -DC_AA_EXACT|-O0 -DSAFETY|-m400000|fail"
	"c-read-wait|-DCFG_ABBA -DTIMEOUTS -DC_READ_WAIT|-O0 -DSAFETY|-m400000|fail"
	"c-aa-releasing|-DCFG_NEST -DTIMEOUTS -DC_AA_REL|-O0 -DSAFETY|-m400000|fail"
	"broken-frozen-any-claimant|-DCFG_FROZEN -DTIMEOUTS -DTMO_BUDGET=0 -DBROKEN_FROZEN_ANY_CLAIMANT -DC_SCAN_HOLDERS|-O0 -DSAFETY|-m400000|fail"
	"c-frozen-self|-DCFG_ABBA -DTIMEOUTS -DC_FROZEN_SELF -DC_FROZEN_CLAIMS -DC_SCAN_HOLDERS|-O0 -DSAFETY|-m400000|fail"
	"broken-no-own-deadline|-DCFG_VANISH -DTIMEOUTS -DTMO_BUDGET=0 -DBROKEN_NO_OWN_DEADLINE|-O0 -DSAFETY|-m400000|fail"
	"broken-head-blind-set|-DCFG_QUEUE -DTIMEOUTS -DBROKEN_HEAD_BLIND_SET|-O0 -DSAFETY|-m400000|fail"
	"broken-head-keep-pending|-DCFG_QUEUE -DTIMEOUTS -DBROKEN_HEAD_KEEP_PENDING|-O0 -DSAFETY|-m400000|fail"
	"owner-word||-O1 -fno-inline -DSAFETY|-m400000|pass|owner_word.pml"
	"owner-word-no-zero-id|-DNO_ZERO_ID|-O0 -DSAFETY|-m400000|fail|owner_word.pml"
	"owner-word-no-detect|-DNO_DETECT|-O0 -DSAFETY|-m400000|fail|owner_word.pml"
)

# run_check LINE: one verification in its own directory; writes result.txt
run_check() {
	local name defs ccflags panflags expect file dir start rc errors states
	IFS='|' read -r name defs ccflags panflags expect file <<<"$1"
	file=${file:-rqspinlock.pml}
	dir=$work/$name
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || return 1
	cp "$here/$file" .
	start=$(date +%s%N)
	# shellcheck disable=SC2086
	if ! spin -a $defs "$file" >spin.log 2>&1; then
		echo "$name|$expect|spin-error|-|-|-|-" >result.txt
		return 0
	fi
	# shellcheck disable=SC2086
	if ! "$cc" -DCOLLAPSE $ccflags -o pan pan.c >cc.log 2>&1; then
		echo "$name|$expect|cc-error|-|-|-|-" >result.txt
		return 0
	fi
	# pan's own CPU time (user + sys): steadier than wall time on a busy VM
	local TIMEFORMAT='%U %S'
	# shellcheck disable=SC2086
	{ time ./pan $panflags -w24 >pan.log 2>&1; } 2>cpu.log
	rc=$?
	local cpu
	cpu=$(awk '{ printf "%.1f", $1 + $2 }' cpu.log 2>/dev/null)
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -1)
	local ms=$((($(date +%s%N) - start) / 1000000))
	local secs=$((ms / 1000)).$((ms % 1000 / 100))
	local what=-
	if [ -f "$file.trail" ]; then
		what=$(grep -m1 -oE 'assertion violated.*|invalid end state' pan.log | head -1 | cut -c1-60)
		spin -t -p $defs "$file" 2>/dev/null | python3 "$here/trail.py" "$file" >trail.txt 2>/dev/null || true
	fi
	if grep -q "Search not completed" pan.log && [ "${errors:-0}" = 0 ]; then
		errors=incomplete
	fi
	echo "$name|$expect|${errors:-?}|${states:-?}|$secs|${cpu:--}|${what:--}|rc=$rc" >result.txt
}
export -f run_check
export work here cc

start=$(date +%s)
printf '%s\n' "${CHECKS[@]}" | xargs -P "$jobs" -I{} bash -c 'run_check "$1"' _ {}

fail=0
printf '\n%-28s %-7s %-8s %12s %8s %8s  %s\n' check expect errors states seconds pan-cpu counterexample
for line in "${CHECKS[@]}"; do
	name=${line%%|*}
	r=$(cat "$work/$name/result.txt" 2>/dev/null || echo "$name|?|missing|-|-|-|-")
	IFS='|' read -r _ expect errors states secs cpu what _ <<<"$r"
	verdict=ok
	case "$expect:$errors" in
		pass:0) ;;
		fail:[1-9]*) ;;
		*) verdict=UNEXPECTED; fail=1 ;;
	esac
	printf '%-28s %-7s %-8s %12s %8s %8s  %s %s\n' "$name" "$expect" "$errors" "$states" "$secs" "$cpu" "$what" \
		"$([ $verdict = ok ] || echo "<-- $verdict, see $work/$name")"
done
total_cpu=$(cat "$work"/*/cpu.log 2>/dev/null | awk '{ s += $1 + $2 } END { printf "%.0f", s }')
echo "model/check.sh: $(( $(date +%s) - start ))s wall, ${total_cpu}s pan CPU, work files in $work"
if [ $fail -ne 0 ]; then
	echo "model/check.sh: UNEXPECTED RESULT (a good model found a counterexample, or a broken one did not)"
	exit 1
fi
echo "model/check.sh: all results as expected"
