#!/usr/bin/env bash
# make_targets.sh SOURCE_DIR: what the Makefile's targets run, read with
# `make -n` (nothing is built or installed):
# - make, make build and make install never run the package installer;
# - make deps, make test and make bench do, for their own list;
# - make install PREFIX=X hands X to `cmake --install --prefix` only, never to
#   the configure step (whose cache would make it the next default);
# - scripts/install-deps.sh --check lists, for each target, and refuses an
#   unknown one.
set -euo pipefail
cd "$1"
fail() {
	echo "make_targets: $*" >&2
	exit 1
}
dry() { make -s -n "$@"; }

for t in "" all build install "install PREFIX=/tmp/x"; do
	# shellcheck disable=SC2086
	if dry $t | grep install-deps >/dev/null; then
		fail "'make $t' runs the package installer"
	fi
done
dry deps | grep -x 'scripts/install-deps.sh all' >/dev/null || fail "make deps: no install-deps.sh all"
dry test | grep -x 'scripts/install-deps.sh test' >/dev/null || fail "make test: no install-deps.sh test"
dry bench | grep -x 'scripts/install-deps.sh bench' >/dev/null || fail "make bench: no install-deps.sh bench"

out=$(dry install PREFIX=/tmp/rq-prefix)
echo "$out" | grep -F 'cmake --install build/gcc --prefix "/tmp/rq-prefix"' >/dev/null ||
	fail "make install PREFIX: not passed to cmake --install: $out"
if echo "$out" | grep CMAKE_INSTALL_PREFIX >/dev/null; then
	fail "make install PREFIX=... stores the prefix in the cache: $out"
fi
dry install | grep -x 'cmake --install build/gcc *' >/dev/null || fail "make install: $(dry install)"

for t in build test bench all; do
	scripts/install-deps.sh --check "$t" >/dev/null || fail "install-deps --check $t failed"
done
if scripts/install-deps.sh --check nonsense >/dev/null 2>&1; then
	fail "install-deps accepted an unknown target"
fi
echo "make_targets: OK"
