#!/usr/bin/env bash
# Installs the Debian packages the project needs when they are missing.
# As root it runs apt-get; otherwise it only reports what is missing.
# Required: the compilers and CMake. Optional ones (Ninja for faster
# builds, gnuplot for plots, libck for the Concurrency Kit peers, liburcu for
# the maps, spin for the formal model, valgrind for instruction counts,
# stress-ng as a third-party user of pthread spin locks, man-db to check the
# installed man page) degrade gracefully where absent.
# rqbpf (bpf/) needs libbpf-dev and libelf-dev, and clang for its BPF test
# programs (clang-19 adds the cpu v4 ones).
set -euo pipefail
pkgs=(cmake make ninja-build gcc g++ clang libclang-rt-14-dev libtsan2 libasan8 libubsan1
      clang-format clang-tidy cppcheck valgrind pkg-config python3
      libck-dev liburcu-dev gnuplot-nox spin relacy-dev stress-ng man-db
      libbpf-dev libelf-dev clang-19)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	echo "install-deps: not root; missing Debian packages: ${missing[*]}" >&2
	echo "install-deps: features that need them are skipped with a message" >&2
fi
