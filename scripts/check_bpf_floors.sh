#!/usr/bin/env bash
# The floors of bpf/ and of maps/src/ (docs/HACKING.md, "bpf/" and "maps/"):
# a file includes only headers of its own floor or below, so no import
# circle spans two floors, and each floor is one concern. The verifier
# includes nothing from bpf/src/ (only the contract floor and itself). The
# maps' floors are numbered above bpf/'s: neither includes the other's
# private headers. Tests are not checked. Exit 1 on a violation.
set -euo pipefail
cd "$(dirname "$0")/.."

# The floor of a file of bpf/, by its path; empty for one that has none.
floor_of() {
	case "$1" in
	bpf/include/*.h) echo 0 ;; # the public headers
	bpf/contract/*) echo 0 ;;  # prog.h, isa, the table of calls
	bpf/verifier/*.[ch]) echo 1 ;;
	bpf/src/error.[ch]) echo 2 ;;
	bpf/src/object.h) echo 3 ;; # the object's structures
	bpf/src/maps.[ch] | bpf/src/map_*.c) echo 4 ;;
	bpf/src/runtime.[ch] | bpf/src/interp.c | bpf/src/helpers.c | bpf/src/helpers_loop.c | bpf/src/test_run.c) echo 5 ;;
	bpf/src/loader_*.[ch]) echo 6 ;;
	bpf/src/object.c | bpf/src/version.c) echo 7 ;; # the public API
	bpf/tools/*.[ch] | bpf/bench/*.c) echo 8 ;;
	maps/src/words.[ch] | maps/src/sys.h) echo 10 ;; # element words, system services
	maps/src/fork_gate.[ch]) echo 11 ;;
	maps/src/readers.[ch]) echo 12 ;;  # registration, read-side sections
	maps/src/freelist.[ch]) echo 13 ;;
	maps/src/reclaim.[ch]) echo 14 ;;  # retire stacks, reclaim thread
	maps/src/hash_internal.h | maps/src/hash.c | maps/src/lpm.c | maps/src/array.c) echo 15 ;;
	maps/src/version.c) echo 16 ;;
	esac
}

# Where "#include NAME" in @1 resolves inside bpf/ (the build's include
# directories), or nothing for a header from outside (rqspinlock.h, rqmap.h).
resolve() {
	local from=$1 name=$2 d
	for d in "$(dirname "$from")" bpf/contract bpf/src bpf/verifier bpf/include maps/src; do
		if [ -f "$d/$name" ]; then
			realpath --relative-to=. "$d/$name"
			return
		fi
	done
}

rc=0
for f in $(git ls-files 'bpf/*.c' 'bpf/*.h' 'maps/src/*.c' 'maps/src/*.h' | grep -v -e '/tests/' -e '\.bpf\.c$'); do
	mine=$(floor_of "$f")
	if [ -z "$mine" ]; then
		echo "$f: no floor (scripts/check_bpf_floors.sh, floor_of)"
		rc=1
		continue
	fi
	while read -r name; do
		h=$(resolve "$f" "$name")
		[ -n "$h" ] || continue
		theirs=$(floor_of "$h")
		if [ "${theirs:-9}" -gt "$mine" ]; then
			echo "$f (floor $mine) includes $h (floor ${theirs:-?})"
			rc=1
		fi
		case "$f:$h" in
		bpf/verifier/*:bpf/src/*)
			echo "$f: the verifier includes $h from bpf/src/"
			rc=1
			;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)"$/\1/p' "$f")
done
exit $rc
