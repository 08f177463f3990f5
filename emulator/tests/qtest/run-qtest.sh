#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the device model's qtest (neuron-tpb-test.c) the way QEMU's own test
# runner does: QTEST_QEMU_BINARY names the QEMU under test, --tap -k prints
# one "ok N" / "not ok N" line per case and goes on after a failure. No
# guest kernel is booted (docs/architecture.md#qtest).
#
# Usage: run-qtest.sh [QEMU]   QEMU defaults to emulator/qemu/build-qemu.sh's
#                              binary; the test binary sits next to it.
#        Extra cases only: run-qtest.sh QEMU -p /x86_64/neuron-tpb/msix/table
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then
	qemu=$1
	shift
else
	qemu=$("$here/../../qemu/build-qemu.sh" | tail -1)
fi
test=$(dirname "$qemu")/neuron-tpb-test
if [ ! -x "$test" ]; then
	echo "run-qtest: $test missing (emulator/qemu/build-qemu.sh builds it)" >&2
	exit 1
fi
export QTEST_QEMU_BINARY=$qemu
# every case boots its own machine in well under a second; 5 minutes means hung
exec timeout 300 "$test" --tap -k "$@"
