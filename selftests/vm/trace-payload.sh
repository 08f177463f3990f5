#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The tracing tools for a guest (docs/architecture.md#tracepoints): Debian's
# trace-cmd, the linux-perf that matches the guest kernel SERIES, neuron-nq,
# the shared libraries they link (ldd), and trace-guest.sh, into DIR/trace/
# and DIR/ (run-vm.sh --payload DIR puts them under /opt/neuron). The guest
# script runs them with LD_LIBRARY_PATH=/opt/neuron/trace/lib.
#
# perf must match the kernel it records: for 6.1 that is the host's
# linux-perf (scripts/setup-host.sh installs it); for 6.12 it is
# bookworm-backports' linux-perf, downloaded once with `apt-get download`
# and extracted, not installed, into $NEURON_CACHE/perf-VERSION/ (about
# 5 MB, a few seconds), as selftests/vm/fetch-kernel.sh does for the kernel.
#
# Usage: trace-payload.sh DIR SERIES      (SERIES: 6.1 or 6.12)
# Needs `make userspace` (build/userspace/neuron-nq).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=${1:?usage: trace-payload.sh DIR SERIES}
series=${2:?usage: trace-payload.sh DIR SERIES}
cache=${NEURON_CACHE:-/var/cache/neuron}
nq=$top/build/userspace/neuron-nq

die() { echo "trace-payload: $*" >&2; exit 1; }
. "$top/scripts/deb-fetch.sh"
[ -x /usr/bin/trace-cmd ] || die "no /usr/bin/trace-cmd (scripts/setup-host.sh installs trace-cmd)"
[ -x "$nq" ] || die "no $nq (make userspace)"

# perf_for SERIES: the path of a perf binary built for that kernel series
perf_for() {
	local ver d tmp
	case $1 in
	6.1)
		ver=$(dpkg-query -W -f='${Version}' linux-perf 2>/dev/null) ||
			die "linux-perf is not installed (scripts/setup-host.sh)"
		case $ver in 6.1.*) ;; *) die "the host's linux-perf is $ver, not 6.1" ;; esac
		echo /usr/bin/perf
		;;
	6.12)
		# the newest 6.12 linux-perf apt knows (bookworm-backports)
		ver=$(apt-cache madison linux-perf 2>/dev/null | awk '$3 ~ /^6\.12\./ { print $3; exit }')
		if [ -z "$ver" ]; then
			apt-get update -q >/dev/null 2>&1 || true
			ver=$(apt-cache madison linux-perf 2>/dev/null | awk '$3 ~ /^6\.12\./ { print $3; exit }')
		fi
		[ -n "$ver" ] || die "no 6.12 linux-perf in apt (bookworm-backports: scripts/setup-host.sh)"
		d=$cache/perf-$ver
		if [ ! -x "$d/usr/bin/perf" ]; then
			deb_lock fetch-perf
			if [ ! -x "$d/usr/bin/perf" ]; then
				tmp=$(mktemp -d)
				deb_download "$tmp" "linux-perf=$ver"
				rm -rf "$d.tmp"
				dpkg-deb -x "$tmp"/linux-perf_*.deb "$d.tmp"
				rm -rf "$tmp" "$d"
				mv "$d.tmp" "$d"
			fi
		fi
		echo "$d/usr/bin/perf"
		;;
	*) die "unknown kernel series $1 (6.1 or 6.12)" ;;
	esac
}
perf=$(perf_for "$series")
"$perf" version >/dev/null 2>&1 || die "$perf does not run on this host (missing libraries?)"

t=$dir/trace
rm -rf "$t"
mkdir -p "$t/bin" "$t/lib"
cp /usr/bin/trace-cmd "$t/bin/"
cp "$perf" "$t/bin/perf"
# without its debug information (23 MB of the build's 25)
strip -o "$t/bin/neuron-nq" "$nq"
# the C API and execute() as an unprivileged user (api-guest.sh); the
# drain on every path against the torn-record checks (drain-guest.sh)
for b in vm_c_api vm_execute vm_torn_drain hello_c; do
	[ -x "$top/build/userspace/$b" ] || die "no $top/build/userspace/$b (make userspace)"
	strip -o "$t/bin/$b" "$top/build/userspace/$b"
done
# every library they link, except the loader (run-vm.sh copies it with its
# own binaries); a library ldd cannot find fails here, not in the guest
for b in "$t"/bin/*; do
	if ldd "$b" | grep -q 'not found'; then
		ldd "$b" | grep 'not found' >&2
		die "$(basename "$b"): libraries missing on the host"
	fi
	for lib in $(ldd "$b" | grep -o '/[^ ]*' | sort -u); do
		case $lib in */ld-linux*) continue ;; esac
		[ -e "$t/lib/$(basename "$lib")" ] || cp -L "$lib" "$t/lib/"
	done
done
# libneuron from the build tree carries its debug information too
strip --strip-debug "$t"/lib/*
cp "$here/trace-guest.sh" "$dir/"
# neuron-nq list and metrics on the real driver ride in the same boots
cp "$here/metrics-guest.sh" "$dir/"
cp "$here/api-guest.sh" "$dir/"
# examples/hello.nq for hello_c, and the neuron Python module with its
# interpreter, numpy, cffi and pytest (api-guest.sh; python-payload.sh)
cp "$top/examples/hello.nq" "$t/"
"$here/python-payload.sh" "$dir" >/dev/null || die "python-payload.sh failed"
cp "$here/drain-guest.sh" "$dir/"
# neuron-nq coredump on a real hang's devcoredump
cp "$here/coredump-guest.sh" "$dir/"
echo "trace-payload: trace-cmd $(/usr/bin/trace-cmd -h 2>&1 | awk '/version/ { print $3; exit }'), $("$perf" version) ($(du -sh "$t" | cut -f1))" >&2
