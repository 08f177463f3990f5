#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest, on the real driver: libneuron's own drain against the
# torn-record checks (userspace/tests/vm_torn_drain.cpp), once per drain
# path (userspace/README.md#drain-paths), each forced with
# NEURON_DRAIN_PATH, with the number of records the kernel command line
# asks for (neuron.torn_drain_records=N). AVX-512, which QEMU's TCG does
# not offer, is named as not run when the guest CPU lacks it (no test line);
# any other path missing fails. With neuron.torn_control=1 (the device writes
# the header word first) it runs the default path once, on at most 200,000
# records, and expects torn records. Run by guest-tests.sh;
# the program comes with trace-payload.sh. Prints TAP (LANE.torn_drain.PATH).
# Usage: drain-guest.sh [--lane NAME]
lane=vm
[ "${1:-}" = --lane ] && lane=$2
t=/opt/neuron/trace
export LD_LIBRARY_PATH=$t/lib
param() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
records=$(param neuron.torn_drain_records)
control=$(param neuron.torn_control)
n=0
fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $lane.$2"; else echo "not ok $n $lane.$2"; fails=$((fails + 1)); fi
}
if [ -z "$records" ]; then
	echo "# drain-guest: no neuron.torn_drain_records= on the command line: nothing asked"
	exit 0
fi
echo "# guest CPU: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-)," \
	"$(grep -m1 '^flags' /proc/cpuinfo | grep -oE ' (sse2|avx2|avx512f)( |$)' | tr -d '\n')"
if [ "$control" = 1 ]; then
	[ "$records" -gt 200000 ] && records=200000
	"$t/bin/vm_torn_drain" --records "$records" --expect-torn
	result $? "torn_drain.control_sees_torn"
	exit $((fails > 0))
fi
for path in scalar sse2 avx2 avx512; do
	NEURON_DRAIN_PATH=$path "$t/bin/vm_torn_drain" --records "$records"
	st=$?
	if [ $st -eq 4 ] && [ $path = avx512 ]; then
		echo "# torn_drain.$path: not run, the guest CPU lacks it (the host's ctest drains on it)"
		continue
	fi
	result $st "torn_drain.$path"
done
exit $((fails > 0))
