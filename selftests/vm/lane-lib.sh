# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the VM lane scripts (sourced, not run). Each lane sets
# $lane (its name) and $log (its console log) before using them.

# lane_fail_early NAME MESSAGE: the lane could not reach the VM; one
# "not ok" line in the log so scripts/check.sh counts the failure
lane_fail_early() {
	echo "lane-$lane: $2" >&2
	echo "not ok 1 lane-$lane.$1" | tee -a "$log"
	exit 1
}

# lane_payload DIR: the main lane's payload (scripts/check.sh): every
# kselftest binary and devtest from build/selftests, the in-VM benchmarks
# (*_bench: figures, one TAP line for having run), and guest-tests.sh
lane_payload() {
	local dir=$1 top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	rm -rf "$dir"
	mkdir -p "$dir/tests" "$dir/devtests"
	ls "$top"/build/selftests/*_test >/dev/null 2>&1 || return 1
	cp "$top"/build/selftests/*_test "$dir/tests/"
	cp "$top"/build/selftests/*_bench "$dir/tests/" 2>/dev/null || true
	cp "$top/build/selftests/devtest" "$dir/devtests/"
	cp "$top/selftests/vm/guest-tests.sh" "$dir/"
}

# lane_build_module OBJ KDIR [MAKE_VAR=VALUE...]: nnq.ko from the sources
# alone (no object of another kernel's build reused), a test build
# (NEURON_TEST_HOOKS=1), in OBJ/kernel, against the kernel tree KDIR, with
# any further make variables (the debug lane's NEURON_GCOV=1);
# the build log is OBJ/build.log
lane_build_module() {
	local obj=$1 kdir=$2 top f
	shift 2
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	rm -rf "$obj"
	mkdir -p "$obj/kernel"
	cp -a "$top/include" "$obj/"
	for f in "$top"/kernel/Kbuild "$top"/kernel/Makefile "$top"/kernel/*.c "$top"/kernel/*.h; do
		case $f in *.mod.c) continue ;; esac
		cp "$f" "$obj/kernel/"
	done
	make -C "$obj/kernel" KDIR="$kdir" NEURON_TEST_HOOKS=1 "$@" -j2 >"$obj/build.log" 2>&1 ||
		{ tail -30 "$obj/build.log" >&2; return 1; }
}

# lane_robust_args ARGS...: the options of the robust_test lanes (--qemu
# --kernel --module --payload --log, or QEMU KERNEL MODULE PAYLOAD
# NEURON_VM_LOG), into $qemu $kernel $module $payload $log; checks they exist
lane_robust_args() {
	local top f
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	qemu=${QEMU:-} kernel=${KERNEL:-} module=${MODULE:-$top/kernel/nnq.ko}
	payload=${PAYLOAD:-$top/build/vm-payload}
	log=${NEURON_VM_LOG:-$top/build/vm/lane-$lane.log}
	while [ $# -gt 0 ]; do
		case "$1" in
		--qemu) qemu=$2; shift 2 ;;
		--kernel) kernel=$2; shift 2 ;;
		--module) module=$2; shift 2 ;;
		--payload) payload=$2; shift 2 ;;
		--log) log=$2; shift 2 ;;
		*) echo "lane-$lane: unknown option $1" >&2; exit 2 ;;
		esac
	done
	for f in "$qemu" "$kernel" "$module" "$payload/tests/robust_test" "$payload/guest-tests.sh"; do
		[ -e "$f" ] || { echo "lane-$lane: missing ${f:-a path} (see the header)" >&2; exit 2; }
	done
}

# lane_tap_counts LOG: the log's "ok"/"not ok" lines into $np and $nf
lane_tap_counts() {
	np=$(tr -d '\r' <"$1" | grep -cE '^ok [0-9]+' || true)
	nf=$(tr -d '\r' <"$1" | grep -cE '^not ok [0-9]+' || true)
}

# lane_monitor SOCKET COMMAND: one human-monitor command, prints QEMU's answer
lane_monitor() {
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

# lane_relay PID SOCKET: while the VM PID runs, forward the guest's
# "NEURON-HOTPLUG: <command> :END" console lines (in $log) to the QEMU
# monitor, each once, in order. Only device_del, device_add, qom-set and
# pcie_aer_inject_error are forwarded, each with the vCPUs stopped. A
# device_add waits until the old device's RAM is gone, and is retried while
# QEMU refuses it because the old device is not finalized yet ("Duplicate
# ID"). Sets $handled; the monitor's
# answers go to $log.host.
lane_relay() {
	local vm=$1 sock=$2 req out try reqs
	handled=0
	while kill -0 "$vm" 2>/dev/null; do
		# whole requests only: the line ends with its " :END" marker
		mapfile -t reqs < <(tr -d '\r' <"$log" |
			sed -n 's/^NEURON-HOTPLUG: \(\(device_del\|device_add\|qom-set\|pcie_aer_inject_error\) [A-Za-z0-9_,=./ -]*\) :END$/\1/p')
		while [ "$handled" -lt "${#reqs[@]}" ]; do
			req=${reqs[$handled]}
			handled=$((handled + 1))
			# QEMU frees an unplugged device's RAM after an RCU grace
			# period; adding its successor before that aborts QEMU
			# ("RAMBlock ... already registered")
			if [[ $req == device_add* ]]; then
				for try in $(seq 1 50); do
					lane_monitor "$sock" "info ramblock" | grep -q neuron-tpb-mem || break
					sleep 0.2
				done
			fi
			for try in $(seq 1 40); do
				# with the vCPUs stopped: a change to the memory map made
				# from the monitor's thread while a vCPU runs can send that
				# vCPU's next MMIO access to the wrong region
				# (docs/decisions/0029-one-tcg-thread.md)
				lane_monitor "$sock" stop >/dev/null
				out=$(lane_monitor "$sock" "$req")
				lane_monitor "$sock" cont >/dev/null
				echo "[$(date +%T)] $req (try $try): ${out//$'\n'/ }" >>"$log.host"
				case $out in
				*"Duplicate ID"*) sleep 0.5 ;;
				*) break ;;
				esac
			done
		done
		sleep 0.3
	done
}
