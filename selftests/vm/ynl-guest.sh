#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the 6.12 guest after guest-tests.sh (selftests/vm/lane-6.12.sh;
# the payload is selftests/vm/ynl-payload.sh's): the kernel's own YNL tool,
# tools/net/ynl/cli.py of linux-source-6.12, drives the live generic netlink
# family "neuron" with our spec, Documentation/netlink/specs/neuron.yaml,
# which it validates against the kernel's genetlink-legacy schema first (the
# schema sits next to specs/, where cli.py looks for it):
#   get-device (do and dump), get-nq (dump) before and while a program holds
#   queues, the events group while that program runs, and, as an unprivileged
#   user, get-device allowed but get-nq and the events group refused (EPERM:
#   GENL_ADMIN_PERM, GENL_MCAST_CAP_NET_ADMIN).
# The tool's output is printed as "# " lines; TAP "ok N ynl.*" lines are
# counted by the host. Exits non-zero on any failed check.
# docs/architecture.md#ynl-spec.
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n ynl.$2"; else echo "not ok $n ynl.$2"; fails=$((fails + 1)); fi
}
show() { sed 's/^/# /' "$@"; }
has() { grep -q -- "$1" "$2"; } # has PATTERN FILE

dir=/opt/neuron
spec=$dir/ynl/Documentation/netlink/specs/neuron.yaml
cli=$dir/ynl/tools/net/ynl/cli.py
pyenv="LD_LIBRARY_PATH=$dir/python/libs PYTHONDONTWRITEBYTECODE=1 PYTHONUTF8=1"
exec 3>&1
# ynl ARGS...: cli.py with our spec; prints the command line (to fd 3, the
# console) first
ynl() {
	echo "# \$ cli.py --spec neuron.yaml $*" >&3
	env $pyenv $dir/python/bin/python3.11 $cli --spec $spec "$@"
}
# as_nobody ARGS...: the same as an unprivileged user
as_nobody() {
	echo "# \$ su nobody -c \"cli.py --spec neuron.yaml $*\"" >&3
	su -s /bin/sh nobody -c "env $pyenv $dir/python/bin/python3.11 $cli --spec $spec $*"
}
# wait_subscribed PID: until PID's generic netlink socket has joined a group
# (Groups in /proc/net/netlink, the first 32 ids) or, for a higher group id,
# 10 s after the socket appeared; 1 if PID ended or nothing after 180 s
wait_subscribed() {
	i=0 seen=0
	while [ $i -lt 360 ]; do
		kill -0 "$1" 2>/dev/null || return 1
		for ino in $(ls -l /proc/"$1"/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p'); do
			awk -v ino="$ino" '$2 == 16 && $NF == ino { s = 1; if ($4 != "00000000") g = 1 }
				END { exit g ? 0 : s ? 2 : 1 }' /proc/net/netlink
			case $? in
			0) return 0 ;;
			2) seen=$((seen + 1)); [ $seen -ge 20 ] && return 0 ;;
			esac
		done
		sleep 0.5
		i=$((i + 1))
	done
	return 1
}

echo "# ynl: the kernel's YNL tool on the neuron family"
[ -d /sys/module/nnq ] || insmod /lib/neuron/nnq.ko
[ -c /dev/nnq0 ]
result $? "driver_loaded"
t0=$(date +%s)

# ---- get-device: one device (do), every device (dump)
ynl --do get-device --json '{"device": 0}' >/tmp/ynl.dev 2>&1
st=$?
show /tmp/ynl.dev
[ $st -eq 0 ] && has "'device': 0" /tmp/ynl.dev && has "'pci-vendor': '0x1d0f'" /tmp/ynl.dev &&
	has "'pci-device': '0x7f00'" /tmp/ynl.dev && has "'num-cores': 2" /tmp/ynl.dev &&
	has "'gen': 'cayman'" /tmp/ynl.dev && has "'mem-size': " /tmp/ynl.dev &&
	has "'intr-counts': \[{'core': 0," /tmp/ynl.dev && has "{'core': 1," /tmp/ynl.dev &&
	has "'throttle-count': " /tmp/ynl.dev && has "'fault-count': " /tmp/ynl.dev
result $? "do_get_device"
echo "# one cli.py run: $(($(date +%s) - t0)) s (spec validation included)"

ynl --do get-device --json '{"device": 7}' >/tmp/ynl.nodev 2>&1
st=$?
show /tmp/ynl.nodev
[ $st -ne 0 ] && has 'No such device' /tmp/ynl.nodev && has 'no such neuron device' /tmp/ynl.nodev
result $? "do_get_device_unknown_is_enodev_with_extack"

ynl --dump get-device >/tmp/ynl.devs 2>&1
st=$?
show /tmp/ynl.devs
[ $st -eq 0 ] && has "^\[{" /tmp/ynl.devs && has "'device': 0" /tmp/ynl.devs && [ "$(grep -c "'device': " /tmp/ynl.devs)" -eq 1 ]
result $? "dump_get_device"

ynl --dump get-nq >/tmp/ynl.nq0 2>&1
st=$?
show /tmp/ynl.nq0
[ $st -eq 0 ] && [ "$(cat /tmp/ynl.nq0)" = "[]" ]
result $? "dump_get_nq_no_queues"

# ---- a program holding queues 1 and 3 of core 0 (neuron-nq monitor --run):
# 64 notifies into a lossy 4-record ring (SW_OVERFLOW edges), then the PE
# stays busy ($busy s, in delays of 4 s, the most one takes) while get-nq
# dumps, then 8 more
busy=24
{
	echo "[pe]"
	i=0
	while [ $i -lt 64 ]; do echo "notify hint=1 ext=$i"; i=$((i + 1)); done
	i=0
	while [ $i -lt $((busy / 4)) ]; do echo "delay 4000000000"; i=$((i + 1)); done
	i=0
	while [ $i -lt 8 ]; do echo "notify hint=2 ext=$i"; i=$((i + 1)); done
	echo "halt"
} >/tmp/ynl-prog.nq

# the subscriber first (it validates the spec before it joins "events"); run
# directly, not through ynl(), so that $! is the python process itself
echo "# \$ cli.py --spec neuron.yaml --subscribe events --sleep $((busy + 16))"
env $pyenv $dir/python/bin/python3.11 $cli --spec $spec --subscribe events \
	--sleep $((busy + 16)) >/tmp/ynl.ev 2>&1 &
sub=$!
wait_subscribed $sub
result $? "subscribe_events_joined"
neuron-nq monitor --lossy --size 64 --queue 1 --queue 3 --duration $((busy + 10)) \
	--run /tmp/ynl-prog.nq --no-trace >/tmp/ynl-mon.out 2>&1 &
mon=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'core0 0x0*a$' /sys/class/nnq/nnq0/queue_enable; do
	sleep 0.2
	i=$((i + 1))
done
sed 's/^/# queue_enable: /' /sys/class/nnq/nnq0/queue_enable
t1=$(date +%s)
ynl --dump get-nq >/tmp/ynl.nq 2>&1
st=$?
show /tmp/ynl.nq
echo "# dumped $(($(date +%s) - t1)) s after the queues appeared (the program runs ${busy} s)"
[ $st -eq 0 ] && [ "$(grep -c "'queue': " /tmp/ynl.nq)" -eq 2 ] && has "'queue': 1," /tmp/ynl.nq &&
	has "'queue': 3," /tmp/ynl.nq && has "'core': 0," /tmp/ynl.nq && has "'size': 64," /tmp/ynl.nq &&
	has "'flags': {'ignore-full'}" /tmp/ynl.nq && has "'head': " /tmp/ynl.nq && has "'tail': " /tmp/ynl.nq &&
	has "'phase': " /tmp/ynl.nq && has "'overflow-count': " /tmp/ynl.nq &&
	has "'drop-count': " /tmp/ynl.nq && has "'threshold-count': " /tmp/ynl.nq
result $? "dump_get_nq_lists_the_running_programs_queues"
ynl --dump get-nq --json '{"device": 0}' >/tmp/ynl.nq1 2>&1
st=$?
[ $st -eq 0 ] && [ "$(grep -c "'queue': " /tmp/ynl.nq1)" -eq 2 ]
result $? "dump_get_nq_filtered_by_device"

# ---- unprivileged: get-device is open, get-nq and "events" need CAP_NET_ADMIN
mkdir -p /etc
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >>/etc/passwd
as_nobody --do get-device --json "'{\"device\":0}'" >/tmp/ynl.u0 2>&1
st=$?
tail -n 3 /tmp/ynl.u0 | show
[ $st -eq 0 ] && has "'device': 0" /tmp/ynl.u0
result $? "unprivileged_do_get_device_allowed"
as_nobody --dump get-nq >/tmp/ynl.u1 2>&1
st=$?
show /tmp/ynl.u1
[ $st -ne 0 ] && has 'Netlink error: Operation not permitted' /tmp/ynl.u1
result $? "unprivileged_dump_get_nq_eperm"
as_nobody --subscribe events >/tmp/ynl.u2 2>&1
st=$?
tail -n 1 /tmp/ynl.u2 | show
[ $st -ne 0 ] && has 'PermissionError: \[Errno 1\] Operation not permitted' /tmp/ynl.u2
result $? "unprivileged_subscribe_events_eperm"

# ---- the program's event stream
wait $mon
st=$?
show /tmp/ynl-mon.out | tail -n 5
[ $st -eq 0 ]
result $? "program_ran"
wait $sub
st=$?
show /tmp/ynl.ev
[ $st -eq 0 ] && has "'name': 'event'" /tmp/ynl.ev && has "'device': 0" /tmp/ynl.ev &&
	has "'edge': 'notific'" /tmp/ynl.ev && has "'cause': '0x" /tmp/ynl.ev &&
	has "'queues': " /tmp/ynl.ev && has "'count': \[" /tmp/ynl.ev && has "'timestamp': " /tmp/ynl.ev
result $? "subscribe_events_prints_the_programs_edges"

# nothing the tool asked of the family left a WARN, BUG or oops behind
if dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN' >/tmp/bad; then
	show /tmp/bad
	result 1 "dmesg_clean"
else
	result 0 "dmesg_clean"
fi
rmmod nnq
result $? "rmmod"

echo "# ynl: $fails of $n checks failed ($(($(date +%s) - t0)) s)"
[ "$fails" -eq 0 ]
