#!/usr/bin/env bash
# report_frames.sh DROPIN PROGRAM: a failure's stack, as the stock reporter
# prints it (RQSPINLOCK_REPORT=1), starts at the caller's frame: the
# leading frames in the library's own code (here the drop-in, a shared
# object of its own) are left out. PROGRAM is examples/dropin.c, whose
# `aa` relocks its lock from main(); with libdw, the summary names the lock
# by its static symbol ("(lock)") and the frame by dropin.c's line.
set -euo pipefail
dropin=$1 prog=$2
out=$(LD_PRELOAD=$dropin RQSPINLOCK_PTHREAD_ON_FAIL=return RQSPINLOCK_REPORT=1 "$prog" aa 2>&1)
first=$(sed -n '/^  stack:$/{n;p;q}' <<<"$out")
# Symbolized (libdw): "    #0 FUNC at FILE:LINE (MODULE+0xOFF)"; otherwise
# glibc's "PROGRAM(+0xOFF)[0xADDR]".
case $first in
"$prog"* | "./$(basename "$prog")"* | "    #0 "*"($(basename "$prog")+0x"*)
	echo "report_frames: the stack starts at $first"
	;;
*)
	printf '%s\n' "$out" >&2
	echo "report_frames: the stack starts at '$first', not in $(basename "$prog")" >&2
	exit 1
	;;
esac
if [[ $first == "    #0 "* ]]; then
	head -n1 <<<"$out" | grep -q ' on lock 0x[0-9a-f]* (lock), tid [0-9]*, in [a-z_]* at dropin.c:[0-9]*$' || {
		printf '%s\n' "$out" >&2
		echo "report_frames: the summary does not name the lock and the line" >&2
		exit 1
	}
fi
