#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hygiene of the ABI headers, printed as TAP ("ok N headers.<name>"):
#   headers.kernel_doc.<file>  scripts/kernel-doc -none prints nothing for
#       include/uapi/linux/neuron.h and every include/neuron/*.h (every
#       member of every documented struct is described)
#   headers.uapi_c89, headers.uapi_c11, headers.uapi_cxx20  a one-line file
#       that includes only <linux/neuron.h> (-I include/uapi, the system's
#       linux headers for the rest) compiles as C89 with -pedantic, as C11
#       and as C++20, warnings as errors
#   headers.headers_install  the kernel's scripts/headers_install.sh installs
#       the uapi header into a scratch usr/include (SPDX syscall note, no
#       CONFIG_ leak, unifdef), and usr/include/headers_check.pl accepts it
#   headers.headers_install_hdrtest  the installed header compiles on its own
#       the way the kernel's usr/include/Makefile tests it: an empty file with
#       -include of the header twice (include guard), -std=c90
#   headers.regs_asserts_c, headers.regs_asserts_cxx  include/neuron/regs.h,
#       alone, compiles as C11 and C++20: its static assertions pin the
#       register map to the hardware description's values
# The kernel's scripts (kernel-doc, headers_install.sh, unifdef.c,
# headers_check.pl) come from linux-source-6.1, extracted once into
# $NEURON_CACHE/headers-tools-<version> (scripts/unifdef is built from
# unifdef.c there, as Kbuild does). Exits non-zero if any line is "not ok".
#
# Usage: scripts/check-headers.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
top=$PWD
cache=${NEURON_CACHE:-/var/cache/neuron}
uapi=include/uapi/linux/neuron.h
regs=include/neuron/regs.h

n=0 fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fails=$((fails + 1)); fi
}
diag() { sed 's/^/# /'; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"

# --- the kernel's scripts, from linux-source-6.1
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
tools=$cache/headers-tools-$srcver
if [ ! -x "$tools/scripts/unifdef" ]; then
	new=$tmp/tools
	mkdir -p "$new"
	if tar -C "$new" -xf /usr/src/linux-source-6.1.tar.xz --strip-components=1 \
		linux-source-6.1/scripts/kernel-doc linux-source-6.1/scripts/headers_install.sh \
		linux-source-6.1/scripts/unifdef.c linux-source-6.1/usr/include/headers_check.pl \
		2>"$tmp/fetch.log" &&
		gcc -O2 -o "$new/scripts/unifdef" "$new/scripts/unifdef.c" 2>>"$tmp/fetch.log"; then
		# into the cache in one rename, so a concurrent run sees all or nothing
		if mkdir -p "$cache" 2>/dev/null && cp -a "$new" "$tools.$$" 2>/dev/null; then
			chmod 755 "$tools.$$"
			rm -rf "$tools"
			mv -T "$tools.$$" "$tools" 2>/dev/null || rm -rf "$tools.$$"
		fi
		# a cache we cannot write: use this run's copy
		[ -x "$tools/scripts/unifdef" ] || tools=$new
	else
		diag <"$tmp/fetch.log"
		echo "# cannot extract the kernel's scripts from /usr/src/linux-source-6.1.tar.xz"
	fi
fi

# --- kernel-doc: every member documented
for f in "$uapi" include/neuron/*.h; do
	if [ -f "$tools/scripts/kernel-doc" ]; then
		perl "$tools/scripts/kernel-doc" -none "$f" >"$tmp/kdoc.log" 2>&1
		st=$?
		[ -s "$tmp/kdoc.log" ] && st=1
		diag <"$tmp/kdoc.log"
	else
		st=1
	fi
	result $st "headers.kernel_doc.$f"
done

# --- the uapi header alone, in C89, C11 and C++20
echo '#include <linux/neuron.h>' >"$tmp/uapi.c"
cp "$tmp/uapi.c" "$tmp/uapi.cpp"
compile() { # compile NAME COMPILER ARGS...: -fsyntax-only, diagnostics as "# "
	local name=$1
	shift
	"$@" -fsyntax-only >"$tmp/cc.log" 2>&1
	local st=$?
	[ -s "$tmp/cc.log" ] && st=1
	diag <"$tmp/cc.log"
	result $st "$name"
}
compile headers.uapi_c89 gcc -std=c89 -pedantic -Werror -I include/uapi "$tmp/uapi.c"
compile headers.uapi_c11 gcc -std=c11 -Wall -Wextra -Werror -I include/uapi "$tmp/uapi.c"
compile headers.uapi_cxx20 g++ -std=c++20 -Wall -Wextra -Werror -I include/uapi "$tmp/uapi.cpp"

# --- headers_install.sh, then the usr/include header test
inst=$tmp/usr/include
mkdir -p "$inst/linux"
st=1
if [ -x "$tools/scripts/unifdef" ]; then
	# it runs scripts/unifdef relative to the current directory
	(cd "$tools" && sh scripts/headers_install.sh "$top/$uapi" "$inst/linux/neuron.h") \
		>"$tmp/install.log" 2>&1
	st=$?
	# headers_check.pl: every <linux/...> it includes is exported (the
	# system's /usr/include holds the exported kernel headers), no extern
	# prototypes, no <asm/types.h> misuse
	if [ $st -eq 0 ] && [ -s "$inst/linux/neuron.h" ]; then
		perl "$tools/usr/include/headers_check.pl" /usr/include x86 "$inst/linux/neuron.h" \
			>>"$tmp/install.log" 2>&1 || st=1
	else
		st=1
	fi
	[ -s "$tmp/install.log" ] && st=1
	diag <"$tmp/install.log"
fi
result $st headers.headers_install
if [ -s "$inst/linux/neuron.h" ]; then
	compile headers.headers_install_hdrtest gcc -std=c90 -Wall \
		-Werror=implicit-function-declaration -Werror -I "$inst" -x c /dev/null \
		-include "$inst/linux/neuron.h" -include "$inst/linux/neuron.h"
else
	echo "# no installed header to test (headers_install failed)"
	result 1 headers.headers_install_hdrtest
fi

# --- regs.h alone: its static assertions hold in C and C++
nasserts=$(grep -c '^NEURON_STATIC_ASSERT(' "$regs")
echo "# $regs: $nasserts static assertions"
echo '#include <neuron/regs.h>' >"$tmp/regs.c"
cp "$tmp/regs.c" "$tmp/regs.cpp"
if [ "$nasserts" -gt 0 ]; then
	compile headers.regs_asserts_c gcc -std=c11 -Wall -Wextra -Werror -I include "$tmp/regs.c"
	compile headers.regs_asserts_cxx g++ -std=c++20 -Wall -Wextra -Werror -I include "$tmp/regs.cpp"
else
	result 1 headers.regs_asserts_c
	result 1 headers.regs_asserts_cxx
fi

echo "1..$n"
[ "$fails" -eq 0 ]
