#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make shell`: a shell in the VM with the emulated device, the driver
# loaded (/dev/nnq*), neuron-nq and the example programs at hand
# (docs/first-hour.md walks through them). Builds what is missing first, as
# `make demo` does: the module, neuron-nq, QEMU, the guest kernel.
#
#   make shell [ARGS="OPTIONS"]      or      scripts/shell.sh [OPTIONS]
#
# stdin a terminal: the guest's console on it. What you type runs in the
#   guest; Ctrl-C, Ctrl-Z and Ctrl-\ go to the guest's foreground command
#   (the shell has job control); `exit [N]` or `poweroff` ends the session
#   and the terminal is left as it was. Ctrl-A x leaves QEMU at once,
#   Ctrl-A c is QEMU's monitor (Ctrl-A a sends a Ctrl-A to the guest).
# stdin not a terminal (a pipe, a file): read to its end, then run by the
#   guest's sh as a script in one boot, e.g.
#     printf 'neuron-nq info\nexit\n' | make shell
#   Only the console's text is printed (no prompt, no echo of the commands).
# Either way the exit status is the guest shell's (`exit N`, or the last
# command's): scripts/shell.sh returns it as it is; make turns any non-zero
# status into its own 2 and prints it ("Error N").
#
# Options:
#   --devices N      N neuron-tpb functions (/dev/nnq0..), default 1
#   --cores N        cores per device (the device's `cores` property; its
#                    default when not given)
#   --device OPTS    more neuron-tpb properties, e.g. gen=sunda (every device)
#   --smp N          virtual CPUs, default 2
#   --memory MIB     guest memory, default 512
#   --iommu          behind an Intel IOMMU (intel_iommu=on iommu.strict=1)
#   --kernel K       6.1 (default), 6.12 (bookworm-backports; nnq.ko is then
#                    built against its headers in build/shell-kernel-6.12), or
#                    a vmlinuz path (with --module)
#   --module KO      this nnq.ko instead of building one
#   --neuron-nq PATH this neuron-nq instead of building one
#   --payload DIR    also copied to /opt/neuron (repeatable)
#   --append ARGS    extra kernel command line, e.g. neuron.hang_timeout_ms=500
#   --timeout S      a limit on the whole boot (default: none for a terminal,
#                    600 s for piped input)
#   --qemu PATH      this qemu-system-x86_64 (default: build-qemu.sh's)
#   --no-build       build nothing; use what exists (tests)
# The guest starts in /opt/neuron: examples/*.nq, and every --payload's
# files. The console is also logged raw to $NEURON_VM_LOG (default
# build/vm/shell.log). docs/build-environment.md#make-shell.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build=$top/build

devices=1 cores="" device_opts="" smp=2 memory=512 iommu=0 kver=6.1 ko="" qemu=""
timeout="" append="" build_it=1 payloads=() nq=""
while [ $# -gt 0 ]; do
	case $1 in
	--devices) devices=$2; shift 2 ;;
	--cores) cores=$2; shift 2 ;;
	--device) device_opts=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--iommu) iommu=1; shift ;;
	--kernel) kver=$2; shift 2 ;;
	--module) ko=$2; shift 2 ;;
	--neuron-nq) nq=$2; shift 2 ;;
	--payload) payloads+=("$2"); shift 2 ;;
	--append) append=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--qemu) qemu=$2; shift 2 ;;
	--no-build) build_it=0; shift ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "shell: unknown option $1 (scripts/shell.sh --help)" >&2; exit 2 ;;
	esac
done
case $cores in
'') ;;
*[!0-9]*|0) echo "shell: --cores wants a number from 1" >&2; exit 2 ;;
*) device_opts="cores=$cores${device_opts:+,$device_opts}" ;;
esac
note() { echo "shell: $*" >&2; }
# the user's stdin (a terminal, or the script to run) is kept for the guest
# on fd 3: no build step may read from it
exec 3<&0 </dev/null

# The build's output goes to stderr and a log, so that piped input's stdout
# is the guest's console alone
mkdir -p "$build/vm"
blog=$build/vm/shell-build.log
: >"$blog"
if [ "$build_it" -eq 1 ]; then
	[ "$(id -u)" -ne 0 ] || scripts/setup-host.sh --demo >>"$blog" 2>&1 ||
		{ tail -20 "$blog" >&2; note "scripts/setup-host.sh --demo failed (log: $blog)"; exit 1; }
fi

# the guest kernel, and a module for it
case $kver in
6.1|6.12) kernel=$(selftests/vm/fetch-kernel.sh "$kver" 2>>"$blog" | tail -1) ||
	{ tail -5 "$blog" >&2; note "fetch-kernel.sh $kver failed (log: $blog)"; exit 1; } ;;
*) kernel=$kver
   [ -f "$kernel" ] || { note "--kernel: 6.1, 6.12 or a vmlinuz, not $kver"; exit 2; }
   [ -n "$ko" ] || { note "--kernel PATH needs --module KO"; exit 2; } ;;
esac
if [ -z "$ko" ]; then
	if [ "$kver" = 6.12 ]; then
		# sources only, in a tree of its own (the 6.1 kernel/nnq.ko stays):
		# rebuilt when a source is newer than the module
		obj=$build/shell-kernel-6.12
		ko=$obj/kernel/nnq.ko
		if [ "$build_it" -eq 1 ] && { [ ! -f "$ko" ] ||
			[ -n "$(find kernel include -newer "$ko" -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) \
				! -name '*.mod.c' -print -quit)" ]; }; then
			note "building nnq.ko for 6.12 in $obj"
			kdir=$(selftests/vm/fetch-kernel.sh --headers 6.12 2>>"$blog" | tail -1) &&
				. selftests/vm/lane-lib.sh && lane_build_module "$obj" "$kdir" 2>>"$blog" ||
				{ tail -20 "$blog" >&2; note "nnq.ko does not build for 6.12 (log: $blog)"; exit 1; }
		fi
	else
		ko=$top/kernel/nnq.ko
		if [ "$build_it" -eq 1 ]; then
			nice make -s module >>"$blog" 2>&1 ||
				{ tail -20 "$blog" >&2; note "make module failed (log: $blog)"; exit 1; }
		fi
	fi
fi
[ -f "$ko" ] || { note "no $ko (make module)"; exit 1; }

# neuron-nq: an existing build tree's (make userspace's, else make demo's),
# brought up to date; else make demo's small one (no tests, no optimisation)
dir=""
[ -n "$nq" ] || for dir in "$build/userspace" "$build/demo-userspace"; do
	if [ -f "$dir/CMakeCache.txt" ]; then
		nq=$dir/neuron-nq
		break
	fi
	dir=""
done
if [ "$build_it" -eq 1 ] && { [ -n "$dir" ] || [ -z "$nq" ]; }; then
	if [ -z "$nq" ]; then
		dir=$build/demo-userspace
		nq=$dir/neuron-nq
		cmake -S userspace -B "$dir" -DCMAKE_BUILD_TYPE=None -DNEURON_BUILD_TESTS=OFF \
			-DNEURON_BUILD_BENCH=OFF -DNEURON_BUILD_K8S=OFF >>"$blog" 2>&1 ||
			{ tail -20 "$blog" >&2; note "cmake failed (log: $blog)"; exit 1; }
	fi
	nice cmake --build "$dir" -j2 --target neuron-nq >>"$blog" 2>&1 ||
		{ tail -20 "$blog" >&2; note "neuron-nq does not build (log: $blog)"; exit 1; }
fi
[ -n "$nq" ] && [ -x "$nq" ] || { note "no neuron-nq (make userspace)"; exit 1; }

if [ -z "$qemu" ]; then
	[ "$build_it" -eq 1 ] || note "--no-build: QEMU from the cache (build-qemu.sh builds it if missing)"
	qemu=$(nice emulator/qemu/build-qemu.sh --no-qtest 2>>"$blog" | tail -1) ||
		{ tail -20 "$blog" >&2; note "QEMU build failed (log: $blog)"; exit 1; }
fi

# the guest's /opt/neuron: the examples, the setup script, any --payload
payload=$(mktemp -d)
trap 'rm -rf "$payload"' EXIT
cp -r examples "$payload/"
cat >"$payload/shell-setup.sh" <<'GUEST'
#!/bin/sh
# make shell's guest setup (scripts/shell.sh): the driver, then its nodes
insmod /lib/neuron/nnq.ko || exit 1
i=0
while [ ! -c /dev/nnq0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -c /dev/nnq0 ] || { echo "shell-setup: no /dev/nnq0 after insmod"; exit 1; }
GUEST
chmod +x "$payload/shell-setup.sh"

set -- --qemu "$qemu" --kernel "$kernel" --module "$ko" --bin "$nq" --payload "$payload" \
	--devices "$devices" --smp "$smp" --memory "$memory"
for p in "${payloads[@]}"; do set -- "$@" --payload "$p"; done
[ -z "$device_opts" ] || set -- "$@" --device "$device_opts"
[ "$iommu" -eq 0 ] || set -- "$@" --iommu
[ -z "$append" ] || set -- "$@" --append "$append"
[ -z "$timeout" ] || set -- "$@" --timeout "$timeout"
[ -t 3 ] && note "booting (smp $smp, $devices device(s), kernel $kver); exit or poweroff ends the session, Ctrl-A x leaves QEMU"
export NEURON_VM_LOG=${NEURON_VM_LOG:-$build/vm/shell.log}
set +e
selftests/vm/run-vm.sh --interactive "$@" -- /opt/neuron/shell-setup.sh <&3 3<&-
st=$?
exit $st
