#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# VM lanes whose guest drives the QEMU monitor: the guest's kselftests print
#     NEURON-HOTPLUG: <monitor command> :END
# on the console (device_del, device_add, qom-set, pcie_aer_inject_error);
# this script watches the console log and sends each command to the QEMU
# monitor, a unix socket (run-vm.sh --monitor), through lane_relay
# (lane-lib.sh). The monitor's answers go to <log>.host.
#
#   hotplug   vm_device_loss (libneuron's Reaper and waiters under a
#             hot-unplug: DEVICE_GONE within 1 s, the thread exits, no
#             SIGBUS (none is raised any more), no CPU afterwards;
#             userspace/README.md#device-loss),
#             then robust_test "hotplug" (surprise removal from the monitor
#             with rings mapped and threads blocked, then hot-plug back) and
#             "reload" (50 module unload/load cycles)
#   recovery  lifecycle_test "aer" (correctable, non-fatal and fatal errors
#             injected with live queues), "suspend" (a pm_test cycle),
#             "hibernate" (freeze and thaw by pm_test, live clients) and
#             "surprise" (the device vanishes: reads all ones, no DMA, no
#             interrupts; then device_del), then race_test "aer" and
#             "surprise" (a client's close, munmap, ioctl and poll/read
#             inside each step of a fatal AER recovery and of a surprise
#             removal, held there by the pause point) and "uevent_aer",
#             "uevent_removal" (a uevent listener sees offline then online
#             for the AER recovery, removing then remove then add for the
#             removal: docs/decisions/0011-reset-and-recovery.md#uevents), on 2
#             vCPUs
#   iommu     the guest behind an Intel IOMMU (intel_iommu=on
#             iommu.strict=1), 2 vCPUs: robust_test "mmap_abuse", "removal",
#             "hotplug", "reload", "fuzz" and lifecycle_test "pinning"
#             (10,000 rounds), "flr", "surprise"
#   iommu-removal  behind the IOMMU, robust_test "removal" 10 times in a row
#   k8s       two devices: the fake kubelet (userspace/k8s/tests/vm_kubelet.py)
#             against neuron-device-plugin and the real driver: registration,
#             ListAndWatch, Allocate, a container made from Allocate's answer
#             alone, PreStartContainer against a live holder, health flips
#             on FLR, fatal AER and surprise removal with their latencies,
#             registration again after a kubelet restart (docs/k8s.md#tests)
#
# Usage: lane-monitor.sh --lane NAME [--qemu PATH] [--kernel PATH]
#                        [--module PATH] [--payload DIR] [--log PATH]
# or the environment: QEMU, KERNEL, MODULE, PAYLOAD, NEURON_VM_LOG; and
# LANE_APPEND, more kernel command line (e.g. "loglevel=7" to see the PCI
# core's informational messages, or "neuron_lifecycle=aer" to run one group:
# the last word of a kind wins).
# PAYLOAD is the main lane's payload directory (scripts/check.sh): its
# guest-tests.sh runs the tests, which take their groups from the kernel
# command line (neuron_robust=..., neuron_lifecycle=...). Builds nothing:
# the hotplug lane also takes build/userspace/vm_device_loss (make
# userspace; VM_DEVICE_LOSS=PATH overrides), copied with its libraries;
# the k8s lane takes build/userspace/neuron-device-plugin and neuron-nq
# (NEURON_BUILD_K8S) and builds its own payload (k8s-payload.sh).
# The console goes to the log (default build/vm/lane-<lane>.log); the guest
# prints TAP "ok N" / "not ok N" lines there. Prints one summary line;
# exits non-zero on any failure.
set -uo pipefail

lane=""
[ "${1:-}" = --lane ] && { lane=$2; shift 2; }
mod=--module=/lib/neuron/nnq.ko
vm_opts=() append="" tests="" guest=()
case $lane in
hotplug)
	append="neuron_robust=hotplug,reload,$mod"
	loss=${VM_DEVICE_LOSS:-$(cd "$(dirname "$0")/../.." && pwd)/build/userspace/vm_device_loss}
	[ -x "$loss" ] || { echo "lane-monitor: no $loss (make userspace)" >&2; exit 2; }
	vm_opts=(--bin "$loss")
	tests="vm_device_loss robust_test" ;;
recovery)
	vm_opts=(--smp 2)
	append="neuron_lifecycle=aer,suspend,hibernate,surprise neuron_race=aer,surprise,uevent_aer,uevent_removal,uevent_aer_failed"
	tests="lifecycle_test race_test" ;;
iommu)
	vm_opts=(--smp 2 --iommu)
	append="neuron_robust=mmap_abuse,removal,hotplug,reload,fuzz,$mod"
	append="$append neuron_lifecycle=pinning,--rounds=10000,flr,surprise"
	tests="robust_test lifecycle_test" ;;
iommu-removal)
	vm_opts=(--smp 2 --iommu)
	append="neuron_robust=removal,--repeat=10"
	tests=robust_test ;;
k8s)
	ubuild=$(cd "$(dirname "$0")/../.." && pwd)/build/userspace
	for b in neuron-device-plugin neuron-nq; do
		[ -x "$ubuild/$b" ] || { echo "lane-monitor: no $ubuild/$b (make userspace)" >&2; exit 2; }
		vm_opts+=(--bin "$ubuild/$b")
	done
	vm_opts+=(--smp 2 --devices 2)
	guest=(/opt/neuron/k8s-guest.sh) ;;
*)	echo "lane-monitor: --lane hotplug|recovery|iommu|iommu-removal|k8s first" >&2
	exit 2 ;;
esac

append="$append ${LANE_APPEND:-}"

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lane-lib.sh"
lane_robust_args "$@"

work=$(mktemp -d)
vm=""
cleanup() {
	[ -n "$vm" ] && kill "$vm" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
if [ "$lane" = k8s ]; then
	"$here/k8s-payload.sh" "$work/k8s" >/dev/null || exit 1
	vm_opts+=(--payload "$work/k8s")
fi
# shellcheck disable=SC2206 # $tests is a list of test names
[ ${#guest[@]} -gt 0 ] || guest=(/opt/neuron/guest-tests.sh --lane "$lane" --no-devtests $tests)
mkdir -p "$(dirname "$log")"
: >"$log"
: >"$log.host"
sock=$work/monitor.sock
t0=$(date +%s)
NEURON_VM_LOG=$log "$here/run-vm.sh" --qemu "$qemu" --kernel "$kernel" \
	--module "$module" --payload "$payload" --monitor "$sock" \
	"${vm_opts[@]}" --append "$append" --timeout 1500 --memory 1024 \
	-- "${guest[@]}" >/dev/null 2>&1 &
vm=$!

lane_relay "$vm" "$sock"
wait "$vm"
status=$?
vm=""
lane_tap_counts "$log"
echo "lane-$lane: $np passed, $nf failed, status $status, $(($(date +%s) - t0)) s, $handled monitor requests (console: $log)"
[ "$status" -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]
