#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Adds the neuron Python module's guest run to the main lane's trace payload
# DIR (selftests/vm/trace-payload.sh; the busybox guest has no python):
#   python/bin/python3.11       the host's Debian interpreter
#   python/lib/python3.11/      its standard library, less what neither the
#                               module nor pytest imports (tests, IDLE,
#                               tkinter, asyncio, ...), with Debian's .pyc
#   python/lib/python3/dist-packages/
#                               numpy (without its tests), cffi, pytest and
#                               their dependencies' modules (from dpkg -L),
#                               and the neuron module from the tree
#   python/libs/                the shared libraries all of these link
#   python/tests/, hello.py     userspace/python/tests, examples/hello.py,
#                               userspace/python/bench_drain.py
# api-guest.sh runs them as uid 1000 (docs/decisions/0045-python-cffi.md).
# Usage: python-payload.sh DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=${1:?usage: python-payload.sh DIR}
pyver=3.11
pybin=/usr/bin/python$pyver
stdlib=/usr/lib/python$pyver
dist=/usr/lib/python3/dist-packages
pkgs=(python3-numpy python3-cffi python3-cffi-backend python3-pycparser python3-pytest python3-pluggy
	python3-iniconfig python3-packaging python3-py python3-attr python3-more-itertools
	python3-pkg-resources python3-ply)

die() { echo "python-payload: $*" >&2; exit 1; }
[ -x "$pybin" ] || die "no $pybin (Debian 12's python3)"
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		die "$p is not installed (scripts/setup-host.sh)"
done

py=$dir/python
# added to, never emptied: the 6.12 lane's payload holds ynl-payload.sh's
# python (yaml, jsonschema) in the same directory, and its guest runs both
mkdir -p "$py/bin" "$py/lib/python3/dist-packages" "$py/libs" "$py/tests"
cp -a "$pybin" "$py/bin/"
tar -C "$stdlib/.." -c \
	--exclude="python$pyver/config-*" --exclude="python$pyver/test" \
	--exclude="python$pyver/idlelib" --exclude="python$pyver/tkinter" \
	--exclude="python$pyver/turtledemo" --exclude="python$pyver/ensurepip" \
	--exclude="python$pyver/lib2to3" --exclude="python$pyver/pydoc_data" \
	--exclude="python$pyver/distutils" --exclude="python$pyver/asyncio" \
	--exclude="python$pyver/sqlite3" --exclude="python$pyver/xmlrpc" \
	--exclude="python$pyver/wsgiref" --exclude="python$pyver/curses" \
	--exclude="python$pyver/dbm" --exclude="python$pyver/venv" \
	--exclude="python$pyver/site-packages" --exclude="python$pyver/dist-packages" \
	--exclude='*.opt-1.pyc' --exclude='*.opt-2.pyc' \
	--exclude='_test*' --exclude='*_test.*' --exclude='xxlimited*' \
	--exclude='_sqlite3*' --exclude='_curses*' --exclude='_dbm*' --exclude='audioop*' \
	--exclude='nis.*' --exclude='ossaudiodev*' --exclude='_tkinter*' \
	--exclude='_codecs_[a-z]*.*' --exclude='_multibytecodec.*' \
	"python$pyver" | tar -C "$py/lib" -x
dpkg -L "${pkgs[@]}" | grep -E "^$dist/[^/]+$" | sort -u | while read -r f; do
	cp -a "$f" "$py/lib/python3/dist-packages/"
done
# numpy's own test suites and headers: a third of it, never imported here
find "$py/lib/python3/dist-packages/numpy" -depth \( -name tests -o -name testing -prune -false -o -name include \) \
	-type d -exec rm -rf {} + 2>/dev/null || true
cp -a "$top/userspace/python/neuron" "$py/lib/python3/dist-packages/"
cp -a "$top/userspace/python/tests/test_device.py" "$py/tests/"
cp -a "$top/userspace/python/bench_drain.py" "$top/examples/hello.py" "$top/examples/hello.nq" "$py/"
"$pybin" -m compileall -q "$py/lib/python3/dist-packages/neuron" >/dev/null
find "$py" -type f \( -name '*.so' -o -name "python$pyver" \) -print0 |
	xargs -0 ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
	grep -v '/libc\.so' | sort -u |
	while read -r lib; do cp -L "$lib" "$py/libs/"; done
echo "python-payload: $(du -sh "$py" | cut -f1) in $py"
