#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, on the real driver: neuron-nq list and metrics
# (docs/metrics.md#validation). Run by guest-tests.sh --trace after the
# kselftests (neuron-nq comes with trace-payload.sh's tools).
#
# A `neuron-nq monitor` on core 1 owns that core while: `list` and
# `list --json` show the PCI address, NUMA node and local CPUs that sysfs
# gives for /sys/class/nnq/nnq0/device, generation cayman, and core 1's owner
# (the monitor's PID, uid 0, command neuron-nq); `metrics --json --count 2`
# prints two reports; `metrics --prometheus FILE` writes FILE (no FILE.tmp
# left) with the device's info and core 1 owned. The file is printed between
# "# metrics-prom-begin" and "# metrics-prom-end" ("# prom: " lines) for
# scripts/check.sh, which runs Debian's promtool on it on the host. Then
# `monitor --passive --core 1` (root) reports core 1 and its queue 0 while
# the monitor keeps the core (docs/cli-json.md#observe).
#
# Prints TAP ("ok N LANE.metrics_..."); exits non-zero on any failure.
# Usage: metrics-guest.sh [--lane NAME]
lane=vm
[ "${1:-}" = --lane ] && lane=$2
t=/opt/neuron/trace
export LD_LIBRARY_PATH=$t/lib
export PATH="$t/bin:$PATH"
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $lane.metrics_$2"; else echo "not ok $n $lane.metrics_$2"; fails=$((fails + 1)); fi
}
show() { sed 's/^/# /' "$1"; }

dev=/sys/class/nnq/nnq0/device
bdf=$(basename "$(readlink -f $dev)")
numa=$(cat $dev/numa_node)
cpus=$(cat $dev/local_cpulist)
echo "# sysfs: $bdf numa_node $numa local_cpulist $cpus"

neuron-nq monitor --core 1 --queue 0 --no-events --duration 120 >/dev/null 2>&1 &
mon=$!
i=0
while [ $i -lt 100 ] && ! grep -q "^1 $mon " /sys/class/nnq/nnq0/core_owners; do
	sleep 0.1
	i=$((i + 1))
done
show /sys/class/nnq/nnq0/core_owners

neuron-nq list >/tmp/list.txt 2>&1
st=$?
show /tmp/list.txt
[ $st -eq 0 ] &&
	grep -q "^/dev/nnq0  PCI $bdf  NUMA node .*  local CPUs $cpus  gen cayman  [0-9]* cores x 5 engines" /tmp/list.txt &&
	grep -q "^  core 1  uid 0 PID $mon (neuron-nq)$" /tmp/list.txt &&
	grep -q "^  core 0  free$" /tmp/list.txt
result $? list_text

neuron-nq list --json >/tmp/list.json 2>&1
st=$?
[ $st -eq 0 ] &&
	grep -q "\"pci_address\": \"$bdf\"" /tmp/list.json &&
	grep -q "\"numa_node\": $numa," /tmp/list.json &&
	grep -q "\"local_cpulist\": \"$cpus\"" /tmp/list.json &&
	grep -q '"gen": "cayman"' /tmp/list.json &&
	grep -q "\"pid\": $mon," /tmp/list.json &&
	grep -q '"uid": 0' /tmp/list.json &&
	! grep -q '"error"' /tmp/list.json
st=$?
[ $st -eq 0 ] || show /tmp/list.json
result $st list_json

neuron-nq metrics --count 2 --interval 1 --json >/tmp/metrics.json 2>/tmp/metrics.err
st=$?
show /tmp/metrics.err
[ $st -eq 0 ] && [ "$(grep -c '"object":"metrics"' /tmp/metrics.json)" -eq 2 ] &&
	grep -q "\"pci_address\":\"$bdf\"" /tmp/metrics.json &&
	grep -q '"engines_by_state":{' /tmp/metrics.json &&
	! grep -q '"counter_errors"' /tmp/metrics.json &&
	! grep -q '"error":' /tmp/metrics.json
st=$?
[ $st -eq 0 ] || head -c 4000 /tmp/metrics.json | show /dev/stdin
result $st json_reports

neuron-nq metrics --count 1 --text 2>/dev/null >/dev/null # an unknown option
[ $? -eq 1 ]
result $? usage_error_exit_1

rm -f /tmp/neuron.prom
neuron-nq metrics --count 1 --prometheus /tmp/neuron.prom >/tmp/prom.out 2>&1
st=$?
show /tmp/prom.out
[ $st -eq 0 ] && [ -s /tmp/neuron.prom ] && [ ! -e /tmp/neuron.prom.tmp ] && [ ! -s /tmp/prom.out ] &&
	grep -q "^neuron_device_info{device=\"0\",pci_address=\"$bdf\",numa_node=\"$numa\",local_cpulist=\"$cpus\",gen=\"cayman\"} 1$" /tmp/neuron.prom &&
	grep -q '^neuron_core_owned{device="0",core="1"} 1$' /tmp/neuron.prom &&
	grep -q '^neuron_collect_errors{device="0"} 0$' /tmp/neuron.prom &&
	grep -q '^# TYPE neuron_notific_edges_total counter$' /tmp/neuron.prom
result $? prometheus_file
echo "# metrics-prom-begin"
sed 's/^/# prom: /' /tmp/neuron.prom
echo "# metrics-prom-end"

# monitor --passive watches the monitor's core without taking it
# (docs/cli-json.md#observe): reports of core 1 with its queue 0, and the
# monitor still owns the core afterwards
neuron-nq monitor --passive --core 1 --duration 1.2 --interval 0.5 --json >/tmp/observe.json 2>/tmp/observe.err
st=$?
show /tmp/observe.err
[ $st -eq 0 ] && [ "$(grep -c '"object":"observe"' /tmp/observe.json)" -ge 2 ] &&
	grep '"object":"observe"' /tmp/observe.json | head -1 | grep -q '"core":1,' &&
	grep '"object":"observe"' /tmp/observe.json | head -1 | grep -q '"queue":0,' &&
	grep -q "^1 $mon " /sys/class/nnq/nnq0/core_owners
st=$?
[ $st -eq 0 ] || show /tmp/observe.json
result $st passive_monitor_takes_nothing

# top sees the monitor's file: its pid, uid 0, comm neuron-nq, core 1
# (docs/cli-json.md#top); and prints plain lines when not a terminal
neuron-nq top --json --count 2 --interval 0.3 >/tmp/top.json 2>&1
st=$?
[ $st -eq 0 ] && [ "$(grep -c '"object":"top"' /tmp/top.json)" -eq 2 ] &&
	grep -q "\"comm\":\"neuron-nq\",\"cores\":\[1\],\"device\":\"/dev/nnq0\"" /tmp/top.json &&
	grep -q "\"pid\":$mon," /tmp/top.json
st=$?
[ $st -eq 0 ] || show /tmp/top.json
result $st top_json
neuron-nq top --count 1 >/tmp/top.txt 2>&1
st=$?
show /tmp/top.txt
[ $st -eq 0 ] && grep -q "^ *$mon  *0 neuron-nq  *nnq0  *1 " /tmp/top.txt && ! grep -q "$(printf '\033')" /tmp/top.txt
result $? top_text

kill $mon 2>/dev/null
wait $mon 2>/dev/null
echo "# metrics-guest: $fails of $n checks failed"
[ "$fails" -eq 0 ]
