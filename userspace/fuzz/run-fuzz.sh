#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds libneuron's fuzz targets with Debian's clang 16 (libFuzzer, ASan,
# UBSan) into build/fuzz and runs each: first over its committed corpus
# (corpus/<target>/: the seeds and every past finding, so a regression shows
# at once), then for TIME seconds of new inputs. One TAP line per target:
#   ok N fuzz.<target> (E execs, cov C edges, F features, corpus K inputs, S s)
#   not ok N fuzz.<target> (...: the finding's first line; input: PATH)
# A finding (crash, sanitizer report, broken invariant, leak, timeout) fails
# the target and leaves the input in build/fuzz/findings/<target>/.
# The committed corpus is only read; new inputs go to build/fuzz/corpus/<target>/.
#
# Usage: run-fuzz.sh [--time SECONDS] [--merge] [--build-only] [TARGET...]
#   --build-only  build the targets and stop (scripts/check.sh builds them in
#              the background); exit status 0 or 1, no TAP
#   --time S   seconds of fuzzing per target after the corpus (default 15;
#              a long campaign: --time 3600 assembler)
#   --merge    afterwards, rebuild corpus/<target> from its named inputs
#              (seed-*, crash-*) plus a small set of the inputs of corpus/<target>
#              and of the run that covers the edges they add (libFuzzer
#              -set_cover_merge=1); commit it
#   TARGET     assembler record coredump netlink escape (default: all)
# Environment: BUILD_DIR (default <repo>/build/fuzz), CXX (default clang++-16),
# FUZZ_NICE (default 0; 10 on a machine others use too).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$top/build/fuzz}
secs=15 merge=0 build_only=0 targets=()
all=(assembler record coredump netlink escape)
while [ $# -gt 0 ]; do
	case $1 in
	--time) secs=$2; shift 2 ;;
	--merge) merge=1; shift ;;
	--build-only) build_only=1; shift ;;
	-h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) targets+=("$1"); shift ;;
	esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
nice_cmd=(nice -n "${FUZZ_NICE:-0}")
# a finding's stack with files and lines (llvm-16, scripts/setup-host.sh)
[ -x /usr/lib/llvm-16/bin/llvm-symbolizer ] && export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer

[ "$build_only" -eq 1 ] || echo "1..${#targets[@]}"
t0=$(date +%s)
if ! { CXX=${CXX:-clang++-16} cmake -S "$here" -B "$build" -G Ninja >"$build.cmake.log" 2>&1 &&
	"${nice_cmd[@]}" cmake --build "$build" -j2 >"$build.build.log" 2>&1; }; then
	tail -20 "$build.cmake.log" "$build.build.log" | sed 's/^/# /'
	[ "$build_only" -eq 0 ] || exit 1
	n=0
	for t in "${targets[@]}"; do n=$((n + 1)); echo "not ok $n fuzz.$t (build failed: $build.build.log)"; done
	exit 1
fi
echo "# built in $(($(date +%s) - t0)) s ($build)"
[ "$build_only" -eq 0 ] || exit 0

status=0 n=0
for t in "${targets[@]}"; do
	n=$((n + 1))
	bin=$build/fuzz_$t
	seeds=$here/corpus/$t
	work=$build/corpus/$t
	found=$build/findings/$t
	log=$build/fuzz_$t.log
	rm -rf "$found"
	mkdir -p "$work" "$found"
	if [ ! -x "$bin" ]; then
		echo "not ok $n fuzz.$t (no such target: $bin)"
		status=1
		continue
	fi
	# the committed corpus first (every input, regressions included), then
	# new inputs; -fork is not used: one process, its stats are the run's
	ts=$(date +%s)
	"${nice_cmd[@]}" "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$found/" "$work" "$seeds" >"$log" 2>&1
	st=$?
	dur=$(($(date +%s) - ts))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE '(INITED|DONE|NEW|REDUCE|pulse) +cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
	ft=$(grep -oE ' ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
	size=$(find "$work" "$seeds" -type f | wc -l)
	stats="${execs:-?} execs, cov ${cov:-?} edges, ${ft:-?} features, corpus $size inputs, $dur s"
	if [ $st -eq 0 ]; then
		echo "ok $n fuzz.$t ($stats)"
	else
		status=1
		why=$(grep -m1 -E '^(==[0-9]+==ERROR|FUZZ_CHECK failed|.*runtime error:|==[0-9]+== ERROR)' "$log")
		input=$(ls "$found" 2>/dev/null | head -1)
		echo "not ok $n fuzz.$t ($stats: ${why:-status $st}; input: $found/$input; log: $log)"
		grep -E 'FUZZ_CHECK|runtime error|ERROR: AddressSanitizer|^    #[0-9]' "$log" | head -12 | sed 's/^/# /'
	fi
	if [ $merge -eq 1 ] && [ $st -eq 0 ]; then
		# the named inputs (seed-*, crash-*) stay; of the rest, a small set
		# that covers the edges they add (a greedy set cover on edges, hit
		# counts left out: the corpus stays small), each under libFuzzer's
		# name (its SHA-1)
		fresh=$build/merged/$t
		rm -rf "$fresh"
		mkdir -p "$fresh"
		cp "$seeds"/seed-* "$seeds"/crash-* "$fresh"/ 2>/dev/null
		"${nice_cmd[@]}" "$bin" -set_cover_merge=1 -use_counters=0 "$fresh" "$seeds" "$work" >"$build/merge_$t.log" 2>&1 &&
			rm -rf "$seeds" && mkdir -p "$seeds" && cp "$fresh"/* "$seeds"/ &&
			echo "# merged: corpus/$t now $(ls "$seeds" | wc -l) inputs, $(du -sb "$seeds" | cut -f1) bytes"
	fi
done
exit $status
