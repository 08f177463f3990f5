#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the 6.12 lane's YNL payload in DIR (copied to /opt/neuron in the
# guest, whose busybox initramfs has no python; docs/architecture.md#ynl-spec):
#   python/bin/python3.11      the host's Debian interpreter
#   python/lib/python3.11/     its standard library without what the YNL tool
#                              never imports (tests, IDLE, tkinter, asyncio,
#                              distutils, the config dir, ...), with the .pyc
#                              Debian compiled, so the guest compiles nothing
#   python/lib/python3/dist-packages/
#                              python3-yaml, python3-jsonschema and their
#                              dependencies' modules (from dpkg -L)
#   python/libs/               the shared libraries all of these link
#                              (the guest sets LD_LIBRARY_PATH)
#   ynl/tools/net/ynl/         the kernel's YNL tool (selftests/vm/fetch-ynl.sh)
#   ynl/Documentation/netlink/ genetlink-legacy.yaml and specs/neuron.yaml, so
#                              cli.py finds the schema next to the spec
#   ynl-guest.sh               the guest checks
# About 30 MB (9 MB in the gzipped initramfs), under a second to copy;
# nothing is cached.
#
# Usage: ynl-payload.sh DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=${1:?usage: ynl-payload.sh DIR}
pyver=3.11
pybin=/usr/bin/python$pyver
stdlib=/usr/lib/python$pyver
dist=/usr/lib/python3/dist-packages
pkgs=(python3-yaml python3-jsonschema python3-attr python3-pyrsistent)

die() { echo "ynl-payload: $*" >&2; exit 1; }
[ -x "$pybin" ] || die "no $pybin (Debian 12's python3)"
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		die "$p is not installed (scripts/setup-host.sh)"
done
ynl=$("$here/fetch-ynl.sh" | tail -1) || die "fetch-ynl.sh failed"

mkdir -p "$dir"
py=$dir/python
# python/ is added to, never emptied: python-payload.sh (numpy, cffi,
# pytest) fills the same directory when a lane ships both (lane-6.12.sh)
rm -rf "$dir/ynl"
mkdir -p "$py/bin" "$py/lib/python3/dist-packages" "$py/libs"
cp -a "$pybin" "$py/bin/"
# the standard library, less what a netlink CLI never imports
tar -C "$stdlib/.." -c \
	--exclude="python$pyver/config-*" --exclude="python$pyver/test" \
	--exclude="python$pyver/idlelib" --exclude="python$pyver/tkinter" \
	--exclude="python$pyver/turtledemo" --exclude="python$pyver/ensurepip" \
	--exclude="python$pyver/lib2to3" --exclude="python$pyver/pydoc_data" \
	--exclude="python$pyver/distutils" --exclude="python$pyver/asyncio" \
	--exclude="python$pyver/multiprocessing" --exclude="python$pyver/sqlite3" \
	--exclude="python$pyver/unittest" --exclude="python$pyver/xmlrpc" \
	--exclude="python$pyver/wsgiref" --exclude="python$pyver/curses" \
	--exclude="python$pyver/dbm" --exclude="python$pyver/venv" \
	--exclude="python$pyver/site-packages" --exclude="python$pyver/dist-packages" \
	--exclude='*.opt-1.pyc' --exclude='*.opt-2.pyc' \
	--exclude='_test*' --exclude='*_test.*' --exclude='xxlimited*' \
	--exclude='_sqlite3*' --exclude='_curses*' --exclude='_dbm*' --exclude='audioop*' \
	--exclude='nis.*' --exclude='ossaudiodev*' --exclude='_tkinter*' \
	--exclude='_ssl.*' --exclude='_hashlib.*' --exclude='readline.*' \
	--exclude='_bz2.*' --exclude='_lzma.*' --exclude='_ctypes*' --exclude='_uuid.*' \
	--exclude='_crypt.*' --exclude='_codecs_[a-z]*.*' --exclude='_multibytecodec.*' \
	"python$pyver" | tar -C "$py/lib" -x
# yaml, jsonschema and what jsonschema needs, as Debian installed them
dpkg -L "${pkgs[@]}" | grep -E "^$dist/[^/]+$" | sort -u | while read -r f; do
	cp -a "$f" "$py/lib/python3/dist-packages/"
done
# shared libraries of the interpreter and of every extension module; the
# guest's loader and libc stay the ones run-vm.sh put there (for lspci)
find "$py" -type f \( -name '*.so' -o -name "python$pyver" \) -print0 |
	xargs -0 ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
	grep -v '/libc\.so' | sort -u |
	while read -r lib; do cp -L "$lib" "$py/libs/"; done

mkdir -p "$dir/ynl/tools/net/ynl/lib" "$dir/ynl/Documentation/netlink/specs"
cp -a "$ynl/tools/net/ynl/cli.py" "$dir/ynl/tools/net/ynl/"
cp -a "$ynl"/tools/net/ynl/lib/*.py "$dir/ynl/tools/net/ynl/lib/"
cp -a "$ynl/Documentation/netlink/genetlink-legacy.yaml" "$dir/ynl/Documentation/netlink/"
cp -a "$top/Documentation/netlink/specs/neuron.yaml" "$dir/ynl/Documentation/netlink/specs/"
# compiled here once rather than in every guest run (TCG is slow)
"$pybin" -m compileall -q "$dir/ynl/tools/net/ynl/lib" >/dev/null
cp "$here/ynl-guest.sh" "$dir/"
