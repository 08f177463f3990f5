#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# DKMS hook for /dev/nnqN's permissions (dkms.conf POST_INSTALL and
# POST_REMOVE). dkms runs it from the registered source tree,
# /var/lib/dkms/neuron/<version>/source (= /usr/src/neuron-<version>), once
# per kernel it installs the module for or removes it from; its exit status
# is ignored by dkms, so every step is idempotent and says what it did.
#
#   install: creates the system group "neuron" if missing; installs
#            60-neuron.rules into /etc/udev/rules.d (mode 0644); if udevd
#            runs, reloads the rules and re-triggers the nnq devices so
#            existing nodes get group neuron, mode 0660 at once
#            -- unless a package (neuron-dkms) ships the rule in udev's
#            own directory (/lib/udev/rules.d or /usr/lib/udev/rules.d):
#            then dpkg owns it and nothing is written to /etc
#   remove:  removes the rules file once the module is installed for no
#            kernel any more (any version); keeps the group: files
#            elsewhere may be owned by its GID, and a later group that
#            reused the number would inherit them
#
# /etc/udev/rules.d, not /usr/lib/udev/rules.d: /usr/lib belongs to the
# package manager (dpkg knows nothing of a file a dkms hook writes there,
# and /usr may be read-only), /etc is where local installs and the
# administrator put rules, and udev reads it on every version.
# Usage: neuron-udev.sh install|remove
set -u
group=neuron
rules_dir=${NEURON_UDEV_RULES_DIR:-/etc/udev/rules.d}
rules=60-neuron.rules
here=$(cd "$(dirname "$0")" && pwd)
packaged_dirs=${NEURON_UDEV_PACKAGED_DIRS:-/lib/udev/rules.d /usr/lib/udev/rules.d}

say() { echo "neuron-udev: $*"; }

# udevd is there to talk to: not in a chroot, an image build or a container
# without udev (udevadm would fail or wait there)
udev_running() {
	command -v udevadm >/dev/null 2>&1 && [ -S /run/udev/control ] &&
		udevadm control --ping --timeout=5 >/dev/null 2>&1
}

# the rule as a package installed it (debian/neuron-dkms.install)
packaged_rule() {
	for d in $packaged_dirs; do
		[ -e "$d/$rules" ] && { echo "$d/$rules"; return 0; }
	done
	return 1
}

udev_reload() {
	if udev_running; then
		udevadm control --reload &&
			udevadm trigger --subsystem-match=nnq --action=change &&
			say "udev rules reloaded, nnq devices re-triggered"
	else
		say "udevd not running: rules take effect when it starts"
	fi
}

# the module is still installed for some kernel: dkms keeps one
# kernel-<kver>-<arch> link per kernel in /var/lib/dkms/neuron, and removes
# the one for this kernel before it runs POST_REMOVE
still_installed() {
	local_tree=/var/lib/dkms/neuron
	case $PWD in */source) local_tree=${PWD%/*/source} ;; esac
	for l in "$local_tree"/kernel-*; do
		[ -L "$l" ] && return 0
	done
	return 1
}

case ${1:-} in
install)
	st=0
	if getent group "$group" >/dev/null; then
		say "group $group exists (gid $(getent group "$group" | cut -d: -f3))"
	elif groupadd -f --system "$group"; then
		say "created system group $group (gid $(getent group "$group" | cut -d: -f3))"
	else
		say "could not create group $group: /dev/nnq* stays root-only"
		st=1
	fi
	if shipped=$(packaged_rule); then
		say "rule shipped by the package as $shipped: nothing installed into $rules_dir"
	else
		mkdir -p "$rules_dir" &&
			install -m 0644 "$here/$rules" "$rules_dir/$rules" &&
			say "installed $rules_dir/$rules" || st=1
	fi
	udev_reload
	exit $st
	;;
remove)
	if still_installed; then
		say "module still installed for another kernel: keeping $rules_dir/$rules"
		exit 0
	fi
	if [ -e "$rules_dir/$rules" ]; then
		rm -f "$rules_dir/$rules" && say "removed $rules_dir/$rules"
		udev_reload
	fi
	say "keeping group $group (files may be owned by its gid)"
	exit 0
	;;
*)
	echo "usage: $0 install|remove" >&2
	exit 2
	;;
esac
