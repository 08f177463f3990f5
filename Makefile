# SPDX-License-Identifier: GPL-2.0
# Top-level entry points. The two that matter (README.md):
#   make demo    set up, build everything, boot the VM, run an example program
#                and show the decoded notification stream
#   make check   set up, build everything, run every test (host + VM)
# Both run scripts/setup-host.sh first (root; installs Debian packages).
#
# Other targets: setup module userspace qemu selftests kernel-image clean
# The module itself is built by kernel/ (kbuild); `make module KVER=...`.

KVER    ?= $(shell ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -1 | cut -d/ -f4)
BUILD   := $(CURDIR)/build
CACHE   ?= /var/cache/neuron
export NEURON_CACHE := $(CACHE)

all: module userspace selftests

setup:
	@scripts/setup-host.sh

module:
	$(MAKE) -C kernel KVER=$(KVER)

userspace:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD)/userspace -j2

qemu:
	@emulator/qemu/build-qemu.sh

kernel-image:
	@selftests/vm/fetch-kernel.sh $(KVER)

selftests:
	@selftests/fetch-harness.sh $(BUILD)/kselftest
	$(MAKE) -C selftests/drivers/neuron KSFT_INC=$(BUILD)/kselftest OUT=$(BUILD)/selftests
	$(MAKE) -C emulator/tests OUT=$(BUILD)/selftests

demo:
	@scripts/demo.sh

check:
	@scripts/check.sh

clean:
	$(MAKE) -C kernel clean KVER=$(KVER) || true
	rm -rf $(BUILD)

.PHONY: all setup module userspace qemu kernel-image selftests demo check clean
