#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debug-kernel VM lane: boots two guests side by side (the kselftests split
# between them), each on 2 vCPUs behind an Intel IOMMU
# (intel_iommu=on iommu.strict=1), the kernel scripts/debug-kernel/build.sh builds
# from linux-source-6.1 (KASAN, lockdep/PROVE_LOCKING, KFENCE, kmemleak,
# DEBUG_ATOMIC_SLEEP; cached) with nnq.ko built against that tree in
# build/kernel-debug/, and runs the main lane's payload (every kselftest
# binary under build/selftests, guest-tests.sh; robust_test
# and lifecycle_test also with their hot-unplug and surprise-removal groups,
# race_test also with its surprise-removal walk, whose monitor commands this
# script relays) under a guest
# wrapper that then
#   - in the second guest, reloads the module and runs faultinj_walk: the
#     kernel's fault injection fails each allocation and user copy of
#     probe, enable, open, every ioctl and mmap once
#     (docs/robustness.md#fault-injection)
#   - triggers kmemleak scans after the module is unloaded and prints every
#     suspected leak (debug.kmemleak_clean)
#   - searches the whole kernel log for KASAN, KFENCE, lockdep, kmemleak,
#     DMA API debug (CONFIG_DMA_API_DEBUG: "DMA-API:" reports),
#     BUG, WARNING, Oops and atomic-sleep reports and prints each report
#     (debug.kernel_log_clean)
# Either fails the lane. The console goes to $NEURON_VM_LOG (default
# build/vm/lane-debug.log), which is what scripts/check.sh counts; a failure
# before the VM starts writes one "not ok" line there.
#
# Usage: lane-debug.sh [--qemu PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build
log=${NEURON_VM_LOG:-$build/vm/lane-debug.log}
qemu=""
[ "${1:-}" = --qemu ] && qemu=$2
mkdir -p "$(dirname "$log")"
: >"$log"

lane=debug
. "$here/lane-lib.sh"

t0=$(date +%s)
dk=$("$top/scripts/debug-kernel/build.sh" | tail -1) || lane_fail_early kernel_build "debug kernel build failed"
[ -f "$dk/bzImage" ] || lane_fail_early kernel_build "no $dk/bzImage"
echo "lane-debug: debug kernel ready in $(($(date +%s) - t0)) s ($dk)" >&2
[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1) || lane_fail_early qemu "QEMU build failed"

# the module, built against the debug tree (sources only, own directory),
# counted for gcov (scripts/coverage-report.sh reads the counters)
obj=$build/kernel-debug
lane_build_module "$obj" "$dk/build" NEURON_GCOV=1 ||
	lane_fail_early module_build "nnq.ko does not build against $dk/build"

payload=$build/lane-debug-payload
lane_payload "$payload" || lane_fail_early payload "no kselftests in $build/selftests (make selftests)"
# the fault-injection walk runs in this lane only (not a *_test: the other
# lanes' kernels have no fault injection)
cp "$build/selftests/faultinj_walk" "$payload/" ||
	lane_fail_early payload "no $build/selftests/faultinj_walk (make selftests)"

cat >"$payload/guest-debug.sh" <<'GUEST'
#!/bin/sh
# Runs in the debug-kernel guest: the main lane's checks (on the kselftests
# named as arguments), with --faultinj then the fault-injection walk of
# faultinj_walk on the reloaded module, then the kernel's own checkers'
# verdict. Prints TAP.
kml=/sys/kernel/debug/kmemleak
faultinj=0
[ "${1:-}" = --faultinj ] && { faultinj=1; shift; }
echo "# debug kernel: $(uname -r), cmdline: $(cat /proc/cmdline)"
# leaks (or false positives) from boot are not the driver's: forget them
if [ -w $kml ]; then
	echo scan >$kml
	echo clear >$kml
fi

# no devtests: they drive the bare device with physical addresses, which an
# IOMMU rightly refuses (the main lane runs them, without an IOMMU)
/opt/neuron/guest-tests.sh --lane debug --no-devtests "$@"
suite=$?

# every allocation, page and user copy of probe, open, each ioctl, mmap and
# enable failed once (docs/robustness.md#fault-injection); after it the
# module goes again, so kmemleak below judges what the walk left behind
if [ $faultinj -eq 1 ]; then
	echo "# running faultinj_walk"
	t0=$(date +%s)
	if insmod /lib/neuron/nnq.ko; then
		# every N up to 20 (every ioctl, open and mmap makes fewer
		# calls), then every 64th (N = 21, 85, 149, ...): probe and
		# enable make hundreds; the same N every run, so a result
		# never depends on the day (docs/robustness.md#fault-injection)
		/opt/neuron/faultinj_walk -c 20 -s 64 || suite=1
		rmmod nnq || { echo "not ok 1 faultinj.rmmod"; suite=1; }
	else
		echo "not ok 1 faultinj.insmod"
		suite=1
	fi
	echo "# faultinj_walk took $(($(date +%s) - t0)) s"
fi

n=0 fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fails=$((fails + 1)); fi
}

# kmemleak reports only objects older than 5 s, seen unreferenced by two
# scans: wait, scan, wait, scan. guest-tests.sh has unloaded the module, so
# everything it allocated and did not free is unreferenced now.
if [ -w $kml ]; then
	sleep 6
	echo scan >$kml
	sleep 6
	echo scan >$kml
	cat $kml >/tmp/leaks
	if [ -s /tmp/leaks ]; then
		echo "# kmemleak: $(grep -c '^unreferenced object' /tmp/leaks) suspected leak(s):"
		sed 's/^/# /' /tmp/leaks | head -400
		result 1 debug.kmemleak_clean
	else
		result 0 debug.kmemleak_clean
	fi
else
	echo "# no $kml (kmemleak off or debugfs not mounted)"
	result 1 debug.kmemleak_clean
fi

# any report of the kernel's checkers anywhere in the log
pat='BUG:|WARNING:|KASAN|KFENCE|kfence:.*(fault|invalid|corrupted)|Oops|general protection|UBSAN'
# a DMA API debug report names the driver and the device
pat="$pat|DMA-API: [^ ]+ [^ ]+: "
pat="$pat|possible circular locking|possible recursive locking|inconsistent lock state"
pat="$pat|suspicious RCU usage|lock held when returning|DEBUG_LOCKS_WARN_ON"
pat="$pat|sleeping function called from invalid context|scheduling while atomic"
pat="$pat|kmemleak: [0-9]+ new suspected|blocked for more than|list_(add|del) corruption|Call Trace:"
dmesg >/tmp/dmesg
# an allocation failure faultinj_walk injected may warn with a stack dump
# (warn_alloc(): "<comm>: page allocation failure" or "vmalloc error",
# then the stack from "Call Trace:" to "</TASK>"): that one "Call Trace:"
# line is expected; every other report line, inside such a dump or not,
# still counts
awk '/faultinj_walk: (page allocation failure|vmalloc error): / { inj = 1 }
	inj && /Call Trace:/ { print NR; inj = 0 }' /tmp/dmesg >/tmp/injected
echo "# kernel log: $(wc -l </tmp/injected) allocation-failure warning(s) of faultinj_walk"
# 6.1's register_irq_proc() carries on when a /proc/irq/<n>/ entry cannot
# be made, and unregister_irq_proc() then warns removing it
# (remove_proc_entry: "name 'affinity_hint'"): a failure injected into the
# kernel's own irq code, not the driver's. Such a WARNING, in
# faultinj_walk's task with unregister_irq_proc in its trace, is printed
# and counted, not failed; any other report still fails
awk '/WARNING: CPU: [0-9]+ PID: [0-9]+ at fs\/proc\/generic.c:[0-9]+ remove_proc_entry/ {
		w = NR; irq = 0; fi = 0; ct = 0
	}
	w && /Comm: faultinj_walk / { fi = 1 }
	w && /Call Trace:/ && !ct { ct = NR }
	w && /unregister_irq_proc/ { irq = 1 }
	w && /---\[ end trace/ { if (fi && irq && ct) print w " " ct; w = 0 }' /tmp/dmesg >/tmp/irqproc
echo "# kernel log: $(wc -l </tmp/irqproc) unregister_irq_proc warning(s) after an injected /proc/irq failure"
while read -r w ct; do
	sed -n "$w,$((w + 1))p; $((w - 1))p" /tmp/dmesg | sed 's/^/# expected: /'
	printf '%s\n%s\n' "$w" "$ct" >>/tmp/injected
done </tmp/irqproc
grep -nE "$pat" /tmp/dmesg | awk -F: -v skip="$(tr '\n' ' ' </tmp/injected)" '
	BEGIN { n = split(skip, s, " "); for (i = 1; i <= n; i++) k[s[i]] = 1 }
	!($1 in k)' >/tmp/hits
if [ -s /tmp/hits ]; then
	echo "# kernel log has $(wc -l </tmp/hits) report line(s); each report:"
	# print from each report's first line to 60 lines after it (merged)
	awk -v hits="$(cut -d: -f1 /tmp/hits | tr '\n' ' ')" '
		BEGIN { n = split(hits, h, " "); for (i = 1; i <= n; i++) start[h[i]] = 1 }
		NR in start { until = NR + 60 }
		NR <= until { print "# " $0 }' /tmp/dmesg | head -600
	result 1 debug.kernel_log_clean
else
	result 0 debug.kernel_log_clean
fi
if [ -r /sys/kernel/debug/kfence/stats ]; then
	sed 's/^/# kfence: /' /sys/kernel/debug/kfence/stats
fi
grep -E 'lock-classes|direct dependencies|dependency chains' /proc/lockdep_stats 2>/dev/null |
	sed 's/^ */# lockdep: /'
echo "# debug: $fails of $n checks failed"
# nnq.ko's gcov counters (a NEURON_GCOV=1 build; kept by the kernel after
# the module's unload), for scripts/coverage-report.sh on the host: each
# .gcda read with cat (debugfs gives no real size), as a gzipped tar in
# base64 between two marker lines, the console quiet meanwhile so no
# kernel message lands inside it (docs/robustness.md#coverage)
if [ -d /sys/kernel/debug/gcov ]; then
	mkdir -p /tmp/gcov
	find /sys/kernel/debug/gcov -name '*.gcda' >/tmp/gcda-list
	while read -r f; do cat "$f" >"/tmp/gcov/${f##*/}"; done </tmp/gcda-list
	dmesg -n 1
	echo "NEURON-GCOV-BEGIN $(wc -l </tmp/gcda-list)"
	tar -C /tmp/gcov -czf - . | base64
	echo "NEURON-GCOV-END"
else
	echo "# no /sys/kernel/debug/gcov: no coverage from this guest"
fi
[ "$suite" -eq 0 ] && [ "$fails" -eq 0 ]
GUEST
chmod +x "$payload/guest-debug.sh"

echo "lane-debug: $dk/bzImage with $obj/kernel/nnq.ko" >&2
# KASAN's shadow and quarantine want more than the default 512 MiB; KFENCE
# samples an allocation every 10 ms instead of 100 ms. Besides the main
# lane's groups, the hot-unplug and true surprise removal (the device
# vanishes, then device_del) run under every checker, driven from the host
# through the QEMU monitor (lane_relay, lane-lib.sh), and race_test walks
# every step of a surprise removal and of a fatal AER recovery too
# (debug.config has CONFIG_PCIEAER; lifecycle_test's aer group runs in the
# recovery lane).
# The kselftests run in two guests side by side, each with its own QEMU,
# monitor and checkers: a guest is one TCG thread, and this lane is the
# last to finish a make check, so one guest alone would leave a core idle
# (docs/build-environment.md#check-time). The first guest takes the tests
# named here, the second every other one (a new test lands there).
first="race_test events_test torn_test submit_bench tenancy_test nq_test dge_test fdinfo_test route_test"
tests_a=() tests_b=()
for t in "$payload"/tests/*; do
	t=$(basename "$t")
	case " $first " in
	*" $t "*) tests_a+=("$t") ;;
	*) tests_b+=("$t") ;;
	esac
done
work=$(mktemp -d)
vms=()
trap 'for p in "${vms[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
# The ioctl fuzz makes 120,000 calls here, not the 300,000 of the other
# lanes: it runs at about 1,400 calls/s under this kernel (about 60,000 on
# Debian's), so the default took 215 s plus 72 s for its unprivileged third,
# the longest step of the longer guest; the other lanes make the full count
robust="mmap_abuse,access,removal,fuzz,hotplug,irq_budget,--calls=120000"
lifecycle="pinning,flr,surprise"
race="flr,unbind,uevent,surprise,aer"
# guest NAME TEST...: one guest and the relay of its monitor requests; the
# console goes to $log.NAME. rcupdate.rcu_cpu_stall_timeout=300 (the most
# the kernel takes; the default is 21 s): a KASAN guest under TCG that
# shares two cores with the other lanes' guests can spend many seconds in
# one grace period while it boots (an "rcu_sched self-detected stall" in
# acpi_init() at 52 s failed debug.kernel_log_clean once, before any test
# ran); a stall of the driver's own still shows, 5 minutes later
guest() {
	local name=$1 vm
	shift
	local log=$log.$name
	# emptied before the relay starts: it would otherwise replay the
	# monitor requests of the last run's console (run-vm.sh writes the
	# console only once QEMU runs)
	: >"$log"
	: >"$log.host"
	NEURON_VM_LOG=$log "$here/run-vm.sh" --qemu "$qemu" --kernel "$dk/bzImage" \
		--module "$obj/kernel/nnq.ko" --payload "$payload" --memory 1024 \
		--smp 2 --iommu --monitor "$work/monitor-$name.sock" --timeout 3000 \
		--append "kfence.sample_interval=10 rcupdate.rcu_cpu_stall_timeout=300 neuron_robust=$robust neuron_lifecycle=$lifecycle neuron_race=$race" \
		-- /opt/neuron/guest-debug.sh "$@" >/dev/null 2>&1 &
	vm=$!
	set +e	# a monitor command that fails must not end the lane
	lane_relay "$vm" "$work/monitor-$name.sock"
	wait "$vm"
}
guest 1 "${tests_a[@]}" &
vms+=($!)
guest 2 --faultinj "${tests_b[@]}" &
vms+=($!)
set +e
wait "${vms[0]}"
status1=$?
wait "${vms[1]}"
status2=$?
vms=()
# one console for the counting and the node-problem-detector check
{
	echo "# lane-debug: guest 1 (status $status1): ${tests_a[*]}"
	cat "$log.1"
	echo "# lane-debug: guest 2 (status $status2): ${tests_b[*]}"
	cat "$log.2"
} >"$log"
cat "$log.1.host" "$log.2.host" >"$log.host" 2>/dev/null
[ "$status1" -eq 0 ] && [ "$status2" -eq 0 ]
