#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The shutdown lane (docs/robustness.md#shutdown-and-hibernation): nnq.ko's
# .shutdown with a live client, walked by kexec into the same kernel on the
# same virtual machine, where nothing resets the device in between
# (selftests/vm/kexec-guest.sh, selftests/drivers/neuron/kexec_walk.c).
# Hibernation's freeze and thaw is lifecycle_test's "hibernate" group, in
# the recovery lane (lane-monitor.sh).
#
# Usage: lane-shutdown.sh [--qemu PATH] [--kernel PATH] [--module PATH] [--log PATH]
# or the environment: QEMU, KERNEL, MODULE, NEURON_VM_LOG. Needs
# build/selftests/kexec_walk (make selftests); the guest gets it, the guest
# script and a copy of the kernel image it kexecs. Prints one summary line;
# exits non-zero on any failure.
set -uo pipefail

lane=shutdown
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lane-lib.sh"
lane_robust_args "$@"
mkdir -p "$(dirname "$log")"
: >"$log"
[ -x "$top/build/selftests/kexec_walk" ] || lane_fail_early build "no build/selftests/kexec_walk (make selftests)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$top/build/selftests/kexec_walk" "$here/kexec-guest.sh" "$work/"
cp "$kernel" "$work/vmlinuz"

t0=$(date +%s)
NEURON_VM_LOG=$log "$here/run-vm.sh" --qemu "$qemu" --kernel "$kernel" \
	--module "$module" --payload "$work" --memory 1024 --timeout 600 \
	-- /opt/neuron/kexec-guest.sh >/dev/null 2>&1
status=$?
lane_tap_counts "$log"
echo "lane-$lane: $np passed, $nf failed, status $status, $(($(date +%s) - t0)) s (console: $log)"
[ "$status" -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]
