#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The k8s lane's guest script (selftests/vm/k8s-payload.sh builds its
# payload, lane-monitor.sh --lane k8s runs it): loads the driver and runs
# the fake kubelet against neuron-device-plugin and the real driver, with
# the Python of the payload. Prints TAP; exits non-zero on any failure.
echo "TAP version 13"
insmod /lib/neuron/nnq.ko
st=$?
if [ $st -eq 0 ]; then echo "ok 1 k8s: insmod"; else echo "not ok 1 k8s: insmod"; exit 1; fi
# the devices probe asynchronously to nothing here, but udev is not there
# to wait for: the nodes of both devices are in devtmpfs once insmod returns
ls -l /dev/nnq* | sed 's/^/# /'
mkdir -p /var/lib/kubelet
py=/opt/neuron/python
PYTHONHOME=$py PYTHONPATH=$py/dist LD_LIBRARY_PATH=$py/libs PYTHONDONTWRITEBYTECODE=1 \
	"$py/bin/python3" /opt/neuron/k8s/vm_kubelet.py /bin/neuron-device-plugin /bin/neuron-nq \
	/opt/neuron/k8s/core1.nq /opt/neuron/k8s
st=$?
# the PCI hot-plug core's view of the removal and the re-plug (informational
# lines the quiet console does not show)
dmesg | grep -E 'pciehp|Slot\(|0000:0[12]:00' | tail -40 | sed 's/^/# dmesg: /'
exit $st
