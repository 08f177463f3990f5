#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The second VM lane: runs inside a VM whose device has gen=sunda (run-vm.sh
# --device gen=sunda). Loads the driver, checks the device came up as
# generation sunda, runs the generation-aware kselftests (dge_test picks its
# sunda fixture from NEURON_IOC_DEVICE_INFO; nq_test assumes cayman and is
# not run here), then checks the kernel log and unloads the driver. Prints
# TAP; exits non-zero on any failure.
#
# Usage: guest-sunda.sh [TEST...]   (default: dge_test, from /opt/neuron/tests)
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fails=$((fails + 1)); fi
}

echo "TAP version 13"
[ $# -gt 0 ] || set -- dge_test
insmod /lib/neuron/neuron.ko
result $? "vm_sunda.insmod"
[ -c /dev/neuron0 ]
result $? "vm_sunda.dev_node_exists"
# the driver's probe line, for the log (dge_test checks the generation)
dmesg | grep -E 'neuron[0-9]+: .*gen [0-9]+' | sed 's/^/# /'

for name in "$@"; do
	t=/opt/neuron/tests/$name
	if [ ! -x "$t" ]; then
		echo "# $name: not found in /opt/neuron/tests"
		result 1 "vm_sunda.$name"
		continue
	fi
	echo "# running $name"
	"$t"
	st=$?
	# the test printed its own ok/not ok lines; its status catches a crash
	[ $st -eq 0 ] || echo "# $name exited with status $st"
	result $st "vm_sunda.$name"
done

# the driver must leave no WARN, BUG or oops behind (dmesg is the kernel log)
if dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN' >/tmp/bad; then
	sed 's/^/# dmesg: /' /tmp/bad
	result 1 "vm_sunda.dmesg_clean"
else
	result 0 "vm_sunda.dmesg_clean"
fi
rmmod neuron
result $? "vm_sunda.rmmod"
echo "# guest: $fails of $n checks failed"
[ "$fails" -eq 0 ]
