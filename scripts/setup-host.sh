#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs everything the build and the tests need on a fresh Debian 12 host.
# Idempotent: does nothing (beyond a dpkg query) once all is in place.
# Must run as root; `make check` calls it first, `make demo` with --demo (only
# what the demo builds: a newcomer's first command installs no test tools).
# Usage: setup-host.sh [--demo]
set -euo pipefail

# What `make demo` needs: the module, the guest, QEMU, neuron-nq.
DEMO_PKGS=(
	# kernel module and guest kernel
	build-essential kmod cpio linux-headers-amd64
	# guest userland: busybox for init, pciutils for lspci -vv
	busybox-static pciutils
	# QEMU from Debian's source package
	# (docs/build-environment.md#qemu-source), firmware/ROMs
	dpkg-dev ninja-build meson libglib2.0-dev libpixman-1-dev libfdt-dev
	flex bison pkg-config python3-venv seabios qemu-system-data
	# libneuron and neuron-nq
	cmake g++ libmnl-dev nlohmann-json3-dev libcli11-dev libfmt-dev
	# compiler cache under the project cache (scripts/ccache-env.sh)
	ccache
)

# What `make check` needs on top.
CHECK_PKGS=(
	# the debug-lane kernel and checkpatch.pl; iproute2 for genl in the guest
	linux-source-6.1 iproute2
	# libneuron's tests and benchmarks
	libgtest-dev libgmock-dev libbenchmark-dev
	# DKMS packaging and static analysis (sparse for C=1; checkpatch.pl
	# comes from linux-source-6.1); udev: the DKMS test applies the
	# device-node rule (udev/60-neuron.rules) with the host's udevd in the VM
	dkms sparse udev
	# the 6.12 headers' BTF step for modules (pahole), and the debug-lane
	# kernel build from linux-source-6.1 (objtool needs libelf)
	dwarves libelf-dev bc xz-utils
	# the YNL spec: the kernel's YNL library validates it with jsonschema
	# (scripts/check-ynl.sh), and the 6.12 lane copies them into the guest
	python3-yaml python3-jsonschema
	# the driver's tracepoints, read in the VM by trace-cmd and by perf
	# (6.1's linux-perf; selftests/vm/trace-payload.sh downloads 6.12's)
	trace-cmd linux-perf
	# the Debian packages (make deb, debian/;
	# docs/decisions/0023-packaging.md): debhelper with dh-sequence-dkms
	# (dh-dkms), help2man for neuron-nq's man page, lintian, autopkgtest
	# (run with its null virt server), adduser for neuron-dkms's postinst
	debhelper dh-dkms help2man lintian autopkgtest adduser
	# docs/performance.md's plots (scripts/perf-report.py)
	python3-matplotlib
	# the neuron Python module over the C API (userspace/python,
	# docs/decisions/0045-python-cffi.md) and its pytest tests
	python3-cffi python3-numpy python3-pytest
	# `make shell` driven in a real terminal (selftests/vm/shell-tmux.sh)
	tmux
	# libneuron.so's ABI against the committed dump: abidw, abidiff
	# (userspace/tests/check-abi.sh, userspace/README.md#versions)
	abigail-tools
	# the Kubernetes device plugin (userspace/k8s, docs/k8s.md): gRPC C++ and
	# protobuf with their code generators; the fake kubelet and PodResources
	# server of its tests are Python (Debian's grpcio and protobuf)
	libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
	python3-grpcio python3-protobuf
	# neuron-dra-plugin talks to the API server over HTTPS with libcurl
	# (docs/decisions/0043-dra-driver.md)
	libcurl4-openssl-dev
	# the CDI project's JSON schema (schema/schema.json, defs.json under
	# /usr/share/gocode), which k8s.fake_kubelet and k8s.cdi_generate validate
	# every CDI spec against, with python3-jsonschema (listed above)
	golang-github-container-orchestrated-devices-container-device-interface-dev
	# the device plugin's OCI image (scripts/build-image.sh,
	# docs/decisions/0042-plugin-image.md): umoci packs the rootfs assembled
	# from Debian's .debs into an OCI layout; skopeo reads it back in the
	# test (scripts/check-image.sh) as a second, independent reader
	umoci skopeo
	# coverage-guided fuzzing of libneuron's parsers (userspace/fuzz/run-fuzz.sh):
	# clang 16 with libFuzzer and the ASan/UBSan runtimes (libclang-rt-16-dev,
	# only a Recommends of clang-16, holds -fsanitize=fuzzer's runtime), and
	# llvm-16 for llvm-symbolizer: a finding's stack with files and lines
	clang-16 libfuzzer-16-dev libclang-rt-16-dev llvm-16
	# what the host tests reach in libneuron: userspace/run-coverage.sh
	# (docs/robustness.md#coverage; the kernel's figures need only gcc's gcov)
	gcovr
)

STAMP_PKGS=("${DEMO_PKGS[@]}")
[ "${1:-}" = --demo ] || STAMP_PKGS+=("${CHECK_PKGS[@]}")

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-host: must run as root (apt-get install)" >&2
	exit 1
fi

missing=()
for p in "${STAMP_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
# the Kubernetes manifests' validator (scripts/check-manifests.sh) runs on
# node with npm packages: Debian's npm (with its nodejs) unless an npm is
# already there (a nodejs from elsewhere that ships npm conflicts with
# Debian's). Its kubectl is Debian's kubernetes-client, taken out of the
# .deb by scripts/fetch-kubectl.sh, not installed.
if [ "${1:-}" != --demo ] && ! command -v npm >/dev/null; then
	missing+=(npm)
fi

src_list=/etc/apt/sources.list.d/neuron-deb-src.sources
need_update=0
if [ ! -f "$src_list" ]; then
	# deb-src for bookworm main: `apt-get source qemu` needs it
	# (docs/build-environment.md#qemu-source).
	cat >"$src_list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	need_update=1
fi

# bookworm-backports, for its 6.12 kernel (selftests/vm/fetch-kernel.sh 6.12
# downloads the image and headers from it into the cache; nothing from it is
# installed). Backports' archive is NotAutomatic/ButAutomaticUpgrades, so its
# default pin priority (100) upgrades nothing else on the host.
bpo_list=/etc/apt/sources.list.d/neuron-backports.sources
if [ ! -f "$bpo_list" ]; then
	cat >"$bpo_list" <<'BPO'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
BPO
	need_update=1
fi

if [ ${#missing[@]} -gt 0 ] || [ $need_update -eq 1 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	if [ ${#missing[@]} -gt 0 ]; then
		echo "setup-host: installing ${missing[*]}"
		apt-get install -y -q --no-install-recommends "${missing[@]}"
	fi
fi
echo "setup-host: host packages in place"
