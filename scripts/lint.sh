#!/usr/bin/env bash
# Static checks: clang-format, cppcheck, clang-tidy on the library and its consumers.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' | grep -v '^model/' || true)
cxx_files=$(git ls-files '*.cpp' '*.hpp' | grep -v '^model/' || true)
# BPF programs (*.bpf.c) are formatted, but they are not host C: no cppcheck or clang-tidy.
host_files=$(printf '%s\n' $files | grep -v '\.bpf\.c$' || true)
rc=0
echo "clang-format --dry-run"
clang-format --dry-run -Werror $files $cxx_files || rc=1
echo "cppcheck"
cppcheck -j"$(nproc)" --quiet --error-exitcode=1 --enable=warning,portability,performance \
	--inline-suppr --suppress=missingIncludeSystem -D__GNUC__ -D_GNU_SOURCE -D__CPPCHECK__ \
	-I include -I src -I tests -I bpf/contract -I util $host_files || rc=1
echo "layers"
# src/: a file of layer N (its header comment says "Layer N") includes only
# private headers of layers <= N (docs/DESIGN.md, "Source layout").
layer_of() { sed -n '1,4s/.*Layer \([0-9]\).*/\1/p' "$1" | head -n1; }
for f in $(git ls-files 'src/*.c' 'src/*.h'); do
	mine=$(layer_of "$f")
	if [ -z "$mine" ]; then
		echo "$f: no \"Layer N\" in its header comment"
		rc=1
		continue
	fi
	for h in $(sed -n 's/^#include "\([a-z_]*\.h\)"$/\1/p' "$f"); do
		[ -f "src/$h" ] || continue
		theirs=$(layer_of "src/$h")
		if [ "${theirs:-9}" -gt "$mine" ]; then
			echo "$f (layer $mine) includes $h (layer ${theirs:-?})"
			rc=1
		fi
	done
done
echo "foreign locks"
# Detection reads no lock but its caller's own (rqspinlock.h, "Memory the
# library reads"; docs/DESIGN.md section 7, "views"): in src/detect.c only
# the functions below, each handed the caller's own lock, read a lock word
# (lock->val, lock_word(), named_owner(), own_view()); every other lock there
# comes as a view.
own_readers='lock_word|named_owner|own_view|tagged_entry_owns|own_entry_held|byte_names_self|rq_clear_orphaned_pending|rq_find_owner|rq_check_cycle|chain_still_valid'
awk -v ok="^($own_readers)$" '
	/^[a-z].*[a-z_0-9]+\(/ && !/;$/ { fn = $0; sub(/\(.*/, "", fn); sub(/.*[ *]/, "", fn) }
	/lock->val|lock_word\(|named_owner\(|own_view\(/ && fn !~ ok && !/^ \*|^\/\*/ {
		printf "src/detect.c:%d: %s reads a lock word: only the caller'"'"'s own lock may be read\n", NR, fn; bad = 1 }
	END { exit bad }' src/detect.c || rc=1
echo "bpf and maps floors"
# bpf/ and maps/src/: a file includes only headers of its floor or below;
# the verifier nothing of bpf/src/ (docs/HACKING.md, "bpf/", "maps/").
scripts/check_bpf_floors.sh || rc=1
echo "paths"
# Every file a doc or a comment names exists (scripts/check_paths.py).
python3 scripts/check_paths.py || rc=1
echo "history"
# Docs describe the present: no commit hashes in them (CHANGELOG.md and git
# keep the history).
if grep -n -P '\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b' \
	$(git ls-files 'docs/*.md' README.md CONTRIBUTING.md); then
	echo "docs name commits (above): history goes to CHANGELOG.md"
	rc=1
fi
echo "atomics"
# Shipped code (not the tests): each non-relaxed atomic names its order and
# what it pairs with (scripts/check_atomics.py).
shipped=$(git ls-files '*.c' '*.h' '*.cpp' |
	grep -v -e '\.bpf\.c$' -e '^model/' -e '^tests/' -e '/tests/' -e '^examples/' || true)
python3 scripts/check_atomics.py $shipped || rc=1
if [ -f build/gcc/compile_commands.json ]; then
	echo "clang-tidy"
	srcs=$(git ls-files 'src/*.c' 'maps/*.c' 'tools/*.c' 'tests/*.c' 'pthread/*.c' 'bpf/*.c' |
		grep -v -e '\.bpf\.c$' -e 'verifier/tests/fuzz_')
	printf '%s\n' $srcs | xargs -P"$(nproc)" -n4 clang-tidy --quiet -p build/gcc 2>/dev/null |
		grep -E 'warning:|error:' && rc=1
fi
exit $rc
