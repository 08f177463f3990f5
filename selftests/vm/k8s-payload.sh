#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The k8s lane's payload (lane-monitor.sh --lane k8s, docs/k8s.md#tests):
# the fake kubelet of userspace/k8s/tests and a Python to run it in the
# guest's initramfs, taken from this host's Debian packages (python3.11,
# python3-grpcio, python3-protobuf):
#
#   DIR/python/bin/python3       the interpreter
#   DIR/python/lib/python3.11/   its standard library (no tests, GUI, docs,
#                                build configuration or bytecode)
#   DIR/python/dist/             grpc and google.protobuf
#   DIR/python/libs/             every shared library the above link
#   DIR/k8s/                     kubelet.py, vm_kubelet.py, the messages
#                                protoc --python_out made from our .proto,
#                                core1.nq (a program for core 1 only)
#   DIR/k8s-guest.sh             the guest script
#
# About 30 MB; built in seconds, so not cached. The plugin and neuron-nq
# go in with run-vm.sh --bin.
#
# Usage: k8s-payload.sh DIR
set -euo pipefail
dir=${1:?usage: k8s-payload.sh DIR}
top=$(cd "$(dirname "$0")/../.." && pwd)
py=/usr/bin/python3.11
dist=/usr/lib/python3/dist-packages
for need in "$py" "$dist/grpc" "$dist/google/protobuf" /usr/bin/protoc; do
	[ -e "$need" ] || { echo "k8s-payload: no $need (scripts/setup-host.sh)" >&2; exit 1; }
done

rm -rf "$dir"
mkdir -p "$dir/python/bin" "$dir/python/lib" "$dir/python/dist/google" "$dir/python/libs" "$dir/k8s"
cp "$py" "$dir/python/bin/python3"
# -L: Debian links a few modules (sitecustomize) to /etc; a link that leads
# nowhere is left out
tar -C /usr/lib -chf - --exclude=__pycache__ --exclude='config-3.11-*' \
	--exclude=python3.11/test --exclude=python3.11/idlelib --exclude=python3.11/tkinter \
	--exclude=python3.11/turtledemo --exclude=python3.11/lib2to3 --exclude=python3.11/ensurepip \
	--exclude=python3.11/pydoc_data --exclude=python3.11/distutils \
	--exclude=python3.11/dist-packages --exclude=python3.11/site-packages \
	python3.11 2>/dev/null | tar -C "$dir/python/lib" -xf - || true
[ -f "$dir/python/lib/python3.11/os.py" ] || { echo "k8s-payload: standard library not copied" >&2; exit 1; }
cp -a "$dist/grpc" "$dir/python/dist/"
cp -a "$dist/google/protobuf" "$dir/python/dist/google/"
touch "$dir/python/dist/google/__init__.py"
find "$dir/python" -name __pycache__ -prune -exec rm -rf {} +
# the GUI and database modules link Tk, X11 and Berkeley DB, which nothing here imports
rm -f "$dir"/python/lib/python3.11/lib-dynload/{_tkinter,_dbm,_gdbm,_sqlite3}.*

# every library the interpreter and the extension modules link, beside them
find "$dir/python" -type f \( -name '*.so' -o -name python3 \) -print0 |
	xargs -0 ldd 2>/dev/null | grep -o '=> /[^ ]*' | cut -c4- | sort -u |
	while read -r lib; do cp -Ln "$lib" "$dir/python/libs/"; done

k8s=$top/userspace/k8s
protoc -I "$k8s/proto" --python_out="$dir/k8s" deviceplugin_v1beta1.proto
cp "$k8s/tests/kubelet.py" "$k8s/tests/vm_kubelet.py" "$dir/k8s/"
cat >"$dir/k8s/core1.nq" <<'EOF'
# the container's program: core 1 only, the one core its node gives it
[core1.pe]
nop
notify hint=3 ext=0x1234
halt
EOF
cp "$top/selftests/vm/k8s-guest.sh" "$dir/"
echo "k8s-payload: $(du -sh "$dir" | cut -f1) in $dir"
