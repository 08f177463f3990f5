#!/bin/bash
# SPDX-License-Identifier: MIT
# The bash completion knows every subcommand and option of neuron-nq
# (ctest cli.completion): each subcommand in `neuron-nq --help` is in the
# completion's command list, and each long option a subcommand's --help
# shows is in that subcommand's opts line; then the completion function
# itself, run under bash with bash-completion's _init_completion stubbed,
# completes "neuron-nq met" to "metrics" and "neuron-nq metrics --pro" to
# "--prometheus".
#   completion-test.sh NEURON_NQ COMPLETION_FILE
set -u
bin=$1 comp=$2
fail=0
cmds=$(sed -n 's/^[[:space:]]*local cmds="\(.*\)"$/\1/p' "$comp")
[ -n "$cmds" ] || { echo "no 'local cmds=' line in $comp"; exit 1; }
subs=$("$bin" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$subs" ] || { echo "no subcommands in neuron-nq --help"; exit 1; }
for s in $subs; do
	case " $cmds " in *" $s "*) ;; *) echo "subcommand $s is not in the completion's cmds"; fail=1 ;; esac
	line=$(grep -E "^[[:space:]]*$s\) opts=\"" "$comp" | head -1)
	[ -n "$line" ] || { echo "no opts line for $s"; fail=1; continue; }
	for o in $("$bin" "$s" --help | grep -E '^ +-' | grep -oE '(^|[ ,])--[a-z][a-z-]*' | sed 's/^[ ,]*//' | sort -u); do
		case $line in *" $o "* | *"\"$o "* | *" $o\""* | *"\"$o\""*) ;; *) echo "$s: option $o is not completed"; fail=1 ;; esac
	done
done
# the function itself
out=$(bash -c '
	_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
	_filedir() { :; }
	complete() { :; }
	. "$1"
	COMP_WORDS=(neuron-nq met); COMP_CWORD=1; _neuron_nq; echo "${COMPREPLY[*]}"
	COMP_WORDS=(neuron-nq metrics --pro); COMP_CWORD=2; _neuron_nq; echo "${COMPREPLY[*]}"
' _ "$comp")
want=$'metrics\n--prometheus'
[ "$out" = "$want" ] || { echo "completion function gave '$out', wanted '$want'"; fail=1; }
[ $fail = 0 ] && echo "completion: $(echo $subs | wc -w) subcommands and their options known"
exit $fail
