#!/bin/sh
# SPDX-License-Identifier: MIT
# The C API's man pages (userspace/man/*.3) format without a warning:
# groff -man -z -ww (every warning) and man --warnings -l, as lintian
# would run them. Prints TAP, one line a page; exits 1 on a warning.
# usage: check-man.sh MANDIR
set -u
dir=${1:?usage: check-man.sh MANDIR}
pages=$(ls "$dir"/*.3)
echo "TAP version 13"
echo "1..$(echo "$pages" | wc -l)"
n=0 st=0
for p in $pages; do
	n=$((n + 1))
	out=$( { groff -man -z -ww "$p"; MANWIDTH=80 man --warnings -l "$p" >/dev/null; } 2>&1)
	if [ -z "$out" ]; then
		echo "ok $n man.$(basename "$p")"
	else
		echo "not ok $n man.$(basename "$p")"
		echo "$out" | sed 's/^/# /'
		st=1
	fi
done
exit $st
