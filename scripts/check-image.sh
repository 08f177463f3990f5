#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The device plugin's OCI image (docs/k8s.md#image), checked as TAP:
#   - scripts/build-image.sh builds it from `make deb`'s .debs into
#     build/image (the layout an operator copies out, docs/k8s.md#image);
#   - a second build (another umask, time zone and output directory) gives
#     the same manifest digest and the same layout, byte for byte; one with
#     another SOURCE_DATE_EPOCH does not (the comparison can see a change);
#   - skopeo reads the layout back (manifest and config), and
#     deploy/tests/check_image.py checks them and the layer: entrypoint,
#     user, labels, history, the file list (the plugin, the libraries, the
#     copyright files; no shell, no other executable), and that the
#     DaemonSet `kubectl kustomize deploy/base` renders names this image
#     and runs its entrypoint;
#   - the layer unpacked and the plugins (the device plugin, the DRA
#     driver) run in it by chroot (`--help`): their
#     every library is in the image and the loader finds it there without
#     an ld.so.cache.
# scripts/check.sh runs it right after `make deb`, in the background.
#
# Usage: scripts/check-image.sh [DEBS_DIR]   (default build/deb)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
debs=${1:-$top/build/deb}
n=0
st=0
tap() { # tap OK|FAIL NAME [WHY...]
	local res=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$res" = OK ]; then
		echo "ok $n k8s.image.$name"
	else
		st=1
		echo "not ok $n k8s.image.$name"
		printf '%s\n' "$@" | sed 's/^/# /'
	fi
}
finish() { echo "1..$n"; exit $st; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
layout=$top/build/image
if ! "$top/scripts/build-image.sh" --debs "$debs" --out "$layout" >"$tmp/build1.out" 2>&1; then
	tap FAIL builds "$(tail -20 "$tmp/build1.out")"
	finish
fi
digest=$(tail -2 "$tmp/build1.out" | head -1)
ref=$(tail -1 "$tmp/build1.out")
tag=${ref##*:}
tap OK builds
echo "# image: $ref digest $digest"

# the same inputs from another umask, time zone and directory
(umask 077 && TZ=Pacific/Kiritimati "$top/scripts/build-image.sh" --debs "$debs" \
	--out "$tmp/second/layout") >"$tmp/build2.out" 2>&1
digest2=$(tail -2 "$tmp/build2.out" | head -1)
if [ "$digest2" = "$digest" ] && diff -r "$layout" "$tmp/second/layout" >"$tmp/diff" 2>&1; then
	tap OK reproducible
else
	tap FAIL reproducible "second build: digest '$digest2', first $digest" "$(head -5 "$tmp/diff")" \
		"$(tail -5 "$tmp/build2.out")"
fi
# negative control: another date must show as another digest
SOURCE_DATE_EPOCH=1000000000 "$top/scripts/build-image.sh" --debs "$debs" \
	--out "$tmp/other/layout" >"$tmp/build3.out" 2>&1
digest3=$(tail -2 "$tmp/build3.out" | head -1)
if [ -n "$digest3" ] && [ "$digest3" != "$digest" ]; then
	tap OK other_date_other_digest
else
	tap FAIL other_date_other_digest "SOURCE_DATE_EPOCH=1000000000 gave '$digest3', the same as $digest" \
		"$(tail -5 "$tmp/build3.out")"
fi

# skopeo, a reader of its own, prints the manifest and config
if ! skopeo inspect --raw "oci:$layout:$tag" >"$tmp/manifest.json" 2>"$tmp/skopeo.err" ||
	! skopeo inspect --config --raw "oci:$layout:$tag" >"$tmp/config.json" 2>>"$tmp/skopeo.err"; then
	tap FAIL skopeo_reads_layout "$(cat "$tmp/skopeo.err")"
	finish
fi
tap OK skopeo_reads_layout
mdigest=sha256:$(sha256sum <"$tmp/manifest.json" | cut -d' ' -f1)
[ "$mdigest" = "$digest" ] && tap OK manifest_digest || tap FAIL manifest_digest "skopeo's manifest hashes to $mdigest, index.json says $digest"

kubectl=$("$top/scripts/fetch-kubectl.sh" | tail -1) && "$kubectl" kustomize "$top/deploy/base" >"$tmp/rendered.yaml" 2>"$tmp/kustomize.err" ||
	tap FAIL kustomize_renders "$(cat "$tmp/kustomize.err" 2>/dev/null)"
python3 "$top/deploy/tests/check_image.py" "$layout" "$tag" "$tmp/manifest.json" "$tmp/config.json" \
	"$tmp/rendered.yaml" "$n" >"$tmp/py.tap" 2>&1
pst=$?
cat "$tmp/py.tap"
cnt=$(grep -cE '^(not )?ok [0-9]+' "$tmp/py.tap")
if [ "$cnt" -eq 0 ]; then
	tap FAIL image_checks_ran "deploy/tests/check_image.py printed no test (status $pst)"
else
	n=$((n + cnt))
	[ $pst -eq 0 ] || st=1
fi

# the plugin runs from the image's own root
layer=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["layers"][0]["digest"].split(":")[1])' "$tmp/manifest.json")
mkdir -p "$tmp/rootfs"
tar -xzf "$layout/blobs/sha256/$layer" -C "$tmp/rootfs"
if [ "$(id -u)" -ne 0 ]; then
	echo "ok $((n += 1)) k8s.image.plugin_runs_in_image # SKIP chroot needs root"
elif chroot "$tmp/rootfs" /usr/sbin/neuron-device-plugin --help >"$tmp/run.out" 2>&1 &&
	grep -q -- '--resource-prefix' "$tmp/run.out"; then
	tap OK plugin_runs_in_image
else
	tap FAIL plugin_runs_in_image "chroot ROOT /usr/sbin/neuron-device-plugin --help:" "$(head -5 "$tmp/run.out")"
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "ok $((n += 1)) k8s.image.dra_plugin_runs_in_image # SKIP chroot needs root"
elif chroot "$tmp/rootfs" /usr/sbin/neuron-dra-plugin --help >"$tmp/run.out" 2>&1 &&
	grep -q -- '--node-name' "$tmp/run.out"; then
	tap OK dra_plugin_runs_in_image
else
	tap FAIL dra_plugin_runs_in_image "chroot ROOT /usr/sbin/neuron-dra-plugin --help:" "$(head -5 "$tmp/run.out")"
fi
finish
