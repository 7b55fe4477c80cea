#!/usr/bin/env bash
# doc_example.sh SOURCE_DIR RQBPF CLANG: docs/BPF.md's first program (the
# first ```c block, which is examples/counter.bpf.c) built and run by the
# commands of the ```sh block after it, each "$ " line run as written
# (rqbpf the built one, clang the one found, -I for the headers of the
# source tree), and its output compared with the lines the doc shows (the
# run's ns_per_run and the verifier's instruction count taken as any number).
set -euo pipefail
src=$1 rqbpf=$2 clang=$3
doc=$src/docs/BPF.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "not ok - bpf_doc_example: $*"
	exit 1
}
awk '/^```c$/ && !done { on = 1; next } /^```$/ && on { on = 0; done = 1 } on' "$doc" >"$tmp/counter.bpf.c"
cmp -s "$tmp/counter.bpf.c" "$src/examples/counter.bpf.c" ||
	fail "the program in docs/BPF.md is not examples/counter.bpf.c"
awk '/^```c$/ { c = 1 } c && /^```sh$/ && !done { on = 1; next } /^```$/ && on { on = 0; done = 1 } on' \
	"$doc" >"$tmp/session"
[ -s "$tmp/session" ] || fail "no \`\`\`sh block after the program"
# The commands, as written, with the tools of this build.
rqbpf() { "$rqbpf" "$@"; }
clang() { "$clang" -I"$src/bpf/include" "$@"; }
cd "$tmp"
want="" got="" out=""
while IFS= read -r line; do
	if [[ $line == '$ '* ]]; then
		out=$(eval "${line#\$ }" 2>&1) || fail "'${line#\$ }' failed: $out"
		[ -z "$out" ] || got+=$out$'\n'
	else
		want+=$line$'\n'
	fi
done <"$tmp/session"
pattern() { sed -E 's/ns_per_run=[0-9]+/ns_per_run=N/; s/\([0-9]+ insns processed\)/(N insns processed)/'; }
[ "$(pattern <<<"$got")" = "$(pattern <<<"$want")" ] ||
	fail "output differs from the doc:"$'\n'"$got"$'\n'"doc:"$'\n'"$want"
echo "ok - bpf_doc_example"
