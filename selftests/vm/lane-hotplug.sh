#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# VM lane "hotplug" (issue 6): surprise removal from the QEMU monitor and the
# module unload/load loop. The guest's robust_test, group "hotplug", holds
# /dev/neuron0 open with rings and doorbells mapped and threads blocked in
# poll() and read(), then prints
#     NEURON-HOTPLUG: device_del neuron0 :END
# on the console; this script, which watches the console log, sends that
# command to the QEMU monitor (a unix socket, run-vm.sh --monitor). The
# guest checks -ENODEV, SIGBUS and the woken waiters, then asks for
#     NEURON-HOTPLUG: device_add neuron-tpb,id=neuron0,bus=rp1 :END
# and checks the new device works. Group "reload" then unloads and loads
# the module 50 times (docs/robustness.md).
#
# Only "device_del ..." and "device_add ..." requests are forwarded, each
# once; a device_add that QEMU refuses because the old device is not
# finalized yet ("Duplicate ID") is retried. The monitor's answers go to
# <log>.host.
#
# Usage: lane-hotplug.sh [--qemu PATH] [--kernel PATH] [--module PATH]
#                        [--payload DIR] [--log PATH]
# or the environment: QEMU, KERNEL, MODULE, PAYLOAD, NEURON_VM_LOG.
# PAYLOAD is the main lane's payload directory (scripts/check.sh): its
# guest-tests.sh runs tests/robust_test, which takes its groups and options
# from the kernel command line (neuron_robust=...). Builds nothing. The console goes to the log
# (default build/vm/lane-hotplug.log); the guest prints TAP "ok N" /
# "not ok N" lines there. Prints one summary line; exits non-zero on any
# failure.
set -uo pipefail

lane=hotplug
robust="hotplug,reload,--module=/lib/neuron/neuron.ko"

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lane-lib.sh"
lane_robust_args "$@"

work=$(mktemp -d)
vm=""
cleanup() {
	[ -n "$vm" ] && kill "$vm" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$(dirname "$log")"
: >"$log"
: >"$log.host"
# monitor SOCKET COMMAND: one human-monitor command, prints QEMU's answer
monitor() {
	perl -MIO::Socket::UNIX -e '
		my ($path, $cmd) = @ARGV;
		my $s;
		for (1 .. 100) {
			$s = IO::Socket::UNIX->new(Peer => $path) and last;
			select(undef, undef, undef, 0.1);
		}
		die "cannot connect to $path: $!\n" unless $s;
		local $SIG{ALRM} = sub { die "no monitor prompt\n" };
		alarm 30;
		my $buf = "";
		my $prompt = sub {
			while ($buf !~ /\(qemu\) $/) {
				my $n = sysread($s, my $c, 4096);
				die "monitor closed\n" unless $n;
				$buf .= $c;
			}
			my $r = $buf;
			$buf = "";
			return $r;
		};
		$prompt->();
		print $s "$cmd\n";
		my $out = $prompt->();
		$out =~ s/\e\[[0-9;]*[A-Za-z]//g;
		$out =~ s/\r//g;
		$out =~ s/^[^\n]*\n//;	# the echo of the command
		$out =~ s/\(qemu\) $//;
		print $out;
	' "$1" "$2" 2>&1
}

sock=$work/monitor.sock
t0=$(date +%s)
NEURON_VM_LOG=$log "$here/run-vm.sh" --qemu "$qemu" --kernel "$kernel" \
	--module "$module" --payload "$payload" --monitor "$sock" \
	--append "neuron_robust=$robust" --timeout 600 \
	-- /opt/neuron/guest-tests.sh --lane "$lane" --no-devtests robust_test >/dev/null 2>&1 &
vm=$!

handled=0
while kill -0 "$vm" 2>/dev/null; do
	# whole requests only: the line ends with its " :END" marker
	mapfile -t reqs < <(tr -d '\r' <"$log" |
		sed -n 's/^NEURON-HOTPLUG: \(device_\(del\|add\) [A-Za-z0-9_,=.-]*\) :END$/\1/p')
	while [ "$handled" -lt "${#reqs[@]}" ]; do
		req=${reqs[$handled]}
		handled=$((handled + 1))
		for try in $(seq 1 40); do
			out=$(monitor "$sock" "$req")
			echo "[$(date +%T)] $req (try $try): ${out//$'\n'/ }" >>"$log.host"
			case $out in
			*"Duplicate ID"*) sleep 0.5 ;;
			*) break ;;
			esac
		done
	done
	sleep 0.3
done
wait "$vm"
status=$?
vm=""
lane_tap_counts "$log"
echo "lane-$lane: $np passed, $nf failed, status $status, $(($(date +%s) - t0)) s, $handled monitor requests (console: $log)"
[ "$status" -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]
