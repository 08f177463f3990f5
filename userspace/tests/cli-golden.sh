#!/bin/sh
# SPDX-License-Identifier: MIT
# One golden-file check of neuron-nq (userspace/CMakeLists.txt, tests cli.*):
#   cli-golden.sh STATUS GOLDEN|- NEURON_NQ ARGS...
# runs NEURON_NQ ARGS... (in the repository's top directory, so paths in the
# output are relative) and fails unless its exit status is STATUS and, when
# GOLDEN is not "-", its stdout is byte for byte the file GOLDEN.
want=$1 golden=$2 bin=$3
shift 3
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
exit $fail
