#!/usr/bin/env bash
# run_case.sh MODE CASE PROGRAM [PRELOAD]   (PRELOAD: LD_PRELOAD's list)
#   MODE plain:   PROGRAM as is, on glibc. "basic", "longhold", "atfork" and
#                 "freed" must pass;
#                 every other case deadlocks, which the watchdog proves: it
#                 must still be running after RQ_WATCHDOG_S (3) seconds, at
#                 the call it announced ("waiting: ..."), and get killed.
#   MODE preload: LD_PRELOAD=LIBRARY PROGRAM; must exit 0 (documented results).
#   MODE linked:  PROGRAM is linked against the drop-in; must exit 0.
#   MODE abort:   preload with RQSPINLOCK_PTHREAD_ON_FAIL=abort: the program
#                 must die of SIGABRT after printing the report.
#   MODE default: preload with RQSPINLOCK_PTHREAD_ON_FAIL unset, as an
#                 unmodified program runs: "aa" must die of SIGABRT after the
#                 report (never go on without the lock); "longhold", with a
#                 100 ms timeout, must succeed (a slow owner is not an error)
#                 after one timeout report and a "still waiting" line; "exit"
#                 (the owner exited) must still be waiting, reported once,
#                 when the watchdog kills it, as on glibc.
#   MODE badenv:  preload with invalid values of the drop-in's variables:
#                 the program must run as with the defaults (exit 0) and
#                 stderr must say that each value was ignored.
#   MODE install: PROGRAM is the build directory: install it into a scratch
#                 prefix; the library and the man page must be found there.
#   MODE stress-ng: a third-party program that uses pthread spin locks, run
#                 preloaded (failures abort); CASE is its stressor.
# Exit status 77 (CTest: skipped) when a needed tool is not installed.
set -uo pipefail
mode=$1 case=$2 prog=$3 lib=${4:-}
watchdog=${RQ_WATCHDOG_S:-3}

case "$mode" in
plain)
	case "$case" in basic | longhold | atfork | freed) exec "$prog" "$case" ;; esac
	# timeout signals the whole process group, forked children included.
	out=$(timeout -s KILL "$watchdog" "$prog" "$case")
	rc=$?
	echo "$out"
	# Killed, and waiting at the call that deadlocks (its last line).
	if [ "$rc" -eq 137 ] && [[ "$(tail -n 1 <<<"$out")" == waiting:* ]]; then
		echo "run_case: '$case' on glibc still waiting after ${watchdog}s: killed by the watchdog (a hang, as expected)"
		exit 0
	fi
	echo "run_case: '$case' on glibc: status $rc, last line not 'waiting:' (want a hang there)" >&2
	exit 1
	;;
preload)
	LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" exec "$prog" "$case"
	;;
linked)
	exec "$prog" "$case"
	;;
abort)
	err=$(RQSPINLOCK_PTHREAD_ON_FAIL=abort LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" \
		"$prog" "$case" 2>&1 >/dev/null)
	rc=$?
	echo "$err"
	# 134: the shell's status for a child killed by SIGABRT
	if [ "$rc" -eq 134 ] && grep -q "^rqspinlock: .* on lock 0x" <<<"$err" &&
		grep -q "^  this thread: tid" <<<"$err" && grep -q "^  stack:" <<<"$err"; then
		exit 0
	fi
	echo "run_case: want SIGABRT (134) and a report, got status $rc" >&2
	exit 1
	;;
default)
	unset RQSPINLOCK_PTHREAD_ON_FAIL
	export RQSPINLOCK_PTHREAD_TIMEOUT_MS=100
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# Only the program is preloaded (a sanitizer build of the drop-in loads
	# into sanitized programs only, not into timeout(1)); a watchdog kills it.
	LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" "$prog" "$case" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	(sleep "$watchdog" && kill -KILL "$pid") >/dev/null 2>&1 &
	dog=$!
	wait "$pid"
	rc=$?
	kill "$dog" 2>/dev/null
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
	echo "$out"
	echo "$err"
	reports=$(grep -c "^rqspinlock: .* on lock 0x" <<<"$err")
	waits=$(grep -c "^rqspinlock-pthread: still waiting for the lock" <<<"$err")
	case "$case" in
	aa) [ "$rc" -eq 134 ] && [ "$reports" -eq 1 ] && [ "$waits" -eq 0 ] &&
		! grep -q "^lock again:" <<<"$out" && exit 0 ;;
	longhold) [ "$rc" -eq 0 ] && [ "$reports" -eq 1 ] && [ "$waits" -eq 1 ] && exit 0 ;;
	exit) [ "$rc" -eq 137 ] && [ "$reports" -eq 1 ] && [ "$waits" -eq 1 ] &&
		[[ "$(tail -n 1 <<<"$out")" == waiting:* ]] && exit 0 ;;
	esac
	echo "run_case: default policy, '$case': status $rc, $reports report(s), $waits" \
		"'still waiting' line(s): not what this case wants" >&2
	exit 1
	;;
badenv)
	err=$(RQSPINLOCK_PTHREAD_TIMEOUT_MS=18446744073710 RQSPINLOCK_PTHREAD_ON_FAIL=abrt \
		LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" "$prog" "$case" 2>&1 >/dev/null)
	rc=$?
	echo "$err"
	if [ "$rc" -eq 0 ] &&
		grep -q '^rqspinlock-pthread: ignoring RQSPINLOCK_PTHREAD_TIMEOUT_MS="18446744073710"' <<<"$err" &&
		grep -q '^rqspinlock-pthread: ignoring RQSPINLOCK_PTHREAD_ON_FAIL="abrt"' <<<"$err"; then
		exit 0
	fi
	echo "run_case: want status 0 and both values reported as ignored, got status $rc" >&2
	exit 1
	;;
stress-ng)
	command -v stress-ng >/dev/null || { echo "stress-ng not installed"; exit 77; }
	out=$(RQSPINLOCK_PTHREAD_ON_FAIL=abort LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" \
		stress-ng --"$case" 4 -t 2 --metrics-brief 2>&1)
	rc=$?
	echo "$out"
	[ "$rc" -eq 0 ] && grep -q "successful run completed" <<<"$out"
	exit
	;;
install)
	command -v man >/dev/null || { echo "man not installed"; exit 77; }
	prefix=$(mktemp -d)
	trap 'rm -rf "$prefix"' EXIT
	cmake --install "$prog" --prefix "$prefix" >/dev/null || exit 1
	[ -n "$(find "$prefix" -name "librqspinlock-pthread.so*")" ] || exit 1
	page=$(MANPATH="$prefix/share/man" man -w 7 rqspinlock-pthread) || exit 1
	echo "man finds: ${page#"$prefix"/}"
	MANPATH="$prefix/share/man" man 7 rqspinlock-pthread 2>&1 | grep "PROCESS-SHARED LOCKS" >/dev/null
	exit
	;;
esac
echo "run_case: unknown mode $mode" >&2
exit 2
