#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boots Debian's kernel under QEMU (TCG) with the emulated neuron-tpb device and
# an initramfs built on the fly, runs one guest script, and returns its result.
#
# The guest prints KTAP/TAP on the serial console and finally the line
# "NEURON-VM-EXIT: <status>". This script copies the console to
# $NEURON_VM_LOG (default build/vm/console.log) as it is, and to stdout
# through scripts/console-filter (no escape sequence or control byte that
# could change the terminal's state: docs/build-environment.md#console-filter),
# and exits:
#   the guest script's status, or 124 if the guest hung (timeout), or 125 if
#   it died without the exit line (panic, oops on init, ...).
#
# Usage: run-vm.sh [options] -- GUEST_SCRIPT [ARGS...]
#   --qemu PATH        qemu-system-x86_64 with neuron-tpb (default: build-qemu.sh)
#   --kernel PATH      vmlinuz (default: fetch-kernel.sh)
#   --module PATH      a module copied to /lib/neuron/ (repeatable); the guest
#                      script loads it
#   --payload DIR      copied to /opt/neuron in the guest (repeatable)
#   --bin PATH         a host binary copied with its shared libraries (repeatable)
#   --device OPTS      extra neuron-tpb properties, e.g. "cores=1,gen=sunda"
#                      (every device gets them)
#   --devices N        N neuron-tpb functions (default 1), each behind its own
#                      pcie-root-port rpK (slot K) as neuron{K-1}, K = 1..N;
#                      the guest numbers them /dev/nnq0.. in bus order
#   --timeout SECONDS  wall-clock limit for the whole boot (default 600)
#   --memory MIB       guest memory (default 512)
#   --monitor PATH     QEMU monitor on a unix socket (for hot-unplug tests)
#   --append ARGS      extra kernel command line (read by tests from /proc/cmdline)
#   --smp N            virtual CPUs (default 1), all run by one TCG thread
#                      (docs/decisions/0029-one-tcg-thread.md);
#                      NEURON_TCG_THREAD=multi
#                      gives each its own thread, for measuring only
#   --iommu            an Intel IOMMU (intel-iommu, no interrupt remapping),
#                      enabled in the guest with strict invalidation
# The device model's guest-error log goes to $NEURON_VM_LOG.qemu.
# The root port's link runs at 5 GT/s: after a secondary bus reset (AER
# recovery) Linux waits for Data Link Layer Link Active on faster links, and
# QEMU 7.2's root port never reports it again, so the recovery would fail.
# no_timer_check: on a loaded host a TCG guest can miss the kernel's boot-time
# check of the IO-APIC timer and panic ("IO-APIC + timer doesn't work"); the
# timer works, the check is the one virtual machines skip.
# GUEST_SCRIPT is a path inside the guest (e.g. /opt/neuron/run-tests.sh).
#
# Interactive mode: run-vm.sh --interactive [options] [-- SETUP_SCRIPT [ARGS...]]
#   boots as above, runs SETUP_SCRIPT if given (e.g. one that loads the
#   module; its failure ends the boot with its status), then gives the
#   console a shell in /opt/neuron (PATH: /bin /sbin /opt/neuron) and exits
#   with the shell's status (`exit N`; `poweroff`, `reboot` and `halt` end
#   it with 0). scripts/shell.sh (`make shell`) drives it:
#   - stdin a terminal: QEMU's stdio console with signal=off, so every key
#     (Ctrl-C, Ctrl-Z, Ctrl-\) goes to the guest, where `setsid cttyhack sh`
#     gives the shell the console as controlling terminal and job control;
#     Ctrl-A x leaves QEMU at once, Ctrl-A c is QEMU's monitor (mux=on).
#     The boot is shown through console-filter, the shell's own output as
#     it is; the terminal's stty settings are restored afterwards and
#     line wrapping and the cursor turned back on. No time limit unless
#     --timeout is given. The guest's console gets the host's TERM and
#     size (NEURON_VM_TERM, NEURON_VM_ROWS, NEURON_VM_COLS on the kernel
#     command line, which the kernel hands to init as its environment).
#   - stdin not a terminal: it is read to its end first and copied into the
#     initramfs; the guest's sh runs it as a script (stdin /dev/null), as
#     `sh` on the host runs what is piped into it: it ends at `exit N` or at
#     its end, with the last command's status. The console goes through
#     console-filter as in the default mode; --timeout as there.
# The default mode (no --interactive) is unchanged by any of this.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

qemu="" kernel="" device_opts="" devices=1 timeout=600 memory=512 monitor="" append=""
smp=1 iommu_args=() iommu_append="" interactive=0 timeout_given=0
modules=() payloads=() bins=()
while [ $# -gt 0 ]; do
	case "$1" in
	--qemu) qemu=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--module) modules+=("$2"); shift 2 ;;
	--payload) payloads+=("$2"); shift 2 ;;
	--bin) bins+=("$2"); shift 2 ;;
	--device) device_opts=",$2"; shift 2 ;;
	--devices) devices=$2; shift 2 ;;
	--timeout) timeout=$2; timeout_given=1; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--memory) memory=$2; shift 2 ;;
	--monitor) monitor=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--iommu)
		# before any other PCI device, so they sit behind it
		iommu_args=(-device intel-iommu,intremap=off)
		iommu_append="intel_iommu=on iommu.strict=1"
		shift ;;
	--) shift; break ;;
	*) echo "run-vm: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -ge 1 ] || [ "$interactive" -eq 1 ] || { echo "run-vm: no guest script given" >&2; exit 2; }
case $devices in
''|*[!0-9]*|0) echo "run-vm: --devices wants a number from 1" >&2; exit 2 ;;
esac

[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1)
[ -n "$kernel" ] || kernel=$("$here/fetch-kernel.sh" | tail -1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,opt/neuron,lib/neuron,usr/share/misc}

cp /bin/busybox "$root/bin/busybox"

# copy_with_libs FILE DESTDIR: the binary and every shared library it links.
# Libraries go to the loader's default directory (a build tree's RUNPATH may
# point under /tmp, which the guest mounts over); the loader keeps its path.
copy_with_libs() {
	local f=$1 dest=$2 lib to
	cp "$f" "$dest/"
	mkdir -p "$root/lib/x86_64-linux-gnu" "$root/lib64"
	for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*' | sort -u); do
		case $lib in
		*/ld-linux*) to=$root$lib ;;
		*) to=$root/lib/x86_64-linux-gnu/$(basename "$lib") ;;
		esac
		[ -e "$to" ] || cp -L "$lib" "$to"
	done
}
# lspci -vv for the device's MSI-X capability, with the IDs database
copy_with_libs /usr/bin/lspci "$root/bin"
[ -f /usr/share/misc/pci.ids ] && cp /usr/share/misc/pci.ids "$root/usr/share/misc/"
# iproute2's genl, to list the driver's generic netlink family
[ -x /usr/sbin/genl ] && copy_with_libs /usr/sbin/genl "$root/bin"
for b in "${bins[@]}"; do copy_with_libs "$b" "$root/bin"; done
for m in "${modules[@]}"; do cp "$m" "$root/lib/neuron/"; done
for p in "${payloads[@]}"; do cp -a "$p"/. "$root/opt/neuron/"; done

# interactive_init: /init of --interactive (see the header), with
# /etc/neuron-vm/input (stdin not a terminal) or the shell's profile (a
# terminal). BusyBox's poweroff, reboot and halt would signal PID 1, here a
# shell script that does not act on it (and busybox sh runs its applets
# before anything on PATH), so both define them as functions that end the
# session at once with status 0, as the last lines of /init do.
tty_in=0
[ "$interactive" -eq 1 ] && [ -t 0 ] && tty_in=1
interactive_init() {
	local stop='poweroff() { echo "NEURON-VM-EXIT: 0"; /bin/busybox poweroff -f; }
reboot() { poweroff; }
halt() { poweroff; }'
	mkdir -p "$root/etc/neuron-vm" "$root/root"
	if [ "$tty_in" -eq 0 ]; then
		{ echo "$stop"; cat; } >"$root/etc/neuron-vm/input"
	fi
	{
		echo "# the interactive shell's \$ENV (run-vm.sh --interactive)"
		echo "$stop"
		cat <<'PROFILE'
[ -n "$NEURON_VM_ROWS" ] && [ -n "$NEURON_VM_COLS" ] &&
	stty rows "$NEURON_VM_ROWS" cols "$NEURON_VM_COLS" 2>/dev/null
PS1='neuron-vm:\w# '
PROFILE
	} >"$root/etc/neuron-vm/profile"
	cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp
# a fresh line: the firmware's last one may lack its end, and the exit line
# is only found at the start of one (a script that prints nothing)
echo
export PATH=/bin:/sbin:/opt/neuron HOME=/root
[ -n "$NEURON_VM_TERM" ] && export TERM="$NEURON_VM_TERM"
status=0
if [ $# -gt 0 ]; then
	if [ -x "$1" ]; then
		"$@"
		status=$?
		[ $status -eq 0 ] || echo "NEURON-VM: $1 failed with status $status"
	else
		echo "NEURON-VM: guest script $1 not found"
		status=1
	fi
fi
if [ $status -eq 0 ]; then
	cd /opt/neuron
	if [ -f /etc/neuron-vm/input ]; then
		sh /etc/neuron-vm/input </dev/null
		status=$?
	else
		# the console as controlling terminal: job control, and Ctrl-C
		# reaches the foreground command
		echo "NEURON-VM-SHELL: ready"
		ENV=/etc/neuron-vm/profile setsid cttyhack sh
		status=$?
	fi
fi
echo "NEURON-VM-EXIT: $status"
/bin/busybox poweroff -f
INIT
}

if [ "$interactive" -eq 1 ]; then
	interactive_init
else
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp
export PATH=/bin:/sbin:/opt/neuron
status=1
if [ -x "$1" ]; then
	"$@"
	status=$?
else
	echo "NEURON-VM: guest script $1 not found"
fi
echo "NEURON-VM-EXIT: $status"
poweroff -f
INIT
fi
chmod +x "$root/init"
# the guest script and its arguments become init's arguments
cmdline_args="$*"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

log=${NEURON_VM_LOG:-$top/build/vm/console.log}
mkdir -p "$(dirname "$log")"
monitor_args=()
[ -n "$monitor" ] && monitor_args=(-monitor "unix:$monitor,server,nowait")
# device K-1 behind root port rpK; slot K keeps each port's (chassis, slot) unique
device_args=()
for ((k = 1; k <= devices; k++)); do
	device_args+=(-device "pcie-root-port,id=rp$k,slot=$k,x-speed=5"
		-device "neuron-tpb,id=neuron$((k - 1)),bus=rp$k$device_opts")
done

# interactive_qemu: QEMU on the user's terminal (--interactive, stdin a
# terminal). Every key goes to the guest's serial port (signal=off: Ctrl-C is
# a byte for the guest, not SIGINT for QEMU); mux=on keeps QEMU's Ctrl-A
# escape (Ctrl-A x quits, Ctrl-A c switches to the monitor). The output goes
# through console-filter up to the guest's "NEURON-VM-SHELL: ready" line (the
# firmware's and kernel's sequences, docs/build-environment.md#console-filter)
# and as it is after it (the shell's line editing, neuron-nq top's redraws).
# The terminal's settings are saved before and restored after, whatever
# QEMU left (it restores them itself unless killed); wrap and cursor back on.
interactive_qemu() {
	local rows cols st
	vm_stty=$(stty -g)
	rows=$(tput lines 2>/dev/null || echo 24)
	cols=$(tput cols 2>/dev/null || echo 80)
	trap 'stty "$vm_stty" 2>/dev/null; printf "\033[?7h\033[?25h"; rm -rf "$work"' EXIT
	[ "$timeout_given" -eq 1 ] || timeout=0
	timeout --foreground -k 5 "$timeout" "$qemu" \
		-machine q35 -cpu max -m "$memory" -smp "$smp" \
		-accel "tcg,thread=${NEURON_TCG_THREAD:-single}" \
		-nographic -no-reboot -nic none -vga none \
		-chardev stdio,id=neuron-console,mux=on,signal=off \
		-serial chardev:neuron-console -mon chardev=neuron-console \
		-L /usr/share/seabios -L /usr/share/qemu \
		"${iommu_args[@]}" \
		"${device_args[@]}" \
		"${monitor_args[@]}" -d guest_errors -D "$log.qemu" \
		-kernel "$kernel" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 quiet panic=-1 no_timer_check $iommu_append $append NEURON_VM_TERM=${TERM:-vt100} NEURON_VM_ROWS=$rows NEURON_VM_COLS=$cols init=/init -- $cmdline_args" \
		2>&1 | tee "$log" | perl -e '
			# console-filter until the marker line, then the bytes as they are
			my ($filter, $mark) = @ARGV;
			binmode STDIN; binmode STDOUT; $| = 1;
			open(my $f, "|-", $filter) or die "run-vm: $filter: $!";
			binmode $f; select((select($f), $| = 1)[0]);
			my ($raw, $seen, $buf) = (0, "");
			while (1) {
				my $n = sysread(STDIN, $buf, 65536);
				next if !defined $n && $!{EINTR};
				last if !$n;
				if ($raw) { print $buf; next; }
				my $all = $seen . $buf;
				my $i = index($all, $mark);
				if ($i < 0) {
					print $f $buf;
					$seen = substr($all, -length($mark));
					next;
				}
				my $end = $i + length($mark) - length($seen);
				print $f substr($buf, 0, $end);
				close($f);
				$raw = 1;
				print substr($buf, $end);
			}
			close($f) if !$raw;
		' "$top/scripts/console-filter" "NEURON-VM-SHELL: ready"
	st=${PIPESTATUS[0]}
	stty "$vm_stty" 2>/dev/null
	printf '\033[?7h\033[?25h'
	return "$st"
}

start=$(date +%s%N)
set +e
if [ "$tty_in" -eq 1 ]; then
	interactive_qemu
	qemu_status=$?
else
timeout --foreground -k 5 "$timeout" "$qemu" \
	-machine q35 -cpu max -m "$memory" -smp "$smp" \
	-accel "tcg,thread=${NEURON_TCG_THREAD:-single}" \
	-nographic -no-reboot -nic none -vga none \
	-L /usr/share/seabios -L /usr/share/qemu \
	"${iommu_args[@]}" \
	"${device_args[@]}" \
	"${monitor_args[@]}" -d guest_errors -D "$log.qemu" \
	-kernel "$kernel" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 no_timer_check $iommu_append $append init=/init -- $cmdline_args" \
	</dev/null 2>&1 | tee "$log" | "$top/scripts/console-filter"
qemu_status=${PIPESTATUS[0]}
fi
set -e
end=$(date +%s%N)
echo "run-vm: guest ran $(((end - start) / 1000000)) ms" >&2

if [ "$qemu_status" -eq 124 ]; then
	echo "run-vm: guest timed out after ${timeout}s" >&2
	exit 124
fi
status=$(tr -d '\r' <"$log" | sed -n 's/^NEURON-VM-EXIT: \([0-9]*\)$/\1/p' | tail -1)
if [ -z "$status" ]; then
	echo "run-vm: guest stopped without reporting a status (panic?)" >&2
	exit 125
fi
exit "$status"
