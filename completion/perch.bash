# bash completion for perch and perch-adb                               -*- shell-script -*-
#
# Everything it offers comes from the program's own help, read at completion time: the
# commands from `perch --help`, a command's options and their arguments from
# `perch CMD --help` (the option lines and the usage lines), the output endings from the -o
# entry and the format names from the --format entry. So a new option needs no change here.
# Option arguments: PID -> running pids, FILE/DIR -> files/directories, a|b -> a or b,
# -o FILE -> files and WORD.ENDING for every ending perch writes.
# Installed as bash-completion/completions/perch (and a perch-adb link to it).

# the help text of "$@" (a perch command line), or nothing
_perch_help()
{
	"$@" --help 2>/dev/null
}

# "OPT ARG" per option of a help text on stdin (ARG empty for a flag), from option lines
# ("  -p, --pid PID    text") and usage lines ("usage: perch top -p PID|NAME [-F HZ]")
_perch_parse_opts()
{
	local line spec w usage=0
	local -a words
	while IFS= read -r line; do
		if [[ $line == usage:* ]]; then
			usage=1
		elif [[ -z ${line//[[:space:]]/} ]]; then
			usage=0
		fi
		if ((usage)); then
			# "[-F HZ]": an option and its argument; "[--exec]", "-h,": a flag
			read -r -a words <<<"${line#usage:}"
			local n=${#words[@]} k o a
			for ((k = 0; k < n; k++)); do
				w=${words[k]}
				o=${w#[}
				o=${o%]}
				o=${o%,}
				[[ $o == --?* || $o == -[A-Za-z0-9] ]] || continue
				a=
				if [[ $w != *] && $w != *, ]] && ((k + 1 < n)); then
					a=${words[k + 1]}
					[[ $a == -* || $a == [* || $a == "|" || $a == "("* ]] && a=
					a=${a%]}
				fi
				echo "$o $a"
			done
		elif [[ $line =~ ^[[:space:]]{1,8}(-[^[:space:]].*) ]]; then
			# "-p, --pid PID  text", "--lines  text", "--stack-size BYTES bytes of ...": the
			# option words, then an argument in capitals or a lower-case a|b choice
			read -r -a words <<<"${BASH_REMATCH[1]//,/ }"
			local -a names=()
			local arg=
			for w in "${words[@]}"; do
				if [[ $w == --?* || $w == -[A-Za-z0-9] ]]; then
					names+=("$w")
				else
					[[ $w =~ ^[A-Z][A-Z0-9_|.]*(\[.*)?$ || $w =~ ^[a-z0-9-]+(\|[a-z0-9-]+)+$ ]] &&
						arg=$w
					break
				fi
			done
			for w in "${names[@]}"; do
				echo "$w $arg"
			done
		fi
	done
}

# the text of one option's entry in a help text on stdin (its line and the indented ones after)
_perch_opt_entry()
{
	local line in=0
	while IFS= read -r line; do
		if [[ $line =~ ^[[:space:]]{1,8}- ]]; then
			in=0
			[[ " ${line//,/ } " == *" $1 "* ]] && in=1
		elif [[ -z ${line//[[:space:]]/} ]]; then
			in=0
		fi
		((in)) && echo "$line"
	done
}

# the endings an -o FILE can have (".folded", ".pb.gz", ...), from the -o entry
_perch_endings()
{
	_perch_opt_entry -o | grep -oE '(^|[ /(])\.[a-z][a-z0-9.]*[a-z0-9]' | sed 's/^[ /(]//' |
		sort -u
}

# the format names of --format: the lower-case words after the first ':' of its entry
_perch_formats()
{
	local text w
	text=$(_perch_opt_entry --format | tr '\n' ' ')
	[[ $text == *:* ]] || return
	for w in ${text#*:}; do
		[[ $w =~ ^[a-z0-9][a-z0-9-]*$ ]] || break
		echo "$w"
	done
}

_perch_pids()
{
	local d
	for d in /proc/[0-9]*; do
		echo "${d#/proc/}"
	done
}

# file (or, with -d, directory) names: one per line, so that spaces survive; marked as file
# names for readline (quoting, a / after a directory)
_perch_files()
{
	local line
	compopt -o filenames 2>/dev/null
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <(compgen "$@")
}

# complete the argument $3 of option $2 (argument name $4) of the perch command line $1...
_perch_complete_arg()
{
	local help=$1 opt=$2 cur=$3 arg=$4 e w
	case $arg in
	*'|'*)
		if [[ $arg =~ ^[a-z0-9|-]+$ ]]; then
			COMPREPLY=($(compgen -W "${arg//|/ }" -- "$cur"))
			return
		fi
		;;
	esac
	case $arg in
	PID | PID'|'* | PID'['*)
		# PID[,PID...]: after a comma, the next pid of the list
		if [[ $arg == PID'['* && $cur == *,* ]]; then
			COMPREPLY=($(compgen -P "${cur%,*}," -W "$(_perch_pids)" -- "${cur##*,}"))
		else
			COMPREPLY=($(compgen -W "$(_perch_pids)" -- "$cur"))
		fi
		;;
	DIR)
		_perch_files -d -- "$cur"
		;;
	NAME)
		if [[ $opt == --format ]]; then
			COMPREPLY=($(compgen -W "$(_perch_formats <<<"$help")" -- "$cur"))
		fi
		;;
	FILE)
		_perch_files -f -- "$cur"
		if [[ $opt == -o || $opt == --output ]]; then
			# the file usually does not exist yet: offer WORD.ENDING for every ending; after
			# a '.' in the file name, the ending has begun (prof.pb -> prof.pb.gz)
			if [[ -n $cur && $cur != */ ]]; then
				local name=${cur##*/} stem=$cur
				[[ $name == *.* ]] && stem=${cur%"$name"}${name%%.*}
				for e in $(_perch_endings <<<"$help"); do
					w=$stem$e
					[[ $w == "$cur"* && $w != "$cur" ]] && COMPREPLY+=("$w")
				done
				if [[ $stem != "$cur" && ${#COMPREPLY[@]} -eq 0 ]]; then
					for e in $(_perch_endings <<<"$help"); do
						COMPREPLY+=("$cur$e")
					done
				fi
		fi
		fi
		;;
	esac
}

_perch()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} cmd= help opts i w
	local -a cmdline
	COMPREPLY=()
	prog=${prog/#\~/$HOME}

	# the command: the first word after perch that is not an option (or an option's value)
	local top_help top_opts
	top_help=$(_perch_help "$prog")
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -- ]]; then
			break
		elif [[ $w == -* ]]; then
			# a top-level option with an argument: skip the argument
			top_opts=$( (
				_perch_parse_opts <<<"$top_help"
				_perch_help "$prog" --json | _perch_parse_opts
			))
			if awk -v o="$w" '$1 == o && $2 ~ /^[A-Z]/ { f = 1 } END { exit !f }' \
				<<<"$top_opts"; then
				((i++))
			fi
		else
			cmd=$w
			break
		fi
	done

	local commands
	commands=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' <<<"$top_help")

	if [[ -z $cmd ]]; then
		cmdline=("$prog")
		help=$( (
			echo "$top_help"
			echo
			_perch_help "$prog" --json
		))
	elif [[ $cmd == help ]]; then
		((i == COMP_CWORD - 1)) && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		return
	elif [[ " "$commands" " == *[[:space:]]$cmd[[:space:]]* ]]; then
		cmdline=("$prog" "$cmd")
		help=$(_perch_help "$prog" "$cmd")
	else
		return
	fi

	# after `--` (perch record -- PROGRAM ARGS): the program, then its arguments
	local j
	for ((j = i + 1; j < COMP_CWORD; j++)); do
		if [[ ${COMP_WORDS[j]} == -- ]]; then
			if ((j == COMP_CWORD - 1)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				_perch_files -f -- "$cur"
			fi
			return
		fi
	done

	opts=$(_perch_parse_opts <<<"$help" | sort -u)

	# the argument of the option before the cursor
	local prev=${COMP_WORDS[COMP_CWORD - 1]} arg
	if ((COMP_CWORD > 1)) && [[ $prev == -* ]]; then
		arg=$(awk -v o="$prev" '$1 == o { print $2; exit }' <<<"$opts")
		if [[ -n $arg ]]; then
			_perch_complete_arg "$help" "$prev" "$cur" "$arg"
			return
		fi
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(awk '{ print $1 }' <<<"$opts" | sort -u)" -- "$cur"))
	elif [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$commands help" -- "$cur"))
	else
		case $cmd in
		report | annotate)
			# the recording (annotate: after the function name)
			_perch_files -d -- "$cur"
			_perch_files -f -X '!*.perch' -- "$cur"
			;;
		mem | maps | record | dump | stat | top | threads) ;;
		*)
			_perch_files -f -- "$cur"
			;;
		esac
	fi
}

_perch_adb()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i w action=
	local prog=${COMP_WORDS[0]} help opts
	COMPREPLY=()
	# its own options (the usage lines also show perch record's -o)
	help=$(_perch_help "${prog/#\~/$HOME}" | sed '/^usage:/,/^$/d')
	opts=$(_perch_parse_opts <<<"$help" | sort -u)
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-s) ((i++)) ;;
		-*) ;;
		*)
			action=$w
			break
			;;
		esac
	done
	if [[ -z $action ]]; then
		if [[ $prev == -s ]]; then
			COMPREPLY=($(compgen -W "$(adb devices 2>/dev/null | awk 'NR > 1 && $2 == "device" { print $1 }')" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(awk '{ print $1 }' <<<"$opts")" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "record shell" -- "$cur"))
		fi
		return
	fi
	# after the package, record takes perch record's options
	if [[ $action == record ]] && ((COMP_CWORD > i + 1)); then
		local perch=perch
		[[ -x ${prog%/*}/../build/perch ]] && perch=${prog%/*}/../build/perch
		[[ -x ${prog%/*}/perch ]] && perch=${prog%/*}/perch
		COMP_WORDS=("$perch" record "${COMP_WORDS[@]:i+2}")
		COMP_CWORD=$((COMP_CWORD - i))
		_perch
	fi
}

complete -F _perch perch
complete -F _perch_adb perch-adb
