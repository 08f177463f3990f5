#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the device model's two fuzz targets in QEMU's libFuzzer binary
# (emulator/fuzz/build-fuzz-qemu.sh: clang-16, ASan, UBSan), each first over
# its committed corpus (corpus/<target>/: seeds and every past finding, so a
# regression shows at once), then for TIME seconds of new inputs
# (docs/decisions/0049-device-model-fuzzing.md). One TAP line per target:
#   ok N fuzz.device.<target> (E execs, cov C edges, corpus K inputs, S s)
#   not ok N fuzz.device.<target> (...: the finding's first line; input: PATH)
# Targets:
#   generic-fuzz        QEMU's own: random MMIO/PCI-config/DMA-pattern
#                       operations on neuron-tpb's non-RAM regions
#   neuron-tpb-program  ours (neuron_tpb_fuzz.c): programs, index tables,
#                       rings, register writes; memory invariants
# Both fork a child per input; a finding in the child (crash, sanitizer
# report, broken invariant) leaves crash-* in build/fuzz-device/findings/<target>/,
# which fails the target whatever the parent's exit status.
# The committed corpus is only read; new inputs go to build/fuzz-device/corpus/<target>/.
#
# Usage: run-fuzz.sh [--time SECONDS] [TARGET...]   (default 20 s, both targets)
# Environment: BUILD_DIR (default <repo>/build/fuzz-device), FUZZ_NICE
# (default 0), QEMU_FUZZ (the binary; default: build-fuzz-qemu.sh's).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$top/build/fuzz-device}
secs=20 targets=()
all=(generic-fuzz neuron-tpb-program)
while [ $# -gt 0 ]; do
	case $1 in
	--time) secs=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) targets+=("$1"); shift ;;
	esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
nice_cmd=(nice -n "${FUZZ_NICE:-0}")
[ -x /usr/lib/llvm-16/bin/llvm-symbolizer ] && export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer

echo "1..${#targets[@]}"
mkdir -p "$build"
bin=${QEMU_FUZZ:-$("$here/build-fuzz-qemu.sh" 2>"$build/build.log" | tail -1)}
if [ ! -x "$bin" ]; then
	n=0
	for t in "${targets[@]}"; do n=$((n + 1)); echo "not ok $n fuzz.device.$t (build failed: $build/build.log)"; done
	tail -20 "$build/build.log" | sed 's/^/# /'
	exit 1
fi

# generic-fuzz: the function on the root bus (generic-fuzz maps the BARs of
# bus 0 only), a small BAR4; every non-RAM region of the device object
# (BAR0 registers, MSI-X table and PBA, the dead-function overlays)
export QEMU_FUZZ_ARGS="-machine q35 -nodefaults -L /usr/share/seabios -L /usr/share/qemu -device neuron-tpb,addr=04.0,cores=2,mem-size=1M"
export QEMU_FUZZ_OBJECTS="neuron-tpb"
export QEMU_FUZZ_TIMEOUT=500000
# a UBSan report is a finding, not a line in the log; leaks are not checked
# (each input runs in a child that ends with _Exit, and QEMU's parent keeps
# its allocations to the end)
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=0

status=0 n=0
for t in "${targets[@]}"; do
	n=$((n + 1))
	seeds=$here/corpus/$t
	work=$build/corpus/$t
	found=$build/findings/$t
	log=$build/$t.log
	rm -rf "$found"
	mkdir -p "$work" "$found" "$seeds"
	ts=$(date +%s)
	"${nice_cmd[@]}" "$bin" --fuzz-target="$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$found/" "$work" "$seeds" >"$log" 2>&1
	st=$?
	dur=$(($(date +%s) - ts))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE '(INITED|DONE|NEW|REDUCE|pulse) +cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
	size=$(find "$work" "$seeds" -type f | wc -l)
	stats="${execs:-?} execs, cov ${cov:-?} edges, corpus $size inputs, $dur s"
	input=$(find "$found" -type f -printf "%f\n" 2>/dev/null | head -1)
	if [ $st -eq 0 ] && [ -z "$input" ]; then
		echo "ok $n fuzz.device.$t ($stats)"
	else
		status=1
		why=$(grep -m1 -E '^(==[0-9]+==ERROR|neuron-tpb-program: invariant|.*runtime error:)' "$log")
		echo "not ok $n fuzz.device.$t ($stats: ${why:-status $st}; input: $found/$input; log: $log)"
		grep -E 'invariant broken|runtime error|ERROR: AddressSanitizer|^    #[0-9]' "$log" | head -12 | sed 's/^/# /'
	fi
done
exit $status
