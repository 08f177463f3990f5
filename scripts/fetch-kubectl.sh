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

ver=$(apt-cache policy kubernetes-client 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	apt-get update -q >/dev/null 2>&1 || true
	ver=$(apt-cache policy kubernetes-client 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
fi
[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "apt knows no package kubernetes-client (apt-get update?)"
d=$cache/kubectl-$ver
if [ ! -x "$d/kubectl" ]; then
	deb_lock fetch-kubectl
	if [ ! -x "$d/kubectl" ]; then
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		deb_download "$tmp" "kubernetes-client=$ver"
		dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$tmp/x"
		[ -x "$tmp/x/usr/bin/kubectl" ] || die "no usr/bin/kubectl in kubernetes-client_$ver"
		rm -rf "$d.tmp" "$d"
		mkdir -p "$d.tmp"
		cp "$tmp/x/usr/bin/kubectl" "$d.tmp/kubectl"
		mv "$d.tmp" "$d"
	fi
fi
"$d/kubectl" version --client >/dev/null 2>&1 || die "$d/kubectl does not run"
echo "$d/kubectl"
