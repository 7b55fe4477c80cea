#!/usr/bin/env bash
# The rqbpf command in bpftool's manner: help and VERB --help, -j for every
# verb (one JSON document, errors included), repeated options that work or
# are refused, options of another verb refused, dump of a map beside a
# program that cannot be loaded, and keys and values typed by BTF (text and
# JSON) for every kind typed.bpf.c holds.
set -u
bin=$1 dir=$2
obj=$dir/res_lock.clang14.bpf.o
[ -f "$obj" ] || obj=$dir/res_lock.clang19.bpf.o
cobj=${obj/res_lock/conform} mobj=${obj/res_lock/multi} robj=${obj/res_lock/ringbuf}
fail() { echo "not ok - $*"; exit 1; }
expect_rc() { # rc, command...
	local want=$1 rc; shift
	"$@" >/tmp/rqbpf-cli.$$ 2>&1; rc=$?
	[ "$rc" -eq "$want" ] || { cat /tmp/rqbpf-cli.$$; fail "$* exited $rc, want $want"; }
}
trap 'rm -f /tmp/rqbpf-cli.$$' EXIT
# bpftool's manner: help, VERB --help, -j for every verb (one JSON document,
# errors included), repeated options that work or are refused, dump of a map
# beside a program that cannot be loaded.
"$bin" help | grep -q '^usage: rqbpf list OBJ' || fail "help"
for verb in list run verify dump; do
	"$bin" help "$verb" | grep -q "^usage: rqbpf $verb OBJ" || fail "help $verb"
	"$bin" "$verb" --help | grep -q "^usage: rqbpf $verb OBJ" || fail "$verb --help"
done
expect_rc 2 "$bin" help frobnicate
jcheck() { python3 -c "import json, sys; d = json.load(sys.stdin); $1" || fail "json: $1"; }
"$bin" -j list "$mobj" | jcheck 'assert d["progs"][2]["name"] == "trace_pid" and "error" in d["progs"][2]; assert d["maps"][0] == {"name": "stats", "type": "array", "key_size": 4, "value_size": 8, "max_entries": 4}'
"$bin" verify "$mobj" --json | jcheck 'assert [p["accepted"] for p in d] == [True, True, False]'
"$bin" -j run "$obj" --prog order_ab --threads 2 --repeat 5 --set slots:1=0000000005000000 --dump slots |
	jcheck 'assert d["runs"] == 10 and d["retvals"] == [{"retval": 0, "count": 10}] and d["faults"] == 0; e = d["maps"][0]["elements"][1]; assert e["formatted"] == {"key": 1, "value": {"lock": {"val": 0}, "hits": 5}}, e; assert e["key"] == ["0x01", "0x00", "0x00", "0x00"]'
"$bin" -j dump "$cobj" --map conform.rodata | jcheck 'assert d[0]["elements"][0]["formatted"]["value"] == {"rodata_table": [11, 22, 33, 44]}'
"$bin" -j run "$robj" --prog produce --repeat 2 --ringbuf events | jcheck 'assert d["ringbuf"]["records"] == 2 and len(d["ringbuf"]["data"]) == 2'
"$bin" -j --version | jcheck 'assert d["name"] == "rqbpf"'
out=$("$bin" -j run /nonexistent.o --prog x) && fail "-j run of a missing object"
jcheck 'assert "error" in d' <<<"$out"
out=$("$bin" -j run "$obj" --prog order_ab --threads 1 --threads 2) && fail "--threads twice"
jcheck 'assert d == {"error": "--threads given twice"}' <<<"$out"
expect_rc 2 "$bin" run "$obj" --prog order_ab --ringbuf a --ringbuf b
expect_rc 2 "$bin" run "$obj" --prog order_ab --repeat 2 repeat 3
expect_rc 2 "$bin" list "$obj" --threads 2
grep -q 'list does not take --threads' /tmp/rqbpf-cli.$$ || fail "an option of another verb"
out=$("$bin" verify "$obj" --prog order_ab --prog same_element_twice -v -v) || fail "two --prog in verify"
[ "$(grep -c ': accepted' <<<"$out")" -eq 2 ] || fail "verify of two --prog: $out"
out=$("$bin" dump "$obj" --map slots --map .data.A) || fail "dump of two maps"
grep -qx 'key=0 value={.first_lock = {.val = 0}}' <<<"$out" || fail "dump .data.A: $out"
[ "$(grep -c '^key=' <<<"$out")" -eq 41 ] || fail "dump of two maps: $out"
# trace_pid cannot be linked: dump loads the maps alone.
out=$("$bin" dump "$mobj" --map stats) || fail "dump beside an unlinkable program"
[ "$(grep -c '^key=[0-3] value=0$' <<<"$out")" -eq 4 ] || fail "dump multi: $out"
# Every BTF kind typed.bpf.c holds: signed, bitfields, enum names, a string,
# an anonymous union's members inline, bool, pointer; text and JSON.
tobj=${obj/res_lock/typed}
typed='{.neg = -5, .low = 5, .high = 17, .sbits = -3, .named = GREEN, .unnamed = 7, .tag = "ab", .as_u32 = 131073, .as_u16 = {1, 2}, .yes = true, .ptr = 0x0}'
out=$("$bin" dump "$tobj" --map typed.data) || fail "dump typed.data"
[ "$out" = "key=0 value={.sample = $typed}" ] || fail "typed text: $out"
out=$("$bin" run "$tobj" --prog copy_sample --dump typed_map) || fail "run copy_sample"
grep -qxF "key=1 value=$typed" <<<"$out" || fail "typed map: $out"
"$bin" -j dump "$tobj" --map typed.data | jcheck 'v = d[0]["elements"][0]["formatted"]["value"]["sample"]; assert v == {"neg": -5, "low": 5, "high": 17, "sbits": -3, "named": "GREEN", "unnamed": 7, "tag": "ab", "as_u32": 131073, "as_u16": [1, 2], "yes": True, "ptr": "0x0"}, v'
echo "ok - bpf_cli_bpftool"
