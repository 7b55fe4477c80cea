#!/usr/bin/env bash
# check.sh BUILD_DIR CC: install BUILD_DIR into a temporary prefix, then build
# and run consumer.c against the installed copy with pkg-config (shared and
# static) and with CMake's find_package(rqmaps) (both targets).
set -euo pipefail
build=$1 cc=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/rqmap.h"
libdir=$(dirname "$(find "$prefix" -name librqmaps.a | head -1)")
test -f "$libdir/librqmaps.a"
test -e "$libdir/librqmaps.so"
test -f "$libdir/pkgconfig/rqmaps.pc"

# pkg-config: the .pc files name the configured prefix; --define-prefix
# relocates them to where they were installed.
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc="pkg-config --define-prefix"
# shellcheck disable=SC2046
"$cc" -o "$tmp/pc_shared" "$here/consumer.c" $($pc --cflags --libs rqmaps)
LD_LIBRARY_PATH=$libdir "$tmp/pc_shared"
# shellcheck disable=SC2046
"$cc" -o "$tmp/pc_static" "$here/consumer.c" $($pc --cflags rqmaps) \
	-Wl,-Bstatic $($pc --libs-only-l --static rqmaps | sed 's/-lpthread//') -Wl,-Bdynamic \
	$($pc --libs-only-L rqmaps) -lpthread
if ldd "$tmp/pc_static" | grep 'librqmaps\|librqspinlock' >/dev/null; then
	echo "pc_static links a shared rqmaps/rqspinlock" >&2
	exit 1
fi
"$tmp/pc_static"

# find_package(rqmaps)
cmake -S "$here" -B "$tmp/cm" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/cm/consumer_shared"
"$tmp/cm/consumer_static"
echo "maps_install: OK"
