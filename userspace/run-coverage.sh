#!/bin/sh
# SPDX-License-Identifier: MIT
# What the host tests reach in libneuron: builds the library, neuron-nq and
# the GoogleTest suites with gcov counters (NEURON_COVERAGE=ON, -O0) in
# build/userspace-cov, runs every ctest test there, and prints with gcovr
# the line and function coverage of userspace/src/ per file and in all, as
# TAP (docs/robustness.md#coverage):
#   coverage.libneuron.summary   the figures; not ok only if the build
#                                failed or no counter was written (a test
#                                that fails here fails in the plain ctest
#                                stage too, and is counted there)
# The producer/consumer race tests are shortened to NEURON_RACE_RECORDS
# (default 100000) as under TSan: the figure is what runs, not how long.
#
#   userspace/run-coverage.sh
# Environment: BUILD_DIR (default <repo>/build/userspace-cov), JOBS (2),
# NEURON_RACE_RECORDS (100000).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$top/build/userspace-cov}
jobs=${JOBS:-2}
export NEURON_RACE_RECORDS="${NEURON_RACE_RECORDS:-100000}"

fail() { echo "not ok 1 coverage.libneuron.summary # $1"; echo "1..1"; exit 1; }
cmake -S "$here" -B "$build" -DNEURON_COVERAGE=ON -DCMAKE_BUILD_TYPE=Debug \
	-DNEURON_BUILD_BENCH=OFF -DNEURON_BUILD_K8S=OFF >"$build.cmake.log" 2>&1 ||
	fail "cmake failed (log: $build.cmake.log)"
cmake --build "$build" -j"$jobs" >"$build.build.log" 2>&1 ||
	fail "build failed (log: $build.build.log)"
find "$build" -name '*.gcda' -delete
ctest --test-dir "$build" -j"$jobs" >"$build.ctest.log" 2>&1
echo "# coverage: libneuron's tests: $(grep -E 'tests passed' "$build.ctest.log")"
gcovr -r "$top" --object-directory "$build" --filter "$top/userspace/src/" \
	--json-summary "$build.summary.json" >/dev/null 2>"$build.gcovr.log" ||
	fail "gcovr failed (log: $build.gcovr.log)"
python3 - "$build.summary.json" <<'PY' || fail "unreadable gcovr summary"
import json, sys
s = json.load(open(sys.argv[1]))
if not s["files"] or s["line_covered"] == 0:
    sys.exit(1)
for f in sorted(s["files"], key=lambda f: f["filename"]):
    print("# coverage: %-34s lines %5.1f%% (%4d of %4d), functions %5.1f%% (%3d of %3d)" % (
        f["filename"], f["line_percent"], f["line_covered"], f["line_total"],
        f["function_percent"], f["function_covered"], f["function_total"]))
print("ok 1 coverage.libneuron.summary # lines %.1f%% (%d of %d), functions %.1f%% (%d of %d)" % (
    s["line_percent"], s["line_covered"], s["line_total"],
    s["function_percent"], s["function_covered"], s["function_total"]))
PY
echo "1..1"
