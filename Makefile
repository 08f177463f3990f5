# SPDX-License-Identifier: GPL-2.0
# Top-level entry points. The two that matter (README.md):
#   make demo    set up, build everything, boot the VM, run an example program
#                and show the decoded notification stream
#   make check   set up, build everything, run every test (host + VM)
# and the one that regenerates docs/performance.md (its figures, plots, JSON):
#   make performance
# Both run scripts/setup-host.sh first (root; installs Debian packages).
#
# A shell in the VM with the driver loaded (docs/first-hour.md):
#   make shell [ARGS="--devices 2 --iommu --kernel 6.12 ..."]   (scripts/shell.sh --help)
#
# Other targets: setup module userspace qemu selftests kernel-image deb clean
# The module itself is built by kernel/ (kbuild); `make module KVER=...`.

KVER    ?= $(shell ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -1 | cut -d/ -f4)
BUILD   := $(CURDIR)/build
CACHE   ?= /var/cache/neuron
export NEURON_CACHE := $(CACHE)

all: module userspace selftests

setup:
	@scripts/setup-host.sh

# the tests' module: a test build, with the pause points (kernel/Kbuild)
module:
	$(MAKE) -C kernel KVER=$(KVER) NEURON_TEST_HOOKS=1

# Built with the package build's flags and prefix (dpkg-buildflags under
# debian/rules' hardening=+all, CPPFLAGS appended as debhelper appends them;
# /usr), in a directory as deep as the package's (debian/rules
# --builddirectory): the objects are then the ones `make deb` compiles, and
# the compiler cache hands them over (docs/decisions/0030-check-budget.md).
PKGFLAGS = DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
userspace:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=/usr \
		-DCMAKE_C_FLAGS="$$($(PKGFLAGS) CFLAGS || echo -g -O2) $$($(PKGFLAGS) CPPFLAGS)" \
		-DCMAKE_CXX_FLAGS="$$($(PKGFLAGS) CXXFLAGS || echo -g -O2) $$($(PKGFLAGS) CPPFLAGS)" \
		-DCMAKE_EXE_LINKER_FLAGS="$$($(PKGFLAGS) LDFLAGS)" \
		-DCMAKE_SHARED_LINKER_FLAGS="$$($(PKGFLAGS) LDFLAGS)" \
		-DCMAKE_MODULE_LINKER_FLAGS="$$($(PKGFLAGS) LDFLAGS)" >/dev/null
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

# a shell in the VM with nnq.ko loaded; stdin a terminal or a script
ARGS ?=
shell:
	@scripts/shell.sh $(ARGS)

check:
	@scripts/check.sh

performance:
	@scripts/performance.sh

clean:
	$(MAKE) -C kernel clean KVER=$(KVER) || true
	rm -rf $(BUILD)

# The Debian packages (README "Packages", debian/rules): dpkg-buildpackage
# in a copy of the tracked and untracked-but-not-ignored files under
# build/deb/neuron, so the .debs land in build/deb/ and nothing is written
# beside the checkout. No tests in the package build (host ctest runs them).
DEB_OUT := $(BUILD)/deb
deb:
	rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)/neuron
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z -co --exclude-standard | xargs -0 cp --parents -d -t $(DEB_OUT)/neuron; \
	else \
		tar -c --exclude=./build . | tar -x -C $(DEB_OUT)/neuron; \
	fi
	cd $(DEB_OUT)/neuron && DEB_BUILD_OPTIONS="nocheck $(DEB_BUILD_OPTIONS)" \
		dpkg-buildpackage -us -uc -b -j2
	@ls $(DEB_OUT)/*.deb

.PHONY: all setup module userspace qemu kernel-image selftests deb demo shell check performance clean
