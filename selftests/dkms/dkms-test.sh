#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# DKMS test: packages the driver the way an operator installs it and loads
# the installed module in the VM.
#   1. copies dkms.conf, kernel/ (sources only) and include/ into
#      /usr/src/neuron-<PACKAGE_VERSION>
#   2. dkms add, dkms build and dkms install for the installed Debian 6.1
#      headers (-k KVER: the host may run another kernel)
#   3. checks the module dkms installed under /lib/modules/KVER/updates/dkms/
#      (vermagic, dkms status)
#   4. boots the VM with THAT file as the module and runs the main lane's
#      payload (device-model tests, every kselftest, guest-tests.sh)
#   5. removes the registration and the source copy again (also first, if a
#      previous run left them), leaving the host as it found it
# Prints TAP; everything goes to $NEURON_DKMS_LOG (default build/vm/dkms.log),
# the host's lines first, then the VM console: scripts/check.sh counts it.
# Exits non-zero on any failure. Root only.
#
# Usage: dkms-test.sh [--qemu PATH] [KVER]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build
log=${NEURON_DKMS_LOG:-$build/vm/dkms.log}
logs=$build/dkms # dkms's own output
qemu=""
[ "${1:-}" = --qemu ] && { qemu=$2; shift 2; }
kver=${1:-$(ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -1 | cut -d/ -f4)}
name=neuron
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
src=/usr/src/$name-$ver
mkdir -p "$(dirname "$log")" "$logs"
: >"$log"

n=0 fails=0
say() { echo "$*" | tee -a "$log"; }
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then say "ok $n $2"; else say "not ok $n $2"; fails=$((fails + 1)); fi
}
quote() { sed 's/^/# /' "$@" | tee -a "$log"; } # a file (or stdin) as TAP comments

# What dkms leaves behind besides the module, removed again if this test
# made it: the self-signed MOK it signs modules with (Debian's dkms creates
# one on first use) and depmod's indexes for a kernel that had none.
keep=()
for f in /var/lib/dkms/mok.key /var/lib/dkms/mok.pub "/lib/modules/$kver/modules.dep"; do
	[ -e "$f" ] && keep+=("$f")
done
kept() { local k; for k in "${keep[@]}"; do [ "$k" = "$1" ] && return 0; done; return 1; }

registered() { dkms status -m "$name" -v "$ver" 2>/dev/null | grep -q .; }
unregister() {
	if registered; then
		dkms remove -m "$name" -v "$ver" --all >"$logs/remove.log" 2>&1
	fi
	rm -rf "$src" "/var/lib/dkms/$name/$ver"
	rmdir "/var/lib/dkms/$name" 2>/dev/null
	return 0
}
tidy() { # after the last dkms command
	local f
	for f in /var/lib/dkms/mok.key /var/lib/dkms/mok.pub; do
		kept "$f" || rm -f "$f"
	done
	if ! kept "/lib/modules/$kver/modules.dep"; then
		rm -f /lib/modules/"$kver"/modules.*
		rmdir /lib/modules/"$kver"/updates/dkms /lib/modules/"$kver"/updates 2>/dev/null
	fi
	return 0
}
finish() {
	say "# dkms: $fails of $n checks failed"
	[ "$fails" -eq 0 ] && [ "$n" -gt 0 ]
	exit $?
}

say "TAP version 13"
[ "$(id -u)" -eq 0 ] || { say "# dkms-test: must run as root"; result 1 dkms.root; finish; }
[ -n "$ver" ] || { say "# no PACKAGE_VERSION in dkms.conf"; result 1 dkms.conf; finish; }
[ -n "$kver" ] && [ -d "/lib/modules/$kver/build" ] ||
	{ say "# no kernel headers for '$kver' (scripts/setup-host.sh)"; result 1 dkms.headers; finish; }
command -v dkms >/dev/null || { say "# dkms not installed"; result 1 dkms.installed; finish; }
say "# $name $ver for $kver (host runs $(uname -r))"
t0=$(date +%s)

# 1. a clean slate, then the source tree DKMS wants: /usr/src/<name>-<ver>
unregister
trap 'unregister; tidy; exit 130' INT TERM
mkdir -p "$src/kernel"
cp "$top/dkms.conf" "$src/"
cp -a "$top/include" "$src/"
for f in "$top"/kernel/Kbuild "$top"/kernel/Makefile "$top"/kernel/*.c "$top"/kernel/*.h; do
	case $f in *.mod.c) continue ;; esac
	cp "$f" "$src/kernel/"
done

# 2. add, build, install
dkms add -m "$name" -v "$ver" >"$logs/add.log" 2>&1
st=$?
[ $st -eq 0 ] || quote "$logs/add.log"
result $st dkms.add
dkms build -m "$name" -v "$ver" -k "$kver" >"$logs/build.log" 2>&1
st=$?
if [ $st -ne 0 ]; then
	quote "$logs/build.log"
	[ -f "/var/lib/dkms/$name/$ver/build/make.log" ] && tail -40 "/var/lib/dkms/$name/$ver/build/make.log" | quote
fi
result $st dkms.build
dkms install -m "$name" -v "$ver" -k "$kver" >"$logs/install.log" 2>&1
st=$?
[ $st -eq 0 ] || quote "$logs/install.log"
result $st dkms.install

# 3. the installed module: where an operator's modprobe finds it
ko=$(ls /lib/modules/"$kver"/updates/dkms/"$name".ko* 2>/dev/null | head -1)
st=1
if [ -n "$ko" ]; then
	magic=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	say "# installed: $ko (vermagic $magic)"
	[ "$magic" = "$kver" ] && st=0
fi
result $st dkms.module_installed
dkms status -m "$name" -v "$ver" -k "$kver" 2>&1 | quote
dkms status -m "$name" -v "$ver" -k "$kver" 2>/dev/null | grep -q ': installed'
result $? dkms.status_installed
say "# dkms add+build+install: $(($(date +%s) - t0)) s"

# 4. the installed file in the VM with the main lane's payload
if [ -n "$ko" ]; then
	mod=$logs/$name.ko
	mkdir -p "$(dirname "$mod")"
	case $ko in
	*.xz) xz -dc "$ko" >"$mod" ;;
	*.zst) zstd -qdc "$ko" >"$mod" ;;
	*) cp "$ko" "$mod" ;;
	esac
	payload=$logs/payload
	. "$top/selftests/vm/lane-lib.sh"
	lane_payload "$payload"
	ts=$(date +%s)
	kernel=$("$top/selftests/vm/fetch-kernel.sh" "$kver" | tail -1)
	[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1)
	if [ -n "$kernel" ] && [ -n "$qemu" ]; then
		NEURON_VM_LOG=$log.vm "$top/selftests/vm/run-vm.sh" --qemu "$qemu" \
			--kernel "$kernel" --module "$mod" --payload "$payload" \
			--timeout 1200 -- /opt/neuron/guest-tests.sh >/dev/null 2>&1
		st=$?
		tr -d '\r' <"$log.vm" >>"$log"
		say "# VM with the dkms-installed module: status $st, $(($(date +%s) - ts)) s"
		result $st dkms.vm_run
	else
		say "# no QEMU or guest kernel"
		result 1 dkms.vm_run
	fi
fi

# 5. leave the host clean
unregister
tidy
st=0
registered && st=1
ls /lib/modules/"$kver"/updates/dkms/"$name".ko* >/dev/null 2>&1 && st=1
[ -e "$src" ] && st=1
result $st dkms.removed
finish
