#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo`: sets up the host, builds what the demo runs (the module,
# QEMU with the emulated device, neuron-nq; no test suites), boots the VM,
# loads the driver and runs examples/hello.nq with neuron-nq, which drains the
# mmapped rings in userspace and prints the decoded records.
# The guest kernel's and QEMU's downloads and QEMU's build run beside the
# module's and neuron-nq's builds (docs/build-environment.md#demo).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$PWD/build
t0=$(date +%s)

scripts/setup-host.sh --demo
# no compiler cache: its objects (unoptimised, below) serve no other build,
# and filling it costs a cold run a preprocessor pass a file
mkdir -p "$build"
emulator/qemu/build-qemu.sh --no-qtest >"$build/demo-qemu.out" 2>"$build/demo-qemu.log" &
qemu_job=$!
selftests/vm/fetch-kernel.sh >"$build/demo-kernel.out" 2>"$build/demo-kernel.log" &
kernel_job=$!
make -s module
# its own build directory: the tests' and benchmarks' options stay on in
# build/userspace (make userspace, make check). No optimisation and no
# debug info: it compiles in half the CPU time, which the QEMU build beside
# it wants, and the demo runs one short program
# (docs/build-environment.md#demo)
cmake -S userspace -B "$build/demo-userspace" -DCMAKE_BUILD_TYPE=None \
	-DNEURON_BUILD_TESTS=OFF -DNEURON_BUILD_BENCH=OFF -DNEURON_BUILD_K8S=OFF >/dev/null
# at the same priority as QEMU: neuron-nq is one compile unit that can
# start only after the library's, so when it was niced it ran alone after
# QEMU had finished (docs/build-environment.md#demo)
cmake --build "$build/demo-userspace" -j2 --target neuron-nq
wait "$qemu_job" || { cat "$build/demo-qemu.log" >&2; exit 1; }
wait "$kernel_job" || { cat "$build/demo-kernel.log" >&2; exit 1; }
qemu=$(tail -1 "$build/demo-qemu.out")
kernel=$(tail -1 "$build/demo-kernel.out")
echo "demo: set up and built in $(($(date +%s) - t0)) s"

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
	--bin "$build/demo-userspace/neuron-nq" --timeout 600 -- /opt/neuron/demo.sh
