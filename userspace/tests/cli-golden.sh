#!/bin/sh
# SPDX-License-Identifier: MIT
# One golden-file check of neuron-nq (userspace/CMakeLists.txt, tests cli.*):
#   cli-golden.sh STATUS GOLDEN|- [--stderr LINE] NEURON_NQ ARGS...
# runs NEURON_NQ ARGS... (in the repository's top directory, so paths in the
# output are relative) and fails unless its exit status is STATUS, when
# GOLDEN is not "-", its stdout is byte for byte the file GOLDEN, and with
# --stderr, a line of its stderr starts with LINE (literally).
want=$1 golden=$2
shift 2
want_err=""
if [ "$1" = --stderr ]; then
	want_err=$2
	shift 2
fi
bin=$1
shift
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$bin" "$@" >"$out" 2>"$err"
st=$?
echo "\$ neuron-nq $*  -> exit $st"
sed 's/^/stderr: /' "$err"
fail=0
if [ "$st" -ne "$want" ]; then
	echo "exit status $st, wanted $want"
	fail=1
fi
if [ "$golden" != - ] && ! diff -u "$golden" "$out"; then
	echo "stdout differs from $golden"
	fail=1
fi
if [ -n "$want_err" ] && ! awk -v w="$want_err" 'index($0, w) == 1 { found = 1 } END { exit !found }' "$err"; then
	echo "no line of stderr starts with: $want_err"
	fail=1
fi
exit $fail
