# SPDX-License-Identifier: MIT
# bash completion for rqtorture and rqbpf, installed as
# share/bash-completion/completions/{rqtorture,rqbpf}. Options, commands and
# lock names are read from the tools themselves (--help, --list; rqbpf's
# program and map names from `rqbpf list OBJ`), so the completion follows
# the installed version.

# The options (-x, --long) and the commands ("usage: tool CMD ...") of a
# tool's --help.
_rq_help_words()
{
	local help
	help=$("$1" --help 2>/dev/null) || return 0
	grep -oE -- '(^|[][ (|,])--?[a-zA-Z][a-z0-9-]*' <<<"$help" | sed 's/^[][ (|,]//'
	sed -n "s/^ *\(usage: \)\{0,1\}$(basename "$1") \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\2/p" <<<"$help"
}

# The last word of a comma-separated list, completed from the names given.
_rq_list_value()
{
	local cur=$1 done_part=
	shift
	[[ $cur == *,* ]] && done_part=${cur%,*},
	COMPREPLY=($(compgen -P "$done_part" -W "$*" -- "${cur##*,}"))
	compopt -o nospace 2>/dev/null
}

_rq_rqtorture()
{
	local cur=$1 prev=$2 tool=$3
	case $prev in
	-l | --lock)
		_rq_list_value "$cur" all $("$tool" --list 2>/dev/null | awk '{ print $1 }')
		return
		;;
	--inject) COMPREPLY=($(compgen -W "aa abba abbcca" -- "$cur")) && return ;;
	--via) COMPREPLY=($(compgen -W "direct signal" -- "$cur")) && return ;;
	--pin) COMPREPLY=($(compgen -W "none spread single" -- "$cur")) && return ;;
	--json | --csv) COMPREPLY=($(compgen -f -- "$cur")) && return ;;
	-t | --threads | -d | --duration | --warmup | --cs-ns | --ncs-ns | --long-hold-every | \
		--long-hold-ns | --stutter-ms | --nested | --seed | --lat-every | --timeout-us | \
		--timeout-cap-us | --overload | --reps | --iters | --gaps | --storm | --hold-us | \
		--timer-us)
		return # a number
		;;
	esac
	COMPREPLY=($(compgen -W "$(_rq_help_words "$tool" | grep '^-')" -- "$cur"))
}

# rqbpf's object: the first argument that names an existing file.
_rq_rqbpf_object()
{
	local w
	for w in "${COMP_WORDS[@]:2:COMP_CWORD-2}"; do
		[[ $w != -* && -f $w ]] && echo "$w" && return
	done
}

_rq_rqbpf()
{
	local cur=$1 prev=$2 tool=$3 obj kind
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$(_rq_help_words "$tool")" -- "$cur"))
		return
	fi
	case $prev in
	--prog | --map | --dump)
		obj=$(_rq_rqbpf_object)
		kind=prog
		[ "$prev" = --prog ] || kind=map
		[ -n "$obj" ] && COMPREPLY=($(compgen -W \
			"$("$tool" list "$obj" 2>/dev/null | awk -v k="$kind" '$1 == k { print $2 }')" -- "$cur"))
		return
		;;
	--threads | --repeat | --set) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_rq_help_words "$tool" | grep '^-')" -- "$cur"))
	else
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -X '!*.o' -- "$cur") $(compgen -d -- "$cur"))
	fi
}

_rq_complete()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local tool=${COMP_WORDS[0]}
	COMPREPLY=()
	case $(basename "$tool") in
	rqtorture) _rq_rqtorture "$cur" "$prev" "$tool" ;;
	rqbpf) _rq_rqbpf "$cur" "$prev" "$tool" ;;
	esac
}

complete -F _rq_complete rqtorture rqbpf
