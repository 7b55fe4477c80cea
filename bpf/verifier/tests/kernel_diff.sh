#!/bin/sh
# kernel_diff.sh GEN CLANG INCLUDE_DIRS TEST_VERIFIER_OBJS DIR SEED PROGRAMS
# The differential test: gen_locks writes PROGRAMS random lock programs
# (seed SEED) into DIR, CLANG compiles them, and test_verifier_objs
# --kernel compares rqbpf's verdict and message on each with the running
# kernel's. Exit 77 (skipped) without root; test_verifier_objs exits 77
# without a kernel that has bpf_res_spin_lock.
set -eu
gen=$1 clang=$2 incs=$3 objs=$4 dir=$5 seed=$6 n=$7
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: the kernel comparison needs root"
	exit 77
fi
rm -rf "$dir"
mkdir -p "$dir"
"$gen" "$seed" "$n" 50 "$dir"
for src in "$dir"/*.bpf.c; do
	# shellcheck disable=SC2086 # incs is a list of -I options
	"$clang" -target bpf -mcpu=v3 -O2 -g $incs -c "$src" -o "${src%.c}.o"
done
exec "$objs" --kernel /dev/null "$dir"/*.bpf.o
