#!/bin/sh
# SPDX-License-Identifier: MIT
# libneuron.so's ABI against the last released one (userspace/README.md#versions):
# Debian's libabigail (abigail-tools) compares the built .so, with its debug
# information (make userspace builds with -g), against the ABI dump committed in
# userspace/abi/libneuron.abi (abidw's XML of the released .so). Prints TAP:
#   abi.soname                the built .so's SONAME is the dump's
#   abi.compatible_with_release abidiff, told to leave added functions and
#       variables aside (--no-added-syms), finds no change: a removed or
#       changed symbol, a changed type (a renumbered enumerator, a field
#       added, moved or resized) fails; a symbol only added passes, and is
#       listed (its version node is check-symbols.sh's to check). The dump
#       is the last release's, so it changes only with a release
# Exits 1 on a difference, 2 if it cannot compare.
# After an intended change (a release; README "Updating the ABI dump"):
#   check-abi.sh LIBNEURON_SO DUMP --update
# usage: check-abi.sh LIBNEURON_SO DUMP [--update]
set -eu
so=$1 dump=$2
for t in abidw abidiff; do
	command -v $t >/dev/null || { echo "Bail out! no $t (apt-get install abigail-tools; scripts/setup-host.sh)"; exit 2; }
done
# dumps without source paths, line numbers or build directories, so they
# change only when the ABI does
abidw_flags="--no-show-locs --no-comp-dir-path --no-corpus-path"
if [ "${3:-}" = --update ]; then
	# shellcheck disable=SC2086
	abidw $abidw_flags --out-file "$dump" "$so"
	echo "wrote $dump ($(wc -c <"$dump") bytes) from $so"
	exit 0
fi
[ -s "$dump" ] || { echo "Bail out! no ABI dump $dump"; exit 2; }
echo "TAP version 13"
echo "1..2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
st=0
built=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
dumped=$(sed -n 's/.*soname=.\([^"'\'']*\).*/\1/p' "$dump" | head -1)
if [ "$built" = "$dumped" ]; then
	echo "ok 1 abi.soname # $built"
else
	echo "not ok 1 abi.soname # built $built, dump $dumped: a SONAME bump needs a new dump"
	st=1
fi
# the built .so dumped with the same options, then compared: abidiff's
# status is a bit mask (1 error, 2 usage, 4 an ABI change, 8 an
# incompatible one)
# shellcheck disable=SC2086
abidw $abidw_flags --out-file "$tmp/built.abi" "$so" || { echo "Bail out! abidw $so failed"; exit 2; }
set +e
abidiff --no-show-locs --no-added-syms "$dump" "$tmp/built.abi" >"$tmp/diff.txt" 2>&1
ds=$?
abidiff --no-show-locs "$dump" "$tmp/built.abi" >"$tmp/all.txt" 2>&1
set -e
if [ $ds -eq 0 ]; then
	added=$(grep -Ec "^  \[A\] " "$tmp/all.txt" || true)
	echo "ok 2 abi.compatible_with_release # $added symbols added since $dumped"
	grep -E "^  \[A\] " "$tmp/all.txt" | sed 's/^/# /' || true
else
	sed 's/^/# /' "$tmp/diff.txt"
	if [ $((ds & 3)) -ne 0 ]; then
		echo "Bail out! abidiff failed (status $ds)"
		exit 2
	elif [ $((ds & 8)) -ne 0 ]; then
		echo "not ok 2 abi.compatible_with_release # an incompatible ABI change (abidiff status $ds): a SONAME bump, or undo it"
	else
		echo "not ok 2 abi.compatible_with_release # a changed type or symbol (abidiff status $ds): $dumped's callers would see it; undo it, or grow the type as userspace/README.md#versions says"
	fi
	st=1
fi
exit $st
