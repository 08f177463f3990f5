#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, on the real driver: neuron-nq coredump decodes the
# devcoredump of a real hang (docs/cli-json.md#coredump,
# docs/decisions/0013-coredump.md). Run by guest-tests.sh --trace after the
# kselftests (neuron-nq comes with trace-payload.sh's tools).
#
# With the module's hang_timeout_ms at 500 (restored after), `neuron-nq run`
# of a PE program nop, notify hint=3 ext=0x1234, wait.ge 200 1, halt on
# core 0 times out after 3 s (exit 3): nobody signals semaphore 200, so the
# scanner reports the hang at pc 2 about 0.6 s in and takes a dump. Then
# `neuron-nq coredump` with no FILE finds it (the newest devcd of nnq) and
# prints, as hand-written here: HANG of PE at pc 2 with the 500 ms timeout,
# PE WAITING at pc 2 with 4 program words (its last_error is whatever an
# earlier program left: LAST_ERROR is sticky), the program with "=>" at the
# wait.ge, and run's EXPLICIT record on queue 1; --json the same fields; a
# uid that cannot read the dump (0600) gets exit 2 and the reason. The dump
# is freed at the end (a write to its data file).
#
# Prints TAP ("ok N LANE.coredump_..."); exits non-zero on any failure.
# Usage: coredump-guest.sh [--lane NAME]
lane=vm
[ "${1:-}" = --lane ] && lane=$2
t=/opt/neuron/trace
export LD_LIBRARY_PATH=$t/lib
export PATH="$t/bin:$PATH"
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $lane.coredump_$2"; else echo "not ok $n $lane.coredump_$2"; fails=$((fails + 1)); fi
}
show() { sed 's/^/# /' "$1"; }
has() { grep -qF -- "$2" "$1" || { echo "# missing in $1: $2"; return 1; }; }
free_dumps() {
	for d in /sys/class/devcoredump/devcd*/data; do
		[ -e "$d" ] && echo 1 >"$d"
	done
}

param=/sys/module/nnq/parameters/hang_timeout_ms
old=$(cat $param)
echo 500 >$param
# the kselftests dumped core 0 minutes ago: lift the per-core limit
# (docs/decisions/0038-coredump-slot.md) for this run's dump
interval=/sys/class/nnq/nnq0/coredump_interval_ms
old_interval=$(cat $interval)
echo 0 >$interval
free_dumps
cat >/tmp/hang.nq <<'EOF'
[pe]
nop
notify hint=3 ext=0x1234
wait.ge 200 1
halt
EOF
t0=$(date +%s)
neuron-nq run /tmp/hang.nq --timeout 3000 >/tmp/hang-run.txt 2>&1
st=$?
echo "# neuron-nq run: exit $st after $(($(date +%s) - t0)) s"
[ $st -eq 3 ]
result $? "run_times_out"
echo "$old" >$param
echo "$old_interval" >$interval

neuron-nq coredump >/tmp/cd.txt 2>/tmp/cd.err
st=$?
show /tmp/cd.txt
show /tmp/cd.err
[ $st -eq 0 ] &&
	has /tmp/cd.txt "/sys/class/devcoredump/devcd" &&
	has /tmp/cd.txt ": NNQCORE version 1, " &&
	has /tmp/cd.txt "nnq0 core 0: HANG of PE at pc 2 (hang timeout 500 ms)" &&
	has /tmp/cd.txt "  PE   WAITING pc 2 " &&
	has /tmp/cd.txt " prog_count 4 last_error " &&
	has /tmp/cd.txt "queue 1: size " &&
	has /tmp/cd.txt "PE EXPLICIT pc=0x00001 hint=3 ext=0x1234 run=" &&
	has /tmp/cd.txt "program, instructions 0..3:" &&
	has /tmp/cd.txt "  =>    2  wait.ge 200 1" &&
	has /tmp/cd.txt "        3  halt"
result $? "text"

neuron-nq coredump --json >/tmp/cd.json 2>/tmp/cd.err
st=$?
show /tmp/cd.err
[ $st -eq 0 ] &&
	has /tmp/cd.json '"object": "coredump",' &&
	has /tmp/cd.json '"cause": "HANG",' &&
	has /tmp/cd.json '"engine": "PE",' &&
	has /tmp/cd.json '"pc": 2,' &&
	has /tmp/cd.json '"timeout_ms": 500,' &&
	has /tmp/cd.json '"state": "WAITING"' &&
	has /tmp/cd.json '"text": "wait.ge 200 1"' &&
	has /tmp/cd.json '"kind": "EXPLICIT",'
result $? "json"

# the dump is root's (0600): another uid is told so, exit 2
mkdir -p /etc
grep -q '^root:' /etc/passwd 2>/dev/null || echo 'root:x:0:0:root:/tmp:/bin/sh' >>/etc/passwd
grep -q '^cdtenant:' /etc/passwd || echo 'cdtenant:x:1000:1000:cdtenant:/tmp:/bin/sh' >>/etc/passwd
su -s /bin/sh cdtenant -c "env LD_LIBRARY_PATH=$t/lib $t/bin/neuron-nq coredump" >/dev/null 2>/tmp/cd.err
st=$?
show /tmp/cd.err
[ $st -eq 2 ] && has /tmp/cd.err "Permission denied"
result $? "unprivileged_refused"

free_dumps
echo "# coredump-guest: $fails of $n checks failed"
[ "$fails" -eq 0 ]
