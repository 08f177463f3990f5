#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM, called by guest-tests.sh --trace right after insmod
# (a fresh module: device 0, no edge counted yet). Checks the driver's
# tracepoints (kernel/neuron_trace.h, docs/architecture.md#tracepoints)
# through Debian's trace-cmd and the linux-perf of the running kernel, both
# packed by trace-payload.sh into /opt/neuron/trace.
#
# The program: core 1's ACT engine runs one HALT, untraced. neuron-nq run
# (libneuron's execute()) makes queues 0..5 of core 1 (4096 bytes, flags 0,
# threshold 1, an eventfd each) and marks completion without tracing by an
# EVENTS update on the HALT, so the device writes exactly one record: an
# EVT_SEM record, routed to queue 2 by the default ROUTE (events -> queue 2,
# docs/device-model.md "NOTIFIC block"). Its unread count reaches the
# threshold 1: THRESHOLD_STATUS bit 2 (queues 0x4) and tpb_notific_intr_0
# (cause 0x1) on core 1's vector, one edge, which signals queue 2's eventfd.
# Expected, worked out by hand from that:
#   neuron_nq_init: dev=0 core=1 queue=Q size=4096 flags=0x0 threshold=1  Q=0..5
#   neuron_submit: dev=0 core=1 engine=1 count=1 flags=0x0    (ACT = 1)
#   neuron_irq_edge: dev=0 edge=notific core=1 cause=0x1 queues=0x4 count=1
#   neuron_threshold_wake: dev=0 core=1 queue=2
#   neuron_nq_destroy: dev=0 core=1 queue=Q hw=1                          Q=0..5
# (count=2 for the second run, under perf: the edge's sequence number.)
# Then a function reset through sysfs, under trace-cmd: the disable path
# (cause flr, the device answering, no queue left) and the enable path.
#
# Prints TAP ("ok N LANE.trace_..."); exits non-zero on any failure.
# Usage: trace-guest.sh [--lane NAME]
lane=vm
[ "${1:-}" = --lane ] && lane=$2
t=/opt/neuron/trace
export LD_LIBRARY_PATH=$t/lib
export PATH="$t/bin:$PATH"
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $lane.trace_$2"; else echo "not ok $n $lane.trace_$2"; fails=$((fails + 1)); fi
}
show() { sed 's/^/# /' "$1"; }
# count PATTERN FILE: lines of FILE matching the extended regex
count() { grep -cE "$1" "$2"; }
# expect NAME FILE < LINES: each of LINES (an event and its fields) ends
# exactly one line of FILE (trace-cmd report, perf script), with runs of
# blanks taken as one (trace-cmd pads the event name)
expect() {
	ok=0
	while IFS= read -r want; do
		c=$(awk -v w="$want" '{ gsub(/[ \t]+/, " "); sub(/ $/, "") }
			length($0) >= length(w) && substr($0, length($0) - length(w) + 1) == w { k++ }
			END { print k + 0 }' "$2")
		if [ "$c" -ne 1 ]; then
			echo "# $1: '$want' found $c times (want 1)"
			ok=1
		fi
	done
	result $ok "$1"
}
# first_line PATTERN FILE: line number of the first match (0: none)
first_line() { grep -nE "$1" "$2" | head -1 | cut -d: -f1 | grep . || echo 0; }

mountpoint -q /sys/kernel/tracing 2>/dev/null ||
	mount -t tracefs tracefs /sys/kernel/tracing
ev=/sys/kernel/tracing/events/neuron
missing=0
for e in neuron_nq_init neuron_nq_destroy neuron_nq_coalesce neuron_dim_profile neuron_submit neuron_irq_edge \
	neuron_threshold_wake neuron_storm_mask neuron_storm_unmask \
	neuron_disable_begin neuron_disable_end neuron_enable neuron_pci_error; do
	[ -f "$ev/$e/format" ] || { echo "# no $ev/$e/format"; missing=1; }
done
result $missing "events_registered"
# the tracing core checks every event's print format when the module
# registers it (unsafe dereferences, unknown enum names, failed files):
# the kernel log from the module's first line on ("nnq: loading ...")
dmesg | sed -n '/nnq/,$p' >/tmp/trace-dmesg-all
if grep -iE 'trace|event|WARNING:' /tmp/trace-dmesg-all |
	grep -iE 'warn|unsafe|fail|error|bad|could not' >/tmp/trace-dmesg; then
	show /tmp/trace-dmesg
	result 1 "dmesg_no_tracing_warning"
else
	result 0 "dmesg_no_tracing_warning"
fi

printf '[core1.act]\nhalt\n' >/tmp/trace-prog.nq

# check_run TOOL FILE EDGE_COUNT: the events of one run in FILE
check_run() {
	tool=$1 f=$2
	# (expect reads a file, not a pipe: a pipeline's function runs in a
	# subshell, whose count of checks would be lost)
	for q in 0 1 2 3 4 5; do
		echo "neuron_nq_init: dev=0 core=1 queue=$q size=4096 flags=0x0 threshold=1"
	done >/tmp/trace-want
	expect "${tool}_nq_init" "$f" </tmp/trace-want
	[ "$(count 'neuron_nq_init:' "$f")" -eq 6 ]
	result $? "${tool}_six_nq_init"
	expect "${tool}_submit" "$f" <<-EOF
		neuron_submit: dev=0 core=1 engine=1 count=1 flags=0x0
	EOF
	expect "${tool}_irq_edge" "$f" <<-EOF
		neuron_irq_edge: dev=0 edge=notific core=1 cause=0x1 queues=0x4 count=$3
	EOF
	[ "$(count 'neuron_irq_edge:' "$f")" -eq 1 ]
	result $? "${tool}_one_irq_edge"
	expect "${tool}_threshold_wake" "$f" <<-EOF
		neuron_threshold_wake: dev=0 core=1 queue=2
	EOF
	for q in 0 1 2 3 4 5; do
		echo "neuron_nq_destroy: dev=0 core=1 queue=$q hw=1"
	done >/tmp/trace-want
	expect "${tool}_nq_destroy" "$f" </tmp/trace-want
	# in the order they happened: queues, submit, edge, wake-up, teardown
	a=$(first_line 'neuron_nq_init:' "$f") b=$(first_line 'neuron_submit:' "$f")
	c=$(first_line 'neuron_irq_edge:' "$f") d=$(first_line 'neuron_threshold_wake:' "$f")
	e=$(first_line 'neuron_nq_destroy:' "$f")
	[ "$a" -gt 0 ] && [ "$a" -lt "$b" ] && [ "$b" -lt "$c" ] && [ "$c" -lt "$d" ] && [ "$d" -lt "$e" ]
	result $? "${tool}_event_order"
}

# ---- trace-cmd: ftrace's ring buffer, every CPU, while the program runs
trace-cmd record -e neuron -o /tmp/trace.dat \
	neuron-nq run --no-trace /tmp/trace-prog.nq >/tmp/trace-record.out 2>&1
st=$?
show /tmp/trace-record.out
result $st "tracecmd_record"
trace-cmd report -i /tmp/trace.dat >/tmp/trace-report.txt 2>&1
st=$?
grep 'neuron_' /tmp/trace-report.txt | sed 's/^/# /'
result $st "tracecmd_report"
check_run tracecmd /tmp/trace-report.txt 1

# ---- perf: the same events through perf_event_open, system-wide (-a: the
# edge and the wake-up run in the core's interrupt thread, not in neuron-nq)
perf record -a -e 'neuron:*' -N -B -o /tmp/perf.data -- \
	neuron-nq run --no-trace /tmp/trace-prog.nq >/tmp/perf-record.out 2>&1
st=$?
show /tmp/perf-record.out
result $st "perf_record"
perf script -i /tmp/perf.data >/tmp/perf-script.txt 2>&1
st=$?
grep 'neuron_' /tmp/perf-script.txt | sed 's/^/# /'
result $st "perf_script"
check_run perf /tmp/perf-script.txt 2

# ---- the lifecycle: a function reset through sysfs runs the disable path
# (no queue left: queues=0 unread=0) and the enable path
bdf=$(basename "$(readlink -f /sys/class/nnq/nnq0/device)")
trace-cmd record -e neuron -o /tmp/trace-flr.dat \
	sh -c "echo 1 >/sys/bus/pci/devices/$bdf/reset" >/tmp/trace-flr.out 2>&1
st=$?
show /tmp/trace-flr.out
result $st "tracecmd_record_flr"
trace-cmd report -i /tmp/trace-flr.dat >/tmp/trace-flr.txt 2>&1
grep 'neuron_' /tmp/trace-flr.txt | sed 's/^/# /'
expect tracecmd_flr_steps /tmp/trace-flr.txt <<-EOF
	neuron_disable_begin: dev=0 cause=flr hw_ok=1
	neuron_disable_end: dev=0 cause=flr queues=0 unread=0
	neuron_enable: dev=0 ret=0
EOF

echo "# trace: $fails of $n checks failed"
[ "$fails" -eq 0 ]
