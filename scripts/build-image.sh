#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The device plugin's OCI image (docs/k8s.md#image,
# docs/decisions/0042-plugin-image.md), built from Debian packages with
# Debian's tools and no registry pull:
#   1. the closure of neuron-device-plugin's Depends
#      (scripts/image-closure.py): the project's own .debs (`make deb`,
#      build/deb/) and, for every other package, apt's candidate version
#      (what installing the package on this host today would bring, with
#      the stable and security updates), fetched once by `apt-get download`
#      into $NEURON_CACHE/image-debs/ (keyed by name, version and
#      architecture, Debian's identity of a .deb) and checked against the
#      SHA256 of apt's signed index;
#   2. each .deb unpacked by `dpkg-deb -x` into an empty root, no
#      maintainer script run; then everything the plugin does not need at
#      run time removed (PRUNE below): documentation but the copyright
#      files, man pages, systemd units, the other executables;
#   3. the root packed by GNU tar in name order, every owner 0:0 and every
#      mtime SOURCE_DATE_EPOCH (debian/changelog's date, as dpkg-buildpackage
#      takes it), added as the one layer by `umoci raw add-layer`; umoci
#      config sets the entrypoint, the user, the labels and the creation
#      time (SOURCE_DATE_EPOCH too), then `umoci gc` drops the superseded
#      blobs. Same inputs, same bytes: the manifest digest is the image's
#      identity (scripts/check-image.sh builds twice and compares).
# The image is tagged with the Debian version of neuron-device-plugin, the
# tag deploy/base/kustomization.yaml names (checked by scripts/check-image.sh).
#
# Usage: scripts/build-image.sh [--debs DIR] [--out LAYOUT]
#   --debs  the .debs `make deb` built (default build/deb)
#   --out   the OCI layout to write, replaced whole (default build/image)
# Prints the manifest digest and the image reference (oci:LAYOUT:TAG) last.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${NEURON_CACHE:-/var/cache/neuron}
die() { echo "build-image: $*" >&2; exit 1; }
. "$top/scripts/deb-fetch.sh"

debs=$top/build/deb
out=$top/build/image
while [ $# -gt 0 ]; do
	case $1 in
	--debs) debs=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) die "unknown argument $1 (usage: build-image.sh [--debs DIR] [--out LAYOUT])" ;;
	esac
done
command -v umoci >/dev/null || die "no umoci (scripts/setup-host.sh installs it)"
export LC_ALL=C TZ=UTC
umask 022

# What is removed from the unpacked root besides usr/share (all of it but
# the copyright files): nothing here runs in the container. The plugin
# reads no locale, message catalogue, charset module (gconv) or TLS root
# (usr/share/grpc/roots.pem: it speaks gRPC on Unix sockets only), starts
# no service, and neuron-pod-resources serves neuron-nq metrics.
PRUNE=(
	lib/systemd usr/lib/systemd
	usr/lib/x86_64-linux-gnu/gconv usr/lib/aarch64-linux-gnu/gconv
	usr/libexec/neuron
	etc
)

plugin_deb=$(ls "$debs"/neuron-device-plugin_*.deb 2>/dev/null | head -1)
[ -n "$plugin_deb" ] || die "no neuron-device-plugin .deb in $debs (make deb)"
arch=$(dpkg-deb -f "$plugin_deb" Architecture)
version=$(dpkg-deb -f "$plugin_deb" Version)
sde=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l "$top/debian/changelog" -STimestamp)}
created=$(date -u -d "@$sde" +%Y-%m-%dT%H:%M:%SZ)

# 1. the closure (scripts/image-closure.py), then the Debian .debs: from
# the cache when its copy has the SHA256 of apt's index, else downloaded
# (one lock, held to the end, once one is missing) and checked the same way
closure=$("$top/scripts/image-closure.py" "$arch" neuron-device-plugin "$debs"/*.deb) ||
	die "no closure of neuron-device-plugin's dependencies"
files=()
locked=""
while read -r src p v a want; do
	if [ "$src" = own ]; then
		files+=("$v")
		continue
	fi
	f=$cache/image-debs/${p}_${v#*:}_$a.deb
	if [ "$(sha256sum "$f" 2>/dev/null | cut -d' ' -f1)" != "$want" ]; then
		[ -n "$locked" ] || { deb_lock image-debs; locked=1; }
		if [ "$(sha256sum "$f" 2>/dev/null | cut -d' ' -f1)" != "$want" ]; then
			tmp=$(mktemp -d)
			deb_download "$tmp" "$p=$v"
			got=$(sha256sum "$tmp"/*.deb | cut -d' ' -f1)
			[ "$got" = "$want" ] || die "$p $v: downloaded SHA256 $got, apt's index says $want"
			mkdir -p "$cache/image-debs"
			mv "$tmp"/*.deb "$f.tmp" && mv "$f.tmp" "$f"
			rm -rf "$tmp"
		fi
	fi
	files+=("$f")
done <<<"$closure"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# 2. the root
root=$work/root
mkdir -p "$root"
for f in "${files[@]}"; do
	dpkg-deb -x "$f" "$root"
done
for p in "${PRUNE[@]}"; do
	rm -rf "${root:?}/$p"
done
# usr/share: only each package's copyright file (the changelogs, man
# pages, locales and data go)
find "$root/usr/share" -mindepth 1 -maxdepth 1 ! -name doc -exec rm -rf {} +
find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
# directories the PRUNE list emptied
find "$root" -mindepth 1 -type d -empty -delete
[ -x "$root/usr/sbin/neuron-device-plugin" ] || die "no usr/sbin/neuron-device-plugin in the root"

# 3. the layer and the image
tar -C "$root" --sort=name --mtime="@$sde" --owner=0 --group=0 --numeric-owner \
	--format=pax --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	-cf "$work/layer.tar" .
tag=$version
layout=$work/layout
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
debnames=$(for f in "${files[@]}"; do basename "$f"; done | tr '\n' ' ')
umoci raw add-layer --image "$layout:$tag" --history.created "$created" \
	--history.created_by "scripts/build-image.sh: dpkg-deb -x ${debnames% }" "$work/layer.tar"
umoci config --image "$layout:$tag" --no-history --created "$created" \
	--architecture "$arch" --os linux --config.user 0:0 \
	--config.entrypoint /usr/sbin/neuron-device-plugin \
	--config.label org.opencontainers.image.title=neuron-device-plugin \
	--config.label "org.opencontainers.image.description=Kubernetes device plugin for the Neuron notification queues (docs/k8s.md)" \
	--config.label "org.opencontainers.image.version=$version" \
	--config.label "org.opencontainers.image.created=$created" \
	--config.label org.opencontainers.image.licenses=MIT
umoci gc --layout "$layout"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -r "$layout" "$out"
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$out/index.json"
echo "oci:$out:$tag"
