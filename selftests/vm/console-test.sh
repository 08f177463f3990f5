#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host checks of the clean terminal (docs/build-environment.md#console-filter),
# run by ctest (userspace/CMakeLists.txt, tests console.*). No VM is booted:
#   console-test.sh filter   scripts/console-filter on a literal stream, fed
#                            in two writes that split sequences, against the
#                            literal bytes that must come out
#   console-test.sh pty      run-vm.sh under `script` (a pty, as a user's
#                            terminal) with a stand-in QEMU that prints what
#                            Debian's kernel and firmware print (ESC c,
#                            ESC [?7l, ...): none of it reaches the terminal,
#                            the log keeps it, the exit status comes through
#   console-test.sh demo     make demo's console goes through run-vm.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case "${1:-}" in
filter)
	{
		# ESC c | ESC [?7l | SGR | OSC title (BEL) | OSC (ESC \) | charset | CSI split across writes
		printf 'a\033cb\033[?7lc\033[1;31md\033]0;title\007e\033]2;t\033\\f\033(0g\tx\r\n\007h\033['
		sleep 0.2
		printf '?25li\033'
		sleep 0.2
		printf '7j\n'
	} | "$top/scripts/console-filter" >"$work/out"
	printf 'abcdefg\tx\r\nhij\n' >"$work/want"
	if ! cmp "$work/want" "$work/out"; then
		echo "console-filter: got:"; od -c "$work/out"; echo "wanted:"; od -c "$work/want"
		exit 1
	fi
	echo "console-filter: every sequence removed, text kept"
	;;
pty)
	cat >"$work/qemu" <<'QEMU'
#!/bin/sh
printf '\033c\033[?7l\033[2J\033[01;01HSeaBIOS (version 1.16.2-debian)\r\n'
printf '\033]0;guest\007Linux version 6.1.0 \033[?25l\r\n'
printf 'ok 1 boot\r\nNEURON-VM-EXIT: 0\r\n'
QEMU
	chmod +x "$work/qemu"
	: >"$work/vmlinuz"
	log=$work/console.log
	NEURON_VM_LOG=$log script -q -e -c "'$top/selftests/vm/run-vm.sh' --qemu '$work/qemu' --kernel '$work/vmlinuz' \
		--timeout 60 -- /opt/neuron/none" "$work/tty" >/dev/null
	fail=0
	if grep -q $'\033c' "$work/tty"; then echo "ESC c reached the terminal"; fail=1; fi
	if grep -q $'\033\\[?7l' "$work/tty"; then echo "ESC [?7l reached the terminal"; fail=1; fi
	if grep -q $'\033' "$work/tty"; then echo "an escape sequence reached the terminal:"; grep -a $'\033' "$work/tty" | od -c | head; fail=1; fi
	grep -q 'SeaBIOS (version' "$work/tty" || { echo "the console text did not reach the terminal"; fail=1; }
	grep -q $'\033c' "$log" || { echo "the log lost the raw stream"; fail=1; }
	[ "$fail" -eq 0 ] || { od -c "$work/tty" | head -20; exit 1; }
	echo "run-vm.sh under a pty: no ESC c, no ESC [?7l, no other escape reached the terminal; the log is raw"
	;;
demo)
	grep -q 'selftests/vm/run-vm.sh' "$top/scripts/demo.sh" || { echo "demo.sh does not boot through run-vm.sh"; exit 1; }
	grep -q '| tee "$log" | "$top/scripts/console-filter"' "$top/selftests/vm/run-vm.sh" ||
		{ echo "run-vm.sh does not filter the console"; exit 1; }
	echo "make demo's console goes through run-vm.sh's console-filter"
	;;
*)
	echo "usage: console-test.sh filter|pty|demo" >&2
	exit 2
	;;
esac
