#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (as init's child): checks the device is visible with its
# MSI-X vectors, runs every test program under /opt/neuron/tests, then checks
# the kernel log for oopses and warnings. Prints TAP; exits non-zero on any
# failure. The host counts the "ok"/"not ok" lines.
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fails=$((fails + 1)); fi
}

echo "TAP version 13"
# the device model's own tests talk to the bare device, before the driver binds
for t in /opt/neuron/devtests/*; do
	[ -x "$t" ] || continue
	echo "# running $(basename "$t") (no driver bound)"
	"$t" || { echo "# $(basename "$t") exited with status $?"; suite_failed=1; }
done
insmod /lib/neuron/neuron.ko
result $? "vm.insmod"
lspci -nn -vv -d 1d0f:7f00 2>/dev/null | sed 's/^/# /'
lspci -vv -d 1d0f:7f00 | grep -q 'MSI-X: Enable+'
result $? "vm.lspci_msix_enabled"
grep neuron /proc/interrupts | sed 's/^/# /'
[ "$(grep -c 'neuron0-' /proc/interrupts)" -ge 4 ]
result $? "vm.proc_interrupts_lists_vectors"
[ -c /dev/neuron0 ]
result $? "vm.dev_node_exists"

for t in /opt/neuron/tests/*; do
	[ -x "$t" ] || continue
	echo "# running $(basename "$t")"
	"$t"
	st=$?
	# each test printed its own ok/not ok line; a crash of the whole
	# program is caught here and fails the run
	if [ $st -ne 0 ]; then
		echo "# $(basename "$t") exited with status $st"
		suite_failed=1
	fi
done

# the driver must leave no WARN, BUG or oops behind (dmesg is the kernel log)
if dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN' >/tmp/bad; then
	sed 's/^/# dmesg: /' /tmp/bad
	result 1 "vm.dmesg_clean"
else
	result 0 "vm.dmesg_clean"
fi
rmmod neuron
result $? "vm.rmmod"
echo "# guest: $fails of $n checks failed"
[ "$fails" -eq 0 ] && [ -z "${suite_failed:-}" ]
