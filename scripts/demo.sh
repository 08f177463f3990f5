#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo`: sets up the host, builds everything, boots the VM with the
# emulated device, loads the driver and runs examples/hello.nq with neuron-nq,
# which drains the mmapped rings in userspace and prints the decoded records.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$PWD/build

scripts/setup-host.sh
. scripts/ccache-env.sh
make -s module userspace
qemu=$(emulator/qemu/build-qemu.sh | tail -1)
kernel=$(selftests/vm/fetch-kernel.sh | tail -1)

payload=$build/demo-payload
rm -rf "$payload"
mkdir -p "$payload"
cp -r examples "$payload/"
cat >"$payload/demo.sh" <<'GUEST'
#!/bin/sh
insmod /lib/neuron/nnq.ko || exit 1
echo "== lspci"
lspci -nn -d 1d0f:7f00
echo "== neuron-nq info"
neuron-nq info || exit 1
echo "== neuron-nq run examples/hello.nq"
cat /opt/neuron/examples/hello.nq | sed 's/^/   | /'
neuron-nq run /opt/neuron/examples/hello.nq
GUEST
chmod +x "$payload/demo.sh"

NEURON_VM_LOG=$build/vm/demo.log selftests/vm/run-vm.sh --qemu "$qemu" \
	--kernel "$kernel" --module kernel/nnq.ko --payload "$payload" \
	--bin "$build/userspace/neuron-nq" --timeout 600 -- /opt/neuron/demo.sh
