#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# VM lane on bookworm-backports' 6.12 kernel: builds nnq.ko against the
# 6.12 headers in build/kernel-6.12/ (a copy of kernel/ and include/, so the
# 6.1 kernel/nnq.ko is left alone), boots the 6.12 kernel with it and runs
# the main lane's kselftests (every binary under build/selftests,
# guest-tests.sh; not the device model's own tests, which test QEMU, not
# the kernel, and run in the main lane). The test binaries are static,
# so the same ones run on both kernels. Then ynl-guest.sh: the kernel's YNL
# tool (linux-source-6.12's tools/net/ynl, with the host's python3, yaml and
# jsonschema copied in by ynl-payload.sh) drives the live family with
# Documentation/netlink/specs/neuron.yaml (docs/architecture.md#ynl-spec).
# The tracepoints are checked in the same boot with trace-cmd and 6.12's
# perf (trace-payload.sh, trace-guest.sh).
#
# Prints the guest's TAP; the console goes to $NEURON_VM_LOG (default
# build/vm/lane-6.12.log), which is what scripts/check.sh counts. A failure
# before the VM starts writes one "not ok" line there. Exits with the guest's
# status. Needs `make selftests userspace` (build/selftests,
# build/userspace/neuron-nq) and scripts/setup-host.sh.
#
# The packaged path (docs/decisions/0023-packaging.md): `--module KO` boots with
# that module instead of building one (scripts/check.sh passes the one DKMS
# built from the neuron-dkms .deb for the 6.12 headers,
# selftests/dkms/dkms-test.sh), and `--root DIR` takes neuron-nq and
# libneuron.so.1 from DIR, where dpkg -x unpacked libneuron1 and neuron-tools.
#
# Usage: lane-6.12.sh [--qemu PATH] [--module KO] [--root DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build
log=${NEURON_VM_LOG:-$build/vm/lane-6.12.log}
qemu="" ko="" root=""
while [ $# -gt 0 ]; do
	case $1 in
	--qemu) qemu=$2; shift 2 ;;
	--module) ko=$2; shift 2 ;;
	--root) root=$2; shift 2 ;;
	*) echo "lane-6.12: unknown option $1" >&2; exit 2 ;;
	esac
done
mkdir -p "$(dirname "$log")"
: >"$log"

lane=6.12
. "$here/lane-lib.sh"

kernel=$("$here/fetch-kernel.sh" 6.12 | tail -1) || lane_fail_early fetch_kernel "fetch-kernel.sh 6.12 failed"
kdir=$("$here/fetch-kernel.sh" --headers 6.12 | tail -1) || lane_fail_early fetch_kernel "no 6.12 headers"
[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1) || lane_fail_early qemu "QEMU build failed"

# the module, in its own tree: sources only, so no 6.1 object is reused
# (unless given one: DKMS's)
if [ -n "$ko" ]; then
	[ -f "$ko" ] || lane_fail_early module_build "no $ko"
else
	obj=$build/kernel-6.12
	lane_build_module "$obj" "$kdir" ||
		lane_fail_early module_build "nnq.ko does not build against $kdir"
	ko=$obj/kernel/nnq.ko
fi

# the main lane's payload (scripts/check.sh), then the YNL tool with python
# and our spec (ynl-payload.sh) and neuron-nq, which runs the program whose
# queues and events the tool shows
payload=$build/lane-6.12-payload
lane_payload "$payload" || lane_fail_early payload "no kselftests in $build/selftests (make selftests)"
nq=$build/userspace/neuron-nq
libpath=${LD_LIBRARY_PATH:-}
if [ -n "$root" ]; then
	nq=$root/usr/bin/neuron-nq
	libpath=$root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
fi
[ -x "$nq" ] || lane_fail_early neuron_nq "no $nq (make userspace, or the packages' root)"
"$here/ynl-payload.sh" "$payload" || lane_fail_early ynl_payload "ynl-payload.sh failed"
# trace-cmd and bookworm-backports' 6.12 perf for the tracepoints' checks
# (guest-tests.sh --trace, docs/architecture.md#tracepoints)
"$here/trace-payload.sh" "$payload" 6.12 || lane_fail_early trace_payload "trace-payload.sh 6.12 failed"
cat >"$payload/lane-6.12-guest.sh" <<'GUEST'
#!/bin/sh
# the main lane's checks (with the tracepoints') but its device-model tests,
# then the kernel's YNL tool on the live family
/opt/neuron/guest-tests.sh --no-devtests --trace
st=$?
/opt/neuron/ynl-guest.sh || st=1
exit $st
GUEST
chmod +x "$payload/lane-6.12-guest.sh"

echo "lane-6.12: $(basename "$(dirname "$kernel")") with $ko and $nq" >&2
LD_LIBRARY_PATH=$libpath NEURON_VM_LOG=$log exec "$here/run-vm.sh" --qemu "$qemu" --kernel "$kernel" \
	--module "$ko" --payload "$payload" --bin "$nq" --memory 1024 --timeout 1500 \
	-- /opt/neuron/lane-6.12-guest.sh
