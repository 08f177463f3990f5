#!/bin/sh
# SPDX-License-Identifier: MIT
# libneuron.so exports its public API and nothing else
# (userspace/README.md#api-contract): the dynamic symbols it defines
# (nm -D --defined-only, demangled), as "TYPE NAME" lines, must equal the
# allow-list, a literal file reviewed like an ABI. A symbol missing from the
# list (an internal helper, a std::/nlohmann::/fmt:: template instance) is a
# leak; one in the list but not in the .so is an ABI removal. After a
# deliberate API change: check-symbols.sh LIB ALLOWLIST --update.
# usage: check-symbols.sh LIBNEURON_SO ALLOWLIST [--update]
set -eu
so=$1 list=$2
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# "ADDRESS TYPE NAME": drop the address, keep type and demangled name
nm -D --defined-only -C "$so" | sed -E 's/^[0-9a-f]+ //' | LC_ALL=C sort -u >"$tmp"
if [ "${3:-}" = --update ]; then
	{ echo "# libneuron.so's dynamic symbols (userspace/tests/check-symbols.sh)"; cat "$tmp"; } >"$list"
	echo "wrote $(wc -l <"$tmp") symbols to $list"
	exit 0
fi
total=$(wc -l <"$tmp")
leaks=$(grep -v '^#' "$list" | LC_ALL=C sort -u | LC_ALL=C comm -13 - "$tmp")
gone=$(grep -v '^#' "$list" | LC_ALL=C sort -u | LC_ALL=C comm -23 - "$tmp")
# besides the literal list: nothing outside namespace neuron and the C API
foreign=$(grep -Evc '^[A-Za-z] ((vtable|typeinfo|typeinfo name) for )?(neuron::|libneuron_)' "$tmp" || true)
echo "$total dynamic symbols; $foreign outside namespace neuron and libneuron_*"
grep -Ev '^[A-Za-z] ((vtable|typeinfo|typeinfo name) for )?(neuron::|libneuron_)' "$tmp" | sed 's/^/  ! /' || true
st=0
if [ -n "$leaks" ]; then
	echo "exported but not in the allow-list $list (a leak, or add it with --update):"
	echo "$leaks" | sed 's/^/  + /'
	st=1
fi
if [ -n "$gone" ]; then
	echo "in the allow-list but not exported (an ABI removal):"
	echo "$gone" | sed 's/^/  - /'
	st=1
fi
[ "$foreign" -eq 0 ] || st=1
[ $st -eq 0 ] && echo "the exports match the allow-list"
exit $st
