#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# VM lanes of issue 6 that run robust_test against the device model's fault
# injection (docs/robustness.md):
#   faults  fault-dma-error-queue=1 (core 0's EXPLICIT queue: every ring write
#           fails; fault-dma-error-bits=0x81: each failure raises DMA_ERROR
#           and bit 7, a bit the UAPI does not name, so the driver logs
#           dma-error and device-fault) and fault-stuck-engine=9 (core 1's SP engine never retires
#           an instruction): robust_test's "faults" group checks the DMA error
#           is reported and counted while the other queues keep serving, and
#           the stuck engine times out and is recovered by ENGINE_RESET and
#           by release; and fault-stuck-disable=10 (core 1's trace queue
#           ignores its disable): the "quarantine" group checks its ring is
#           quarantined on destroy and release, never handed to another
#           tenant, and freed by the next reset and at unbind
#   storm   fault-intr-storm=16 (core 1's tpb_notific_intr_7 is asserted again
#           as soon as the driver clears it): the "storm" group checks the
#           driver detects and rate limits it (a userspace loop keeps most of
#           the CPU, edges per storm stay bounded, other causes and records
#           still get through); the "irq_budget" group checks THROTTLE and
#           intr_0 are held per core at the interrupt beside the storm
#           (docs/decisions/0039-interrupt-ratelimit.md); the "removal"
#           group then unbinds/binds and removes/rescans the device
#           mid-storm, and the lane ends with rmmod during it
#   swiotlb swiotlb=force on the guest kernel's command line (every
#           streaming DMA mapping bounced, as in a confidential VM): the
#           "swiotlb" group checks a host ring is refused with -EOPNOTSUPP
#           and device rings carry the records (docs/decisions/0006-swiotlb.md)
#
# Usage: lane-robust.sh --lane faults|storm|swiotlb [--qemu PATH] [--kernel PATH]
#                       [--module PATH] [--payload DIR] [--log PATH]
# or the environment: QEMU, KERNEL, MODULE, PAYLOAD, NEURON_VM_LOG.
# PAYLOAD is the main lane's payload directory (scripts/check.sh): its
# guest-tests.sh runs tests/robust_test, which takes its groups and options
# from the kernel command line (neuron_robust=...). Builds nothing. The
# console goes to the log (default build/vm/lane-<lane>.log); the guest
# prints TAP "ok N" / "not ok N" lines there. Prints one summary line; exits
# non-zero on any failure.
set -uo pipefail

lane=""
[ "${1:-}" = --lane ] && { lane=$2; shift 2; }
case $lane in
faults)	device="fault-dma-error-queue=1,fault-dma-error-bits=0x81,fault-stuck-engine=9,fault-stuck-disable=10"
	robust="faults,quarantine,--dma-queue=1,--dma-bits=0x81,--stuck-engine=9,--stuck-disable=10" ;;
storm)	device="fault-intr-storm=16"
	robust="storm,irq_budget,removal,--storm=16" ;;
swiotlb) device="" append="swiotlb=force"
	robust="swiotlb" ;;
*)	echo "lane-robust: --lane faults|storm|swiotlb first" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lane-lib.sh"
lane_robust_args "$@"

mkdir -p "$(dirname "$log")"
: >"$log"

t0=$(date +%s)
NEURON_VM_LOG=$log "$here/run-vm.sh" --qemu "$qemu" --kernel "$kernel" \
	--module "$module" --payload "$payload" ${device:+--device "$device"} \
	--append "${append:+$append }neuron_robust=$robust" --timeout 600 \
	-- /opt/neuron/guest-tests.sh --lane "$lane" --no-devtests robust_test >/dev/null 2>&1
status=$?
lane_tap_counts "$log"
echo "lane-$lane: $np passed, $nf failed, status $status, $(($(date +%s) - t0)) s (console: $log)"
[ "$status" -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]
