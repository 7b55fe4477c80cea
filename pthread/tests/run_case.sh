#!/usr/bin/env bash
# run_case.sh MODE CASE PROGRAM [LIBRARY]
#   MODE plain:   PROGRAM as is, on glibc. "basic" must pass; every other case
#                 deadlocks, which the watchdog proves: it must still be
#                 running after RQ_WATCHDOG_S (3) seconds and get killed.
#   MODE preload: LD_PRELOAD=LIBRARY PROGRAM; must exit 0 (documented results).
#   MODE linked:  PROGRAM is linked against the drop-in; must exit 0.
set -uo pipefail
mode=$1 case=$2 prog=$3 lib=${4:-}
watchdog=${RQ_WATCHDOG_S:-3}

case "$mode" in
plain)
	if [ "$case" = basic ]; then
		exec "$prog" "$case"
	fi
	# timeout signals the whole process group, forked children included.
	timeout -s KILL "$watchdog" "$prog" "$case"
	rc=$?
	if [ "$rc" -eq 137 ]; then
		echo "run_case: '$case' on glibc still waiting after ${watchdog}s: killed by the watchdog (a hang, as expected)"
		exit 0
	fi
	echo "run_case: '$case' on glibc exited with $rc instead of hanging" >&2
	exit 1
	;;
preload)
	LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" exec "$prog" "$case"
	;;
linked)
	exec "$prog" "$case"
	;;
esac
echo "run_case: unknown mode $mode" >&2
exit 2
