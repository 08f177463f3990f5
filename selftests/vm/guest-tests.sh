#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (as init's child). Runs the device model's own tests
# (/opt/neuron/devtests/*) against the bare device, loads the driver, checks
# the device is visible with its MSI-X vectors, runs the kselftests, then
# checks the kernel log for oopses and warnings and unloads the driver.
# Prints TAP; exits non-zero on any failure. The host counts the
# "ok"/"not ok" lines.
#
# Usage: guest-tests.sh [--lane NAME] [--no-devtests] [--trace] [TEST...]
#   NAME prefixes this script's own checks (default "vm"); TEST names
#   binaries in /opt/neuron/tests (default: all of them) or, failing that,
#   on PATH (run-vm.sh --bin: a userspace test with its libraries). --trace: right
#   after insmod, trace-guest.sh checks the driver's tracepoints with
#   trace-cmd and perf (the payload of trace-payload.sh).
lane=vm
devtests=1
trace=0
while [ $# -gt 0 ]; do
	case "$1" in
	--lane) lane=$2; shift 2 ;;
	--no-devtests) devtests=0; shift ;;
	--trace) trace=1; shift ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- $(ls /opt/neuron/tests 2>/dev/null)

n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $lane.$2"; else echo "not ok $n $lane.$2"; fails=$((fails + 1)); fi
}
# run PROGRAM: it prints its own ok/not ok lines; a crash of the whole
# program (no line for it) is caught by its status and fails the run
run() {
	echo "# running $*"
	t0=$(date +%s)
	"$@"
	st=$?
	# per-test time, so a lane that grows shows which test grew
	echo "# $(basename "$1") took $(($(date +%s) - t0)) s"
	if [ $st -ne 0 ]; then
		echo "# $(basename "$1") exited with status $st"
		suite_failed=1
	fi
}

echo "TAP version 13"
if [ $devtests -eq 1 ]; then
	for t in /opt/neuron/devtests/*; do
		[ -x "$t" ] && run "$t"
	done
fi
insmod /lib/neuron/nnq.ko
result $? "insmod"
lspci -nn -vv -d 1d0f:7f00 2>/dev/null | sed 's/^/# /'
lspci -vv -d 1d0f:7f00 | grep -q 'MSI-X: Enable+'
result $? "lspci_msix_enabled"
grep nnq /proc/interrupts | sed 's/^/# /'
[ "$(grep -c 'nnq0-' /proc/interrupts)" -ge 4 ]
result $? "proc_interrupts_lists_vectors"
[ -c /dev/nnq0 ]
result $? "dev_node_exists"
# behind an IOMMU (run-vm.sh --iommu) the function must sit in an IOMMU
# group that translates its DMA strictly (type "DMA", not the lazy "DMA-FQ")
if grep -q 'intel_iommu=on' /proc/cmdline; then
	bdf=$(basename "$(readlink -f /sys/class/nnq/nnq0/device)")
	grp=/sys/bus/pci/devices/$bdf/iommu_group
	echo "# iommu group of $bdf: $(basename "$(readlink -f "$grp")"), type $(cat "$grp/type" 2>/dev/null)"
	[ "$(cat "$grp/type" 2>/dev/null)" = DMA ]
	result $? "iommu_group_strict"
fi
# iproute2 sees the generic netlink family: its operations and the events group
genl ctrl get name neuron >/tmp/genl 2>&1
sed 's/^/# /' /tmp/genl
grep -q 'name: events' /tmp/genl && grep -q 'ID-0x1 ' /tmp/genl &&
	grep -q 'ID-0x2 ' /tmp/genl
result $? "genl_ctrl_lists_family"
# the tracepoints, on the freshly loaded module (device 0, no edge yet)
if [ $trace -eq 1 ]; then
	if [ -x /opt/neuron/trace-guest.sh ]; then
		run /opt/neuron/trace-guest.sh --lane "$lane"
	else
		echo "# --trace: no /opt/neuron/trace-guest.sh (trace-payload.sh)"
		result 1 "trace"
	fi
fi

for name in "$@"; do
	if [ -x "/opt/neuron/tests/$name" ]; then
		run "/opt/neuron/tests/$name"
	elif command -v "$name" >/dev/null 2>&1; then
		run "$(command -v "$name")"
	else
		echo "# $name: not found in /opt/neuron/tests"
		result 1 "$name"
	fi
done

# libneuron's drain on every drain path against the torn-record checks,
# when the command line asks for it (neuron.torn_drain_records=N), with
# the --trace payload (drain-guest.sh)
if grep -q 'neuron.torn_drain_records=' /proc/cmdline; then
	if [ -x /opt/neuron/drain-guest.sh ]; then
		run /opt/neuron/drain-guest.sh --lane "$lane"
	else
		echo "# neuron.torn_drain_records: no /opt/neuron/drain-guest.sh (trace-payload.sh)"
		result 1 "torn_drain"
	fi
fi
# the C API and execute() as an unprivileged user, with the --trace payload
if [ $trace -eq 1 ] && [ -x /opt/neuron/api-guest.sh ]; then
	run /opt/neuron/api-guest.sh
fi

# neuron-nq list and metrics on the real driver (docs/metrics.md#validation),
# with the tools of the --trace payload
if [ $trace -eq 1 ] && [ -x /opt/neuron/metrics-guest.sh ]; then
	run /opt/neuron/metrics-guest.sh --lane "$lane"
fi

# neuron-nq coredump on the devcoredump of a real hang (docs/cli-json.md#coredump),
# with the tools of the --trace payload
if [ $trace -eq 1 ] && [ -x /opt/neuron/coredump-guest.sh ]; then
	run /opt/neuron/coredump-guest.sh --lane "$lane"
fi

# the driver must leave no WARN, BUG or oops behind (dmesg is the kernel log)
if dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN' >/tmp/bad; then
	sed 's/^/# dmesg: /' /tmp/bad
	result 1 "dmesg_clean"
else
	result 0 "dmesg_clean"
fi
rmmod nnq
result $? "rmmod"
# the driver's hardware error lines as /dev/kmsg gives them to a log agent
# (priority, then the text and its SUBSYSTEM/DEVICE lines), which the
# console ("quiet": errors only) does not all show, for the host's check of
# the node-problem-detector rules (selftests/npd/check-npd-rules.sh,
# docs/decisions/0014-hw-error-log.md); a read past the last record blocks
timeout 1 cat /dev/kmsg >/tmp/kmsg 2>/dev/null
awk '/^[0-9]+,/ { keep = index($0, ": hw-error ") > 0 } keep { print "# kmsg: " $0 }' /tmp/kmsg
echo "# guest: $fails of $n checks failed"
[ "$fails" -eq 0 ] && [ -z "${suite_failed:-}" ]
