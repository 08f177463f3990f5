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
#               timed-out program on a core the caller owned left IDLE
#
# Both run as uid 1000 (group 1000), with /dev/nnq0 given to group 1000,
# mode 0660, as a host gives it to group neuron; the node's owner and mode
# are put back afterwards. Each program prints its own TAP lines.
# Usage: api-guest.sh
t=/opt/neuron/trace
export LD_LIBRARY_PATH=$t/lib
dev=/dev/nnq0
mode=$(stat -c %a $dev)
owner=$(stat -c %u:%g $dev)
chown 0:1000 $dev && chmod 0660 $dev
st=0
for prog in vm_c_api vm_execute; do
	echo "# running $prog --uid 1000 $dev"
	"$t/bin/$prog" --uid 1000 $dev || { echo "# $prog exited with status $?"; st=1; }
done
chown "$owner" $dev
chmod "$mode" $dev
exit $st
