# SPDX-License-Identifier: GPL-2.0-or-later
# The devices our QEMU is built with (configs/devices/x86_64-softmmu/neuron.mak
# in the qemu tree; build-qemu.sh configures --without-default-devices
# --with-devices-x86_64=neuron). Only what the guests and the qtest use: the
# q35 board (its ICH9 LPC, AHCI, ISA serial console and RTC come with it),
# its default parallel port, the PCIe root ports every neuron-tpb sits
# behind (hot-plug and surprise removal) and the Intel IOMMU of the IOMMU
# lanes. neuron-tpb itself is built whenever CONFIG_PCI is (hw/meson.build).
# The other boards and devices of QEMU's default set are most of a cold
# build's time (docs/build-environment.md#qemu-devices).
CONFIG_Q35=y
# a guest started without -nodefaults gets a parallel port; without the
# device QEMU refuses to start
CONFIG_PARALLEL=y
CONFIG_PCIE_PORT=y
CONFIG_VTD=y
