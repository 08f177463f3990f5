#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetches the kernel's YNL tool and netlink schemas from Debian's
# linux-source-6.12 without installing it (the package is a 150 MB source
# tarball in /usr/src): downloads the .deb, extracts only tools/net/ynl/ and
# Documentation/netlink/ (cli.py, lib/, genetlink*.yaml, the kernel's specs)
# into the cache and prints that directory, a small kernel tree:
#   DIR/tools/net/ynl/cli.py   DIR/Documentation/netlink/genetlink-legacy.yaml
# Used by scripts/check-ynl.sh (the spec against the schema, on the host) and
# selftests/vm/lane-6.12.sh (cli.py against the live family in the guest);
# docs/architecture.md#ynl-spec.
#
# Usage: fetch-ynl.sh
# Cache: $NEURON_CACHE (default /var/cache/neuron)/ynl-VERSION/, VERSION the
# package's (the newest one already cached, else apt's candidate: bookworm's
# security suite carries linux-source-6.12, bookworm-backports too).
set -euo pipefail
cache=${NEURON_CACHE:-/var/cache/neuron}
pkg=linux-source-6.12

die() { echo "fetch-ynl: $*" >&2; exit 1; }
. "$(dirname "$0")/../../scripts/deb-fetch.sh"

newest_cached() {
	local d
	for d in "$cache"/ynl-6.12*; do
		if [ -f "$d/.done" ]; then basename "$d" | sed 's/^ynl-//'; fi
	done | sort -V | tail -1
}

candidate() {
	apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2; exit }'
}

ver=$(newest_cached)
if [ -z "$ver" ]; then
	ver=$(candidate)
	[ -n "$ver" ] || { apt-get update -q >/dev/null 2>&1; ver=$(candidate); }
	[ -n "$ver" ] || die "apt knows no $pkg (apt sources: scripts/setup-host.sh)"
fi
dir=$cache/ynl-$ver
[ -f "$dir/.done" ] || deb_lock fetch-ynl
if [ ! -f "$dir/.done" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	deb_download "$tmp" "$pkg=$ver"
	rm -rf "$dir"
	mkdir -p "$tmp/x"
	# the .deb holds usr/src/linux-source-6.12.tar.xz: stream it, keep two dirs
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.12_*.deb |
		tar -xO ./usr/src/linux-source-6.12.tar.xz |
		tar -xJ -C "$tmp/x" --strip-components=1 --wildcards \
			'linux-source-6.12/tools/net/ynl/*' 'linux-source-6.12/Documentation/netlink/*' ||
		die "cannot extract tools/net/ynl from $pkg $ver"
	[ -f "$tmp/x/tools/net/ynl/cli.py" ] && [ -f "$tmp/x/Documentation/netlink/genetlink-legacy.yaml" ] ||
		die "$pkg $ver has no tools/net/ynl/cli.py or genetlink-legacy.yaml"
	mv "$tmp/x" "$dir"
	touch "$dir/.done"
fi
echo "$dir"
