#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, on the real driver: libneuron as an unprivileged runtime
# would use it (userspace/README.md#api-contract). Run by guest-tests.sh
# --trace after the kselftests; the programs come with trace-payload.sh.
#
#   vm_c_api    the C API from C: device info, state, cores, a timed wait,
#               engine status and reset, the file's own ENGINE_STOPPED
#               event, queue info, a read-only open
#   vm_execute  execute(): the caller's own NOTIFIC overflow edge without
#               CAP_SYS_ADMIN, SW_NQ_OVERFLOW instead of a timeout, and a
#               timed-out program on a core the caller owned left IDLE; the
#               AXI_EVT_SEM records lost by a full queue, counted by the
#               library and by `neuron-nq metrics` ($NEURON_NQ)
#
#   cli_vm      neuron-nq (docs/cli-json.md): as uid 1000, `run --route
#               0x03249867 --json` of a POOL program: every record on the
#               queue of a hand-written table with the kind it says (DGE
#               metadata on queue 2 as DGE_METADATA, the NOTIFY hint=1 on
#               queue 6 as EXPLICIT), the summary's routes, exit 4 (FP_NAN);
#               as root, `run --throttle` of two THROTTLEs: exit 7,
#               COMPLETED_THROTTLED, not 4
#
# All but `run --throttle` (CAP_SYS_ADMIN) run as uid 1000 (group 1000), with
# /dev/nnq0 given to group 1000, mode 0660, as a host gives it to group
# neuron; the node's owner and mode are put back afterwards. Each program
# prints its own TAP lines; this script prints cli_vm's.
# Usage: api-guest.sh
t=/opt/neuron/trace
export LD_LIBRARY_PATH=$t/lib
export NEURON_NQ=$t/bin/neuron-nq
dev=/dev/nnq0
mode=$(stat -c %a $dev)
owner=$(stat -c %u:%g $dev)
chown 0:1000 $dev && chmod 0660 $dev
st=0
for prog in vm_c_api vm_execute; do
	echo "# running $prog --uid 1000 $dev"
	"$t/bin/$prog" --uid 1000 $dev || { echo "# $prog exited with status $?"; st=1; }
done
n=0
tap() { # tap STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n cli_vm.$2"; else echo "not ok $n cli_vm.$2"; st=1; fi
}
mkdir -p /etc
grep -q '^root:' /etc/passwd 2>/dev/null || echo 'root:x:0:0:root:/tmp:/bin/sh' >>/etc/passwd
grep -q '^[^:]*:x:1000:' /etc/passwd || echo 'runner:x:1000:1000:runner:/tmp:/bin/sh' >>/etc/passwd
user=$(awk -F: '$3 == 1000 { print $1; exit }' /etc/passwd)
# examples/hello.c and the neuron Python module (python-payload.sh) as uid
# 1000: hello.nq's 14 records decoded (PE's EXPLICIT hint 3), pytest of
# userspace/python/tests/test_device.py (the NumPy drain; fork with
# multiprocessing, docs/decisions/0041-fork-in-libneuron.md), and the NumPy
# drain's records/s beside the C drain's (printed, not checked)
pystart=$(date +%s)
py=/opt/neuron/python
pyenv="LD_LIBRARY_PATH=$py/libs:$t/lib PYTHONDONTWRITEBYTECODE=1 PYTHONUTF8=1 HOME=/tmp"
chmod -R a+rX /opt/neuron
for c in "hello_c:$t/bin/hello_c $dev $t/hello.nq" "hello_py:$py/bin/python3.11 $py/hello.py $dev $py/hello.nq"; do
	name=${c%%:*} cmd=${c#*:}
	echo "# \$ su $user -c '$cmd'"
	su -s /bin/sh "$user" -c "env $pyenv $cmd" >/tmp/hello.out 2>&1
	hst=$?
	sed 's/^/# /' /tmp/hello.out
	bad=0
	[ $hst -eq 0 ] && grep -q '^status OK, 14 records' /tmp/hello.out &&
		[ "$(grep -c '^core 0 queue' /tmp/hello.out)" = 14 ] &&
		grep -q 'EXPLICIT pc=0x00001 hint=3 ext=0x1234' /tmp/hello.out || bad=1
	tap $bad "${name}_prints_hello_records_as_uid_1000"
done
echo "# \$ su $user -c 'python3 -m pytest test_device.py'"
su -s /bin/sh "$user" -c "cd /tmp && env $pyenv NEURON_TEST_DEVICE=$dev NEURON_HELLO_NQ=$py/hello.nq $py/bin/python3.11 -m pytest -p no:cacheprovider -v $py/tests" \
	>/tmp/pytest.out 2>&1
pst=$?
sed 's/^/# /' /tmp/pytest.out
grep -q ' 4 passed' /tmp/pytest.out || pst=1
tap $pst python_pytest_on_the_driver_as_uid_1000
su -s /bin/sh "$user" -c "env $pyenv $py/bin/python3.11 $py/bench_drain.py $dev 2000 3" 2>&1 | sed 's/^/# /'
echo "# hello_c, hello.py, pytest and bench_drain.py: $(($(date +%s) - pystart)) s of guest time"
cat >/tmp/routed.nq <<'EOF'
features 0x2
[core1.pool]
notify hint=1 ext=0x55
nop @update=sem.set:5 @value=9
fp_error FP_NAN
dge src=0x400000 dst=0x400800 len=64
halt
EOF
chmod 0644 /tmp/routed.nq
echo "# \$ su $user -c 'neuron-nq run --verbose --route 0x03249867 --json /tmp/routed.nq'"
su -s /bin/sh "$user" -c "LD_LIBRARY_PATH=$t/lib $t/bin/neuron-nq run --verbose --route 0x03249867 --json /tmp/routed.nq" \
	>/tmp/routed.json 2>/tmp/routed.err
rst=$?
sed 's/^/# /' /tmp/routed.json /tmp/routed.err
tap $((rst != 4)) routed_run_exits_4
# queue, kind, records: route 0x03249867 sends trace to 7, EXPLICIT to 6,
# EVT_SEM to 8, errors to 9, DGE to 2; 5 instructions traced
bad=0
while read -r q kind count; do
	got=$(grep -c "\"queue\":$q,\"record\":{.*\"kind\":\"$kind\"" /tmp/routed.json)
	[ "$got" = "$count" ] || { echo "# queue $q: $got $kind, want $count"; bad=1; }
done <<'EOF'
7 TRACE 10
6 EXPLICIT 1
8 EVT_SEM 1
9 TPB_ERROR 1
2 DGE_METADATA 1
EOF
[ "$(grep -c '"object":"record"' /tmp/routed.json)" = 14 ] || bad=1
tap $bad routed_run_records_on_their_queues
grep -q '"routes":{"1":"0x03249867"}' /tmp/routed.json
tap $? routed_run_summary_route
printf '[core1.pool]\nthrottle 5\nthrottle 6\nhalt\n' >/tmp/throttle.nq
echo "# \$ neuron-nq run --throttle --json /tmp/throttle.nq"
"$t/bin/neuron-nq" run --throttle --json /tmp/throttle.nq >/tmp/throttle.json 2>&1
tst=$?
sed 's/^/# /' /tmp/throttle.json
tap $((tst != 7)) throttle_run_exits_7
grep -q '"status":"COMPLETED_THROTTLED"' /tmp/throttle.json &&
	grep -q '"status_code":2001' /tmp/throttle.json && grep -q '"throttle_records":2' /tmp/throttle.json
tap $? throttle_run_summary_completed_throttled

chown "$owner" $dev
chmod "$mode" $dev
exit $st
