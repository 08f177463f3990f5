#!/bin/sh
# SPDX-License-Identifier: MIT
# Every installed public header compiles alone and reads only public headers
# (userspace/README.md#api-contract): install the build tree into a scratch
# prefix, then compile each header under include/libneuron/ by itself (C++20;
# the C header also as C99) with only the installed include directories
# (those neuron.pc gives: include and include/libneuron/abi) and g++ -H. A
# header that needs another one it does not include fails to compile; a
# header that reads one outside the installed public set (the driver's and
# the device model's include/neuron/regs.h, emu_isa.h, notification.h, or
# anything from the source tree) is reported, and the test fails.
# usage: check-headers.sh CXX CC BUILD_DIR
set -eu
cxx=$1 cc=$2 build=$3
work=$build/header-test
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
inc=$work/prefix/include
st=0 n=0
check() { # LANG-FLAGS... -- HEADER
	hdr=$1 shift
	if ! out=$(echo "#include <libneuron/$hdr>" | "$@" -fsyntax-only -H -I"$inc" -I"$inc/libneuron/abi" - 2>&1); then
		echo "FAIL $hdr does not compile alone ($*):"
		echo "$out" | grep -v '^\.' | sed 's/^/    /' | head -20
		st=1
		return
	fi
	# the headers it read: ours must be installed public ones
	bad=$(echo "$out" | sed -n 's/^\.\.* //p' | grep -v "^$inc/" | grep -E '(/neuron/|/libneuron/|/uapi/linux/neuron)' || true)
	priv=$(echo "$out" | sed -n 's/^\.\.* //p' | grep -E '/neuron/(regs|emu_isa|notification)\.h$' || true)
	if [ -n "$bad$priv" ]; then
		echo "FAIL $hdr includes a non-public header:"
		printf '%s\n%s\n' "$bad" "$priv" | sed '/^$/d; s/^/    /'
		st=1
	fi
	n=$((n + 1))
}
for h in $(cd "$inc/libneuron" && find . -maxdepth 1 -name '*.h*' | sed 's|^\./||' | LC_ALL=C sort); do
	check "$h" "$cxx" -std=c++20 -x c++
	case $h in *.h) check "$h" "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -x c ;; esac
done
# what must not be installed at all
for p in regs.h emu_isa.h notification.h notification_views_check.hpp; do
	if [ -n "$(find "$inc" -name "$p")" ]; then
		echo "FAIL a private header is installed: $(find "$inc" -name "$p")"
		st=1
	fi
done
[ $st -eq 0 ] && echo "$n compilations of the installed public headers, each alone: self-contained, no private header"
exit $st
