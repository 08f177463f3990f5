#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make check`: sets up the host, builds everything, runs every test and
# prints one closing line "N passed, N failed" over all suites:
#   1. libneuron's GoogleTest suite on the host (ctest), its fuzz targets
#      (userspace/fuzz/run-fuzz.sh: libFuzzer, ASan, UBSan; TAP), then the docs'
#      citations and links (scripts/check-docs.sh, TAP) and the ABI headers'
#      hygiene (scripts/check-headers.sh, TAP), libneuron.so's ABI against
#      the committed dump (userspace/tests/check-abi.sh: abidiff, TAP), the YNL spec of the
#      generic netlink family (scripts/check-ynl.sh, TAP), the device model's
#      qtest on the host (emulator/tests/qtest, TAP), the performance
#      report drawn from the committed JSON (scripts/perf-report.py), the
#      Kubernetes manifests of deploy/base (scripts/check-manifests.sh, TAP),
#      the DRA driver's lane on fake nodes (scripts/check-dra.sh, TAP)
#   2. VM lanes (Debian kernel, emulated neuron-tpb), each counted from the
#      TAP lines on its console: the main lane (device-model tests on the
#      bare device, then every kselftest and the guest checks: lspci, MSI-X
#      vectors, clean dmesg, rmmod), the torn-record negative control,
#      the sunda lane, the device-fault lane, end to end (with one
#      Reaper over 320 queues of 4 devices), the Debian
#      packages (lintian, autopkgtest, DKMS from the .debs), 6.12 (with
#      DKMS's module), the debug kernel
#      and the device plugin's OCI image built from the packages
#      (scripts/check-image.sh, TAP)
#   3. static analysis (W=1, sparse, checkpatch) as TAP
#   4. the node-problem-detector rules against the hardware error lines the
#      lanes' kernels logged (selftests/npd/check-npd-rules.sh, TAP)
#   5. nnq.ko's line and function coverage from the debug lane's gcov
#      counters (scripts/coverage-report.sh, TAP), and libneuron's from the
#      host tests (userspace/run-coverage.sh, TAP); then the device model
#      under QEMU's libFuzzer binary (emulator/fuzz/run-fuzz.sh: generic-fuzz
#      and neuron-tpb-program, ASan, UBSan; TAP)
# Exits non-zero if any test failed or a stage could not run.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build=$top/build
mkdir -p "$build"
t0=$(date +%s)

passed=0 failed=0
stage_failed() { # a stage that could not run counts as one failure
	echo "check: $1" >&2
	failed=$((failed + 1))
}
# stage_begin, then $(elapsed): a stage's wall time and the share of the
# machine's CPU time (every core, from /proc/stat) that was busy meanwhile,
# so a stage that leaves the cores idle shows (docs/build-environment.md#check-time)
# (niced time, the background preparation's, shown apart)
cpu_jiffies() { awk '/^cpu / { print $2 + $4 + $7 + $8 + $9, $3, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
stage_begin() {
	ts=$(date +%s)
	read -r busy0 nice0 all0 < <(cpu_jiffies)
}
elapsed() {
	local busy nice all d
	read -r busy nice all < <(cpu_jiffies)
	d=$((all - all0 > 0 ? all - all0 : 1))
	echo "$(($(date +%s) - ts)) s, CPU $(((busy - busy0) * 100 / d))% + nice $(((nice - nice0) * 100 / d))%"
}
finish() {
	wait_prep
	[ -z "${fuzz_build_pid:-}" ] || wait "$fuzz_build_pid"
	[ -z "${fuzz_qemu_build_pid:-}" ] || wait "$fuzz_qemu_build_pid"
	[ -z "${coverage_pid:-}" ] || wait "$coverage_pid"
	[ -z "${deb_pid:-}" ] || wait "$deb_pid"
	echo "check: total $(($(date +%s) - t0)) s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
	exit $?
}

prep_pid=""
wait_prep() { # the background preparation below, if it still runs
	[ -n "$prep_pid" ] || return 0
	wait "$prep_pid" || echo "check: background preparation failed (log: $build/prep.log); the stages that need it retry" >&2
	prep_pid=""
}
scripts/setup-host.sh || { stage_failed "host setup failed"; finish; }
. scripts/ccache-env.sh

# What only the late stages need, started now in the background at the
# lowest CPU priority, so it takes only CPU time the stages in front leave
# idle (downloads, the single-vCPU VM lanes): the 6.1 and 6.12 kernels, the 6.12 headers,
# the kernel's YNL tool, promtool, 6.12's perf, then the debug kernel build
# (about 6 minutes of both cores when nothing else runs). Every script
# caches its result and holds a lock while it works, so a stage that needs
# a result before it is ready waits for it, and a failure here only means
# the stage tries again itself (and reports it).
(
	set -x
	nice -n 19 selftests/vm/fetch-kernel.sh
	nice -n 19 selftests/vm/fetch-kernel.sh 6.12
	nice -n 19 selftests/vm/fetch-kernel.sh --headers 6.12
	nice -n 19 selftests/vm/fetch-ynl.sh
	nice -n 19 scripts/fetch-promtool.sh
	nice -n 19 scripts/debug-kernel/build.sh
) >"$build/prep.log" 2>&1 &
prep_pid=$!

stage_begin
make -s module userspace selftests || { stage_failed "build failed"; finish; }
echo "check: build $(elapsed)"
# the lanes' module is a test build (kernel/Kbuild NEURON_TEST_HOOKS): the
# race tests skip without its pause points, so a build that lost them must
# fail here rather than pass as skips (the packaged module has none:
# selftests/dkms/dkms-test.sh)
if modinfo -F parm kernel/nnq.ko | grep -q '^pause_step:'; then
	passed=$((passed + 1))
	echo "check: build.module_is_test_build: ok"
else
	failed=$((failed + 1))
	echo "check: build.module_is_test_build: FAILED (kernel/nnq.ko has no pause_step)"
fi
# the Debian packages (stage 8) need only the tree: built in the background
# at the lowest priority too, while the stages in front run; then the device
# plugin's OCI image from them (scripts/check-image.sh, docs/k8s.md#image),
# counted after the VM lanes
rm -f "$build/deb.status" "$build/image.status"
(
	nice -n 19 make -s deb >"$build/deb.log" 2>&1
	echo $? >"$build/deb.status"
	nice -n 19 scripts/check-image.sh "$build/deb" >"$build/image.log" 2>&1
	echo $? >"$build/image.status"
) &
deb_pid=$!
# the fuzz targets' clang build (the longest part of their stage), in the
# background at the lowest priority as well; the fuzz stage waits for it
(nice -n 19 userspace/fuzz/run-fuzz.sh --build-only >"$build/fuzz-build.log" 2>&1) &
fuzz_build_pid=$!
# QEMU's libFuzzer binary with the device model (ASan, UBSan; its own
# source copy and build tree under /var/cache/neuron, cached by its inputs:
# a no-op when nothing under emulator/ changed), for the device fuzz stage
# after the VM lanes (emulator/fuzz/build-fuzz-qemu.sh)
(nice -n 19 emulator/fuzz/build-fuzz-qemu.sh >"$build/fuzz-qemu-build.log" 2>&1) &
fuzz_qemu_build_pid=$!

stage_begin
qemu=$(emulator/qemu/build-qemu.sh | tail -1) || { stage_failed "QEMU build failed"; finish; }
echo "check: qemu ready in $(elapsed) ($qemu)"
kernel=$(selftests/vm/fetch-kernel.sh | tail -1) || { stage_failed "guest kernel fetch failed"; finish; }

# count_ctest NAME LOG: adds a ctest run's summary line to the totals
count_ctest() {
	local name=$1 log=$2 summary total nfail
	summary=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -1)
	if [ -z "$summary" ]; then
		tail -20 "$log"
		stage_failed "$name ran no test"
		return
	fi
	total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$summary")
	nfail=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$summary")
	passed=$((passed + total - nfail))
	failed=$((failed + nfail))
	grep -E '\*\*\*(Failed|Exception|Timeout)' "$log" || true
	echo "check: $name: $summary (log: $log)"
}

# count_tap NAME LOG STATUS: adds a TAP run's "ok"/"not ok" lines to the totals
count_tap() {
	local name=$1 log=$2 status=$3 np nf
	np=$(tr -d '\r' <"$log" | grep -cE '^ok [0-9]+' || true)
	nf=$(tr -d '\r' <"$log" | grep -cE '^not ok [0-9]+' || true)
	tr -d '\r' <"$log" | grep -E '^not ok|^# .*(Expected|FAIL|exited with)|^run-vm' || true
	passed=$((passed + np))
	failed=$((failed + nf))
	echo "check: $name: $np passed, $nf failed, status $status (console: $log)"
	if [ "$status" -ne 0 ] && [ "$nf" -eq 0 ]; then
		stage_failed "$name failed (status $status) without a failing test line"
	fi
}

# 1. host: GoogleTest via ctest, then again under ThreadSanitizer
stage_begin
ctest --test-dir "$build/userspace" -j2 --output-on-failure >"$build/ctest.log" 2>&1
count_ctest "host ctest ($(elapsed))" "$build/ctest.log"
stage_begin
userspace/run-tsan.sh >"$build/tsan.log" 2>&1
count_ctest "host ctest under TSan ($(elapsed))" "$build/tsan.log"

# the docs: no citation of pages outside the repository, cited anchors and
# relative links resolve
stage_begin
scripts/check-docs.sh >"$build/docs.log" 2>&1
st=$?
count_tap "docs ($(elapsed))" "$build/docs.log" $st

# the ABI headers: kernel-doc clean, the uapi header alone as C89, C11 and
# C++20 and through the kernel's headers_install.sh, regs.h's assertions
stage_begin
scripts/check-headers.sh >"$build/headers.log" 2>&1
st=$?
count_tap "headers ($(elapsed))" "$build/headers.log" $st

# libneuron's ABI: abidiff (Debian's libabigail) of the built libneuron.so
# against the dump of the last release committed in userspace/abi/
# (userspace/README.md#versions): an unannounced change fails
stage_begin
userspace/tests/check-abi.sh "$build/userspace/libneuron.so" userspace/abi/libneuron.abi >"$build/abi.log" 2>&1
st=$?
count_tap "abi ($(elapsed))" "$build/abi.log" $st

# the YNL spec of the generic netlink family: the kernel's genetlink-legacy
# schema, the uapi header and kernel/neuron_genl.c (the 6.12 lane drives the
# live family with it)
stage_begin
scripts/check-ynl.sh >"$build/ynl.log" 2>&1
st=$?
count_tap "ynl spec ($(elapsed))" "$build/ynl.log" $st

# the device model's qtest: QEMU's libqtest drives
# neuron-tpb on a q35 machine from the host, no guest kernel (registers,
# queues, a record DMA'd into guest memory, full-queue policies, MSI-X,
# EVT_SEM, resets); glib's TAP, one line per case (emulator/tests/qtest)
stage_begin
emulator/tests/qtest/run-qtest.sh "$qemu" >"$build/qtest.log" 2>&1
st=$?
count_tap "qtest ($(elapsed))" "$build/qtest.log" $st

# figures, not tests: the drain benchmark's records/s (the fastest and the
# median of 25 interleaved repetitions) and the ratios for_each/drain,
# drain/memcpy and drain/reference (targets in bench_drain.cpp, judged on
# the fastest repetitions: docs/decisions/0034-drain-bench-best.md; the medians'
# on the line after) of the default drain path,
# then one line per drain path this CPU has (userspace/README.md#drain-paths)
# with the same three ratios; every figure in bench.json. It runs at the
# highest priority on the last CPU it may use: the background builds beside
# it run at nice 19, and the figures are about the code, not its neighbours
# (nice only warns where it may not raise the priority). It fails the run
# only if it cannot run or its consumers disagree (bench_drain.cpp)
bench_cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\n' | tail -n 1 | sed 's/.*-//')
nice -n -20 taskset -c "${bench_cpu:-0}" "$build/userspace/bench_drain" --benchmark_color=false \
	--benchmark_out="$build/bench.json" --benchmark_out_format=json >"$build/bench.log" 2>&1
st=$?
grep -E '^(records/s|ratio|path)' "$build/bench.log" | sed 's/^/check: bench_drain: /'
[ $st -eq 0 ] || { tail -5 "$build/bench.log"; stage_failed "bench_drain exited with status $st (log: $build/bench.log)"; }
# and the Reaper's per-pass budget (userspace/bench/reaper_budget.cpp): a
# queue that never runs empty beside 319 cold ones, the delay of the cold
# records and stop()'s duration without a budget (before) and with it (after)
"$build/userspace/reaper_budget" >"$build/reaper-budget.log" 2>&1
grep -E '^(before|after)' "$build/reaper-budget.log" | sed 's/^/check: reaper_budget: /'

# the performance report (docs/performance.md#regenerate): scripts/perf-report.py
# on the committed JSON into build/perf-report (no VM), two counted tests: it
# runs and draws both plots, and its tables are the ones docs/performance.md holds
stage_begin
rm -rf "$build/perf-report"
if /usr/bin/python3 scripts/perf-report.py --data docs/performance --doc docs/performance.md \
	--out-doc "$build/perf-report/performance.md" --png-dir "$build/perf-report" \
	>"$build/perf-report.log" 2>&1 &&
	[ -s "$build/perf-report/cpu_per_record.png" ] && [ -s "$build/perf-report/latency_cdf.png" ]; then
	passed=$((passed + 1))
	echo "check: perf_report.runs: ok ($(elapsed))"
	if cmp -s "$build/perf-report/performance.md" docs/performance.md; then
		passed=$((passed + 1))
		echo "check: perf_report.doc_matches_json: ok"
	else
		failed=$((failed + 1))
		diff -u docs/performance.md "$build/perf-report/performance.md" | head -20
		echo "check: perf_report.doc_matches_json: FAILED (run scripts/perf-report.py to regenerate docs/performance.md)"
	fi
else
	failed=$((failed + 2))
	tail -20 "$build/perf-report.log"
	echo "check: perf_report.runs: FAILED (log: $build/perf-report.log); perf_report.doc_matches_json: not run"
fi

# the Kubernetes manifests (deploy/base, docs/k8s.md#manifest-checks): Debian's
# kubectl kustomize renders them, every object is validated against the
# Kubernetes schemas (npm's kubernetes-models) or NFD's CRD fields, the
# image and prefix come from one place, the DaemonSet's hardening (TAP)
stage_begin
scripts/check-manifests.sh >"$build/manifests.log" 2>&1
st=$?
count_tap "k8s manifests ($(elapsed))" "$build/manifests.log" $st

# the DRA driver against a fake API server that validates every object with
# the resource.k8s.io/v1 schema (npm's kubernetes-models), fake kubelets and
# a counter-honouring allocator, three nodes (docs/k8s.md#dra-tests, TAP)
stage_begin
scripts/check-dra.sh "$build" >"$build/dra.log" 2>&1
st=$?
count_tap "k8s DRA ($(elapsed))" "$build/dra.log" $st

# libneuron's parsers and decoders under libFuzzer with ASan and UBSan
# (userspace/fuzz/run-fuzz.sh, docs/robustness.md#fuzzing): five targets
# built with Debian's clang 16 into build/fuzz (in the background since the
# build), each run over its committed corpus (seeds and every past
# finding), then 15 s of new inputs; one TAP line per target, a crash or a
# broken invariant fails it
stage_begin
wait "$fuzz_build_pid"
fuzz_build_pid=""
userspace/fuzz/run-fuzz.sh --time 15 >"$build/fuzz.log" 2>&1
st=$?
count_tap "fuzz ($(elapsed))" "$build/fuzz.log" $st

# make shell as people use it (docs/first-hour.md, docs/build-environment.md#make-shell),
# one boot each: in tmux, a real terminal (typed commands read back with
# capture-pane, Ctrl-C into monitor and a sleep, exit, the terminal's state
# after), and every command of docs/first-hour.md through the piped path,
# checked against the output the page shows (selftests/vm/shell-tmux.sh,
# selftests/vm/first-hour.sh; TAP)
stage_begin
selftests/vm/shell-tmux.sh --qemu "$qemu" -- --smp 1 >"$build/shell-tmux.log" 2>&1
st=$?
count_tap "make shell in tmux ($(elapsed))" "$build/shell-tmux.log" $st
stage_begin
selftests/vm/first-hour.sh --qemu "$qemu" -- --smp 2 >"$build/first-hour.log" 2>&1
st=$?
count_tap "first hour ($(elapsed))" "$build/first-hour.log" $st

# what the host tests reach in libneuron (userspace/run-coverage.sh, its own
# -O0 --coverage build): in the background at the lowest priority from here
# on, so it takes the CPU the VM lanes' guests leave idle (started earlier
# it slowed the fuzz build in front of them); counted after the lanes
(nice -n 19 userspace/run-coverage.sh >"$build/coverage-libneuron.log" 2>&1) &
coverage_pid=$!

# 2-10. The VM lanes, the static analysis and the packaged install path,
# in two tracks that run side by side (docs/build-environment.md#check-time):
# guests under TCG leave about half of the two cores idle (they wait on
# timers, sleeps and the device model), so a second track fills them.
#   track A: the guests of the main 6.1 build: main lane, torn-record
#            control, sunda, device faults, end to end, the robustness
#            lanes; then static analysis
#   track B: the Debian packages (DKMS), 6.12 (with DKMS's module), the
#            debug kernel
# Each lane writes its console log and "STATUS SECONDS" to
# $build/vm/NAME.result; the lanes are counted after both tracks, in this
# file's order, so the log reads the same whatever finished first.
. selftests/vm/lane-lib.sh
payload=$build/vm-payload
lane_payload "$payload" || stage_failed "no kselftests in $build/selftests"
# the tracepoints' checks ride in the main lane's boot (guest-tests.sh
# --trace): trace-cmd, 6.1's perf and neuron-nq (docs/architecture.md#tracepoints)
trace_payload=$build/vm-trace-payload
selftests/vm/trace-payload.sh "$trace_payload" 6.1 ||
	stage_failed "trace-payload.sh 6.1 failed"
rm -f "$build"/vm/*.result
mkdir -p "$build/vm"

run_lane() { # run_lane NAME CMD...: one lane of a track
	local name=$1 t st
	shift
	t=$(date +%s)
	"$@" >/dev/null 2>&1
	st=$?
	echo "$st $(($(date +%s) - t))" >"$build/vm/$name.result"
}
count_lane() { # count_lane NAME LABEL LOG: a finished lane into the totals
	local st=1 secs=0
	read -r st secs <"$build/vm/$1.result" 2>/dev/null
	count_tap "$2 ($secs s)" "$3" "$st"
}
robust_lane() { # robust_lane NAME SCRIPT [ARGS...]
	local name=$1
	shift
	run_lane "$name" env NEURON_VM_LOG="$build/vm/lane-$name.log" "$@" --qemu "$qemu" \
		--kernel "$kernel" --module kernel/nnq.ko --payload "$payload"
}

track_a() {
	# 2. device-model tests (config A, no driver), then the driver's
	#    kselftests and the guest checks, in one boot
	run_lane main env NEURON_VM_LOG="$build/vm/tests.log" selftests/vm/run-vm.sh \
		--qemu "$qemu" --kernel "$kernel" --module kernel/nnq.ko --payload "$payload" \
		--payload "$trace_payload" --append "neuron.torn_records=10000000 neuron.torn_drain_records=10000000" \
		--smp 4 --memory 1024 --timeout 1800 -- /opt/neuron/guest-tests.sh --trace
	# 2b. the torn-record negative control. The device writes host-ring
	#     records header word first (fault-torn-header-first=on); torn_test
	#     and libneuron's drain (drain-guest.sh), told so on the command
	#     line, must then find torn records (each stops at 5 of them), which
	#     shows their checks can see a torn record; the device holds each
	#     record torn for 50 us (fault-torn-gap-us), long enough that a
	#     consumer as fast as the drain sees torn records within thousands
	run_lane torn env NEURON_VM_LOG="$build/vm/torn-control.log" selftests/vm/run-vm.sh \
		--qemu "$qemu" --kernel "$kernel" --module kernel/nnq.ko --payload "$payload" \
		--payload "$trace_payload" --device fault-torn-header-first=on,fault-torn-gap-us=50 \
		--append "neuron.torn_control=1 neuron.torn_records=10000000 neuron.torn_drain_records=10000000" \
		--smp 4 --timeout 900 \
		-- /opt/neuron/guest-tests.sh --lane vm_torn_control --no-devtests torn_test
	# 3. generation sunda (no DGE path, no feature-flag register)
	run_lane sunda env NEURON_VM_LOG="$build/vm/sunda.log" selftests/vm/run-vm.sh \
		--qemu "$qemu" --kernel "$kernel" --module kernel/nnq.ko --payload "$payload" \
		--device gen=sunda --timeout 600 \
		-- /opt/neuron/guest-tests.sh --lane vm_sunda --no-devtests dge_test
	# 4. device-model tests on gen=sunda with fault injection (config B)
	run_lane devtest-B env QEMU="$qemu" VMLINUZ="$kernel" emulator/tests/run-devtest.sh B
	# 5. end-to-end figures on 4 devices x 8 cores: records/s, CPU per
	#    record and delivery latency (busy-poll, eventfd, coalesced eventfd)
	#    from the engines to a libneuron consumer, over a short paced sweep
	#    (make performance runs the full one); one Reaper over all 320
	#    queues (idle, 1 and 4 hot queues); neuron-nq run/monitor/stats and a
	#    detached submit
	run_lane e2e env NEURON_VM_LOG="$build/vm/e2e.log" selftests/vm/e2e-bench \
		--qemu "$qemu" --kernel "$kernel" --timeout 900 --records 200000 \
		--flood-repeats 1 --paced-records 4000 --pace-ns 1000000,250000,50000 \
		--scale-records 3000 --scale-repeats 1
	# 6. robustness lanes (selftests/vm/lane-*.sh, robust_test and
	#    lifecycle_test): surprise removal from the QEMU monitor and 50
	#    reloads; DMA write error and stuck engine; interrupt storm; host
	#    rings where DMA is bounced (swiotlb=force); AER,
	#    suspend, hibernation and a vanishing device; the IOMMU lanes; the
	#    device plugin against the real driver with the fake kubelet
	robust_lane hotplug selftests/vm/lane-monitor.sh --lane hotplug
	robust_lane faults selftests/vm/lane-robust.sh --lane faults
	robust_lane storm selftests/vm/lane-robust.sh --lane storm
	robust_lane swiotlb selftests/vm/lane-robust.sh --lane swiotlb
	robust_lane recovery selftests/vm/lane-monitor.sh --lane recovery
	robust_lane iommu selftests/vm/lane-monitor.sh --lane iommu
	robust_lane iommu-removal selftests/vm/lane-monitor.sh --lane iommu-removal
	robust_lane k8s selftests/vm/lane-monitor.sh --lane k8s
	# 6b. .shutdown with a live client, then kexec into the same kernel:
	#     the device as .shutdown left it, a fresh tenant's clean core
	robust_lane shutdown selftests/vm/lane-shutdown.sh
	# 7. static analysis: W=1 + sparse against 6.1 and 6.12, checkpatch --strict
	#    at the lowest priority: it compiles the module four times while the
	#    debug lane's guests, which have time limits, run beside it
	run_lane static bash -c 'nice -n 19 scripts/static-check.sh >"$1" 2>&1' _ "$build/static.log"
}

track_b() {
	local pkg612=()
	# 8. the Debian packages (make deb, in the background since the build;
	#    docs/decisions/0023-packaging.md): lintian, autopkgtest (null virt
	#    server) and the packaged install path: dpkg -i, DKMS builds nnq.ko
	#    for 6.1 and 6.12, the 6.1 module in the VM (under udevd with the
	#    packaged rule, then every kselftest), dpkg --purge
	while [ ! -s "$build/deb.status" ]; do sleep 2; done
	[ "$(cat "$build/deb.status")" = 0 ] || tail -20 "$build/deb.log"
	run_lane dkms env NEURON_DKMS_LOG="$build/vm/dkms.log" selftests/dkms/dkms-test.sh --qemu "$qemu"
	# 9. bookworm-backports' 6.12 kernel with the module DKMS built from the
	#    neuron-dkms .deb and neuron-nq from the packages (step 8); the lane
	#    builds its own in build/kernel-6.12 if step 8 left none
	[ -f "$build/dkms/6.12/nnq.ko" ] && pkg612+=(--module "$build/dkms/6.12/nnq.ko")
	[ -x "$build/dkms/root/usr/bin/neuron-nq" ] && pkg612+=(--root "$build/dkms/root")
	run_lane 6.12 env NEURON_VM_LOG="$build/vm/lane-6.12.log" selftests/vm/lane-6.12.sh \
		--qemu "$qemu" "${pkg612[@]}"
	# 10. a debug kernel built from linux-source-6.1 (KASAN, lockdep, KFENCE,
	#    kmemleak, atomic-sleep checks); any report fails the lane
	run_lane debug env NEURON_VM_LOG="$build/vm/lane-debug.log" selftests/vm/lane-debug.sh --qemu "$qemu"
}

stage_begin
track_a &
track_a_pid=$!
track_b &
track_b_pid=$!
wait "$track_a_pid" "$track_b_pid" "$deb_pid"
deb_pid=""
echo "check: VM lanes, static analysis and packages, two tracks: $(elapsed)"
[ "$(cat "$build/deb.status" 2>/dev/null)" = 0 ] || echo "check: make deb failed (log: $build/deb.log)"

count_lane main "VM tests" "$build/vm/tests.log"
tr -d '\r' <"$build/vm/tests.log" | grep -E '^# torn: [0-9]' || true
# figures, not tests: another tenant's ioctl latency while one tenant
# SUBMITs 2048-instruction programs against 1000 allocations
# (selftests/drivers/neuron/submit_bench.c, docs/performance.md#submit-validation);
# its one TAP line, counted above, says only that it ran and printed them
tr -d '\r' <"$build/vm/tests.log" | grep -E '^# submit_bench: (A:|B )' | sed 's/^# /check: /' || true
# the Prometheus file neuron-nq metrics wrote from the real driver in that
# boot (selftests/vm/metrics-guest.sh), checked on the host with Debian's
# promtool (docs/metrics.md#validation)
sed -n '/^# metrics-prom-begin/,/^# metrics-prom-end/p' "$build/vm/tests.log" | tr -d '\r' |
	sed -n 's/^# prom: //p' >"$build/vm/metrics.prom"
if [ -s "$build/vm/metrics.prom" ] && promtool=$(scripts/fetch-promtool.sh | tail -1) &&
	"$promtool" check metrics <"$build/vm/metrics.prom" >"$build/vm/promtool.log" 2>&1 &&
	! [ -s "$build/vm/promtool.log" ]; then
	passed=$((passed + 1))
	echo "check: vm.metrics.promtool: ok ($(grep -c '^# TYPE' "$build/vm/metrics.prom") families)"
else
	failed=$((failed + 1))
	echo "check: vm.metrics.promtool: FAILED (file: $build/vm/metrics.prom, promtool: $build/vm/promtool.log)"
fi
count_lane torn "VM torn-record control" "$build/vm/torn-control.log"
tr -d '\r' <"$build/vm/torn-control.log" | grep -E '^# torn: [0-9]' || true
count_lane sunda "VM sunda" "$build/vm/sunda.log"
count_lane devtest-B "VM device faults" "$build/vm/devtest-B.log"
count_lane e2e "VM end to end" "$build/vm/e2e.log"
tr -d '\r' <"$build/vm/e2e.log" | grep -E '^# (target|storm masks|.*(records/s|per record|ratio))' || true
for name in hotplug faults storm swiotlb recovery iommu iommu-removal k8s shutdown; do
	count_lane "$name" "VM $name" "$build/vm/lane-$name.log"
done
count_lane static "static analysis" "$build/static.log"
count_lane dkms "DKMS from the packages" "$build/vm/dkms.log"
count_lane 6.12 "VM 6.12" "$build/vm/lane-6.12.log"
count_lane debug "VM debug kernel" "$build/vm/lane-debug.log"
# the device plugin's OCI image, built from the packages beside the lanes
# (reproducible, its config and file list; docs/k8s.md#image-checks)
count_tap "OCI image" "$build/image.log" "$(cat "$build/image.status" 2>/dev/null || echo 1)"
# what the tests reach in nnq.ko: the debug lane's gcov counters, line and
# function coverage per file, every unreached function listed with a reason
# (scripts/coverage-report.sh, docs/robustness.md#coverage)
stage_begin
scripts/coverage-report.sh "$build/kernel-debug/kernel" "$build"/vm/lane-debug.log.{1,2} \
	>"$build/coverage.log" 2>&1
st=$?
grep -E '^# (coverage: total|unreached|listed)' "$build/coverage.log" || true
count_tap "kernel coverage ($(elapsed))" "$build/coverage.log" $st
stage_begin
wait "$coverage_pid"
st=$?
coverage_pid=""
grep -E '^(ok|not ok) ' "$build/coverage-libneuron.log" || true
count_tap "libneuron coverage (waited $(elapsed))" "$build/coverage-libneuron.log" $st

# the device model under QEMU's own fuzzer (emulator/fuzz/run-fuzz.sh,
# docs/robustness.md#device-fuzzing): generic-fuzz over neuron-tpb's
# registers and our structure-aware neuron-tpb-program target (programs,
# index tables, rings; nothing written outside the DGE windows and rings),
# each over its committed corpus, then 15 s of new inputs; a crash, a
# sanitizer report or a broken invariant fails it. Its build ran in the
# background since the start.
stage_begin
wait "$fuzz_qemu_build_pid"
fuzz_qemu_build_pid=""
emulator/fuzz/run-fuzz.sh --time 15 >"$build/fuzz-device.log" 2>&1
st=$?
count_tap "device fuzz ($(elapsed))" "$build/fuzz-device.log" $st

# 11. the node-problem-detector rules neuron-tools ships, against the
#     hardware error lines the lanes' kernels logged (each guest-tests.sh
#     copies them from /dev/kmsg into its console log): every line in the
#     documented format and matched by exactly one rule, every rule and
#     cause seen or listed as out of the lanes' reach
#     (selftests/npd/check-npd-rules.sh,
#     docs/decisions/0014-hw-error-log.md#npd-rules)
stage_begin
selftests/npd/check-npd-rules.sh "$build"/vm/{tests,torn-control,sunda,devtest-B,e2e}.log \
	"$build"/vm/lane-{hotplug,faults,storm,recovery,iommu,iommu-removal,k8s,6.12,debug}.log \
	>"$build/npd.log" 2>&1
st=$?
count_tap "npd rules ($(elapsed))" "$build/npd.log" $st

finish
