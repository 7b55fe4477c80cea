#!/usr/bin/env bash
# report_frames.sh DROPIN PROGRAM: a failure's stack, as the stock reporter
# prints it (RQSPINLOCK_REPORT=1), starts at the caller's frame: the
# leading frames in the library's own code (here the drop-in, a shared
# object of its own) are left out. PROGRAM is examples/dropin.c, whose
# `aa` relocks its lock from main().
set -euo pipefail
dropin=$1 prog=$2
out=$(LD_PRELOAD=$dropin RQSPINLOCK_PTHREAD_ON_FAIL=return RQSPINLOCK_REPORT=1 "$prog" aa 2>&1)
first=$(sed -n '/^  stack:$/{n;p;q}' <<<"$out")
case $first in
"$prog"* | "./$(basename "$prog")"*) echo "report_frames: the stack starts at $first" ;;
*)
	printf '%s\n' "$out" >&2
	echo "report_frames: the stack starts at '$first', not in $(basename "$prog")" >&2
	exit 1
	;;
esac
