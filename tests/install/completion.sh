#!/usr/bin/env bash
# completion.sh SOURCE_DIR BUILD_DIR [BPF_OBJECT]: the bash completion of
# rqtorture and rqbpf (tools/completion/rq.bash) offers the tools' modes,
# options, lock names and values, rqbpf's commands, and the program and map
# names of an object (BPF_OBJECT, when given and rqbpf is built).
set -euo pipefail
src=$1 build=$2 obj=${3:-}
# shellcheck source=/dev/null
source "$src/tools/completion/rq.bash"
fail() {
	echo "completion: $*" >&2
	exit 1
}
# complete WORD...: the candidates for the last word of the command line.
complete_line() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	_rq_complete
	printf '%s\n' "${COMPREPLY[@]}"
}
expect() { # want line...
	local want=$1 got
	shift
	got=$(complete_line "$@")
	grep -qx -- "$want" <<<"$got" || fail "'$*' offers [$(tr '\n' ' ' <<<"$got")], not $want"
}
rqt=$build/tools/rqtorture
expect --sweep "$rqt" --sw
expect --inject "$rqt" --inj
expect --threads "$rqt" --thr
expect abbcca "$rqt" --inject abb
expect spread "$rqt" --pin s
expect rqspinlock-tas "$rqt" -l rqspinlock-t
expect ql,pthread-mutex "$rqt" --lock ql,pthread-m
[ -z "$(complete_line "$rqt" --threads "")" ] || fail "a number is completed"
checked="rqtorture"
if [ -x "$build/bpf/rqbpf" ]; then
	rqbpf=$build/bpf/rqbpf
	expect run "$rqbpf" r
	expect verify "$rqbpf" ""
	expect --help "$rqbpf" --he
	if [ -n "$obj" ] && [ -f "$obj" ]; then
		expect count "$rqbpf" run "$obj" --prog c
		expect counts "$rqbpf" dump "$obj" --map co
	fi
	checked+=" rqbpf"
fi
echo "completion: OK ($checked)"
