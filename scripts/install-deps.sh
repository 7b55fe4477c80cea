#!/usr/bin/env bash
# scripts/install-deps.sh [--check] [build|test|bench|all]
#
# Says which Debian packages a target needs that are missing, and why, then
# (as root, with apt-get) installs them, showing apt-get's output. As another
# user, or with --check, it only says what is missing and what is skipped
# without it. The README's "Requirements" section is the same list.
#
#   build  what `make` / `make install` use: the compilers, CMake, and the
#          libraries of the optional parts (maps, rqbpf, the CK peers)
#   test   build + the sanitizer runtimes, lint, the model checkers and the
#          third-party programs the suite drives (make test)
#   bench  build + valgrind, gnuplot (make bench)
#   all    everything (make deps)
#
# `make` and `make install` never call this: they build with what is there.
set -euo pipefail

check_only=0
if [ "${1:-}" = --check ]; then
	check_only=1
	shift
fi
target=${1:-all}
what="make $target"
[ "$target" = all ] && what="the whole project (make deps)"

# package|target groups|why (what is skipped without it)
table='cmake|build test bench|required: configures the build
make|build test bench|required: the make targets
gcc|build test bench|required: compiles the libraries and tools
pkg-config|build test bench|finds liburcu, libbpf and libelf (without it: no maps, no rqbpf)
ninja-build|build test bench|faster builds (without it: CMake Makefiles)
g++|build test bench|C++ header checks and the C++ example (skipped without it)
liburcu-dev|build test bench|rqmaps (without it: no maps and no rqbpf)
libbpf-dev|build test bench|rqbpf: BTF and section names (without it: no rqbpf)
libelf-dev|build test bench|rqbpf: ELF objects (without it: no rqbpf)
libdw-dev|build test bench|failure reports: file:line and static lock names (without it: addresses)
libck-dev|build test bench|rqtorture Concurrency Kit peer locks (without it: left out)
clang|build test bench|compiles BPF programs for rqbpf tests and bench (without it: skipped)
python3|test bench|test and bench helpers (atomics lint, JSON checks)
clang-19|test|BPF cpu v4 test programs (without it: those tests skipped)
libclang-rt-14-dev|test|clang sanitizer and libFuzzer runtimes (clang-asan, clang-tsan)
libtsan2|test|gcc ThreadSanitizer runtime (gcc-tsan)
libasan8|test|gcc AddressSanitizer runtime (gcc-asan)
libubsan1|test|gcc UndefinedBehaviorSanitizer runtime (gcc-asan)
clang-format|test|lint: formatting
clang-tidy|test|lint: clang-tidy
cppcheck|test|lint: cppcheck
spin|test|formal model check (model_spin; skipped without it)
relacy-dev|test|C11 memory-order model check (model_relacy; skipped without it)
stress-ng|test|third-party program under the pthread drop-in (skipped without it)
man-db|test|checks that the installed man pages are found by man (skipped without it)
valgrind|test bench|callgrind instruction counts (skipped without it)
gnuplot-nox|test bench|PNG plots of the benchmark and its results page (skipped without it)
chromium-headless-shell|test|renders the benchmark results page in the suite (skipped without it)'

case "$target" in
	build | test | bench | all) ;;
	*)
		echo "usage: $0 [--check] [build|test|bench|all]" >&2
		exit 2
		;;
esac

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if ! command -v dpkg-query >/dev/null; then
	echo "install-deps: not a Debian system: install the equivalents of the packages in" \
		"the README's \"Requirements\" section yourself" >&2
	exit 0
fi
missing=()
reasons=()
while IFS='|' read -r pkg groups why; do
	if [ "$target" != all ] && [[ " $groups " != *" $target "* ]]; then
		continue
	fi
	installed "$pkg" && continue
	missing+=("$pkg")
	reasons+=("$(printf '  %-20s %s' "$pkg" "$why")")
done <<<"$table"

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: every Debian package that $what uses is installed"
	exit 0
fi
echo "install-deps: $what uses ${#missing[@]} Debian package(s) that are not installed:"
printf '%s\n' "${reasons[@]}"
if [ "$check_only" -eq 1 ] || [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
	echo "install-deps: not installing them (run 'make deps' as root, or:" \
		"apt-get install ${missing[*]}); the parts that need them are skipped with a message" >&2
	exit 0
fi
echo "install-deps: installing them now with apt-get (as root)"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
