#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The packaged install path (docs/decisions/0023-packaging.md): the .debs that
# `make deb` built (build/deb/), checked, installed on the host the way an
# operator installs them, and the module DKMS built from them loaded in the VM.
#   1. the four packages are there, at dkms.conf's version; lintian reports
#      no error (its warnings are printed as comments); each package holds
#      what it must (neuron-dkms: dkms.conf and every kernel/ source file
#      under /usr/src/neuron-<version>, the udev rule; libneuron1: SONAME
#      libneuron.so.1 and a shlibs file; libneuron-dev: headers, neuron.pc,
#      the CMake package; neuron-tools: neuron-nq, man page, completion,
#      node-problem-detector rules)
#   2. Debian's autopkgtest (null virt server, on this host) runs
#      debian/tests/: apt installs neuron-dkms from the .deb, whose postinst
#      creates the system group "neuron" and lets DKMS build and install
#      nnq.ko for the installed Debian 6.1 headers (KVER), and the test
#      checks `dkms status`; then a C++ consumer of libneuron-dev built with
#      find_package(neuron) and pkg-config
#   3. dpkg -i of the packages autopkgtest did not install; checks the
#      module (vermagic, dkms status), the group, the packaged rule /lib/udev/rules.d/60-neuron.rules (owned
#      by neuron-dkms, group neuron, mode 0660, nothing for "other"), that
#      the DKMS hook wrote no copy into /etc, and the hook itself on scratch
#      trees (install into /etc without a packaged rule; remove keeps the
#      rule while another kernel still has the module)
#   4. DKMS builds the same registered source for bookworm-backports' 6.12
#      headers (fetch-kernel.sh --headers 6.12); the module is left in
#      build/dkms/6.12/nnq.ko for the 6.12 lane (scripts/check.sh passes it
#      to selftests/vm/lane-6.12.sh --module)
#   5. boots the VM with the module DKMS installed, the packaged rule under a
#      real systemd-udevd (the host's udevadm, package udev) and neuron-nq and
#      libneuron.so.1 from the packages (dpkg -x into build/dkms/root): the
#      rule parses, the node comes up root:neuron 0660, a member of the group
#      opens it read-write and runs examples/hello.nq with the packaged
#      neuron-nq, anyone else gets EACCES even read-only; then boots it again
#      with the main lane's payload (every kselftest, guest-tests.sh; the
#      device model's own tests run in the main lane only)
#   5b. (in the udev boot) a C program (the C API, built with pkg-config)
#      and a C++ program (built with find_package(neuron)), compiled on the
#      host against the installed libneuron-dev only
#      (userspace/tests/install/), drain a queue of /dev/nnq0 as the group
#      member: each submits a small program and takes every record with
#      the library's wait (userspace/README.md#api-contract)
#   6. dpkg --purge of all four: the module, the registration, the sources
#      and the rule go, the group stays; the host is left as it was found
#      (the group is deleted only if this run created it, a rules file in
#      /etc that was there before is put back)
# Prints TAP; everything goes to $NEURON_DKMS_LOG (default build/vm/dkms.log),
# the host's lines first, then the VM consoles: scripts/check.sh counts it.
# Exits non-zero on any failure. Root only. Needs `make deb` (and, for the
# VM boots, `make selftests`).
#
# Usage: dkms-test.sh [--qemu PATH] [--debs DIR] [KVER]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build
log=${NEURON_DKMS_LOG:-$build/vm/dkms.log}
logs=$build/dkms # dkms's, dpkg's and autopkgtest's own output
qemu=""
debs=$build/deb
while [ $# -gt 0 ]; do
	case $1 in
	--qemu) qemu=$2; shift 2 ;;
	--debs) debs=$2; shift 2 ;;
	*) break ;;
	esac
done
kver=${1:-$(ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -1 | cut -d/ -f4)}
name=neuron # the DKMS package; the module it builds is $module.ko
module=nnq
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
src=/usr/src/$name-$ver
pkgs=(neuron-dkms libneuron1 libneuron-dev neuron-tools)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
mkdir -p "$(dirname "$log")" "$logs"
: >"$log"

n=0 fails=0
say() { echo "$*" | tee -a "$log"; }
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then say "ok $n $2"; else say "not ok $n $2"; fails=$((fails + 1)); fi
}
quote() { sed 's/^/# /' "$@" | tee -a "$log"; } # a file (or stdin) as TAP comments
deb_of() { # deb_of PACKAGE: its .deb in $debs
	local a=$arch
	[ "$1" = neuron-dkms ] && a=all
	echo "$debs/${1}_${ver}_$a.deb"
}

# What dkms leaves behind besides the module, removed again if this test
# made it: the self-signed MOK it signs modules with (Debian's dkms creates
# one on first use) and depmod's indexes for a kernel that had none.
keep=()
for f in /var/lib/dkms/mok.key /var/lib/dkms/mok.pub "/lib/modules/$kver/modules.dep"; do
	[ -e "$f" ] && keep+=("$f")
done
kept() { local k; for k in "${keep[@]}"; do [ "$k" = "$1" ] && return 0; done; return 1; }
# the device-permission leftovers: the group (kept by the purge on purpose)
# and a rules file in /etc, restored to what they were before
group=neuron
rule=/lib/udev/rules.d/60-neuron.rules # where neuron-dkms ships it
etc_rule=/etc/udev/rules.d/60-neuron.rules # where the by-hand DKMS hook puts it
had_group=0
getent group "$group" >/dev/null && had_group=1
saved_rule=""
if [ -e "$etc_rule" ]; then
	saved_rule=$logs/60-neuron.rules.before
	cp -a "$etc_rule" "$saved_rule"
fi

status_of() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null; }
installed() { [ "$(status_of "$1")" = installed ]; }
known() { local s; s=$(status_of "$1") && [ -n "$s" ] && [ "$s" != not-installed ]; }
registered() { dkms status -m "$name" -v "$ver" 2>/dev/null | grep -q .; }
purge() { # the packages and any registration a by-hand run left
	local p present=()
	for p in "${pkgs[@]}"; do known "$p" && present+=("$p"); done
	[ ${#present[@]} -gt 0 ] && dpkg --purge "${present[@]}" >"$logs/purge-before.log" 2>&1
	if registered; then
		dkms remove -m "$name" -v "$ver" --all >"$logs/remove.log" 2>&1
	fi
	rm -rf "/var/lib/dkms/$name/$ver" "$src"
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
		cp -a "$saved_rule" "$etc_rule"
	else
		rm -f "$etc_rule"
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
say "# $name $ver for $kver (host runs $(uname -r)), packages from $debs"

# 1. the packages: there, at dkms.conf's version, lintian-clean, complete
missing=0
for p in "${pkgs[@]}"; do
	d=$(deb_of "$p")
	st=1
	if [ -f "$d" ]; then
		v=$(dpkg-deb -f "$d" Version)
		say "# $(basename "$d"): version $v, $(stat -c %s "$d") bytes"
		[ "$v" = "$ver" ] && st=0
	else
		say "# no $d (make deb)"
		missing=1
	fi
	result $st "deb.$p.built_at_dkms_conf_version"
done
[ $missing -eq 0 ] || finish
ts=$(date +%s)
changes=$(ls "$debs"/*.changes 2>/dev/null | head -1)
lintian --fail-on error --tag-display-limit 0 --info "$changes" >"$logs/lintian.log" 2>&1
lst=$?
grep -E '^[EW]: ' "$logs/lintian.log" | quote
nerr=$(grep -c '^E: ' "$logs/lintian.log")
nwarn=$(grep -c '^W: ' "$logs/lintian.log")
say "# lintian: $nerr errors, $nwarn warnings, $(($(date +%s) - ts)) s"
[ -n "$changes" ] && [ $lst -eq 0 ] && [ "$nerr" -eq 0 ]
result $? deb.lintian_no_errors
# contents: every kernel/ source of the tree is in the DKMS source directory
dpkg-deb -c "$(deb_of neuron-dkms)" | awk '{print $6}' | sed 's|^\./||' >"$logs/neuron-dkms.list"
st=0
for f in dkms.conf kernel/Kbuild kernel/Makefile $(cd "$top" && ls kernel/*.c kernel/*.h | grep -v '\.mod\.c$') \
	udev/60-neuron.rules udev/neuron-udev.sh include/uapi/linux/neuron.h; do
	grep -qx "usr/src/$name-$ver/$f" "$logs/neuron-dkms.list" || { say "# neuron-dkms lacks usr/src/$name-$ver/$f"; st=1; }
done
grep -qx "${rule#/}" "$logs/neuron-dkms.list" || { say "# neuron-dkms lacks $rule"; st=1; }
result $st deb.neuron-dkms.ships_every_kernel_source_and_the_rule
rm -rf "$logs/libneuron1"
mkdir -p "$logs/libneuron1"
dpkg-deb -x "$(deb_of libneuron1)" "$logs/libneuron1"
so=$(ls "$logs/libneuron1/usr/lib/$multiarch"/libneuron.so.1.* 2>/dev/null | head -1)
soname=$(objdump -p "$so" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
shlibs=$(dpkg-deb -I "$(deb_of libneuron1)" shlibs 2>/dev/null)
say "# libneuron1: ${so#"$logs"/libneuron1} SONAME ${soname:-none}; shlibs: ${shlibs:-none}"
[ "$soname" = libneuron.so.1 ] && [ "$shlibs" = "libneuron 1 libneuron1 (>= $ver)" ]
result $? deb.libneuron1.soname_and_shlibs
dpkg-deb -c "$(deb_of libneuron-dev)" | awk '{print $6}' | sed 's|^\./||' >"$logs/libneuron-dev.list"
st=0
for f in usr/include/libneuron/neuron.hpp usr/include/libneuron/neuron.h usr/include/libneuron/abi/uapi/linux/neuron.h \
	"usr/lib/$multiarch/pkgconfig/neuron.pc" "usr/lib/$multiarch/cmake/neuron/neuronConfig.cmake" \
	"usr/lib/$multiarch/libneuron.so"; do
	grep -qx "$f" "$logs/libneuron-dev.list" || { say "# libneuron-dev lacks $f"; st=1; }
done
result $st deb.libneuron-dev.headers_pkgconfig_cmake
dpkg-deb -c "$(deb_of neuron-tools)" | awk '{print $6}' | sed 's|^\./||' >"$logs/neuron-tools.list"
st=0
for f in usr/bin/neuron-nq usr/share/man/man1/neuron-nq.1.gz usr/share/bash-completion/completions/neuron-nq \
	usr/share/neuron/node-problem-detector/nnq-hw-errors.json; do
	grep -qx "$f" "$logs/neuron-tools.list" || { say "# neuron-tools lacks $f"; st=1; }
done
result $st deb.neuron-tools.binary_manpage_completion_npd
# the packaged binaries for the VM: neuron-nq and libneuron.so.1 as dpkg
# unpacks them
root=$logs/root
rm -rf "$root"
mkdir -p "$root"
dpkg-deb -x "$(deb_of libneuron1)" "$root" && dpkg-deb -x "$(deb_of neuron-tools)" "$root"
nq=$root/usr/bin/neuron-nq
nq_lib=$(LD_LIBRARY_PATH=$root/usr/lib/$multiarch ldd "$nq" 2>/dev/null | awk '$1 == "libneuron.so.1" {print $3}')
say "# packaged neuron-nq links $nq_lib"
[ "$nq_lib" = "$root/usr/lib/$multiarch/libneuron.so.1" ]
result $? deb.neuron-nq_links_packaged_libneuron

# 2. Debian's autopkgtest on this host (virt server null) with the built
#    packages, on the clean slate: debian/tests/dkms-build (apt installs
#    neuron-dkms, whose postinst lets DKMS build for the 6.1 headers) and
#    debian/tests/consumer (libneuron-dev). One run per test, each given only
#    the .debs it installs: autopkgtest reinstalls every given package that
#    is installed already, and a reinstalled neuron-dkms means another DKMS
#    build.
purge
trap 'purge; tidy; exit 130' INT TERM
ts=$(date +%s)
rm -rf "$logs"/autopkgtest-*
if command -v autopkgtest >/dev/null; then
	for t in dkms-build consumer; do
		case $t in
		dkms-build) tdebs=("$(deb_of neuron-dkms)") ;;
		consumer) tdebs=("$(deb_of libneuron1)" "$(deb_of libneuron-dev)") ;;
		esac
		t1=$(date +%s)
		autopkgtest --no-built-binaries --test-name "$t" --output-dir "$logs/autopkgtest-$t" \
			"${tdebs[@]}" "$debs/neuron/" -- null >"$logs/autopkgtest-$t.log" 2>&1
		st=$?
		summary=$logs/autopkgtest-$t/summary
		say "# autopkgtest $t: status $st, $(($(date +%s) - t1)) s"
		[ -f "$summary" ] && quote "$summary"
		grep -qE "^$t +PASS" "$summary" 2>/dev/null
		r=$?
		if [ $r -ne 0 ]; then
			tail -30 "$logs/autopkgtest-$t/$t-stderr" "$logs/autopkgtest-$t/$t-stdout" 2>/dev/null | quote
			tail -20 "$logs/autopkgtest-$t.log" | quote
		fi
		grep -E '^(# |ok: |FAIL)' "$logs/autopkgtest-$t/log" 2>/dev/null | quote
		result $r "autopkgtest.$t"
	done
else
	say "# autopkgtest not installed (scripts/setup-host.sh)"
	result 1 autopkgtest.dkms-build
	result 1 autopkgtest.consumer
fi
say "# autopkgtest: $(($(date +%s) - ts)) s"

# 3. dpkg -i of what autopkgtest did not install (all four if it installed
#    nothing): neuron-dkms's postinst made the group, DKMS the module
t0=$(date +%s)
debfiles=()
for p in "${pkgs[@]}"; do
	[ "$(dpkg-query -W -f='${Version} ${db:Status-Status}' "$p" 2>/dev/null)" = "$ver installed" ] &&
		{ say "# $p $ver installed by autopkgtest's apt"; continue; }
	debfiles+=("$(deb_of "$p")")
done
st=0
: >"$logs/install.log"
[ ${#debfiles[@]} -gt 0 ] && { dpkg -i "${debfiles[@]}" >"$logs/install.log" 2>&1; st=$?; }
[ $st -eq 0 ] || quote "$logs/install.log"
for p in "${pkgs[@]}"; do installed "$p" || { say "# $p not installed"; st=1; }; done
result $st deb.dpkg_install
say "# dpkg -i of ${#debfiles[@]} package(s): $(($(date +%s) - t0)) s"
grep -hE '^neuron-udev:|^Building|^Installing|Error' "$logs/autopkgtest-dkms-build.log" "$logs/install.log" 2>/dev/null | quote
st=0
[ -f "$src/dkms.conf" ] || st=1
result $st dkms.source_registered_in_usr_src

# the installed module: where an operator's modprobe finds it
ko=$(ls /lib/modules/"$kver"/updates/dkms/"$module".ko* 2>/dev/null | head -1)
st=1
if [ -n "$ko" ]; then
	magic=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	say "# installed: $ko (vermagic $magic)"
	[ "$magic" = "$kver" ] && st=0
fi
result $st dkms.module_installed
# the packaged module is not a test build: no pause point, no test-only
# parameter (kernel/Kbuild NEURON_TEST_HOOKS,
# docs/decisions/0011-reset-and-recovery.md#pause-points)
st=1
if [ -n "$ko" ]; then
	parms=$(modinfo -F parm "$ko" 2>/dev/null)
	say "# parameters: $(echo "$parms" | cut -d: -f1 | tr '\n' ' ')"
	echo "$parms" | grep -qE '^(pause_step|paused_at):' || st=0
fi
result $st dkms.module_has_no_test_hooks
dkms status -m "$name" -v "$ver" -k "$kver" 2>&1 | quote
dkms status -m "$name" -v "$ver" -k "$kver" 2>/dev/null | grep -q ': installed'
result $? dkms.status_installed

# the group the postinst made
gid=$(getent group "$group" | cut -d: -f3)
# the system range of addgroup --system (adduser's and shadow's defaults
# unless /etc/adduser.conf or /etc/login.defs set them)
defs() { sed -n "s/^[[:space:]]*$1[[:space:]]\+\([0-9]\+\).*/\1/p" /etc/login.defs 2>/dev/null | tail -1; }
gid_min=$(defs GID_MIN)
sys_min=$(defs SYS_GID_MIN)
sys_max=$(defs SYS_GID_MAX)
sys_min=${sys_min:-100}
sys_max=${sys_max:-$((${gid_min:-1000} - 1))}
say "# group $group: gid ${gid:-none} (system range $sys_min-$sys_max, existed before: $had_group)"
[ -n "$gid" ] && [ "$gid" -ge "$sys_min" ] && [ "$gid" -le "$sys_max" ]
result $? dkms.group_neuron_system
# the packaged rule: as shipped, root's, not writable by others, dpkg's
st=1
if [ -f "$rule" ]; then
	say "# $rule: $(stat -c '%A %U:%G' "$rule"), $(dpkg -S "$rule" 2>&1)"
	cmp -s "$rule" "$top/udev/60-neuron.rules" && [ "$(stat -c '%a %u' "$rule")" = "644 0" ] &&
		dpkg -S "$rule" 2>/dev/null | grep -q '^neuron-dkms:' && st=0
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
# with the packaged rule the DKMS hook writes nothing into /etc
st=0
if [ -z "$saved_rule" ] && [ -e "$etc_rule" ]; then
	say "# the DKMS hook installed $etc_rule beside the packaged $rule"
	st=1
fi
result $st dkms.hook_leaves_etc_alone_when_packaged

# the hook on scratch trees: install writes the rule into the rules
# directory when no package ships one; remove keeps the rule while a
# kernel-<kver>-<arch> link says another kernel has the module, and removes
# it with the last one
scratch=$(mktemp -d)
mkdir -p "$scratch/neuron/$ver/source" "$scratch/rules" "$scratch/none"
ln -s "$ver/0.0.0-other/x86_64" "$scratch/neuron/kernel-0.0.0-other-x86_64"
hook() { (cd "$scratch/neuron/$ver/source" && NEURON_UDEV_RULES_DIR=$scratch/rules \
	NEURON_UDEV_PACKAGED_DIRS=$scratch/none "$top/udev/neuron-udev.sh" "$1") 2>&1 | quote; }
hook install
cmp -s "$scratch/rules/60-neuron.rules" "$top/udev/60-neuron.rules"
result $? dkms.hook_install_without_package
hook remove
st=1
[ -e "$scratch/rules/60-neuron.rules" ] && st=0
rm "$scratch/neuron/kernel-0.0.0-other-x86_64"
hook remove
[ -e "$scratch/rules/60-neuron.rules" ] && st=1
rm -rf "$scratch"
result $st dkms.hook_remove_waits_for_last_kernel

# 4. the same registered source for the 6.12 headers (the 6.12 lane's module)
k612dir=$("$top/selftests/vm/fetch-kernel.sh" --headers 6.12 2>>"$logs/fetch-6.12.log" | tail -1)
k612=""
[ -n "$k612dir" ] && k612=$(cat "$k612dir/include/config/kernel.release" 2>/dev/null)
st=1
out612=$build/dkms/6.12
rm -rf "$out612"
if [ -n "$k612" ]; then
	ts=$(date +%s)
	dkms build -m "$name" -v "$ver" -k "$k612" --kernelsourcedir "$k612dir" >"$logs/build-6.12.log" 2>&1
	st=$?
	built=/var/lib/dkms/$name/$ver/$k612/$(uname -m)/module
	f=$(ls "$built/$module".ko* 2>/dev/null | head -1)
	if [ $st -eq 0 ] && [ -n "$f" ]; then
		mkdir -p "$out612"
		case $f in
		*.xz) xz -dc "$f" >"$out612/$module.ko" ;;
		*.zst) zstd -qdc "$f" >"$out612/$module.ko" ;;
		*) cp "$f" "$out612/$module.ko" ;;
		esac
		magic=$(modinfo -F vermagic "$out612/$module.ko" 2>/dev/null | cut -d' ' -f1)
		say "# dkms build for $k612 ($k612dir): $out612/$module.ko, vermagic $magic, $(($(date +%s) - ts)) s"
		[ "$magic" = "$k612" ] || st=1
	else
		quote "$logs/build-6.12.log"
		[ -f "/var/lib/dkms/$name/$ver/build/make.log" ] && tail -40 "/var/lib/dkms/$name/$ver/build/make.log" | quote
		st=1
	fi
else
	say "# no 6.12 headers (selftests/vm/fetch-kernel.sh --headers 6.12)"
	quote "$logs/fetch-6.12.log"
fi
result $st dkms.build_for_6.12

# the installed-package consumers (userspace/tests/install/): built against
# what dpkg installed in /usr and nothing else (no build tree, no -I or -L
# of ours), the C one with pkg-config, the C++ one with find_package(neuron)
consumers=$logs/consumers
rm -rf "$consumers"
mkdir -p "$consumers"
c_consumer="" cxx_consumer=""
if installed libneuron-dev; then
	st=1
	cflags=$(pkg-config --cflags --libs neuron 2>"$consumers/pkg-config.log")
	say "# pkg-config neuron: $cflags"
	# shellcheck disable=SC2086
	if cc -std=c99 -Wall -Wextra -o "$consumers/neuron-consumer-c" "$top/userspace/tests/install/consumer.c" \
		$cflags >"$consumers/cc.log" 2>&1 && "$consumers/neuron-consumer-c" >>"$consumers/cc.log" 2>&1; then
		c_consumer=$consumers/neuron-consumer-c
		st=0
	fi
	[ $st -eq 0 ] || quote "$consumers/pkg-config.log" "$consumers/cc.log"
	result $st deb.c_consumer_built_with_pkg_config
	st=1
	if cmake -S "$top/userspace/tests/install" -B "$consumers/cmake" >"$consumers/cmake.log" 2>&1 &&
		cmake --build "$consumers/cmake" >>"$consumers/cmake.log" 2>&1 &&
		"$consumers/cmake/consumer" >>"$consumers/cmake.log" 2>&1; then
		cp "$consumers/cmake/consumer" "$consumers/neuron-consumer-cxx"
		cxx_consumer=$consumers/neuron-consumer-cxx
		st=0
	fi
	[ $st -eq 0 ] || tail -30 "$consumers/cmake.log" | quote
	result $st deb.cxx_consumer_built_with_find_package
else
	say "# libneuron-dev not installed: no consumers"
	result 1 deb.c_consumer_built_with_pkg_config
	result 1 deb.cxx_consumer_built_with_find_package
fi

# udev_vm KERNEL MODULE: the packaged rule applied by a real systemd-udevd
# in the VM (the host's udevadm, which is also systemd-udevd by its name),
# with the host's neuron group line and two users: nmember (in the group by
# its supplementary groups only) and nother; nmember runs hello.nq with the
# packaged neuron-nq
udev_vm() {
	local payload=$logs/udev-payload ts st
	rm -rf "$payload"
	mkdir -p "$payload/udev"
	cp "$rule" "$payload/udev/"
	cp "$top/examples/hello.nq" "$payload/"
	getent group "$group" | cut -d: -f1-3 >"$payload/udev/group"
	cat >"$payload/udev-check.sh" <<'GUEST'
#!/bin/sh
n=0 fails=0
result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n dkms.udev.$2"; else echo "not ok $n dkms.udev.$2"; fails=$((fails + 1)); fi
}
u=/opt/neuron/udev
mkdir -p /run /lib/udev/rules.d /etc/udev/rules.d
mount -t tmpfs tmpfs /run
cp $u/60-neuron.rules /lib/udev/rules.d/
# AWS's driver installs a rule making every node named neuron* mode 0666
# (docs/decisions/0015-names.md); with it present our node must stay 0660
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
# the packaged neuron-nq (and libneuron.so.1) as the group member
su -s /bin/sh nmember -c 'neuron-nq run /opt/neuron/hello.nq' >/tmp/nq.out 2>&1
st=$?
sed 's/^/# neuron-nq: /' /tmp/nq.out
[ $st -eq 0 ] && grep -q '^status: OK' /tmp/nq.out
result $? member_runs_hello_with_packaged_neuron_nq
# the consumers built against the installed libneuron-dev only: each
# drains queue 1 of core 0 (a program of 8 notify instructions) through the
# library's wait, as the group member
for c in c cxx; do
	st=1
	if [ -x /bin/neuron-consumer-$c ]; then
		su -s /bin/sh nmember -c "neuron-consumer-$c /dev/nnq0" >/tmp/consumer.out 2>&1
		st=$?
		sed "s/^/# consumer-$c: /" /tmp/consumer.out
	else
		echo "# no neuron-consumer-$c (not built on the host)"
	fi
	result $st ${c}_consumer_drains_a_queue
done
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
	local extra=()
	[ -n "$c_consumer" ] && extra+=(--bin "$c_consumer")
	[ -n "$cxx_consumer" ] && extra+=(--bin "$cxx_consumer")
	LD_LIBRARY_PATH=$root/usr/lib/$multiarch NEURON_VM_LOG=$log.udev "$top/selftests/vm/run-vm.sh" --qemu "$qemu" \
		--kernel "$1" --module "$2" --bin "$udevadm" --bin "$nq" "${extra[@]}" --payload "$payload" \
		--timeout 300 -- /opt/neuron/udev-check.sh >/dev/null 2>&1
	st=$?
	tr -d '\r' <"$log.udev" >>"$log"
	say "# VM under udev with the packaged rule: status $st, $(($(date +%s) - ts)) s"
	result $st dkms.udev_vm
}

# 5. the installed file in the VM: under udev, then the main lane's payload
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
	if [ -n "$kernel" ] && [ -n "$qemu" ] && [ -n "$udevadm" ] && [ -f "$rule" ] && [ -x "$nq" ]; then
		udev_vm "$kernel" "$mod"
	else
		say "# no QEMU, guest kernel, udevadm (package udev), packaged rule or packaged neuron-nq"
		result 1 dkms.udev_vm
	fi
	ts=$(date +%s)
	if [ -n "$kernel" ] && [ -n "$qemu" ]; then
		NEURON_VM_LOG=$log.vm "$top/selftests/vm/run-vm.sh" --qemu "$qemu" \
			--kernel "$kernel" --module "$mod" --payload "$payload" \
			--timeout 1200 -- /opt/neuron/guest-tests.sh --no-devtests >/dev/null 2>&1
		st=$?
		tr -d '\r' <"$log.vm" >>"$log"
		say "# VM with the DKMS-installed module: status $st, $(($(date +%s) - ts)) s"
		result $st dkms.vm_run
	else
		say "# no QEMU or guest kernel"
		result 1 dkms.vm_run
	fi
fi

# 6. dpkg --purge: the module, registration, sources and rule go, the group stays
dpkg --purge "${pkgs[@]}" >"$logs/purge.log" 2>&1
st=$?
[ $st -eq 0 ] || quote "$logs/purge.log"
for p in "${pkgs[@]}"; do known "$p" && { say "# $p still known to dpkg: $(status_of "$p")"; st=1; }; done
result $st deb.dpkg_purge
st=0
[ -e "$rule" ] && { say "# $rule still there after the purge"; st=1; }
getent group "$group" >/dev/null || { say "# the purge deleted group $group"; st=1; }
result $st dkms.remove_takes_rule_keeps_group
purge
tidy
st=0
registered && st=1
ls /lib/modules/"$kver"/updates/dkms/"$module".ko* >/dev/null 2>&1 && st=1
[ -e "$src" ] && st=1
result $st dkms.removed
finish
