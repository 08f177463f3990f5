#!/bin/sh
# SPDX-License-Identifier: MIT
# libneuron.so exports its public API and nothing else
# (userspace/README.md#api-contract): the dynamic symbols it defines
# (nm -D --defined-only, demangled), as "TYPE NAME" lines, must equal the
# allow-list, a literal file reviewed like an ABI. A symbol missing from the
# list (an internal helper, a std::/nlohmann::/fmt:: template instance) is a
# leak; one in the list but not in the .so is an ABI removal. Each symbol
# carries its version node (NAME@@LIBNEURON_0.1, cmake/libneuron.map;
# userspace/README.md#versions), so the list also records which release
# added it; a symbol without one, or a node not named LIBNEURON_MAJOR.MINOR,
# fails. After a deliberate API change: check-symbols.sh LIB ALLOWLIST --update.
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
# (and the version nodes' own "A LIBNEURON_0.1" entries)
ours='^[A-Za-z] ((vtable|typeinfo|typeinfo name) for )?(neuron::|libneuron_)|^A LIBNEURON_[0-9]+\.[0-9]+$'
foreign=$(grep -Evc "$ours" "$tmp" || true)
echo "$total dynamic symbols; $foreign outside namespace neuron and libneuron_*"
grep -Ev "$ours" "$tmp" | sed 's/^/  ! /' || true
# every symbol in a version node LIBNEURON_MAJOR.MINOR
unversioned=$(grep -v '^A ' "$tmp" | grep -Evc '@@?LIBNEURON_[0-9]+\.[0-9]+$' || true)
if [ "$unversioned" -ne 0 ]; then
	echo "$unversioned symbols without a LIBNEURON_MAJOR.MINOR version node (cmake/libneuron.map):"
	grep -v '^A ' "$tmp" | grep -Ev '@@?LIBNEURON_[0-9]+\.[0-9]+$' | sed 's/^/  ? /' | head -20
fi
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
[ "$unversioned" -eq 0 ] || st=1
[ $st -eq 0 ] && echo "the exports match the allow-list"
exit $st
