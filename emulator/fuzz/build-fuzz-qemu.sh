#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds QEMU's libFuzzer binary (qemu-fuzz-x86_64) with the neuron-tpb
# device model and our structure-aware target (emulator/fuzz/*.c), with ASan
# and UBSan, from the same Debian qemu 7.2 source as build-qemu.sh
# (docs/decisions/0049-device-model-fuzzing.md#fuzz-build).
#
# It never touches build-qemu.sh's tree ($cache/qemu-src/build): it copies
# that unpacked source (under $cache/build.lock, the only step that reads the
# shared tree) to its own $cache/qemu-fuzz-src once, and configures
# $cache/qemu-fuzz-src/build with clang-16 --enable-fuzzing
# --enable-sanitizers. The binary is cached as
# $cache/qemu-fuzz-<key>/qemu-fuzz-x86_64, keyed by the hash of the device
# model's sources, the fuzz target and this script, so a second build is a
# no-op and a changed model rebuilds incrementally in the kept tree.
#
# Usage: build-fuzz-qemu.sh      build if needed, print the binary's path last
# Env:   NEURON_CACHE (default /var/cache/neuron)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${NEURON_CACHE:-/var/cache/neuron}
src=$cache/qemu-fuzz-src
build=$src/build

key=$( (cd "$top" && find emulator/qemu emulator/fuzz/build-fuzz-qemu.sh emulator/fuzz/neuron_tpb_fuzz.c \
	include/neuron include/uapi/linux/neuron_record.h include/uapi/linux/neuron.h \
	include/uapi/linux/neuron_isa.h -type f -print0 | sort -z |
	xargs -0 sha256sum) | sha256sum | cut -c1-16)
out=$cache/qemu-fuzz-$key
if [ -x "$out/qemu-fuzz-x86_64" ]; then
	echo "build-fuzz-qemu: cached ($out)" >&2
	echo "$out/qemu-fuzz-x86_64"
	exit 0
fi

mkdir -p "$cache"
# One fuzz build at a time (worktrees share $src); whoever waited re-checks
# the cache.
exec 8>"$cache/fuzz-build.lock"
if ! flock -n 8; then
	echo "build-fuzz-qemu: waiting for another fuzz build" >&2
	flock 8
fi
if [ -x "$out/qemu-fuzz-x86_64" ]; then
	echo "build-fuzz-qemu: cached ($out)" >&2
	echo "$out/qemu-fuzz-x86_64"
	exit 0
fi

if [ ! -f "$src/.neuron-unpacked" ]; then
	# The unpacked, Debian-patched source comes from build-qemu.sh's tree;
	# unpack it first if nobody has yet.
	[ -f "$cache/qemu-src/.neuron-unpacked" ] || "$top/emulator/qemu/build-qemu.sh" --no-qtest >/dev/null
	echo "build-fuzz-qemu: copying the qemu source" >&2
	rm -rf "$src"
	mkdir -p "$src"
	(
		flock 9
		tar -C "$cache/qemu-src" --exclude=./build -cf - . | tar -C "$src" -xf -
	) 9>"$cache/build.lock"
	touch "$src/.neuron-unpacked"
fi

copy_if_changed() { # copy only what changed, so ninja rebuilds only that
	local f=$1 to=$2
	cmp -s "$f" "$to/$(basename "$f")" || cp "$f" "$to/"
}
mkdir -p "$src/hw/misc/neuron" "$src/include/neuron" "$src/include/uapi/linux"
for f in "$top"/emulator/qemu/hw/*; do copy_if_changed "$f" "$src/hw/misc/neuron"; done
for f in "$top"/include/neuron/*; do copy_if_changed "$f" "$src/include/neuron"; done
for f in neuron_record.h neuron.h neuron_isa.h; do
	copy_if_changed "$top/include/uapi/linux/$f" "$src/include/uapi/linux"
done
grep -q "subdir('neuron')" "$src/hw/misc/meson.build" ||
	echo "subdir('neuron')" >>"$src/hw/misc/meson.build"
copy_if_changed "$here/neuron_tpb_fuzz.c" "$src/tests/qtest/fuzz"
grep -q neuron_tpb_fuzz "$src/tests/qtest/fuzz/meson.build" ||
	sed -i "s|^specific_fuzz_ss.add(files('generic_fuzz.c'))|&\nspecific_fuzz_ss.add(files('neuron_tpb_fuzz.c'))|" \
		"$src/tests/qtest/fuzz/meson.build"
grep -q neuron_tpb_fuzz "$src/tests/qtest/fuzz/meson.build" || {
	echo "build-fuzz-qemu: could not hook neuron_tpb_fuzz.c into tests/qtest/fuzz/meson.build" >&2
	exit 1
}
cmp -s "$top/emulator/qemu/devices.mak" "$src/configs/devices/x86_64-softmmu/neuron.mak" ||
	cp "$top/emulator/qemu/devices.mak" "$src/configs/devices/x86_64-softmmu/neuron.mak"

# As build-qemu.sh (only our devices, no debug information), plus clang's
# libFuzzer and ASan+UBSan. Debug information would help ASan's reports
# name lines, but it costs a sixth of the compile time; function names
# are enough to start from.
configure_args=(--cc=clang-16 --cxx=clang++-16 --enable-fuzzing --enable-sanitizers
	--target-list=x86_64-softmmu --without-default-features
	--without-default-devices --with-devices-x86_64=neuron
	--disable-docs --disable-werror --disable-install-blobs --disable-debug-info)
if [ "$(cat "$build/.neuron-configure" 2>/dev/null)" != "${configure_args[*]}" ]; then
	rm -rf "$build"
fi
if [ ! -f "$build/build.ninja" ]; then
	echo "build-fuzz-qemu: configuring" >&2
	mkdir -p "$build"
	(cd "$build" && ../configure "${configure_args[@]}" >"$cache/fuzz-configure.log" 2>&1) || {
		tail -30 "$cache/fuzz-configure.log" >&2
		exit 1
	}
	echo "${configure_args[*]}" >"$build/.neuron-configure"
fi

echo "build-fuzz-qemu: building (a cold build takes about 25 minutes on 2 busy cores)" >&2
ninja -C "$build" -j"$(nproc)" qemu-fuzz-x86_64 >"$cache/fuzz-ninja.log" 2>&1 || {
	grep -B2 -A12 -m3 'error' "$cache/fuzz-ninja.log" >&2 || tail -40 "$cache/fuzz-ninja.log" >&2
	exit 1
}
mkdir -p "$out.tmp"
cp "$build/qemu-fuzz-x86_64" "$out.tmp/"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out/qemu-fuzz-x86_64"
