#!/usr/bin/env bash
# The rqbpf command line, as other tools script it: list, run (retval lines,
# runs= line, exit status 0 whatever the program returns), verify, dump, and
# the exit statuses 1 (cannot load, fault) and 2 (bad usage).
set -u
bin=$1 dir=$2
obj=$dir/res_lock.clang14.bpf.o
[ -f "$obj" ] || obj=$dir/res_lock.clang19.bpf.o
fail() { echo "not ok - $*"; exit 1; }
expect_rc() { # rc, command...
	local want=$1 rc; shift
	"$@" >/tmp/rqbpf-cli.$$ 2>&1; rc=$?
	[ "$rc" -eq "$want" ] || { cat /tmp/rqbpf-cli.$$; fail "$* exited $rc, want $want"; }
}
trap 'rm -f /tmp/rqbpf-cli.$$' EXIT

out=$("$bin" list "$obj") || fail "list"
grep -qx 'prog same_element_twice section=tc insns=[0-9]*' <<<"$out" || fail "list: prog line: $out"
grep -qx 'map slots type=array key=4 value=8 max_entries=40' <<<"$out" || fail "list: map line: $out"
grep -qx 'map \.data\.A type=array key=4 value=4 max_entries=1' <<<"$out" || fail "list: data map"

out=$("$bin" run "$obj" --prog order_ab --threads 4 --repeat 50) || fail "run exit status"
grep -qx 'retval=0 count=200' <<<"$out" || fail "run: retval line: $out"
grep -qx 'runs=200 ns_per_run=[0-9]*' <<<"$out" || fail "run: runs line: $out"
[ "$(wc -l <<<"$out")" -eq 2 ] || fail "run: extra output: $out"

# A program returning non-zero still exits 0; the value is signed decimal.
cobj=${obj/res_lock/conform}
out=$("$bin" run "$cobj" --prog not_autoloaded) || fail "run ?tc program"
grep -qx 'retval=42 count=1' <<<"$out" || fail "run ?tc: $out"

out=$("$bin" verify "$obj") || fail "verify exit status"
grep -qx 'same_element_twice: accepted ([0-9]* insns processed)' <<<"$out" || fail "verify: $out"
out=$("$bin" verify "$obj" --prog order_ab) || fail "verify --prog"
[ "$(wc -l <<<"$out")" -eq 1 ] || fail "verify --prog: $out"

out=$("$bin" dump "$cobj" --map .rodata 2>&1) && fail "dump of a map that is not there"
out=$("$bin" dump "$cobj" --map conform.rodata) || fail "dump"
# Keys and values typed by the object's BTF, as bpftool map dump: a data
# section's variables and a struct's members by name.
grep -qx 'key=0 value={.rodata_table = {11, 22, 33, 44}}' <<<"$out" || fail "dump: $out"
out=$("$bin" run "$obj" --prog order_ab --set slots:1=0000000005000000 --dump slots) ||
	fail "run --set --dump"
grep -qx 'key=1 value={.lock = {.val = 0}, .hits = 5}' <<<"$out" || fail "--set: $out"
# A key or value that is not exactly what --set takes is refused, not read
# as something else.
for bad in slots:1x=0000000005000000 slots:4294967297=0000000005000000 slots:=0000000005000000 \
	"slots:1= 000000005000000" slots:1=-100000005000000 slots:1=00000000050000; do
	expect_rc 2 "$bin" run "$obj" --prog order_ab --set "$bad"
done

# multi.bpf.c: trace_pid uses a helper rqbpf lacks; it is listed with its
# error, refused when run, and the object's other programs still run.
mobj=${obj/res_lock/multi}
out=$("$bin" list "$mobj") || fail "list of an object with an unlinkable program"
grep -qx 'prog ingress section=tc insns=[0-9]*' <<<"$out" || fail "list multi: $out"
grep -qx 'prog trace_pid section=kprobe/do_sys_openat2 error: insn 2: helper bpf_probe_read_kernel#113 is not supported (it reads kernel memory, which a program run in userspace has none of)' \
	<<<"$out" || fail "list multi error line: $out"
out=$("$bin" run "$mobj" --prog ingress) || fail "run beside an unlinkable program"
grep -qx 'retval=7 count=1' <<<"$out" || fail "run multi: $out"
expect_rc 1 "$bin" run "$mobj" --prog trace_pid
grep -qx 'rqbpf: trace_pid: insn 2: helper bpf_probe_read_kernel#113 is not supported (it reads kernel memory, which a program run in userspace has none of)' /tmp/rqbpf-cli.$$ ||
	fail "run trace_pid: $(cat /tmp/rqbpf-cli.$$)"
expect_rc 1 "$bin" verify "$mobj"
grep -qx 'trace_pid: rejected: insn 2: helper bpf_probe_read_kernel#113 is not supported (it reads kernel memory, which a program run in userspace has none of)' /tmp/rqbpf-cli.$$ ||
	fail "verify multi: $(cat /tmp/rqbpf-cli.$$)"
# Map types by libbpf's name, the ones rqbpf does not run too.
uobj=${obj/res_lock/unsupported}
out=$("$bin" list "$uobj") || fail "list of an object with an unsupported map"
grep -qx 'map devs type=devmap key=4 value=4 max_entries=1' <<<"$out" ||
	fail "list: unsupported map type: $out"
# A section libbpf gives no program type is refused at load, saying so.
sobj=${obj/res_lock/sections}
expect_rc 1 "$bin" run "$sobj" --prog sec_classifier_x
grep -qx "rqbpf: sec_classifier_x: unknown program type for section 'classifier/x'" \
	/tmp/rqbpf-cli.$$ || fail "unknown section: $(cat /tmp/rqbpf-cli.$$)"

bobj=${obj/res_lock/bad}
expect_rc 1 "$bin" run "$bobj" --prog read_past_value --no-verify
grep -q 'fault: insn [0-9]*: read of 4 bytes' /tmp/rqbpf-cli.$$ || fail "fault message"
expect_rc 1 "$bin" run /nonexistent.o --prog x
expect_rc 1 "$bin" run "$obj" --prog no_such_prog
printf 'garbage' >/tmp/rqbpf-cli-bad.$$
expect_rc 1 "$bin" list /tmp/rqbpf-cli-bad.$$
rm -f /tmp/rqbpf-cli-bad.$$
expect_rc 2 "$bin"
expect_rc 2 "$bin" run "$obj"
expect_rc 2 "$bin" run "$obj" --prog order_ab --threads 0
expect_rc 2 "$bin" frobnicate "$obj"
# A usage error says what is wrong; --help is not one.
out=$("$bin" run "$obj" --prog order_ab --threads ' 1' 2>&1) && fail "--threads ' 1'"
grep -q "bad count ' 1'" <<<"$out" || fail "--threads message: $out"
out=$("$bin" run "$obj" --prog order_ab --prog same_element_twice 2>&1) && fail "two --prog"
grep -q 'run takes one --prog' <<<"$out" || fail "two --prog message: $out"
# bpftool's ctx_in, ctx_out and repeat: conform's ctx_cb returns cb[0] (at
# byte 48 of __sk_buff) and writes cb[1] = 2 * cb[0] + 1, mark = cb[0] ^ 0x5a5a.
cin=/tmp/rqbpf-cli-ctx-in.$$ cout=/tmp/rqbpf-cli-ctx-out.$$
{ head -c 48 /dev/zero; printf '\x15\x00\x00\x00'; } >"$cin"
out=$("$bin" run "$cobj" --prog ctx_cb ctx_in "$cin" ctx_out "$cout" repeat 3) || fail "ctx_in run"
grep -qx 'retval=21 count=3' <<<"$out" || fail "ctx_in: $out"
[ "$(od -An -tx1 -j8 -N4 "$cout" | tr -d ' ')" = 4f5a0000 ] || fail "ctx_out mark"
[ "$(od -An -tx1 -j52 -N4 "$cout" | tr -d ' ')" = 2b000000 ] || fail "ctx_out cb[1]"
head -c 4096 /dev/zero >"$cin"
out=$("$bin" run "$cobj" --prog ctx_cb ctx_in "$cin" 2>&1) && fail "ctx_in too large"
grep -q "larger than the program's context" <<<"$out" || fail "ctx_in too large: $out"
# bpftool's data_in, data_out: tc_ttl_dec takes one from an IPv4 ttl each
# run, the packet kept from run to run (as the kernel's repeat); 2 threads
# each from data_in, the first one's packet in data_out.
nobj=${obj/res_lock/bootstrap_net}
{ head -c 12 /dev/zero; printf '\x08\x00\x45\x00\x00\x14\x00\x00\x00\x00\x40\x06\x00\x00'; head -c 20 /dev/zero; } >"$cin"
out=$("$bin" run "$nobj" --prog tc_ttl_dec data_in "$cin" data_out "$cout" repeat 5 --threads 2) ||
	fail "data_in run"
grep -qx 'retval=0 count=10' <<<"$out" || fail "data_in: $out"
[ "$(stat -c %s "$cout")" -eq 46 ] || fail "data_out size"
[ "$(od -An -tx1 -j22 -N1 "$cout" | tr -d ' ')" = 3b ] || fail "data_out ttl 64 - 5"
head -c 14 /dev/zero >"$cin" # an Ethernet header only: the kernel refuses it
out=$("$bin" run "$nobj" --prog tc_ttl_dec data_in "$cin" 2>&1) && fail "data_in header only"
grep -q "breaks the kernel's rules" <<<"$out" || fail "data_in header only: $out"
expect_rc 2 "$bin" run "$nobj" --prog tc_ttl_dec data_out "$cout"
rm -f "$cin" "$cout"
"$bin" --help | grep -q '^usage: rqbpf' || fail "--help"
out=$("$bin" --version) || fail "--version exit status"
grep -qx 'rqbpf [0-9]*\.[0-9]*\.[0-9]*' <<<"$out" || fail "--version: $out"
# --ringbuf: the records of a ring buffer map, printed or saved.
robj=${obj/res_lock/ringbuf}
out=$("$bin" run "$robj" --prog produce --threads 2 --repeat 3 --ringbuf events) || fail "run --ringbuf"
[ "$(grep -c '^ringbuf events size=16 data=00000000' <<<"$out")" -eq 6 ] || fail "--ringbuf records: $out"
grep -qx 'ringbuf events records=6' <<<"$out" || fail "--ringbuf count: $out"
out=$("$bin" run "$robj" --prog fill --ringbuf small:/tmp/rqbpf-cli-rb.$$) || fail "run --ringbuf :FILE"
grep -qx 'ringbuf small records=170' <<<"$out" || fail "--ringbuf FILE count: $out"
[ "$(stat -c %s /tmp/rqbpf-cli-rb.$$)" -eq $((170 * 12)) ] || fail "--ringbuf FILE size"
rm -f /tmp/rqbpf-cli-rb.$$
expect_rc 1 "$bin" run "$robj" --prog fill --ringbuf small_typo
grep -q 'no ring buffer map of that name' /tmp/rqbpf-cli.$$ || fail "--ringbuf bad map"

echo "ok - bpf_cli"
