#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs every command of docs/first-hour.md in the VM, so the page cannot
# drift from the tools: the ```sh guest blocks, in order, in one boot,
# through the piped path of `make shell` (scripts/shell.sh with the script on
# stdin). Per command, one TAP line: its exit status is 0, or the N its line
# ends with as "# exit status N". Per ```text expect block (the block right
# after a guest block: what the reader should see), one TAP line: each of
# its lines appears in that guest block's output, in order, as a whole line
# ("..." in an expected line stands for any text; trailing blanks ignored).
# Then one line for the piped path itself: the guest's last `exit 3` comes
# back as scripts/shell.sh's status, 3.
#
# Usage: first-hour.sh [--qemu PATH] [--doc FILE] [-- SHELL_OPTIONS...]
#   SHELL_OPTIONS go to scripts/shell.sh (default: --smp 2); --no-build is
#   always added: it needs kernel/nnq.ko and build/userspace/neuron-nq.
# The console (filtered) goes to build/vm/first-hour.out, raw to
# build/vm/first-hour.log.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
qemu="" doc=$top/docs/first-hour.md
while [ $# -gt 0 ]; do
	case $1 in
	--qemu) qemu=$2; shift 2 ;;
	--doc) doc=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "first-hour: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || set -- --smp 2
[ -n "$qemu" ] || qemu=$("$top/emulator/qemu/build-qemu.sh" | tail -1) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$top/build/vm/first-hour.out
mkdir -p "$top/build/vm"

# the guest script: each command between markers that carry its status
python3 - "$doc" "$work/guest.sh" "$work/plan" <<'PY' || { echo "not ok 1 - first_hour.extract # $doc"; exit 1; }
import json, re, sys
doc, guest, plan = sys.argv[1:4]
lines = open(doc).read().split("\n")
blocks = []  # {"line", "cmds": [(line, text, status)], "expect": [...] or None}
i, last_fence = 0, None
while i < len(lines):
    m = re.match(r"^```(\S*)\s*(\S*)\s*$", lines[i])
    if not m or not m.group(1):
        i += 1
        continue
    lang, tag, start = m.group(1), m.group(2), i + 1
    body = []
    i += 1
    while i < len(lines) and lines[i].rstrip() != "```":
        body.append(lines[i])
        i += 1
    i += 1
    if (lang, tag) == ("sh", "guest"):
        cmds = []
        for k, c in enumerate(body):
            if not c.strip() or c.lstrip().startswith("#"):
                continue
            st = re.search(r"#\s*exit status (\d+)\s*$", c)
            cmds.append((start + 1 + k, c, int(st.group(1)) if st else 0))
        blocks.append({"line": start, "cmds": cmds, "expect": None})
        last_fence = "guest"
    elif (lang, tag) == ("text", "expect"):
        if last_fence != "guest" or not blocks:
            sys.exit(f"{doc}:{start}: a text expect block must follow a sh guest block")
        blocks[-1]["expect"] = body
        last_fence = "expect"
    else:
        last_fence = lang
if not blocks:
    sys.exit(f"{doc}: no sh guest block")
with open(guest, "w") as g:
    g.write("exec 2>&1\n")
    for b, blk in enumerate(blocks):
        g.write(f"echo '@@FH-BLOCK {b}'\n")
        for c, (ln, text, st) in enumerate(blk["cmds"]):
            g.write(f"echo '@@FH-CMD {b} {c}'\n{text}\necho \"@@FH-STATUS {b} {c} $?\"\n")
    g.write("echo '@@FH-DONE'\nexit 3\n")
json.dump(blocks, open(plan, "w"))
PY

NEURON_VM_LOG=$top/build/vm/first-hour.log "$top/scripts/shell.sh" --no-build --qemu "$qemu" "$@" \
	<"$work/guest.sh" >"$out" 2>"$work/stderr"
st=$?
sed 's/^/# stderr: /' "$work/stderr"

python3 - "$doc" "$work/plan" "$out" "$st" <<'PY'
import json, re, sys
doc, plan, out, st = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
blocks = json.load(open(plan))
text = open(out, errors="replace").read().replace("\r", "").split("\n")
# each block's output, and each command's status
outs, stats, cur = {}, {}, None
for l in text:
    m = re.match(r"^@@FH-(BLOCK|CMD|STATUS|DONE)\s*(\d*)\s*(\d*)\s*(\d*)$", l)
    if m:
        kind = m.group(1)
        if kind == "BLOCK":
            cur = int(m.group(2))
            outs[cur] = []
        elif kind == "STATUS":
            stats[(int(m.group(2)), int(m.group(3)))] = int(m.group(4))
        elif kind == "DONE":
            cur = None
        continue
    if cur is not None:
        outs[cur].append(l.rstrip())
n, fails = 0, 0
def result(ok, name, why=""):
    global n, fails
    n += 1
    if not ok:
        fails += 1
    print(f"{'ok' if ok else 'not ok'} {n} - {name}" + (f" # {why}" if why and not ok else ""))
total = sum(len(b["cmds"]) + (1 if b["expect"] is not None else 0) for b in blocks) + 1
print("TAP version 13")
print(f"1..{total}")
for b, blk in enumerate(blocks):
    for c, (ln, cmd, want) in enumerate(blk["cmds"]):
        got = stats.get((b, c))
        short = re.sub(r"\s+#.*$", "", cmd).strip()
        result(got == want, f"first_hour.line_{ln}: {short[:70]}",
               f"exit status {got}, the page says {want}" if got is not None else "did not run")
    if blk["expect"] is None:
        continue
    have = outs.get(b, [])
    pos, missing = 0, None
    for e in blk["expect"]:
        e = e.rstrip()
        if not e:
            continue
        rx = re.compile("^" + ".*".join(re.escape(p) for p in e.split("...")) + "$")
        while pos < len(have) and not rx.match(have[pos]):
            pos += 1
        if pos == len(have):
            missing = e
            break
        pos += 1
    result(missing is None, f"first_hour.expect_after_line_{blk['line']}: the output the page shows",
           f"not found (in order): {missing!r}")
    if missing is not None:
        for l in have[-40:]:
            print(f"#   | {l}")
result(st == 3, "first_hour.piped_shell_returns_guest_status_3", f"scripts/shell.sh exited {st}")
sys.exit(1 if fails else 0)
PY
