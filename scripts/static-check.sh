#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Static analysis of the driver, printed as TAP ("ok N static.<name>"):
#   static.build_w1_sparse_<kernel>  nnq.ko built with W=1 and C=1 (sparse)
#       against Debian's 6.1 headers and bookworm-backports' 6.12 headers, each
#       in a scratch copy under build/static/; any compiler, sparse or modpost
#       warning fails it (the warnings are printed as "# " lines)
#   static.kernel_calls_run_one_way  the call graph between the kernel's
#       files (scripts/kernel-call-graph.sh on the 6.1 objects) has no cycle
#   static.checkpatch.<file>  scripts/checkpatch.pl --strict (from
#       linux-source-6.1, extracted once into $NEURON_CACHE/checkpatch-<ver>)
#       on every kernel/*.c and *.h (not the generated *.mod.c) and on the
#       headers the driver shares with userspace (include/); any error,
#       warning or check fails it unless it is listed in EXCEPTIONS below
#       with its reason
# Exits non-zero if any line is "not ok". Full logs: build/static/.
#
# Usage: static-check.sh [-v]   (-v: print the checkpatch report of failures)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
top=$PWD
cache=${NEURON_CACHE:-/var/cache/neuron}
out=$top/build/static
verbose=0
[ "${1:-}" = -v ] && verbose=1

# Justified checkpatch exceptions, one per line: "FILE-GLOB TYPE  reason".
# Only the headers shared with userspace (C++ libneuron, the QEMU model and
# the selftests include them) have any; kernel/ has none.
EXCEPTIONS=(
	# <stdint.h> types: the same header is compiled by userspace C and C++,
	# where u8/u32 do not exist (the uapi header itself uses __u32)
	"include/neuron/*.h PREFER_KERNEL_TYPES"
	# BIT() is a kernel macro; userspace compiles these register headers too
	"include/neuron/*.h BIT_MACRO"
	# __packed is a kernel macro; the layout header is shared with userspace
	"include/neuron/*.h PREFER_DEFINED_ATTRIBUTE_MACRO"
	# _Static_assert is the C11 keyword (static_assert in C++), not CamelCase
	"include/neuron/*.h CAMELCASE"
	# one static assertion per line for each record field offset: wrapping
	# them would make the table harder to check against the layout spec
	"include/neuron/notification.h LONG_LINE_STRING"
	# the same for the instruction layout table: one offset or size
	# assertion per line, in the UAPI header's field order
	"include/neuron/emu_isa.h LONG_LINE_STRING"
	# NEURON_ISA_OFFSET(s, m)/NEURON_ISA_SIZE(s, m) take a struct tag and a
	# member designator (offsetof's arguments), which cannot be parenthesised
	"include/neuron/emu_isa.h MACRO_ARG_PRECEDENCE"
	# the record accessors read bytes at rec[off], rec[off + 1], ...: macros,
	# not inline functions, so C++ can use them in constant expressions (the
	# views' static assertions) and C89 (no inline) can include them; their
	# arguments are a byte array and an offset constant, never side effects
	"include/uapi/linux/neuron_record.h MACRO_ARG_REUSE"
)

n=0 fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fails=$((fails + 1)); fi
}
echo "TAP version 13"
mkdir -p "$out"

# --- W=1 + sparse builds against each kernel
for series in 6.1 6.12; do
	name=static.build_w1_sparse_$series
	if ! kdir=$(selftests/vm/fetch-kernel.sh --headers "$series" 2>"$out/fetch-$series.log" | tail -1) ||
		[ ! -f "$kdir/Makefile" ]; then
		sed 's/^/# /' "$out/fetch-$series.log"
		result 1 "$name"
		continue
	fi
	scratch=$out/$series
	rm -rf "$scratch"
	mkdir -p "$scratch/kernel"
	cp -a include "$scratch/"
	cp kernel/Kbuild kernel/Makefile "$scratch/kernel/"
	for f in kernel/*.c kernel/*.h; do
		case $f in *.mod.c) continue ;; esac
		cp "$f" "$scratch/kernel/"
	done
	make -C "$scratch/kernel" KDIR="$kdir" NEURON_TEST_HOOKS=1 W=1 C=1 -j2 >"$scratch/build.log" 2>&1
	st=$?
	# gcc and sparse print "warning:"/"error:", modpost "WARNING:"/"ERROR:"
	if grep -iE 'warning|error' "$scratch/build.log" >"$scratch/warnings.log"; then
		sed 's/^/# /' "$scratch/warnings.log"
		st=1
	fi
	[ $st -eq 0 ] && [ -f "$scratch/kernel/nnq.ko" ] || st=1
	echo "# $series: $(grep -c ' CHECK ' "$scratch/build.log") files through sparse ($kdir)"
	result $st "$name"
done

# --- calls between the kernel's files run one way (docs/architecture.md)
if [ -f "$out/6.1/kernel/nnq.ko" ]; then
	scripts/kernel-call-graph.sh "$out/6.1/kernel" >"$out/call-graph.log" 2>&1
	st=$?
	sed 's/^/# /' "$out/call-graph.log"
else
	echo "# no 6.1 objects to read the call graph from"
	st=1
fi
result $st static.kernel_calls_run_one_way

# --- checkpatch --strict
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
cpdir=$cache/checkpatch-$srcver
if [ ! -x "$cpdir/checkpatch.pl" ]; then
	tmp=$(mktemp -d)
	if tar -C "$tmp" -xf /usr/src/linux-source-6.1.tar.xz --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch 2>"$out/checkpatch-fetch.log"; then
		mkdir -p "$cache"
		rm -rf "$cpdir"
		mv "$tmp" "$cpdir"
		chmod 755 "$cpdir" "$cpdir/checkpatch.pl"
	else
		rm -rf "$tmp"
		sed 's/^/# /' "$out/checkpatch-fetch.log"
	fi
fi

justified() { # justified FILE TYPE: listed in EXCEPTIONS?
	local e glob type
	for e in "${EXCEPTIONS[@]}"; do
		glob=${e%% *} type=${e#* }
		# shellcheck disable=SC2053 # the glob is meant to match
		[[ $1 == $glob ]] && [ "$2" = "$type" ] && return 0
	done
	return 1
}

files=()
for f in kernel/*.c kernel/*.h include/uapi/linux/*.h include/neuron/*.h; do
	case $f in *.mod.c) continue ;; esac
	[ -f "$f" ] && files+=("$f")
done
for f in "${files[@]}"; do
	name=static.checkpatch.$f
	if [ ! -x "$cpdir/checkpatch.pl" ]; then
		result 1 "$name"
		continue
	fi
	log=$out/checkpatch-$(echo "$f" | tr / _).log
	# --no-tree: not inside a kernel tree; spelling.txt etc. sit beside it
	perl "$cpdir/checkpatch.pl" --strict --no-tree --show-types --terse \
		--no-summary -f "$f" >"$log" 2>&1
	bad=0 kept=0
	while IFS= read -r line; do
		# FILE:LINE: LEVEL:TYPE: message
		type=$(sed -nE 's/^[^:]+:[0-9]+: (ERROR|WARNING|CHECK):([A-Z0-9_]+):.*/\2/p' <<<"$line")
		if [ -z "$type" ]; then
			# anything else checkpatch says is unexpected: show it, fail
			echo "# $line"
			bad=1
		elif justified "$f" "$type"; then
			kept=$((kept + 1))
		else
			echo "# $line"
			bad=1
		fi
	done <"$log"
	[ $kept -gt 0 ] && echo "# $f: $kept justified report(s) (EXCEPTIONS in $0)"
	if [ $bad -ne 0 ] && [ $verbose -eq 1 ]; then
		perl "$cpdir/checkpatch.pl" --strict --no-tree --show-types -f "$f" | sed 's/^/#   /'
	fi
	result $bad "$name"
done

echo "# static: $fails of $n checks failed"
[ $fails -eq 0 ]
