#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's promtool (from the bookworm package `prometheus`), for checking
# neuron-nq metrics' Prometheus text files (docs/metrics.md#validation).
# The package is 96 MB and starts a daemon when installed, so it is not
# installed: `apt-get download` fetches the .deb once and `dpkg-deb -x`
# extracts it into $NEURON_CACHE/promtool-VERSION/ (keyed by the version,
# filled under a lock, like selftests/vm/trace-payload.sh does for perf);
# only usr/bin/promtool is kept. Prints the binary's path on the last line.
#
# Usage: scripts/fetch-promtool.sh
set -euo pipefail
cache=${NEURON_CACHE:-/var/cache/neuron}
die() { echo "fetch-promtool: $*" >&2; exit 1; }
. "$(dirname "$0")/deb-fetch.sh"

ver=$(apt-cache policy prometheus 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	apt-get update -q >/dev/null 2>&1 || true
	ver=$(apt-cache policy prometheus 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
fi
[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "apt knows no package prometheus (apt-get update?)"
d=$cache/promtool-$ver
if [ ! -x "$d/promtool" ]; then
	deb_lock fetch-promtool
	if [ ! -x "$d/promtool" ]; then
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		deb_download "$tmp" "prometheus=$ver"
		dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
		[ -x "$tmp/x/usr/bin/promtool" ] || die "no usr/bin/promtool in prometheus_$ver"
		rm -rf "$d.tmp" "$d"
		mkdir -p "$d.tmp"
		cp "$tmp/x/usr/bin/promtool" "$d.tmp/promtool"
		mv "$d.tmp" "$d"
	fi
fi
"$d/promtool" --version >/dev/null 2>&1 || die "$d/promtool does not run"
echo "$d/promtool"
