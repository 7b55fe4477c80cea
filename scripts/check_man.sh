#!/usr/bin/env bash
# scripts/check_man.sh BUILD_DIR: the man pages in man/ (and
# pthread/rqspinlock-pthread.7) cover the interfaces they document:
# - every function of rqspinlock.h, rqmap.h and rqbpf.h is in its page, and so
#   is every error code (-EXXX) the header documents;
# - every environment variable the library and the drop-in read is in
#   rqspinlock(3) or rqspinlock-pthread(7);
# - every command and option that `rqbpf --help` and `rqtorture --help`
#   print (the built tools in BUILD_DIR) is in rqbpf(1) or rqtorture(1).
# A page's text is compared with roff's \- read as -.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
rc=0
missing() {
	echo "check_man: $1 does not mention $2" >&2
	rc=1
}
text() { sed 's/\\-/-/g; s/\\f[BIRP]//g' "$1"; }
need_words() { # page words...
	local page=$1 t w
	shift
	t=$(text "$page")
	for w in "$@"; do
		grep -qwF -- "$w" <<<"$t" || missing "$page" "$w"
	done
}

check_header() { # page header include_dir...: the header is in the first
	local page=$1 header=$2 dir=$3
	shift 2
	# The inline fast path's versioned entry points (*_v5) are its private
	# ABI, not functions to call.
	# shellcheck disable=SC2046
	need_words "$page" $(scripts/header_functions.sh "$header" "$@" | grep -v '_v[0-9]*$')
	# shellcheck disable=SC2046
	need_words "$page" $(grep -ho -- '-E[A-Z0-9]\{3,\}' "$dir/$header" | sed 's/^-//' | sort -u)
}
check_header man/rqspinlock.3 rqspinlock.h include
check_header man/rqmap.3 rqmap.h maps/include include
check_header man/rqbpf.3 rqbpf.h bpf/include

# Environment variables, from the code that reads them.
# shellcheck disable=SC2046
need_words man/rqspinlock.3 $(grep -ho 'getenv("[A-Z_]*")' src/*.c | sed 's/.*("\(.*\)")/\1/' | sort -u)
# shellcheck disable=SC2046
need_words pthread/rqspinlock-pthread.7 \
	$(grep -ho 'getenv("[A-Z_]*")' pthread/*.c | sed 's/.*("\(.*\)")/\1/' | sort -u)

# Commands and options, from the tools' own --help.
options() { # the -x / --long tokens and the "tool VERB" commands of a usage text
	grep -oE -- '(^|[][ (|,])--?[a-zA-Z][a-z0-9-]*' | sed 's/^[][ (|,]//' | sort -u
	true
}
tool_check() { # tool page
	local bin=$2 page=$3 help
	[ -x "$bin" ] || {
		echo "check_man: $1 not built: its options are not checked"
		return
	}
	help=$("$bin" --help)
	# shellcheck disable=SC2046
	need_words "$page" $(options <<<"$help") $(sed -n "s/^ *\(usage: \)\{0,1\}$1 \([a-z]*\) .*/\2/p" <<<"$help" | sort -u)
}
tool_check rqbpf "$build/bpf/rqbpf" man/rqbpf.1
tool_check rqtorture "$build/tools/rqtorture" man/rqtorture.1
[ "$rc" -eq 0 ] && echo "check_man: OK"
exit "$rc"
