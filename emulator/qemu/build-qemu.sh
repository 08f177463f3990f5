#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds qemu-system-x86_64 with the neuron-tpb device model from Debian's
# qemu source package (docs/build-environment.md#qemu-source). The result is
# cached outside the repository, keyed by the hash of emulator/qemu,
# include/neuron/ and include/uapi/linux/neuron_record.h, neuron.h and neuron_isa.h (the
# device model's sources) and emulator/tests/qtest/neuron-tpb-test.c (its qtest), so a
# second build with unchanged sources is a no-op. The configured build tree is kept too, so a changed device
# model rebuilds incrementally (seconds).
#
# Concurrent runs (several worktrees) serialise on $cache/build.lock.
#
# The device model's qtest (emulator/tests/qtest/neuron-tpb-test.c) is built
# in the same tree, against QEMU's libqtest and libqos, and cached next to the
# binary: $(dirname "$(build-qemu.sh | tail -1)")/neuron-tpb-test
# (docs/architecture.md#qtest).
#
# Usage: build-qemu.sh [--no-qtest]   build if needed, print the binary's path last
#   --no-qtest: QEMU only (make demo); a later call without it builds the
#   qtest into the same cache directory from the kept tree (seconds)
# Env:   NEURON_CACHE (default /var/cache/neuron)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${NEURON_CACHE:-/var/cache/neuron}
src=$cache/qemu-src
build=$src/build

qtest=1
[ "${1:-}" = --no-qtest ] && qtest=0
key=$( (cd "$top" && find emulator/qemu emulator/tests/qtest/neuron-tpb-test.c include/neuron \
	include/uapi/linux/neuron_record.h include/uapi/linux/neuron.h include/uapi/linux/neuron_isa.h \
	-type f -print0 | sort -z |
	xargs -0 sha256sum) | sha256sum | cut -c1-16)
out=$cache/qemu-$key
cached() { [ -x "$out/qemu-system-x86_64" ] && { [ $qtest -eq 0 ] || [ -x "$out/neuron-tpb-test" ]; }; }
if cached; then
	echo "build-qemu: cached ($out)" >&2
	echo "$out/qemu-system-x86_64"
	exit 0
fi

mkdir -p "$cache"
# One build at a time: worktrees share $src and its build tree, and the copy
# below would otherwise mix one worktree's sources into another's build. The
# lock is held (fd 9) until the script exits; whoever waited re-checks the
# cache, since the build it waited for may have been this very key.
exec 9>"$cache/build.lock"
if ! flock -n 9; then
	echo "build-qemu: waiting for another build ($cache/build.lock)" >&2
	flock 9
fi
if cached; then
	echo "build-qemu: cached ($out)" >&2
	echo "$out/qemu-system-x86_64"
	exit 0
fi

if [ ! -f "$src/.neuron-unpacked" ]; then
	echo "build-qemu: fetching Debian's qemu source" >&2
	rm -rf "$src" "$cache/dl"
	mkdir -p "$cache/dl"
	(cd "$cache/dl" && apt-get source --download-only qemu >/dev/null)
	# dpkg-source applies Debian's patches; the bare .orig fails
	# (docs/build-environment.md#qemu-source)
	dpkg-source -x "$cache"/dl/qemu_*.dsc "$src" >/dev/null
	rm -rf "$cache/dl"
	touch "$src/.neuron-unpacked"
fi

# The build hook: our device files and headers into the tree, one meson line.
# include/neuron/*.h reach the UAPI record header as ../uapi/linux/, so it
# keeps that place in the copy; the UAPI header beside it gives the model
# the limits the driver checks against (NEURON_NQ_COALESCE_NS_MAX).
mkdir -p "$src/hw/misc/neuron" "$src/include/neuron" "$src/include/uapi/linux"
rsync_like() { # copy only what changed, so ninja rebuilds only that
	local from=$1 to=$2 f
	for f in "$from"/*; do
		[ -f "$f" ] || continue
		cmp -s "$f" "$to/$(basename "$f")" || cp "$f" "$to/"
	done
}
rsync_like "$here/hw" "$src/hw/misc/neuron"
rsync_like "$top/include/neuron" "$src/include/neuron"
for f in neuron_record.h neuron.h neuron_isa.h; do
	cmp -s "$top/include/uapi/linux/$f" "$src/include/uapi/linux/$f" ||
		cp "$top/include/uapi/linux/$f" "$src/include/uapi/linux/"
done
if ! grep -q "subdir('neuron')" "$src/hw/misc/meson.build"; then
	echo "subdir('neuron')" >>"$src/hw/misc/meson.build"
fi
# The qtest: one file into tests/qtest/ and one executable() line at the end
# of its meson.build (after QEMU's own loop over the qtests, so it is not a
# meson test() of every target: this script builds it by name).
cmp -s "$top/emulator/tests/qtest/neuron-tpb-test.c" "$src/tests/qtest/neuron-tpb-test.c" ||
	cp "$top/emulator/tests/qtest/neuron-tpb-test.c" "$src/tests/qtest/"
if ! grep -q "neuron-tpb-test" "$src/tests/qtest/meson.build"; then
	cat >>"$src/tests/qtest/meson.build" <<'EOF'
# neuron-tpb's qtest (added by the neuron project's build-qemu.sh)
executable('neuron-tpb-test', files('neuron-tpb-test.c'),
           dependencies: [qemuutil, qos], build_by_default: false)
EOF
fi

# Only the devices the guests use (devices.mak): no default features, no
# default devices; no debug information, which costs a sixth of the
# compiler's time (a backtrace still names the functions;
# docs/decisions/0030-check-budget.md). A build tree configured otherwise is
# configured again.
cmp -s "$here/devices.mak" "$src/configs/devices/x86_64-softmmu/neuron.mak" ||
	cp "$here/devices.mak" "$src/configs/devices/x86_64-softmmu/neuron.mak"
configure_args=(--target-list=x86_64-softmmu --without-default-features
	--without-default-devices --with-devices-x86_64=neuron
	--disable-docs --disable-werror --disable-install-blobs --disable-debug-info)
if [ "$(cat "$build/.neuron-configure" 2>/dev/null)" != "${configure_args[*]}" ]; then
	rm -rf "$build"
fi
if [ ! -f "$build/build.ninja" ]; then
	echo "build-qemu: configuring" >&2
	mkdir -p "$build"
	(cd "$build" && ../configure "${configure_args[@]}" >"$cache/configure.log" 2>&1) || {
		tail -30 "$cache/configure.log" >&2
		exit 1
	}
	echo "${configure_args[*]}" >"$build/.neuron-configure"
fi

echo "build-qemu: building (a cold build takes about 3 minutes on 2 cores)" >&2
targets=(qemu-system-x86_64)
[ $qtest -eq 1 ] && targets+=(tests/qtest/neuron-tpb-test)
ninja -C "$build" -j"$(nproc)" "${targets[@]}" >"$cache/ninja.log" 2>&1 || {
	grep -B2 -A12 -m3 'error' "$cache/ninja.log" >&2 || tail -40 "$cache/ninja.log" >&2
	exit 1
}
mkdir -p "$out.tmp"
cp "$build/qemu-system-x86_64" "$out.tmp/"
[ $qtest -eq 1 ] && cp "$build/tests/qtest/neuron-tpb-test" "$out.tmp/"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out/qemu-system-x86_64"
