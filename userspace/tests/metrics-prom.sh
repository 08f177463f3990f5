#!/bin/sh
# SPDX-License-Identifier: MIT
# neuron-nq metrics --prometheus on the fake tree (userspace/CMakeLists.txt,
# docs/metrics.md#validation):
#   metrics-prom.sh NEURON_NQ GOLDEN WORKDIR            the file is GOLDEN byte
#                                                        for byte, no FILE.tmp left
#   metrics-prom.sh --promtool NEURON_NQ GOLDEN WORKDIR  Debian's promtool
#                                                        `check metrics` accepts it
# Run from the repository's top directory.
set -u
promtool=
if [ "$1" = --promtool ]; then
	shift
	promtool=$(scripts/fetch-promtool.sh | tail -1) || { echo "fetch-promtool failed"; exit 1; }
fi
bin=$1 golden=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
out=$work/neuron.prom
"$bin" metrics --count 1 --prometheus "$out" --root userspace/tests/data/cli/root >"$work/stdout" 2>"$work/stderr"
st=$?
sed 's/^/stderr: /' "$work/stderr"
[ "$st" -eq 0 ] || { echo "exit status $st, wanted 0"; exit 1; }
[ -s "$work/stdout" ] && { echo "stdout is not empty with --prometheus alone"; exit 1; }
[ -e "$out.tmp" ] && { echo "$out.tmp left behind"; exit 1; }
if [ -n "$promtool" ]; then
	# the fake tree's file, and test_metrics' golden file with engines
	for f in "$out" "$(dirname "$golden")/metrics-engines.prom"; do
		"$promtool" check metrics <"$f" >"$work/promtool" 2>&1
		st=$?
		cat "$work/promtool"
		[ "$st" -eq 0 ] || { echo "promtool check metrics $f: exit $st"; exit 1; }
		[ -s "$work/promtool" ] && { echo "promtool check metrics $f printed lint problems"; exit 1; }
		echo "promtool check metrics $f: ok ($(grep -c '^# TYPE' "$f") families, $(grep -vc '^#' "$f") samples)"
	done
	exit 0
fi
diff -u "$golden" "$out" || { echo "$out differs from $golden"; exit 1; }
echo "metrics --prometheus: matches $golden"
