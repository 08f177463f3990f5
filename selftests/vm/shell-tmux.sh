#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make shell` as a person uses it, in a real terminal: tmux (a private
# server, a 120x40 pane running bash) types `make shell`, waits for the
# guest's prompt, types commands and reads the screen with capture-pane:
# `neuron-nq info`, a `run` of examples/hello.nq, `neuron-nq monitor`
# stopped with Ctrl-C, a foreground `sleep` stopped with Ctrl-C (status
# 130: the key reached the guest's command, not QEMU), `exit`; then, back in
# the host's shell, the terminal's stty settings are the ones from before,
# line wrapping and the cursor are on, and typed text is echoed.
# Every wait is for text on the screen, with a deadline only as a guard
# against a hung guest (that fails the step; nothing passes on time).
#
# Prints TAP; the last screen goes to $NEURON_SHELL_SCREEN (default
# build/vm/shell-tmux.screen), the raw console to build/vm/shell-tmux.log.
# Needs tmux, kernel/nnq.ko and build/userspace/neuron-nq (make module
# userspace); QEMU and the guest kernel from their caches.
#
# Usage: shell-tmux.sh [--qemu PATH] [-- SHELL_OPTIONS...]
#   SHELL_OPTIONS go to scripts/shell.sh through `make shell ARGS=...`
#   (default: --smp 1); --no-build is always added
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
qemu=""
while [ $# -gt 0 ]; do
	case $1 in
	--qemu) qemu=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "shell-tmux: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || set -- --smp 1
[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1) || exit 1
screen_out=${NEURON_SHELL_SCREEN:-$top/build/vm/shell-tmux.screen}
mkdir -p "$(dirname "$screen_out")"
work=$(mktemp -d)
sock=neuron-shell-tmux-$$
tm() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup() { tm kill-server 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

n=0 fails=0
result() { # result STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
screen() { tm capture-pane -p -J -t t -S -3000; }
# wait_for PATTERN SECONDS: the screen (with its history) shows PATTERN
# (an extended regular expression); 1 when it did not before the deadline
wait_for() {
	local i=0
	while [ $i -lt $(($2 * 5)) ]; do
		screen | grep -qE -- "$1" && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "# shell-tmux: no /$1/ on the screen after $2 s; the screen:"
	screen | tail -25 | sed 's/^/#   /'
	return 1
}
prompt='^neuron-vm:/opt/neuron# '
prompts() { screen | grep -cE -- "$prompt"; }
# wait_prompts N SECONDS: the Nth guest prompt is on the screen
wait_prompts() {
	local i=0
	while [ $i -lt $(($2 * 5)) ]; do
		[ "$(prompts)" -ge "$1" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "# shell-tmux: fewer than $1 guest prompts after $2 s; the screen:"
	screen | tail -25 | sed 's/^/#   /'
	return 1
}
type_line() { tm send-keys -t t -l -- "$1" && tm send-keys -t t Enter; }
# after CMD: the screen's lines from the last prompt line that typed CMD on
after() { screen | awk -v p="$1" 'index($0, p) { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }'; }

echo "TAP version 13"
echo "1..12"
tm new-session -d -s t -x 120 -y 40 -- \
	env -i PATH="$PATH" HOME="${HOME:-/root}" NEURON_CACHE="${NEURON_CACHE:-/var/cache/neuron}" TERM=screen \
	PS1='host$ ' bash --norc --noprofile || {
	echo "not ok 1 - shell.tmux.start # tmux new-session failed"
	exit 1
}
flags() { tm display-message -p -t t '#{wrap_flag} #{cursor_flag} #{alternate_on} #{insert_flag} #{keypad_flag}'; }
flags_before=$(flags)
type_line "cd '$top' && stty -g >'$work/stty.before' && NEURON_VM_LOG='$top/build/vm/shell-tmux.log' make shell ARGS=\"--no-build --qemu '$qemu' $*\"; echo \"host-status=\$?\""

# 1. the boot ends at the guest's prompt, the driver loaded
wait_for "$prompt" 600
result $? "shell.tmux.guest_prompt"

# 2. neuron-nq info: the device
type_line "neuron-nq info"
wait_prompts 2 120 && after 'neuron-nq info' | grep -qx '/dev/nnq0' &&
	after 'neuron-nq info' | grep -qx '  PCI 1d0f:7f00, ABI 1, gen cayman' &&
	after 'neuron-nq info' | grep -qx '  core 0 owner: free'
result $? "shell.tmux.info_shows_nnq0"

# 3. a run of hello.nq: its EXPLICIT record and status OK
type_line "neuron-nq run examples/hello.nq"
wait_prompts 3 120 &&
	after 'neuron-nq run examples/hello.nq' | grep -q '  0    1   PE_EXPLICIT      PE EXPLICIT pc=0x00001 hint=3 ext=0x1234 run=1$' &&
	after 'neuron-nq run examples/hello.nq' | grep -q '^status: OK (0) in .* ms; exit status 0$'
result $? "shell.tmux.run_hello_prints_records"

# 4. monitor, stopped with Ctrl-C once it says it is ready
type_line "neuron-nq monitor"
wait_for 'Ctrl-C to stop' 120 && tm send-keys -t t C-c && wait_prompts 4 60
result $? "shell.tmux.ctrl_c_stops_monitor"
type_line 'echo "monitor-status=$?"'
wait_prompts 5 60 && screen | grep -q '^monitor-status=0$'
result $? "shell.tmux.monitor_exits_0_after_ctrl_c"

# 5. a foreground command with no handler: SIGINT ends it (128 + 2)
type_line "sh -c 'echo sleeping; exec sleep 1000'"
wait_for '^sleeping$' 60 && tm send-keys -t t C-c && wait_prompts 6 60
result $? "shell.tmux.ctrl_c_reaches_foreground_sleep"
type_line 'echo "sleep-status=$?"'
wait_prompts 7 60 && screen | grep -q '^sleep-status=130$'
result $? "shell.tmux.sleep_status_130"

# 6. exit: the session ends, make returns 0, the host's prompt is back
type_line "exit"
wait_for '^host-status=[0-9]+$' 120 && screen | grep -q '^host-status=0$'
result $? "shell.tmux.exit_ends_session_status_0"

# 7. the terminal as it was
type_line "stty -g | cmp -s - '$work/stty.before' && echo stty-same || echo stty-differs"
wait_for '^stty-(same|differs)$' 30 && screen | grep -q '^stty-same$'
result $? "shell.tmux.stty_settings_restored"
flags_after=$(flags)
echo "# tmux wrap, cursor, alternate screen, insert, keypad: before '$flags_before', after '$flags_after'"
[ "$flags_after" = "$flags_before" ] && [ "${flags_after%% *}" = 1 ]
result $? "shell.tmux.wrap_and_cursor_as_before"
type_line "stty -a | tr ' ;' '\\n\\n' | grep -xE 'echo|icanon|isig' | tr '\\n' ' '; echo"
wait_for '^isig icanon echo $' 30
result $? "shell.tmux.echo_icanon_isig_on"
type_line "echo typed-back"
wait_for '^host\$ echo typed-back$' 30 && wait_for '^typed-back$' 30
result $? "shell.tmux.typed_text_echoed"

screen >"$screen_out"
echo "# screen: $screen_out"
exit $((fails > 0))
