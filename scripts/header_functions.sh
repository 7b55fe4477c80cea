#!/usr/bin/env bash
# scripts/header_functions.sh HEADER INCLUDE_DIR...: the extern functions
# that HEADER (found in the first INCLUDE_DIR) and the headers in the
# directory of its name (rqspinlock/ for rqspinlock.h) declare, as a program
# that includes HEADER sees them, with and
# without the inline fast path (RQSPINLOCK_INLINE), one name a line, sorted.
# From gcc -aux-info, so macros and multi-line declarations are resolved.
set -euo pipefail
header=$1
shift
dirs=()
incs=()
for d in "$@"; do
	dirs+=("$(cd "$d" && pwd)")
	incs+=(-I"$(cd "$d" && pwd)")
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in "" "#define RQSPINLOCK_INLINE"; do
	printf '%s\n#include <%s>\n' "$v" "$header" >"$tmp/decl.c"
	gcc -D_GNU_SOURCE "${incs[@]}" -fsyntax-only -aux-info "$tmp/aux" "$tmp/decl.c"
	grep -F "/* ${dirs[0]}/${header%.h}" "$tmp/aux" | sed -n 's/.*\*\/ extern .*[ *]\([a-z_0-9]*\) (.*/\1/p'
done | sort -u
