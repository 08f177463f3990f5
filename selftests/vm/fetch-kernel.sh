#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetches a Debian guest kernel and extracts it into the cache without
# installing it (installing would rebuild the host's initramfs for nothing;
# docs/build-environment.md#guest-kernel). Prints the vmlinuz path, or with
# --headers the kernel build tree to pass as KDIR to `make -C kernel`.
#
# Usage: fetch-kernel.sh [--headers] [KVER | SERIES]
#   (none), 6.1   the newest Debian 6.1 kernel whose headers are installed
#                 (linux-headers-amd64, scripts/setup-host.sh): KDIR is
#                 /lib/modules/KVER/build
#   6.12          bookworm-backports' 6.12 kernel (the version that
#                 backports' linux-headers-amd64 depends on, or the one
#                 already in the cache). Its headers are fetched and extracted
#                 into the cache too (the package would pull in and install
#                 the image): KDIR is $cache/kernel-KVER/headers
#   KVER          that exact kernel, e.g. 6.1.0-57-amd64 or 6.12.95+deb12-amd64
#
# Cache: $NEURON_CACHE (default /var/cache/neuron)/kernel-KVER/{vmlinuz,modules,
# headers}. Needs the apt lists (and bookworm-backports for 6.12).
set -euo pipefail
cache=${NEURON_CACHE:-/var/cache/neuron}
want=vmlinuz
[ "${1:-}" = "--headers" ] && { want=headers; shift; }
arg=${1:-6.1}

die() { echo "fetch-kernel: $*" >&2; exit 1; }
. "$(dirname "$0")/../../scripts/deb-fetch.sh"

# newest_cached SERIES: the newest kernel of SERIES already complete in the cache
newest_cached() {
	local d
	for d in "$cache"/kernel-"$1".*-amd64; do
		if [ -f "$d/.headers-done" ]; then basename "$d" | sed "s/^kernel-//"; fi
	done | sort -V | tail -1
}

# bpo_kver: the ABI name that backports' linux-headers-amd64 depends on
bpo_kver() {
	apt-cache show linux-headers-amd64 2>/dev/null |
		awk '/^Version: .*~bpo12/ { bpo = 1; next } /^Version:/ { bpo = 0 }
		     bpo && /^Depends:/ { if (match($0, /linux-headers-6\.12[^ ,]*-amd64/))
			print substr($0, RSTART + 14, RLENGTH - 14); exit }'
}

case $arg in
6.1)
	kver=$(ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -1 | cut -d/ -f4)
	[ -n "$kver" ] || die "no 6.1 kernel headers installed (scripts/setup-host.sh)"
	;;
6.12)
	kver=$(newest_cached 6.12)
	if [ -z "$kver" ]; then
		kver=$(bpo_kver)
		# lists older than the backports source, or never fetched
		[ -n "$kver" ] || { apt-get update -q >/dev/null 2>&1; kver=$(bpo_kver); }
		[ -n "$kver" ] || die "bookworm-backports has no 6.12 linux-headers-amd64 (apt sources: scripts/setup-host.sh)"
	fi
	;;
*) kver=$arg ;;
esac

dir=$cache/kernel-$kver
# the headers come from apt when installed, else from the cache
if [ -d "/lib/modules/$kver/build" ] && [ ! -f "$dir/.headers-done" ]; then
	kdir=/lib/modules/$kver/build
else
	kdir=$dir/headers
	need_headers=1
fi

if [ ! -f "$dir/vmlinuz" ] || { [ -n "${need_headers:-}" ] && [ ! -f "$dir/.headers-done" ]; }; then
	deb_lock fetch-kernel
fi

tmp=""
cleanup() { [ -z "$tmp" ] || rm -rf "$tmp"; }
trap cleanup EXIT

if [ ! -f "$dir/vmlinuz" ]; then
	tmp=$(mktemp -d)
	# 6.12 only comes as -unsigned plus a signed twin; either has the vmlinuz
	img=linux-image-$kver
	apt-cache show "$img" >/dev/null 2>&1 || img=$img-unsigned
	deb_download "$tmp" "$img"
	dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/x"
	mkdir -p "$dir"
	rm -rf "$dir/modules"
	# modules the guest may need (none today; kept for genl/debug tools)
	cp -a "$tmp/x/lib/modules/$kver" "$dir/modules"
	cp "$tmp/x/boot/vmlinuz-$kver" "$dir/vmlinuz.tmp"
	mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
	rm -rf "$tmp"
	tmp=""
fi

if [ -n "${need_headers:-}" ] && [ ! -f "$dir/.headers-done" ]; then
	tmp=$(mktemp -d)
	# linux-headers-KVER with the -common and linux-kbuild packages it needs
	deps=$(apt-cache show "linux-headers-$kver" 2>/dev/null | awk '/^Depends:/ { print; exit }' |
		grep -oE 'linux-(headers-[^ ,]*-common|kbuild-[^ ,]*)' | sort -u) ||
		die "no package linux-headers-$kver"
	# shellcheck disable=SC2086 # one word per package
	deb_download "$tmp" "linux-headers-$kver" $deps
	rm -rf "$dir/root" "$dir/headers"
	for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$dir/root"; done
	# the arch Makefile includes the -common one by absolute path; scripts
	# and tools are relative links into usr/lib/linux-kbuild-*, kept inside
	hdr=$dir/root/usr/src/linux-headers-$kver
	[ -f "$hdr/Makefile" ] || die "linux-headers-$kver has no $hdr/Makefile"
	sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" "$hdr/Makefile"
	ln -sfn "root/usr/src/linux-headers-$kver" "$dir/headers"
	touch "$dir/.headers-done"
fi

if [ "$want" = headers ]; then
	echo "$kdir"
else
	echo "$dir/vmlinuz"
fi
