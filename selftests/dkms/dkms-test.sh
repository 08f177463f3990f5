#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# DKMS test: packages the driver the way an operator installs it and loads
# the installed module in the VM.
#   1. copies dkms.conf, kernel/ (sources only), include/ and udev/ into
#      /usr/src/neuron-<PACKAGE_VERSION>
#   2. dkms add, dkms build and dkms install for the installed Debian 6.1
#      headers (-k KVER: the host may run another kernel)
#   3. checks the module dkms installed under /lib/modules/KVER/updates/dkms/
#      (vermagic, dkms status), and what its POST_INSTALL hook
#      (udev/neuron-udev.sh) did: the system group "neuron", the rule
#      /etc/udev/rules.d/60-neuron.rules (group neuron, mode 0660, nothing
#      for "other"); the hook's remove keeps the rule while another kernel
#      still has the module (on a scratch dkms tree)
#   4. boots the VM with THAT module file and the installed rule under a real
#      systemd-udevd (the host's udevadm, package udev): the rule parses, the
#      node comes up root:neuron 0660, a member of the group opens it
#      read-write, anyone else gets EACCES even read-only; then boots it
#      again with the main lane's payload (device-model tests, every
#      kselftest, guest-tests.sh)
#   5. removes the registration and the source copy again (also first, if a
#      previous run left them), checks the rule went and the group stayed,
#      and leaves the host as it found it: the group is deleted only if this
#      run created it, a rules file that was there before is put back
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
name=neuron # the DKMS package; the module it builds is $module.ko
module=nnq
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
# the device-permission hook's leftovers: the group (kept by dkms remove on
# purpose) and the rules file, restored to what they were before
group=neuron
rule=/etc/udev/rules.d/60-neuron.rules
had_group=0
getent group "$group" >/dev/null && had_group=1
saved_rule=""
if [ -e "$rule" ]; then
	saved_rule=$logs/60-neuron.rules.before
	cp -a "$rule" "$saved_rule"
fi

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
	if [ -n "$saved_rule" ]; then
		cp -a "$saved_rule" "$rule"
	else
		rm -f "$rule"
	fi
	[ $had_group -eq 0 ] && getent group "$group" >/dev/null && groupdel "$group"
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
cp -a "$top/include" "$top/udev" "$src/"
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
ko=$(ls /lib/modules/"$kver"/updates/dkms/"$module".ko* 2>/dev/null | head -1)
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

# 3b. the POST_INSTALL hook: its messages, the group, the rule
grep '^neuron-udev:' "$logs/install.log" | quote
gid=$(getent group "$group" | cut -d: -f3)
# the system range of groupadd --system (shadow's defaults unless
# /etc/login.defs sets them)
defs() { sed -n "s/^[[:space:]]*$1[[:space:]]\+\([0-9]\+\).*/\1/p" /etc/login.defs 2>/dev/null | tail -1; }
gid_min=$(defs GID_MIN)
sys_min=$(defs SYS_GID_MIN)
sys_max=$(defs SYS_GID_MAX)
sys_min=${sys_min:-101}
sys_max=${sys_max:-$((${gid_min:-1000} - 1))}
say "# group $group: gid ${gid:-none} (system range $sys_min-$sys_max, existed before: $had_group)"
[ -n "$gid" ] && [ "$gid" -ge "$sys_min" ] && [ "$gid" -le "$sys_max" ]
result $? dkms.group_neuron_system
# installed as shipped, root's, not writable by others
st=1
if [ -f "$rule" ]; then
	say "# $rule: $(stat -c '%A %U:%G' "$rule")"
	grep -v '^#' "$rule" | grep . | quote
	cmp -s "$rule" "$top/udev/60-neuron.rules" && [ "$(stat -c '%a %u' "$rule")" = "644 0" ] && st=0
else
	say "# no $rule"
fi
result $st dkms.udev_rule_installed
# what it says: one rule, for the nnq class's nnqN nodes, group
# neuron, mode 0660; no other mode and no OWNER, no permission for "other"
st=1
if [ -f "$rule" ]; then
	lines=$(grep -v '^[[:space:]]*#' "$rule" | grep -c '[^[:space:]]')
	line=$(grep -v '^[[:space:]]*#' "$rule" | grep '[^[:space:]]')
	modes=$(grep -v '^[[:space:]]*#' "$rule" | grep -o 'MODE[:+]\?="[^"]*"' | sort -u | tr '\n' ' ')
	if [ "$lines" -eq 1 ] &&
		grep -q 'SUBSYSTEM=="nnq"' <<<"$line" &&
		grep -q 'KERNEL=="nnq\[0-9\]\*"' <<<"$line" &&
		grep -q 'GROUP="neuron"' <<<"$line" &&
		[ "$modes" = 'MODE="0660" ' ] &&
		! grep -q 'OWNER' <<<"$line" &&
		! grep -q '0666' <<<"$line"; then
		st=0
	else
		say "# expected one rule: SUBSYSTEM==\"nnq\", KERNEL==\"nnq[0-9]*\", GROUP=\"neuron\", MODE=\"0660\" (found $lines, modes: ${modes:-none})"
	fi
fi
result $st dkms.udev_rule_0660_group_neuron
# the hook's remove on a scratch dkms tree: the rule stays while a
# kernel-<kver>-<arch> link says another kernel has the module, and goes
# with the last one
scratch=$(mktemp -d)
mkdir -p "$scratch/neuron/$ver/source" "$scratch/rules"
cp "$top/udev/60-neuron.rules" "$scratch/rules/"
ln -s "$ver/0.0.0-other/x86_64" "$scratch/neuron/kernel-0.0.0-other-x86_64"
hook() { (cd "$scratch/neuron/$ver/source" && NEURON_UDEV_RULES_DIR=$scratch/rules "$top/udev/neuron-udev.sh" remove) 2>&1 | quote; }
hook
st=1
[ -e "$scratch/rules/60-neuron.rules" ] && st=0
rm "$scratch/neuron/kernel-0.0.0-other-x86_64"
hook
[ -e "$scratch/rules/60-neuron.rules" ] && st=1
rm -rf "$scratch"
result $st dkms.hook_remove_waits_for_last_kernel

# udev_vm KERNEL MODULE: the installed rule applied by a real systemd-udevd
# in the VM (the host's udevadm, which is also systemd-udevd by its name),
# with the host's neuron group line and two users: nmember (in the group by
# its supplementary groups only) and nother
udev_vm() {
	local payload=$logs/udev-payload ts st
	rm -rf "$payload"
	mkdir -p "$payload/udev"
	cp "$rule" "$payload/udev/"
	getent group "$group" | cut -d: -f1-3 >"$payload/udev/group"
	cat >"$payload/udev-check.sh" <<'GUEST'
#!/bin/sh
n=0 fails=0
result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n dkms.udev.$2"; else echo "not ok $n dkms.udev.$2"; fails=$((fails + 1)); fi
}
u=/opt/neuron/udev
mkdir -p /run /etc/udev/rules.d
mount -t tmpfs tmpfs /run
cp $u/60-neuron.rules /etc/udev/rules.d/
# AWS's driver installs a rule making every node named neuron* mode 0666
# (docs/decisions.md#names); with it present our node must stay 0660
echo 'KERNEL=="neuron*", MODE="0666"' >/etc/udev/rules.d/90-foreign-neuron.rules
gid=$(cut -d: -f3 $u/group)
{ echo "root:x:0:"; echo "$(cat $u/group):nmember"; echo "nother:x:1001:"; } >/etc/group
printf '%s\n' 'root:x:0:0:root:/:/bin/sh' 'nmember:x:1000:1000::/:/bin/sh' \
	'nother:x:1001:1001::/:/bin/sh' >/etc/passwd
sed 's/^/# group: /' /etc/group
# in the foreground with its log on stderr (as a daemon it logs nowhere we
# can read), then wait for its control socket before the uevent it must see
ln -s /bin/udevadm /bin/systemd-udevd
SYSTEMD_LOG_TARGET=console /bin/systemd-udevd >/tmp/udevd.log 2>&1 &
st=1
for i in $(seq 1 50); do
	udevadm control --ping --timeout=1 2>/dev/null && { st=0; break; }
	sleep 0.2
done
result $st udevd_running
insmod /lib/neuron/nnq.ko
result $? insmod
udevadm settle --timeout=30
ls -ln /dev/nnq0 | sed 's/^/# /'
[ "$(stat -c '%a %u %g' /dev/nnq0 2>/dev/null)" = "660 0 $gid" ]
result $? node_root_neuron_0660
su -s /bin/sh nmember -c 'exec 3<>/dev/nnq0' 2>&1 | sed 's/^/# nmember: /'
su -s /bin/sh nmember -c 'exec 3<>/dev/nnq0' 2>/dev/null
result $? member_opens_read_write
su -s /bin/sh nother -c 'exec 3</dev/nnq0' 2>&1 | sed 's/^/# nother: /'
! su -s /bin/sh nother -c 'exec 3</dev/nnq0' 2>/dev/null
result $? other_cannot_open_read_only
# udevd names the file and line of a rule it cannot parse
sed 's/^/# udevd: /' /tmp/udevd.log
! grep -q '60-neuron.rules' /tmp/udevd.log
result $? rule_parses
udevadm control --exit
rmmod nnq
result $? rmmod
echo "# dkms.udev: $fails of $n checks failed"
[ $fails -eq 0 ]
GUEST
	chmod +x "$payload/udev-check.sh"
	ts=$(date +%s)
	NEURON_VM_LOG=$log.udev "$top/selftests/vm/run-vm.sh" --qemu "$qemu" \
		--kernel "$1" --module "$2" --bin "$udevadm" --payload "$payload" \
		--timeout 300 -- /opt/neuron/udev-check.sh >/dev/null 2>&1
	st=$?
	tr -d '\r' <"$log.udev" >>"$log"
	say "# VM under udev with the installed rule: status $st, $(($(date +%s) - ts)) s"
	result $st dkms.udev_vm
}

# 4. the installed file in the VM: under udev, then the main lane's payload
if [ -n "$ko" ]; then
	mod=$logs/$module.ko
	mkdir -p "$(dirname "$mod")"
	case $ko in
	*.xz) xz -dc "$ko" >"$mod" ;;
	*.zst) zstd -qdc "$ko" >"$mod" ;;
	*) cp "$ko" "$mod" ;;
	esac
	payload=$logs/payload
	. "$top/selftests/vm/lane-lib.sh"
	lane_payload "$payload"
	kernel=$("$top/selftests/vm/fetch-kernel.sh" "$kver" | tail -1)
	[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1)
	udevadm=$(command -v udevadm || true)
	if [ -n "$kernel" ] && [ -n "$qemu" ] && [ -n "$udevadm" ] && [ -f "$rule" ]; then
		udev_vm "$kernel" "$mod"
	else
		say "# no QEMU, guest kernel, udevadm (package udev) or installed rule"
		result 1 dkms.udev_vm
	fi
	ts=$(date +%s)
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

# 5. leave the host clean: POST_REMOVE took the rule and kept the group
unregister
grep '^neuron-udev:' "$logs/remove.log" 2>/dev/null | quote
st=0
[ -e "$rule" ] && { say "# $rule still there after dkms remove"; st=1; }
getent group "$group" >/dev/null || { say "# dkms remove deleted group $group"; st=1; }
result $st dkms.remove_takes_rule_keeps_group
tidy
st=0
registered && st=1
ls /lib/modules/"$kver"/updates/dkms/"$module".ko* >/dev/null 2>&1 && st=1
[ -e "$src" ] && st=1
result $st dkms.removed
finish
