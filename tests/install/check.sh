#!/usr/bin/env bash
# check.sh SOURCE_DIR BUILD_DIR CC [CXX]: what `make install PREFIX=DIR` installs
# (tests/install/make_targets.sh checks that it runs `cmake --install
# build/gcc --prefix DIR`), into a fresh temporary prefix:
# - every part is there: headers, static and shared libraries, pkg-config
#   files, CMake packages, the tools (each answering --version), man pages;
#   the benchmarks' baseline (rqspinlock/qspinlock.h, ql_spin_*) is not;
# - each shared library exports exactly its header's functions, each in its
#   version node; librqmaps.so and librqbpf.so carry RUNPATH $ORIGIN;
# - consumers of each library (lock.c, maps.c, bpf.c) build against the
#   prefix by pkg-config and by CMake, shared and static, and run with no
#   LD_LIBRARY_PATH; the BPF consumer runs counter.bpf.c, compiled against
#   the installed bpf_res_spin_lock.h, where a clang is installed;
# - examples/ builds from the prefix by CMake (find_package, then its tests
#   run by ctest) and by pkg-config (examples/Makefile, `make check`), C++
#   with CXX where given: every example of each installed part is built
#   and runs.
set -euo pipefail
src=$1 build=$2 cc=$3 cxx=${4:-}
here=$src/tests/install
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
unset LD_LIBRARY_PATH
fail() {
	echo "install: $*" >&2
	exit 1
}
version=$(sed -n 's/^#define RQSPINLOCK_VERSION *"\(.*\)"$/\1/p' "$src/include/rqspinlock.h")

cmake --install "$build" --prefix "$prefix" >/dev/null
inc=$prefix/include
libdir=$(dirname "$(find "$prefix" -name librqspinlock.a | head -1)")
parts=(lock)
[ -f "$libdir/librqmaps.a" ] && parts+=(maps)
[ -f "$libdir/librqbpf.a" ] && parts+=(bpf)
echo "install: parts built: ${parts[*]}"
has() { [[ " ${parts[*]} " == *" $1 "* ]]; }

# Files of each part.
need=("$inc/rqspinlock.h" "$inc/rqspinlock/inline.h" "$inc/rqspinlock/word.h" "$inc/rqspinlock/guard.hpp"
	"$libdir/librqspinlock.a" "$libdir/librqspinlock.so" "$libdir/pkgconfig/rqspinlock.pc"
	"$libdir/cmake/rqspinlock/rqspinlockConfig.cmake" "$prefix/bin/rqtorture"
	"$libdir/librqspinlock-pthread.so" "$prefix/share/bash-completion/completions/rqtorture")
has maps && need+=("$inc/rqmap.h" "$libdir/librqmaps.a" "$libdir/librqmaps.so"
	"$libdir/pkgconfig/rqmaps.pc" "$libdir/cmake/rqmaps/rqmapsConfig.cmake")
has bpf && need+=("$inc/rqbpf.h" "$inc/bpf_res_spin_lock.h" "$libdir/librqbpf.a"
	"$libdir/librqbpf.so" "$libdir/pkgconfig/rqbpf.pc" "$libdir/cmake/rqbpf/rqbpfConfig.cmake"
	"$prefix/bin/rqbpf" "$prefix/share/bash-completion/completions/rqbpf")
for f in "${need[@]}"; do
	[ -e "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
[ ! -e "$inc/rqspinlock/qspinlock.h" ] || fail "the baseline's header is installed"

# man finds every page under the prefix (where man is installed).
pages=("3 rqspinlock" "1 rqtorture" "7 rqspinlock-pthread")
has maps && pages+=("3 rqmap")
has bpf && pages+=("1 rqbpf" "3 rqbpf")
if command -v man >/dev/null; then
	for p in "${pages[@]}"; do
		# shellcheck disable=SC2086
		found=$(MANPATH=$prefix/share/man man -w $p) || fail "man -w $p: not found"
		case $found in "$prefix"/*) ;; *) fail "man -w $p: $found, not the prefix's" ;; esac
	done
else
	echo "install: man not installed: man pages not looked up"
fi

# --version on every installed tool.
for tool in "$prefix"/bin/*; do
	out=$("$tool" --version) || fail "$(basename "$tool") --version failed"
	[ "$out" = "$(basename "$tool") $version" ] || fail "$(basename "$tool") --version: '$out'"
done

# Exports: exactly the functions the header declares
# (scripts/header_functions.sh), and only variables the header names, each
# in the library's version node.
exports() { # library node kind(DF|DO) -> the exported names of that kind
	objdump -T "$1" | awk -v node="$2" -v kind="$3" '$2 == "g" && $4 != "*UND*" {
		if ($6 != node) { print "unversioned: " $7 > "/dev/stderr"; exit 1 }
		if ($3 == kind && $7 != node) print $7 }' | sort
}
check_exports() { # soname node header
	local lib=$libdir/$1 node=$2 header=$3 var
	exports "$lib" "$node" DF >"$tmp/exp" || fail "$1: unversioned exports"
	if command -v gcc >/dev/null; then
		"$src/scripts/header_functions.sh" "$header" "$inc" >"$tmp/decl"
		if ! diff "$tmp/decl" "$tmp/exp" >"$tmp/diff"; then
			cat "$tmp/diff" >&2
			fail "$1 exports (>) differ from $header's functions (<)"
		fi
	fi
	printf '#define RQSPINLOCK_INLINE\n#include <%s>\n' "$header" |
		"$cc" -D_GNU_SOURCE -I"$inc" -E - >"$tmp/pp"
	for var in $(exports "$lib" "$node" DO); do
		grep -w "$var" "$tmp/pp" >/dev/null || fail "$1 exports $var, which $header does not name"
	done
}
check_exports librqspinlock.so RQSPINLOCK_0.1 rqspinlock.h
has maps && check_exports librqmaps.so RQMAPS_0.1 rqmap.h
has bpf && check_exports librqbpf.so RQBPF_0.1 rqbpf.h
for lib in librqmaps.so librqbpf.so; do
	[ -e "$libdir/$lib" ] || continue
	readelf -d "$libdir/$lib" | grep -F 'runpath: [$ORIGIN]' >/dev/null ||
		fail "$lib: no RUNPATH \$ORIGIN"
done

# The BPF program, compiled against the installed BPF-side header.
bpf_obj=
if has bpf; then
	bclang=$(command -v clang-14 || command -v clang || command -v clang-19 || true)
	march=$("$cc" -print-multiarch 2>/dev/null || true)
	if [ -n "$bclang" ] && [ -f /usr/include/bpf/bpf_helpers.h ]; then
		"$bclang" -target bpf -O2 -g -mcpu=v3 ${march:+-I/usr/include/$march} -I"$inc" \
			-c "$src/bpf/tests/progs/counter.bpf.c" -o "$tmp/counter.bpf.o"
		bpf_obj=$tmp/counter.bpf.o
	else
		echo "install: no clang or libbpf headers: the BPF consumer loads no program"
	fi
fi
run() { # program [args]: runs it with no LD_LIBRARY_PATH
	"$@" || fail "$(basename "$1") failed ($?)"
}
arg_of() { [ "$1" = bpf ] && [ -n "$bpf_obj" ] && echo "$bpf_obj"; true; }

# pkg-config: shared (the program's own RUNPATH names the prefix's libdir,
# as under any prefix outside the loader's paths) and static (the project's
# libraries only; the system's stay shared).
export PKG_CONFIG_PATH=$libdir/pkgconfig
command -v pkg-config >/dev/null || fail "pkg-config not installed (Debian: pkg-config)"
for part in "${parts[@]}"; do
	case $part in lock) pc=rqspinlock ;; maps) pc=rqmaps ;; bpf) pc=rqbpf ;; esac
	pcdir=$(pkg-config --variable=libdir "$pc")
	# shellcheck disable=SC2046
	"$cc" -o "$tmp/pc_${part}_shared" "$here/$part.c" $(pkg-config --cflags --libs "$pc") \
		-Wl,-rpath,"$pcdir"
	run "$tmp/pc_${part}_shared" $(arg_of "$part")
	ours=$(pkg-config --static --libs-only-l "$pc" | tr ' ' '\n' | grep -x -- '-lrq[a-z]*' | tr '\n' ' ')
	theirs=$(pkg-config --static --libs-only-l "$pc" | tr ' ' '\n' | grep -vx -- '-lrq[a-z]*' | tr '\n' ' ')
	# shellcheck disable=SC2046,SC2086
	"$cc" -o "$tmp/pc_${part}_static" "$here/$part.c" $(pkg-config --cflags "$pc") \
		$(pkg-config --libs-only-L "$pc") -Wl,-Bstatic $ours -Wl,-Bdynamic $theirs
	if ldd "$tmp/pc_${part}_static" | grep 'librq' >/dev/null; then
		fail "pc_${part}_static links a shared library of the project"
	fi
	run "$tmp/pc_${part}_static" $(arg_of "$part")
done

# CMake: find_package() of each part, shared and static targets.
cmake -S "$here" -B "$tmp/cm" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
	-DRQ_PARTS="$(IFS=';'; echo "${parts[*]}")" >/dev/null
cmake --build "$tmp/cm" >/dev/null
for exe in "$tmp"/cm/*_shared "$tmp"/cm/*_static "$tmp"/cm/*_old_names; do
	[ -x "$exe" ] || continue
	part=$(basename "$exe")
	run "$exe" $(arg_of "${part%%_*}")
done
# The examples, by CMake: every example of the installed parts is there
# (a part skipped for want of clang or libbpf headers says so) and passes.
want=(example_update example_dropin example_dropin_aa)
[ -n "$cxx" ] && want+=(example_update_cxx example_guard)
has maps && want+=(example_maps)
[ -n "$bpf_obj" ] && want+=(example_bpf_run example_bpf_cli)
cmake -S "$src/examples" -B "$tmp/ex" -DCMAKE_C_COMPILER="$cc" ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"} \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" \
	-DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$tmp/ex" >/dev/null
ctest --test-dir "$tmp/ex" -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort >"$tmp/ex_tests"
for t in "${want[@]}"; do
	grep -qx "$t" "$tmp/ex_tests" || fail "examples (CMake): $t not built"
done
ctest --test-dir "$tmp/ex" --output-on-failure >"$tmp/ex_log" 2>&1 || {
	cat "$tmp/ex_log" >&2
	fail "examples (CMake) failed"
}
echo "install: examples by CMake: $(wc -l <"$tmp/ex_tests") tests passed"

# ... and by pkg-config (examples/Makefile), the prefix given as the README
# gives it, on make's command line.
env -u PKG_CONFIG_PATH make -s -C "$src/examples" O="$tmp/exmk" PKG_CONFIG_PATH="$libdir/pkgconfig" \
	CC="$cc" ${cxx:+CXX="$cxx"} \
	CFLAGS="-O2 -Wall -Wextra -Werror" CXXFLAGS="-O2 -Wall -Wextra -Werror" check >"$tmp/exmk_log" 2>&1 || {
	cat "$tmp/exmk_log" >&2
	fail "examples (make, pkg-config) failed"
}
echo "install: examples by pkg-config: built and ran" $(cd "$tmp/exmk" && ls)
echo "install: OK"
