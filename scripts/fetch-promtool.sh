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

d=$(deb_binary prometheus promtool)
"$d/promtool" --version >/dev/null 2>&1 || die "$d/promtool does not run"
echo "$d/promtool"
