#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetches Debian's guest kernel image matching the installed 6.1 headers and
# extracts it into the cache without installing it (installing would rebuild
# the host's initramfs for nothing; ENVIRONMENT.md). Prints the vmlinuz path.
#
# Usage: fetch-kernel.sh [KVER]   (default: the newest 6.1 headers installed)
set -euo pipefail
cache=${NEURON_CACHE:-/var/cache/neuron}
kver=${1:-$(ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -1 |
	cut -d/ -f4)}
[ -n "$kver" ] || { echo "fetch-kernel: no 6.1 kernel headers installed" >&2; exit 1; }
dir=$cache/kernel-$kver
if [ ! -f "$dir/vmlinuz" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download "linux-image-$kver" >/dev/null 2>&1) || {
		echo "fetch-kernel: apt-get download linux-image-$kver failed" >&2
		exit 1
	}
	dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/x"
	mkdir -p "$dir"
	cp "$tmp/x/boot/vmlinuz-$kver" "$dir/vmlinuz"
	# modules the guest may need (none today; kept for genl/debug tools)
	cp -a "$tmp/x/lib/modules/$kver" "$dir/modules"
fi
echo "$dir/vmlinuz"
