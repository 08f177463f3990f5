#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# VM lane on bookworm-backports' 6.12 kernel: builds neuron.ko against the
# 6.12 headers in build/kernel-6.12/ (a copy of kernel/ and include/, so the
# 6.1 kernel/neuron.ko is left alone), boots the 6.12 kernel with it and runs
# the same payload as the main lane (device-model tests, every kselftest
# binary under build/selftests, guest-tests.sh). The test binaries are static,
# so the same ones run on both kernels.
#
# Prints the guest's TAP; the console goes to $NEURON_VM_LOG (default
# build/vm/lane-6.12.log), which is what scripts/check.sh counts. A failure
# before the VM starts writes one "not ok" line there. Exits with the guest's
# status. Needs `make selftests` (build/selftests) and scripts/setup-host.sh.
#
# Usage: lane-6.12.sh [--qemu PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build
log=${NEURON_VM_LOG:-$build/vm/lane-6.12.log}
qemu=""
[ "${1:-}" = --qemu ] && qemu=$2
mkdir -p "$(dirname "$log")"
: >"$log"

lane=6.12
. "$here/lane-lib.sh"

kernel=$("$here/fetch-kernel.sh" 6.12 | tail -1) || lane_fail_early fetch_kernel "fetch-kernel.sh 6.12 failed"
kdir=$("$here/fetch-kernel.sh" --headers 6.12 | tail -1) || lane_fail_early fetch_kernel "no 6.12 headers"
[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1) || lane_fail_early qemu "QEMU build failed"

# the module, in its own tree: sources only, so no 6.1 object is reused
obj=$build/kernel-6.12
lane_build_module "$obj" "$kdir" ||
	lane_fail_early module_build "neuron.ko does not build against $kdir"

# the main lane's payload (scripts/check.sh)
payload=$build/lane-6.12-payload
lane_payload "$payload" || lane_fail_early payload "no kselftests in $build/selftests (make selftests)"

echo "lane-6.12: $(basename "$(dirname "$kernel")") with $obj/kernel/neuron.ko" >&2
NEURON_VM_LOG=$log exec "$here/run-vm.sh" --qemu "$qemu" --kernel "$kernel" \
	--module "$obj/kernel/neuron.ko" --payload "$payload" --timeout 1200 \
	-- /opt/neuron/guest-tests.sh
