#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs devtest (devtest.c), the device model's own tests, in the VM against
# the bare device (no driver), in two device configurations:
#   A  defaults (gen=cayman, 2 cores)
#   B  gen=sunda, a ring whose writes fail, a stuck engine, a slow
#      producer, a core that never quiesces (fault injection) and a 20 ms
#      reset latency; the kernel command line tells devtest.
# `make check` runs configuration A in its main VM and B with this script.
#
# Usage: run-devtest.sh [A|B ...]   (default: A B); exit 0 iff all passed.
# Env:   QEMU, VMLINUZ (default: build-qemu.sh's and fetch-kernel.sh's)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(A B)

make -s -C "$here" OUT="$top/build/selftests"
QEMU=${QEMU:-$("$top/emulator/qemu/build-qemu.sh" | tail -1)}
VMLINUZ=${VMLINUZ:-$("$top/selftests/vm/fetch-kernel.sh" | tail -1)}
payload=$top/build/devtest-payload
rm -rf "$payload"
mkdir -p "$payload"
cp "$top/build/selftests/devtest" "$payload/"

status=0
for c in "${configs[@]}"; do
	case $c in
	A) dev="" append="" ;;
	B) dev="gen=sunda,fault-dma-error-queue=18,fault-stuck-engine=9,insn-delay-ns=200000"
	   dev="$dev,fault-stuck-busy=1,reset-latency-us=20000"
	   append="neuron.fault_dma_queue=18 neuron.stuck_engine=9 neuron.insn_delay_ns=200000"
	   append="$append neuron.stuck_busy=1 neuron.reset_latency_us=20000" ;;
	*) echo "run-devtest: unknown configuration $c" >&2; exit 2 ;;
	esac
	echo "run-devtest: configuration $c" >&2
	NEURON_VM_LOG=$top/build/vm/devtest-$c.log "$top/selftests/vm/run-vm.sh" \
		--qemu "$QEMU" --kernel "$VMLINUZ" --payload "$payload" \
		${dev:+--device "$dev"} --append "$append" --timeout 600 \
		-- /opt/neuron/devtest || status=1
done
exit $status
