#!/usr/bin/env bash
# make soak: the long false-positive soak of the deadlock detector.
# Threads take up to 4 of 64 locks in one global (ascending) order, so every
# -EDEADLK or -ETIMEDOUT is a false positive. Runs in both slow-path modes.
# Usage: scripts/soak.sh [ACQUISITIONS per mode (default 10000000)] [THREADS (default 8)]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000000}
threads=${2:-8}
scripts/build.sh gcc
rc=0
for mode in queued tas; do
	echo "=== soak: $mode mode, $n acquisitions, $threads threads ==="
	if ! RQSPINLOCK_MODE=$mode build/gcc/tests/test_soak --acquisitions "$n" --threads "$threads"; then
		echo "soak FAILED in $mode mode"
		rc=1
	fi
done
[ "$rc" -eq 0 ] && echo "soak: no errors"
exit $rc
