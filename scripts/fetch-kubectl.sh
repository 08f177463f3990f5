#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's kubectl (from the bookworm package `kubernetes-client`), whose
# `kubectl kustomize` renders deploy/base offline for scripts/check-manifests.sh.
# Not installed: the package's /usr/bin/kubectl would replace (or clash with)
# a kubectl the host already has from elsewhere, and the check needs only
# the binary. As scripts/fetch-promtool.sh does, `apt-get download` fetches
# the .deb once and `dpkg-deb -x` extracts it into
# $NEURON_CACHE/kubectl-VERSION/ (keyed by the version, filled under a lock);
# only usr/bin/kubectl is kept. Prints the binary's path on the last line.
#
# Usage: scripts/fetch-kubectl.sh
set -euo pipefail
cache=${NEURON_CACHE:-/var/cache/neuron}
die() { echo "fetch-kubectl: $*" >&2; exit 1; }
. "$(dirname "$0")/deb-fetch.sh"

d=$(deb_binary kubernetes-client kubectl)
"$d/kubectl" version --client >/dev/null 2>&1 || die "$d/kubectl does not run"
echo "$d/kubectl"
