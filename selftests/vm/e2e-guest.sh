#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (selftests/vm/e2e-bench puts it in /opt/neuron with the
# examples; 4 neuron-tpb devices of 8 cores): loads nnq.ko, runs e2e_bench on
# /dev/nnq0's first 2 cores (records/s with backpressure and no loss; CPU per
# record and delivery latency for busy-poll, eventfd and coalesced eventfd
# over a sweep of paces; the device model's own rate; a lapped lossy queue),
# then reaper_scale (one Reaper over all 320 queues of the 4 devices), then
# checks neuron-nq monitor/stats/run on the real driver. Prints TAP; figures
# are "# " comments, never timed assertions, and the two benchmarks' JSON
# files are printed between "# json-begin NAME" and "# json-end NAME", each
# line prefixed "# json: " (e2e-bench --json extracts them). Exits non-zero
# on any failed check. Settings from the kernel command line: e2e_records=N,
# e2e_flood_repeats=N, e2e_paced_records=N, e2e_pace=NS,NS,..., e2e_coalesce=T:NS,...,
# e2e_scale_idle=S, e2e_scale_records=N, e2e_scale_repeats=N.
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fails=$((fails + 1)); fi
}
comment() { sed 's/^/# /' "$@"; }
param() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
nq=neuron-nq
ex=/opt/neuron/examples

records=$(param e2e_records)
flood_repeats=$(param e2e_flood_repeats)
paced=$(param e2e_paced_records)
pace=$(param e2e_pace)
coalesce=$(param e2e_coalesce)
idle=$(param e2e_scale_idle)
scale_records=$(param e2e_scale_records)
scale_repeats=$(param e2e_scale_repeats)

echo "TAP version 13"
insmod /lib/neuron/nnq.ko
result $? "e2e.insmod"
[ -c /dev/nnq0 ]
result $? "e2e.dev_node"
$nq list | comment

# bench_checks PREFIX FILE: each "check NAME ok|fail [why]" line as TAP
bench_checks() {
	grep '^#' "$2"
	grep -v '^#' "$2" | grep -v '^check ' | comment
	grep '^check ' "$2" >/tmp/checks
	while read -r _ name verdict why; do
		[ "$verdict" = ok ]
		result $? "$1.$name"
		[ -n "$why" ] && echo "# $why"
	done </tmp/checks
}
# print_json NAME FILE: the file on the console for e2e-bench --json
print_json() {
	echo "# json-begin $1"
	sed 's/^/# json: /' "$2"
	echo "# json-end $1"
}

# ---- e2e_bench: flood and paced sweep in three modes, device rate, lossy queue
set -- --cores 2 --json /tmp/e2e.json
[ -n "$records" ] && set -- "$@" --records "$records"
[ -n "$flood_repeats" ] && set -- "$@" --flood-repeats "$flood_repeats"
[ -n "$paced" ] && set -- "$@" --paced-records "$paced"
[ -n "$pace" ] && set -- "$@" --pace-ns "$pace"
[ -n "$coalesce" ] && set -- "$@" --coalesce "$coalesce"
echo "# e2e_bench $*"
e2e_bench "$@" >/tmp/bench.out 2>&1
bench_status=$?
bench_checks e2e /tmp/bench.out
[ "$bench_status" -eq 0 ]
result $? "e2e.bench_exit_status"
[ -s /tmp/e2e.json ] && print_json e2e /tmp/e2e.json

# ---- one Reaper over every queue of 4 devices x 8 cores x 10 queues
ndev=$(ls -d /sys/class/nnq/nnq* 2>/dev/null | wc -l)
echo "# scale: $ndev devices in /sys/class/nnq"
[ "$ndev" -eq 4 ] && [ -c /dev/nnq0 ] && [ -c /dev/nnq1 ] && [ -c /dev/nnq2 ] && [ -c /dev/nnq3 ]
result $? "e2e.scale.probe_4_devices"
set -- --devices 4 --cores 8 --expect-queues 320 --json /tmp/scale.json
[ -n "$idle" ] && set -- "$@" --idle-s "$idle"
[ -n "$scale_records" ] && set -- "$@" --hot-records "$scale_records"
[ -n "$scale_repeats" ] && set -- "$@" --repeats "$scale_repeats"
echo "# reaper_scale $*"
reaper_scale "$@" >/tmp/scale.out 2>&1
scale_status=$?
bench_checks e2e /tmp/scale.out
[ "$scale_status" -eq 0 ]
result $? "e2e.scale.exit_status"
[ -s /tmp/scale.json ] && print_json scale /tmp/scale.json
rm -f /tmp/e2e.json /tmp/scale.json

# ---- neuron-nq monitor: ring records and netlink edges on one time axis
$nq monitor --json --count 14 --duration 30 --run $ex/hello.nq >/tmp/mon.json 2>/tmp/mon.err
st=$?
comment /tmp/mon.json /tmp/mon.err
[ $st -eq 0 ] && [ "$(grep -c '"object":"record"' /tmp/mon.json)" -eq 14 ] &&
	[ "$(grep -c '"schema":1' /tmp/mon.json)" -eq "$(wc -l </tmp/mon.json)" ] &&
	tail -n 1 /tmp/mon.json | grep -q '"object":"summary"'

result $? "e2e.monitor_json_hello_14_records"

# a lossy 4-entry ring and 64 NOTIFYs: SW_OVERFLOW edges (netlink) between the records
{
	echo "[pe]"
	i=0
	while [ $i -lt 64 ]; do echo "notify hint=1 ext=$i"; i=$((i + 1)); done
	echo "halt"
} >/tmp/many.nq
$nq monitor --json --lossy --size 64 --queue 1 --duration 3 --run /tmp/many.nq --no-trace >/tmp/mon2.json 2>/tmp/mon2.err
st=$?
head -n 12 /tmp/mon2.json | comment
echo "# ... $(wc -l </tmp/mon2.json) lines in all"
comment /tmp/mon2.err
# (JSON keys are sorted, so test the fields separately)
[ $st -eq 0 ] && grep '"object":"edge"' /tmp/mon2.json | grep -q 'SW_OVERFLOW' && grep -q '"object":"record"' /tmp/mon2.json
result $? "e2e.monitor_json_overflow_edges_and_records"
# in time order on the monotonic axis
grep -E '"object":"(record|edge)"' /tmp/mon2.json |
	awk -F'"time_ns":' '{ split($2, a, /[,}]/); t = a[1] + 0; if (NR > 1 && t < last) bad++; last = t } END { exit bad > 0 }' 
result $? "e2e.monitor_lines_in_time_order"

# ---- neuron-nq stats while a monitor holds queues 1 and 3 of core 0 and
# runs a program there; core 0 is the monitor's (docs/decisions.md#tenancy),
# so another process's submit to it is refused and names the owner
$nq monitor --duration 4 --queue 1 --queue 3 --run $ex/hello.nq >/tmp/mon3.out 2>&1 &
mpid=$!
sleep 2
$nq submit $ex/hello.nq >/tmp/submit.out 2>&1
st=$?
comment /tmp/submit.out
[ $st -ne 0 ] && grep -q "core 0 is owned by another process: PID $mpid" /tmp/submit.out
result $? "e2e.submit_to_owned_core_names_owner"
$nq stats >/tmp/stats.out 2>&1
st=$?
comment /tmp/stats.out
[ $st -eq 0 ] && grep -q '^0 *0 *1 ' /tmp/stats.out && grep -q 'core 0 NOTIFIC edges by cause' /tmp/stats.out
result $? "e2e.stats_lists_live_queues_and_edges"
$nq stats --json >/tmp/stats.json 2>&1
[ $? -eq 0 ] && grep -q '"queues"' /tmp/stats.json
result $? "e2e.stats_json"
wait $mpid
comment /tmp/mon3.out

# ---- neuron-nq run on each DGE example (docs/hardware.md#dge) and its status
run_example() { # run_example FILE EXPECTED_EXIT PATTERN [ARGS...]
	f=$1 want=$2 pat=$3
	shift 3
	echo "# \$ neuron-nq run $f $*"
	$nq run "$ex/$f" "$@" >/tmp/run.out 2>&1
	st=$?
	comment /tmp/run.out
	[ $st -eq "$want" ] && grep -q -- "$pat" /tmp/run.out
	result $? "e2e.run.$f"
}
run_example dge-success.nq 0 'DGE_METADATA pc=0x00004'
run_example dge-oob-report.nq 4 'DGE OOB on POOL at pc 0x2 (.*): dst \$S\[3\]+0x7ff > limit'
run_example dge-oob-suppressed.nq 0 'status: OK (0)'
run_example dge-oob-flag-off.nq 0 'status: OK (0)'
run_example dge-no-backend.nq 0 'status: OK (0)'
run_example dge-structural.nq 3 'status: TIMEOUT (5)' --timeout 1000
grep -q 'structurally invalid on POOL at pc 0x0' /tmp/run.out
result $? "e2e.run.dge-structural_names_the_bad_byte"
$nq reset --engine pool | comment
$nq run $ex/hello.nq --no-trace >/tmp/run.out 2>&1
st=$?
comment /tmp/run.out
[ $st -eq 0 ]
result $? "e2e.run.hello_without_trace"

# ---- an error storm (docs/cli-json.md#storms): every engine of core 0 runs
# 2000 FP_ERRORs, one error type per engine, 25 times in a row: 250,000
# error records, 50,000 of each type (5 engines x 2000 x 25)
{
	for eng in pe:FP_UNDERFLOW act:FP_NAN pool:FP_INF dve:FP_OVERFLOW sp:FAKE_ERROR; do
		echo "[${eng%%:*}]"
		i=0
		while [ $i -lt 2000 ]; do echo "fp_error ${eng#*:}"; i=$((i + 1)); done
		echo "halt"
	done
} >/tmp/storm.nq
per_type='errors: 250000 by type: FAKE_ERROR 50000, FP_INF 50000, FP_NAN 50000, FP_OVERFLOW 50000, FP_UNDERFLOW 50000;'
per_type_json='"per_error":{"FAKE_ERROR":50000,"FP_INF":50000,"FP_NAN":50000,"FP_OVERFLOW":50000,"FP_UNDERFLOW":50000}'
rss_kb() { sed -n 's/.*peak resident memory \([0-9]*\) kB.*/\1/p' "$1" | tail -n 1; }
t0=$(date +%s)
$nq --peak-rss run /tmp/storm.nq --no-trace --repeat 25 --timeout 60000 >/tmp/storm.txt 2>/tmp/storm.err
st=$?
t1=$(date +%s)
comment /tmp/storm.txt /tmp/storm.err
lines=$(wc -l </tmp/storm.txt)
rss=$(rss_kb /tmp/storm.err)
echo "# storm: run printed $lines lines for 250000 error records in $((t1 - t0)) s; peak resident memory ${rss:-?} kB"
[ $st -eq 4 ] && [ "$lines" -le 60 ] && grep -qF "$per_type" /tmp/storm.txt && grep -q '^runs: 25$' /tmp/storm.txt
result $? "e2e.storm.run_few_lines_and_exact_per_type_counts"
[ -n "$rss" ] && [ "$rss" -lt 51200 ]
result $? "e2e.storm.run_under_50MB"

$nq --peak-rss run /tmp/storm.nq --no-trace --repeat 25 --timeout 60000 --json >/tmp/storm.json 2>/tmp/storm.err
st=$?
rss=$(rss_kb /tmp/storm.err)
tail -n 1 /tmp/storm.json | comment
echo "# storm: run --json printed $(wc -l </tmp/storm.json) lines; peak resident memory ${rss:-?} kB"
[ $st -eq 4 ] && tail -n 1 /tmp/storm.json | grep -qF "$per_type_json" &&
	tail -n 1 /tmp/storm.json | grep -q '"exit_code":4' &&
	[ "$(grep -c '"schema":1' /tmp/storm.json)" -eq "$(wc -l </tmp/storm.json)" ]
result $? "e2e.storm.run_json_lines_exact_counts"
[ -n "$rss" ] && [ "$rss" -lt 51200 ]
result $? "e2e.storm.run_json_under_50MB"

# monitor --json: JSON Lines of groups per interval and a summary with the
# exact counts; then --verbose (every record a line) into a pipe nobody
# reads for 20 s (the printer blocks, the drain must not)
t0=$(date +%s)
$nq --peak-rss monitor --json --run /tmp/storm.nq --no-trace --repeat 25 --until-done --duration 600 \
	>/tmp/mstorm.json 2>/tmp/mstorm.err
st=$?
t1=$(date +%s)
rss=$(rss_kb /tmp/mstorm.err)
comment /tmp/mstorm.err
tail -n 1 /tmp/mstorm.json | comment
echo "# storm: monitor --json printed $(wc -l </tmp/mstorm.json) lines in $((t1 - t0)) s; peak resident memory ${rss:-?} kB"
[ $st -eq 0 ] && tail -n 1 /tmp/mstorm.json | grep -qF "$per_type_json" &&
	[ "$(grep -c '"schema":1' /tmp/mstorm.json)" -eq "$(wc -l </tmp/mstorm.json)" ]
result $? "e2e.storm.monitor_json_lines_exact_counts"
[ -n "$rss" ] && [ "$rss" -lt 51200 ]
result $? "e2e.storm.monitor_json_under_50MB"
rm -f /tmp/storm.json /tmp/mstorm.json # the guest's /tmp is memory
t0=$(date +%s)
{ $nq --peak-rss monitor --json --verbose --run /tmp/storm.nq --no-trace --repeat 25 --until-done --duration 600 \
	2>/tmp/mslow.err; echo "$?" >/tmp/mslow.st; } | { sleep 20; tail -n 1 >/tmp/mslow.json; }
t1=$(date +%s)
rss=$(rss_kb /tmp/mslow.err)
comment /tmp/mslow.err
tail -n 1 /tmp/mslow.json | comment
dropped=$(tail -n 1 /tmp/mslow.json | sed -n 's/.*"dropped_lines":\([0-9]*\).*/\1/p')
echo "# storm: monitor --json --verbose into a pipe read after 20 s: $((t1 - t0)) s, ${dropped:-?} display lines dropped, peak resident memory ${rss:-?} kB"
[ "$(cat /tmp/mslow.st)" -eq 0 ] && tail -n 1 /tmp/mslow.json | grep -qF "$per_type_json" &&
	[ -n "$rss" ] && [ "$rss" -lt 51200 ]
result $? "e2e.storm.monitor_slow_output_counts_exact_under_50MB"
$nq stats | comment

if dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN' >/tmp/bad; then
	comment /tmp/bad
	result 1 "e2e.dmesg_clean"
else
	result 0 "e2e.dmesg_clean"
fi
rmmod nnq
result $? "e2e.rmmod"
echo "1..$n"
echo "# e2e: $fails of $n checks failed"
[ "$fails" -eq 0 ]
