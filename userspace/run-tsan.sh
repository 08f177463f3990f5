#!/bin/sh
# SPDX-License-Identifier: MIT
# ThreadSanitizer job: configure, build and run libneuron's GoogleTest
# suites that start threads (target neuron_thread_tests, ctest label
# "threads") with -fsanitize=thread in build/userspace-tsan (next to
# build/userspace). The single-threaded suites, the CLI, the device plugin
# and the VM programs are not built here (the plain ctest and the VM lanes
# run them): TSan reports races between threads, and the stage builds only
# what it runs (docs/decisions/0030-check-budget.md). The producer/consumer
# race tests are shortened to NEURON_RACE_RECORDS records (default 1000000; the
# Reaper race runs a tenth of it). Exits non-zero if
# the build or any test fails, or if TSan reports a race (TSan makes the test
# fail: halt_on_error, exitcode 66).
#
#   userspace/run-tsan.sh [extra ctest args, e.g. -R 'Race|Reaper']
# Environment: BUILD_DIR (default <repo>/build/userspace-tsan), JOBS (2),
# NEURON_RACE_RECORDS (1000000).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$top/build/userspace-tsan}
jobs=${JOBS:-2}
export NEURON_RACE_RECORDS="${NEURON_RACE_RECORDS:-1000000}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 exitcode=66 second_deadlock_stack=1}"

cmake -S "$here" -B "$build" -DNEURON_TSAN=ON -DNEURON_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$jobs" --target neuron_thread_tests
ctest --test-dir "$build" -j"$jobs" -L threads --output-on-failure "$@"
echo "run-tsan: all tests passed under ThreadSanitizer (NEURON_RACE_RECORDS=$NEURON_RACE_RECORDS)"
