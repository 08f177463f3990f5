#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prints the call graph between nnq.ko's source files, one "A -> B" line
# per pair where A.o uses a symbol B.o defines (nm: U in A, T/D/R/B in B),
# and fails if the graph has a cycle: calls must run one way, from the
# files that dispatch (neuron_pci.c, neuron_cdev.c) down to the helpers
# (neuron_hw.c, neuron_uapi.c). docs/architecture.md states the rule.
#
# Usage: kernel-call-graph.sh DIR    (DIR holds the built neuron_*.o)
set -euo pipefail
dir=${1:?usage: kernel-call-graph.sh DIR}
objs=("$dir"/neuron_*.o)
[ -e "${objs[0]}" ] || { echo "kernel-call-graph: no neuron_*.o in $dir" >&2; exit 2; }

edges=$(for o in "${objs[@]}"; do
	nm "$o" | awk -v f="$(basename "$o" .o)" '
		$2 ~ /^[TDRB]$/ { print "D", $3, f }
		$1 == "U" { print "U", $2, f }'
done | awk '
	$1 == "D" { def[$2] = $3 }
	$1 == "U" { use[NR] = $2; user[NR] = $3 }
	END { for (i in use) if ((use[i] in def) && def[use[i]] != user[i])
		print user[i], def[use[i]] }' | sort -u)
echo "$edges" | sed 's/ / -> /'
# tsort reports a loop on stderr and exits non-zero
if ! loop=$(echo "$edges" | tsort 2>&1 >/dev/null); then
	echo "$loop" | sed 's/^/cycle: /'
	exit 1
fi
