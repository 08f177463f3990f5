#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The DRA lane (docs/k8s.md#dra-tests), as TAP: neuron-dra-plugin on three
# fake nodes against a fake API server that validates every object with
# the resource.k8s.io/v1 schema of npm's kubernetes-models
# (userspace/k8s/tests/dra-npm, pinned by its package-lock.json), fake
# kubelets and a small allocator (userspace/k8s/tests/dra_lane.py).
# The npm packages are installed by `npm ci` into
# $NEURON_CACHE/dra-tests-HASH, keyed by the two files, `--offline` first.
#
# Usage: scripts/check-dra.sh [BUILD_DIR]   (default build; the plugin is
#        BUILD_DIR/userspace/neuron-dra-plugin)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
cache=${NEURON_CACHE:-/var/cache/neuron}
die() { echo "check-dra: $*" >&2; echo "not ok 1 k8s.dra.setup # $*"; exit 1; }

plugin=$build/userspace/neuron-dra-plugin
[ -x "$plugin" ] || die "no $plugin (make userspace builds it)"
command -v node >/dev/null && command -v npm >/dev/null ||
	die "no node/npm (scripts/setup-host.sh installs Debian's npm)"
npmdir=$top/userspace/k8s/tests/dra-npm
key=$(cat "$npmdir/package.json" "$npmdir/package-lock.json" | sha256sum | cut -c1-16)
mods=$cache/dra-tests-$key
if [ ! -d "$mods/node_modules" ]; then
	mkdir -p "$cache"
	exec {lk}>"$cache/dra-tests.lock"
	flock "$lk"
	if [ ! -d "$mods/node_modules" ]; then
		rm -rf "$mods.tmp"
		mkdir -p "$mods.tmp"
		cp "$npmdir/package.json" "$npmdir/package-lock.json" "$mods.tmp/"
		(cd "$mods.tmp" && { npm ci --offline --cache "$cache/npm-cache" --no-audit --no-fund >/dev/null 2>&1 ||
			npm ci --cache "$cache/npm-cache" --no-audit --no-fund >&2; }) ||
			die "npm ci of $npmdir/package-lock.json failed"
		mv "$mods.tmp" "$mods"
	fi
fi
exec /usr/bin/python3 "$top/userspace/k8s/tests/dra_lane.py" "$plugin" "$top/userspace/k8s/proto" \
	"$mods/node_modules" "$top"
