#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hygiene of the ABI headers, printed as TAP ("ok N headers.<name>"):
#   headers.kernel_doc.<file>  scripts/kernel-doc -none prints nothing for
#       every include/uapi/linux/neuron*.h and include/neuron/*.h (every
#       member of every documented struct is described)
#   headers.uapi_c89, headers.uapi_c11, headers.uapi_cxx20 (<linux/neuron.h>)
#   headers.uapi_record_c89, _c11, _cxx20 (<linux/neuron_record.h>),
#   headers.uapi_isa_c89, _c11, _cxx20 (<linux/neuron_isa.h>)  a
#       one-line file that includes only that header (-I include/uapi, the
#       system's linux headers for the rest) compiles as C89 with -pedantic,
#       as C11 and as C++20, warnings as errors
#   headers.headers_install  the kernel's scripts/headers_install.sh installs
#       each uapi header into a scratch usr/include (SPDX syscall note, no
#       CONFIG_ leak, unifdef), and usr/include/headers_check.pl accepts it
#   headers.headers_install_hdrtest.<name>  each installed header compiles
#       on its own the way the kernel's usr/include/Makefile tests it: an
#       empty file with -include of the header twice (include guard), -std=c90
#   headers.regs_asserts_c, headers.regs_asserts_cxx  include/neuron/regs.h,
#       alone, compiles as C11 and C++20: its static assertions pin the
#       register map to the hardware description's values
#   headers.uapi_no_bitfields  no C bitfield ("TYPE NAME : WIDTH;") in any
#       include/uapi/linux/*.h, comments stripped (the compiler's
#       preprocessor, -fpreprocessed -dD): a bitfield's layout is the
#       compiler's and the host's choice, not an ABI; the offending lines
#       are printed
#   headers.isa_asserts_c, headers.isa_asserts_cxx  include/neuron/emu_isa.h,
#       alone, compiles as C11 and C++20: its static assertions pin the
#       offset and size of every field of every instruction structure of
#       <linux/neuron_isa.h> to hand-written byte offsets, and its sub-byte
#       masks and shifts to the bits of docs/hardware.md#dge-bounds-reg and
#       #dge-indirect
#   headers.views_asserts_c, headers.views_asserts_cxx
#       include/neuron/notification.h (the bitfield views the tests read
#       records with), alone, compiles as C11, and with
#       notification_views_check.hpp as C++20: their static assertions check
#       the size and offsets (C) and every bit (C++20) of every view against
#       the masks, shifts and offsets of <linux/neuron_record.h> and
#       hand-worked bytes
#   headers.abi_defined_once  no macro, enumerator or struct/union/enum tag
#       of the project's namespace (a name starting with "neuron" in any
#       case, after leading underscores) is defined in more than one file of
#       include/, kernel/, emulator/ and userspace/ (scripts/abi-definitions.awk
#       lists them); the files defining a name twice are printed
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
uapi_record=include/uapi/linux/neuron_record.h
uapi_isa=include/uapi/linux/neuron_isa.h
regs=include/neuron/regs.h
views=include/neuron/notification.h
views_cxx=include/neuron/notification_views_check.hpp

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
for f in "$uapi" "$uapi_record" "$uapi_isa" include/neuron/*.h; do
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
compile() { # compile NAME COMPILER ARGS...: -fsyntax-only, diagnostics as "# "
	local name=$1
	shift
	"$@" -fsyntax-only >"$tmp/cc.log" 2>&1
	local st=$?
	[ -s "$tmp/cc.log" ] && st=1
	diag <"$tmp/cc.log"
	result $st "$name"
}
for h in neuron neuron_record neuron_isa; do
	echo "#include <linux/$h.h>" >"$tmp/uapi.c"
	cp "$tmp/uapi.c" "$tmp/uapi.cpp"
	name=headers.uapi
	[ "$h" = neuron ] || name=headers.uapi_${h#neuron_}
	compile "${name}_c89" gcc -std=c89 -pedantic -Werror -I include/uapi "$tmp/uapi.c"
	compile "${name}_c11" gcc -std=c11 -Wall -Wextra -Werror -I include/uapi "$tmp/uapi.c"
	compile "${name}_cxx20" g++ -std=c++20 -Wall -Wextra -Wpedantic -Wconversion -Werror \
		-I include/uapi "$tmp/uapi.cpp"
done

# --- headers_install.sh, then the usr/include header test
inst=$tmp/usr/include
mkdir -p "$inst/linux"
st=1
if [ -x "$tools/scripts/unifdef" ]; then
	# it runs scripts/unifdef relative to the current directory
	st=0
	: >"$tmp/install.log"
	for h in "$uapi" "$uapi_record" "$uapi_isa"; do
		out=$inst/linux/$(basename "$h")
		(cd "$tools" && sh scripts/headers_install.sh "$top/$h" "$out") \
			>>"$tmp/install.log" 2>&1 || st=1
		# headers_check.pl: every <linux/...> it includes is exported (the
		# system's /usr/include holds the exported kernel headers; neuron.h
		# reaches neuron_record.h as "neuron_record.h", beside it), no
		# extern prototypes, no <asm/types.h> misuse
		if [ -s "$out" ]; then
			perl "$tools/usr/include/headers_check.pl" /usr/include x86 "$out" \
				>>"$tmp/install.log" 2>&1 || st=1
		else
			st=1
		fi
	done
	[ -s "$tmp/install.log" ] && st=1
	diag <"$tmp/install.log"
fi
result $st headers.headers_install
for h in neuron neuron_record neuron_isa; do
	if [ -s "$inst/linux/$h.h" ]; then
		compile "headers.headers_install_hdrtest.$h" gcc -std=c90 -Wall \
			-Werror=implicit-function-declaration -Werror -I "$inst" -x c /dev/null \
			-include "$inst/linux/$h.h" -include "$inst/linux/$h.h"
	else
		echo "# no installed $h.h to test (headers_install failed)"
		result 1 "headers.headers_install_hdrtest.$h"
	fi
done

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

# --- no bitfields in the UAPI headers: "TYPE NAME : WIDTH;" with the
# comments stripped (a "case X: y;" would match too; UAPI headers have none)
st=0
for h in include/uapi/linux/*.h; do
	gcc -fpreprocessed -dD -E -P -x c "$h" 2>"$tmp/bf.err" |
		grep -nE '^[[:space:]]*(__extension__[[:space:]]+)?[A-Za-z_][A-Za-z0-9_ ]*[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*:[[:space:]]*[A-Za-z0-9_()]+[[:space:]]*(,[^;]*)?;' |
		grep -vE '^[0-9]+:[[:space:]]*(case|default)[[:space:]:]' |
		sed "s|^|$h (comments stripped) line |" >"$tmp/bf.log"
	[ -s "$tmp/bf.err" ] && { diag <"$tmp/bf.err"; st=1; }
	if [ -s "$tmp/bf.log" ]; then
		echo "# bitfield in a UAPI header:"
		diag <"$tmp/bf.log"
		st=1
	fi
done
result $st headers.uapi_no_bitfields

# --- emu_isa.h alone: every instruction field's offset and size, in C and C++
isa=include/neuron/emu_isa.h
nasserts=$(grep -c '^NEURON_STATIC_ASSERT(\|^NEURON_ISA_CHECK_FIELD(' "$isa")
echo "# $isa: $nasserts static assertions"
echo '#include <neuron/emu_isa.h>' >"$tmp/isa.c"
cp "$tmp/isa.c" "$tmp/isa.cpp"
if [ "$nasserts" -gt 0 ]; then
	compile headers.isa_asserts_c gcc -std=c11 -Wall -Wextra -Werror -I include "$tmp/isa.c"
	compile headers.isa_asserts_cxx g++ -std=c++20 -Wall -Wextra -Werror -I include "$tmp/isa.cpp"
else
	result 1 headers.isa_asserts_c
	result 1 headers.isa_asserts_cxx
fi

# --- notification.h alone: the views against the UAPI masks, in C and C++20
nasserts=$(cat "$views" "$views_cxx" | grep -c 'static_assert(\|^NEURON_STATIC_ASSERT(')
echo "# $views, $views_cxx: $nasserts static assertions"
echo '#include <neuron/notification.h>' >"$tmp/views.c"
echo '#include <neuron/notification_views_check.hpp>' >"$tmp/views.cpp"
compile headers.views_asserts_c gcc -std=c11 -Wall -Wextra -Werror -I include "$tmp/views.c"
compile headers.views_asserts_cxx g++ -std=c++20 -Wall -Wextra -Werror -I include "$tmp/views.cpp"

# --- every ABI name defined in one file only
git ls-files --cached --others --exclude-standard include kernel emulator userspace 2>/dev/null |
	grep -E '\.(h|c|hpp|cpp)$' >"$tmp/srcs"
[ -s "$tmp/srcs" ] || find include kernel emulator userspace -type f \
	\( -name '*.h' -o -name '*.c' -o -name '*.hpp' -o -name '*.cpp' \) ! -name '*.mod.c' >"$tmp/srcs"
st=0
if xargs awk -f scripts/abi-definitions.awk <"$tmp/srcs" >"$tmp/defs"; then
	# NAME<TAB>FILE:LINE -> NAME, and the places, when two files define it
	awk -F'\t' 'tolower($1) ~ /^_*neuron/ {
			f = $2; sub(/:[0-9]+$/, "", f)
			if (!seen[$1 SUBSEP f]++) { n[$1]++; at[$1] = at[$1] " " $2 }
		}
		END { for (k in n) if (n[k] > 1) print k ":" at[k] }' "$tmp/defs" | sort >"$tmp/dups"
	echo "# $(awk -F'\t' 'tolower($1) ~ /^_*neuron/' "$tmp/defs" | wc -l) definitions of neuron names in $(wc -l <"$tmp/srcs") files"
	if [ -s "$tmp/dups" ]; then
		st=1
		diag <"$tmp/dups"
	fi
else
	st=1
fi
result $st headers.abi_defined_once

echo "1..$n"
[ "$fails" -eq 0 ]
