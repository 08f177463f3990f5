#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the debug-lane guest kernel (KASAN, lockdep, KFENCE, kmemleak,
# DEBUG_ATOMIC_SLEEP) from Debian's linux-source-6.1, with `make allnoconfig`
# plus debug.config beside this script, and caches it like QEMU:
#
#   $NEURON_CACHE/debug-kernel-<hash>/bzImage   the guest kernel
#   $NEURON_CACHE/debug-kernel-<hash>/build     the build tree (KDIR for M=)
#
# <hash> covers debug.config, this script and the linux-source-6.1 version,
# so changing any of them builds a new kernel and an unchanged one is reused.
# Prints the cache directory on its last line. Cold build: about 6 minutes
# with -j2 on the 2-core CI machine (measured 350-370 s; the lane itself is
# selftests/vm/lane-debug.sh).
#
# Usage: build.sh [-j N]     (default -j2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${NEURON_CACHE:-/var/cache/neuron}
jobs=2
[ "${1:-}" = "-j" ] && jobs=$2
tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || { echo "debug-kernel: $tarball missing (linux-source-6.1; scripts/setup-host.sh)" >&2; exit 1; }

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || stat -c %s "$tarball")
hash=$( { cat "$here/debug.config" "$here/build.sh"; echo "$srcver"; } | sha256sum | cut -c1-16)
out=$cache/debug-kernel-$hash
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/debug-kernel.lock"
flock 9 # one build at a time; a concurrent caller waits and reuses it
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

t0=$(date +%s)
tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
echo "debug-kernel: extracting $tarball" >&2
# the documentation is never read by a build (Kconfig sources every
# architecture's crypto/Kconfig, so arch/ stays whole)
tar -C "$tmp" -xf "$tarball" --exclude='linux-source-6.1/Documentation/*/*'
mv "$tmp/linux-source-6.1" "$tmp/build"
src=$tmp/build

make -C "$src" -s KCONFIG_ALLCONFIG="$here/debug.config" allnoconfig >&2
make -C "$src" -s olddefconfig >&2
# every option the fragment asks for must have survived the dependency
# resolution: a silently dropped KASAN would make the lane prove nothing
bad=0
while IFS= read -r line; do
	case $line in CONFIG_*=*) ;; *) continue ;; esac
	opt=${line%%=*} val=${line#*=}
	if [ "$val" = n ]; then
		grep -q "^$opt=" "$src/.config" && { echo "debug-kernel: $opt is on, wanted off" >&2; bad=1; }
	else
		grep -qx "$line" "$src/.config" || {
			echo "debug-kernel: $line did not stick (now: $(grep "^$opt=\|^# $opt " "$src/.config" || echo unset))" >&2
			bad=1
		}
	fi
done <"$here/debug.config"
[ $bad -eq 0 ] || { echo "debug-kernel: config fragment not satisfied" >&2; exit 1; }

echo "debug-kernel: building bzImage with -j$jobs (log: $tmp/build.log)" >&2
if ! make -C "$src" -j"$jobs" bzImage modules >"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log" >&2
	echo "debug-kernel: build failed" >&2
	exit 1
fi
cp "$src/arch/x86/boot/bzImage" "$tmp/bzImage"
# keep what an M= build reads (the top Makefile, .config, include/,
# arch/x86/, scripts/, tools/objtool, Module.symvers, every Makefile/Kconfig/
# Kbuild) and vmlinux/System.map for decoding reports: 1.5 GB -> 300 MB
find "$src" -name '*.o' ! -path "$src/scripts/*" ! -path "$src/tools/*" -delete
(cd "$src" && find drivers fs net sound mm kernel lib crypto block security virt \
	ipc init io_uring certs samples usr rust Documentation \
	$(ls -d arch/* | grep -v -e '^arch/x86$' -e '^arch/Kconfig$') \
	-type f ! -name 'Makefile*' ! -name 'Kconfig*' ! -name 'Kbuild*' -delete 2>/dev/null || true
	find . -depth -type d -empty -delete)
echo "$(($(date +%s) - t0))" >"$tmp/build-seconds"
touch "$tmp/.done"
rm -rf "$out"
mv "$tmp" "$out"
# kernels of earlier fragments or scripts are not used again (300 MB each)
for old in "$cache"/debug-kernel-*; do
	[ "$old" = "$out" ] || [ "$old" = "$cache/debug-kernel.lock" ] || rm -rf "$old"
done
# the tree was built in $tmp: kbuild records no absolute paths an M= build
# depends on, so the renamed tree works as KDIR
echo "debug-kernel: built in $(cat "$out/build-seconds") s" >&2
echo "$out"
