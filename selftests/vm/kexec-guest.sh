#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The shutdown lane's guest (docs/robustness.md#shutdown-and-hibernation):
# .shutdown with a live client, then kexec into a fresh kernel on the same
# machine, where nothing resets the device in between.
#
# Stage 1 (this boot): nnq.ko loaded, uid 1000 owns core 0 (semaphore 7,
# event 9, feature flags set; an engine waits for room in a full queue) and
# keeps its file open; the guest's root file system (the initramfs) is
# packed again as the next kernel's initramfs; kexec_file_load() of the
# same kernel (/opt/neuron/vmlinuz, from the lane's payload) and
# reboot(KEXEC), which runs every driver's .shutdown.
# Stage 2 (the kexec'd kernel, "neuron_kexec_stage=2" on its command line):
# the device read before nnq.ko loads (engine idle, no queue enabled: what
# .shutdown left), then nnq.ko, a fresh tenant (uid 1001) reading core 0 at
# reset values, a program run on host and device rings, dmesg clean.
# TAP on the console across both boots; run-vm.sh's exit line comes from
# stage 2's init.
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2 # status $1"
		fails=$((fails + 1))
	fi
}
walk=/opt/neuron/kexec_walk
load_module() { # load_module STAGE: insmod, then wait for udev-less /dev/nnq0
	insmod /lib/neuron/nnq.ko
	result $? "kexec.$1.insmod"
	i=0
	while [ ! -e /dev/nnq0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

if ! grep -q 'neuron_kexec_stage=2' /proc/cmdline; then
	# a line of its own first: the console's first bytes may carry escapes
	echo "# kexec: stage 1, $(uname -r)"
	load_module stage1
	$walk dirty
	result $? "kexec.stage1.owner_dirties_core0_and_fills_a_queue"
	# the next kernel's initramfs: this one's files (init, busybox, the
	# payload, nnq.ko), without the mounted file systems' contents
	(cd / && { find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \) \
		-prune -o -print; printf '%s\n' ./proc ./sys ./dev ./tmp; } |
		cpio -o -H newc 2>/dev/null | gzip -1 >/tmp/initrd.gz)
	result $? "kexec.stage1.initramfs_packed"
	$walk load /opt/neuron/vmlinuz /tmp/initrd.gz
	st=$?
	result $st "kexec.stage1.kexec_file_load"
	[ $st -eq 0 ] || exit 1
	echo "# kexec: stage 1 ends with $fails failed; reboot(KEXEC) with uid 1000's file open"
	$walk exec
	result $? "kexec.stage1.reboot_kexec_returned"
	exit 1
fi

n=4 # stage 1 printed 1..4
echo "# kexec: stage 2, $(uname -r), command line: $(cat /proc/cmdline)"
$walk quiet
result $? "kexec.stage2.device_quiet_before_the_driver"
load_module stage2
$walk clean
result $? "kexec.stage2.next_owner_reads_reset_values_and_runs"
# as guest-tests.sh: no WARN, BUG or oops in the new kernel's log
dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN' >/tmp/bad
[ ! -s /tmp/bad ]
result $? "kexec.stage2.dmesg_clean"
sed 's/^/# dmesg: /' /tmp/bad
rmmod nnq
result $? "kexec.stage2.rmmod"
echo "1..$n"
[ $fails -eq 0 ]
