#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Kubernetes manifests an operator applies (deploy/base, docs/k8s.md#deploy),
# checked with no cluster, as TAP (docs/k8s.md#manifest-checks):
#   - Debian's `kubectl kustomize` (scripts/fetch-kubectl.sh) renders the base;
#   - deploy/tests/validate-manifests.js validates every rendered object
#     (kubernetes-models' Kubernetes schemas, no unknown field; the
#     NodeFeatureRule against NFD's CRD fields, by hand), the image and the
#     resource prefix set in one place, the NFD rule's PCI identity against
#     the headers, the DaemonSet's hardening, one line each;
#   - a negative control: the base with one field misspelled must fail,
#     naming the field;
#   - an overlay that sets another prefix and image renders and validates
#     (the prefix then the same in every place).
# Its npm packages (deploy/tests/package.json, pinned by package-lock.json)
# are installed by `npm ci` into $NEURON_CACHE/deploy-tests-HASH, keyed by
# the two files; `npm ci --offline` first, so a cached download is reused.
#
# Usage: scripts/check-manifests.sh [KUSTOMIZATION_DIR]   (default deploy/base)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:-$top/deploy/base}
cache=${NEURON_CACHE:-/var/cache/neuron}
die() { echo "check-manifests: $*" >&2; echo "not ok 1 k8s.manifests.setup # $*"; exit 1; }

command -v node >/dev/null && command -v npm >/dev/null ||
	die "no node/npm (scripts/setup-host.sh installs Debian's npm)"
kubectl=$("$top/scripts/fetch-kubectl.sh" | tail -1) || die "scripts/fetch-kubectl.sh failed"

# the validator's packages, once per lock file
key=$(cat "$top/deploy/tests/package.json" "$top/deploy/tests/package-lock.json" | sha256sum | cut -c1-16)
mods=$cache/deploy-tests-$key
if [ ! -d "$mods/node_modules" ]; then
	mkdir -p "$cache"
	exec {lk}>"$cache/deploy-tests.lock"
	flock "$lk"
	if [ ! -d "$mods/node_modules" ]; then
		rm -rf "$mods.tmp"
		mkdir -p "$mods.tmp"
		cp "$top/deploy/tests/package.json" "$top/deploy/tests/package-lock.json" "$mods.tmp/"
		(cd "$mods.tmp" && { npm ci --offline --cache "$cache/npm-cache" --no-audit --no-fund >/dev/null 2>&1 ||
			npm ci --cache "$cache/npm-cache" --no-audit --no-fund >&2; }) ||
			die "npm ci of deploy/tests/package-lock.json failed"
		mv "$mods.tmp" "$mods"
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
validate() { # validate KUSTOMIZATION_DIR: render it and print the validator's TAP
	local out=$tmp/$(basename "$1").yaml
	if ! "$kubectl" kustomize "$1" >"$out" 2>"$tmp/kustomize.err"; then
		echo "not ok 1 k8s.manifests.kustomize_renders"
		sed 's/^/# /' "$tmp/kustomize.err"
		return 1
	fi
	NODE_PATH=$mods/node_modules node "$top/deploy/tests/validate-manifests.js" "$out" "$1" "$top"
}

validate "$kdir" | tee "$tmp/base.tap"
st=${PIPESTATUS[0]}
n=$(grep -cE '^(not )?ok [0-9]+' "$tmp/base.tap")

# negative control: readOnlyRootFilesystem misspelled in a copy of the base
cp -r "$kdir" "$tmp/broken"
sed -i 's/readOnlyRootFilesystem:/readOnlyRootFilesytem:/' "$tmp/broken/daemonset.yaml"
validate "$tmp/broken" >"$tmp/broken.tap" 2>&1
bst=$?
if [ $bst -ne 0 ] && grep -q '^# .*readOnlyRootFilesytem: unknown field' "$tmp/broken.tap"; then
	echo "ok $((n + 1)) k8s.manifests.misspelled_field_fails"
else
	echo "not ok $((n + 1)) k8s.manifests.misspelled_field_fails"
	echo "# the base with readOnlyRootFilesytem (misspelled) was accepted, or the field not named (status $bst):"
	sed 's/^/#   /' "$tmp/broken.tap"
	st=1
fi
# the knobs from an overlay: another prefix and image, every use follows
# (kustomize 2.0.3 takes a base only by a relative path, under bases:)
mkdir -p "$tmp/overlay"
cp -r "$kdir" "$tmp/overlay-base"
cat >"$tmp/overlay/kustomization.yaml" <<EOF
bases: [../overlay-base]
images:
  - {name: neuron-device-plugin, newName: registry.example.org/neuron-device-plugin, newTag: "9.9"}
configMapGenerator:
  - name: neuron-device-plugin
    namespace: kube-system
    behavior: replace
    literals: [NEURON_RESOURCE_PREFIX=accel.example.org]
EOF
if validate "$tmp/overlay" >"$tmp/overlay.tap" 2>&1 &&
	grep -q '^ok .*prefix_from_kustomization' "$tmp/overlay.tap" &&
	grep -q -- '--resource-prefix=accel.example.org' "$tmp/overlay.yaml"; then
	echo "ok $((n + 2)) k8s.manifests.overlay_sets_prefix_and_image"
else
	echo "not ok $((n + 2)) k8s.manifests.overlay_sets_prefix_and_image"
	echo "# an overlay setting the prefix accel.example.org and another image did not render or validate:"
	sed 's/^/#   /' "$tmp/overlay.tap"
	st=1
fi
echo "1..$((n + 2))"
exit $st
