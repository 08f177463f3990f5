#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Checks the node-problem-detector rules that neuron-tools ships
# (userspace/tools/node-problem-detector/nnq-hw-errors.json), and rules of
# the shape the vendor's own node-problem-detector configuration has
# (selftests/npd/vendor-shape.json), against the hardware error lines the
# VM lanes' kernels really logged
# (docs/decisions/0014-hw-error-log.md#hw-error-log, #npd-rules,
# #hw-error-key). Prints TAP ("ok N - ...", "not ok N - ...", details as
# "# " lines):
#   1. the file is a system log monitor config: plugin kmsg, logPath,
#      lookback (a Go duration), bufferSize, source, conditions (type,
#      reason, message), rules (type temporary or permanent, a CamelCase
#      reason, a pattern; a permanent rule names a declared condition)
#   2. per rule: its pattern keeps to what Go's regexp (RE2, which
#      node-problem-detector uses) and Python's re read the same (no
#      lookaround, backreferences, atomic groups, possessive quantifiers,
#      \Z or \z, POSIX classes, \p; flags i, m, s only) and compiles
#   3. the cause and action words of kernel/neuron_hw.c are exactly the
#      rows of the cause and action tables of
#      docs/decisions/0014-hw-error-log.md,
#      and each cause's NEURON_HW_ERR= key is the cause in upper case with
#      '_' for '-'
#   4. per log: every hardware error line is in the documented format, with
#      the key order, a known cause and action, its cause's key, and (from
#      /dev/kmsg) the level its action calls for
#   5. per log: every one matches exactly one rule the way
#      node-problem-detector matches (the pattern followed by \z against the
#      last bufferSize messages joined by newlines), and no rule matches
#      once a message of another kind follows it
#   6. per rule: it matched a line of the logs, unless UNREACHED_RULES below
#      says why no lane can produce one
#   7. per cause: some log has it, unless UNREACHED_CAUSES says why not
#   8. the vendor-shape rules (each ".* NEURON_HW_ERR=<TYPE> .*", permanent,
#      bufferSize 10): per log, a line whose key is a rule's TYPE matches
#      that rule alone and every other line none, node-problem-detector's
#      way, and none once a message of another kind follows; per rule, it
#      matched a line (the first one printed as a "# " line), unless
#      VENDOR_UNREACHED says why no lane can produce one
# A log's lines are the "# kmsg: " records that guest-tests.sh copies from
# /dev/kmsg after its tests (the text after ';' and the SUBSYSTEM/DEVICE
# lines after it: what the kmsg plugin hands the rules) and the lines the
# console showed as they came (errors only, under "quiet"), with the
# "[   12.345678] " timestamp taken off: what a file or journald plugin
# hands them. A console line with the marker that does not start with a
# timestamp (the kernel's output interleaved with a program's) is only
# reported; the same record is in the log's kmsg copy.
#
# Usage: check-npd-rules.sh [--rules FILE] [--vendor FILE] LOG...
# Exits non-zero if any line is "not ok".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rules=$top/userspace/tools/node-problem-detector/nnq-hw-errors.json
vendor=$here/vendor-shape.json
while [ $# -gt 0 ]; do
	case $1 in
	--rules) rules=$2; shift 2 ;;
	--vendor) vendor=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: check-npd-rules.sh [--rules FILE] [--vendor FILE] LOG..." >&2; exit 2; }

exec python3 - "$rules" "$vendor" "$top" "$@" <<'PY'
import json
import re
import sys

rules_path, vendor_path, top, logs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

# Rules and causes no lane can produce, and why. A listed one that a log
# does have fails, so the list stays true.
UNREACHED_RULES = {}
UNREACHED_CAUSES = {
    "pci-permanent": "every error QEMU's pcie_aer_inject_error injects is recovered or "
                     "fails in slot_reset(), and the AER recovery of 6.1 and 6.12 never "
                     "calls error_detected() with pci_channel_io_perm_failure",
}
# a line of the driver that is not a hardware error, as /dev/kmsg gives it
OTHER = ("nnq 0000:01:00.0: reset (cause 2): 1 queues torn down, 256 records unread"
         "\n SUBSYSTEM=pci\n DEVICE=+pci:0000:01:00.0")
# Types of the vendor's rules no device of ours has, and why
VENDOR_UNREACHED = {
    t: "the emulated device reports no memory or NeuronCore ECC error; no cause maps to it"
    for t in ("SRAM_UNCORRECTABLE_ERROR", "NC_UNCORRECTABLE_ERROR", "HBM_UNCORRECTABLE_ERROR")
}
FORMAT = re.compile(
    r"^nnq (?P<bdf>[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]): nnq[0-9]+: hw-error "
    r"NEURON_HW_ERR=(?P<key>[A-Z_]+) "
    r"core=(?P<core>-|[0-9]+) engine=(?P<engine>-|pe|act|pool|dve|sp) "
    r"cause=(?P<cause>[a-z-]+) action=(?P<action>[a-z-]+): (?P<text>.+)$")
ERR_ACTIONS = ("reset-device", "replace-device")   # KERN_ERR; the rest KERN_WARNING

n = 0
fails = 0


def lines_of(k):
    return f"{k} line" + ("" if k == 1 else "s")


def result(ok, desc, details=(), skip=None):
    global n, fails
    n += 1
    if ok:
        print(f"ok {n} - {desc}" + (f" # SKIP {skip}" if skip else ""))
    else:
        print(f"not ok {n} - {desc}")
        fails += 1
    for d in list(details)[:20]:
        print("# " + str(d).replace("\n", "\\n"))


# --- 1. the config file
problems = []
try:
    cfg = json.load(open(rules_path))
except (OSError, ValueError) as e:
    cfg = None
    problems.append(f"{rules_path}: {e}")
rules = []
if cfg is not None:
    known = {"plugin", "pluginConfig", "logPath", "lookback", "delay", "bufferSize",
             "source", "conditions", "rules", "skipList", "metricsReporting"}
    problems += [f"unknown key {k!r}" for k in cfg if k not in known]
    if cfg.get("plugin") != "kmsg":
        problems.append(f"plugin is {cfg.get('plugin')!r}, not 'kmsg'")
    if not isinstance(cfg.get("logPath"), str) or not cfg.get("logPath"):
        problems.append("no logPath")
    if not re.fullmatch(r"0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+", str(cfg.get("lookback", ""))):
        problems.append(f"lookback {cfg.get('lookback')!r} is not a Go duration")
    if not isinstance(cfg.get("bufferSize"), int) or cfg["bufferSize"] < 1:
        problems.append("bufferSize is not a positive integer")
    if not isinstance(cfg.get("source"), str) or not cfg.get("source"):
        problems.append("no source")
    conds = cfg.get("conditions") if isinstance(cfg.get("conditions"), list) else []
    if not conds:
        problems.append("no conditions")
    ctypes = set()
    for c in conds:
        if not isinstance(c, dict) or set(c) != {"type", "reason", "message"} or \
                not all(isinstance(v, str) and v for v in c.values()):
            problems.append(f"condition {c!r} is not type, reason, message")
        else:
            ctypes.add(c["type"])
    rules = cfg.get("rules") if isinstance(cfg.get("rules"), list) else []
    if not rules:
        problems.append("no rules")
    reasons = set()
    for r in rules:
        if not isinstance(r, dict):
            problems.append(f"rule {r!r} is not an object")
            continue
        if r.get("type") not in ("temporary", "permanent"):
            problems.append(f"rule {r.get('reason')}: type {r.get('type')!r}")
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]+", str(r.get("reason", ""))):
            problems.append(f"rule reason {r.get('reason')!r} is not CamelCase")
        if r.get("reason") in reasons:
            problems.append(f"rule reason {r.get('reason')} twice")
        reasons.add(r.get("reason"))
        if not isinstance(r.get("pattern"), str) or not r.get("pattern"):
            problems.append(f"rule {r.get('reason')}: no pattern")
        if r.get("type") == "permanent" and r.get("condition") not in ctypes:
            problems.append(f"rule {r.get('reason')}: condition {r.get('condition')!r} is not declared")
        if r.get("type") == "temporary" and "condition" in r:
            problems.append(f"rule {r.get('reason')}: a temporary rule sets no condition")
        extra = set(r) - {"type", "condition", "reason", "pattern"}
        if extra:
            problems.append(f"rule {r.get('reason')}: unknown keys {sorted(extra)}")
    rules = [r for r in rules if isinstance(r, dict) and isinstance(r.get("pattern"), str)]
result(not problems, f"{rules_path.removeprefix(top + '/')} is a system log monitor config "
       f"(kmsg, {len(rules)} rules)", problems)


# --- 2. each pattern: the syntax Go's regexp and Python's re share
def subset_problems(p):
    out = []
    i, in_class, after_quant = 0, False, False
    while i < len(p):
        ch = p[i]
        if ch == "\\":
            nx = p[i + 1:i + 2]
            if nx.isdigit() and nx != "0":
                out.append(f"backreference \\{nx}")
            elif nx in ("Z", "z"):
                out.append(f"\\{nx} (node-problem-detector appends \\z itself)")
            elif nx.isalpha() and nx not in "dDsSwWbBAntrfvx":
                out.append(f"escape \\{nx}")
            i += 2
            after_quant = False
            continue
        if in_class:
            if p.startswith("[:", i):
                out.append("POSIX class [:...:]")
            if ch == "]":
                in_class = False
            i += 1
            continue
        if ch == "[":
            in_class = True
            i += 1
            if p[i:i + 1] == "^":
                i += 1
            if p[i:i + 1] == "]":   # a literal ] first in a class
                i += 1
            after_quant = False
            continue
        if ch == "(" and p.startswith("(?", i):
            m = re.match(r"\(\?([imsU-]*)([:)])", p[i:])
            if p.startswith("(?P<", i) or p.startswith("(?:", i):
                pass
            elif m:
                if set(m.group(1)) - set("ims-"):
                    out.append(f"flags {m.group(0)}")
            else:
                out.append(f"group {p[i:i + 4]}... (lookaround, atomic, conditional or named backreference)")
        if ch in "*+?}":
            # a quantifier, or the lazy ? after one; a + after one is possessive
            if after_quant and ch == "+":
                out.append("possessive quantifier")
            after_quant = not after_quant
        else:
            after_quant = False
        if p.startswith("{,", i):
            out.append("{,n} (RE2 reads it as text)")
        i += 1
    return out


compiled = []
for r in rules:
    pr = subset_problems(r["pattern"])
    rx = None
    try:
        rx = re.compile(r["pattern"] + r"\Z")
    except re.error as e:
        pr.append(f"does not compile: {e}")
    compiled.append((r, rx))
    result(not pr, f"rule {r.get('reason')}: pattern compiles, in the syntax Go and Python share", pr)
buffer_size = cfg.get("bufferSize", 1) if isinstance(cfg, dict) and \
    isinstance(cfg.get("bufferSize"), int) and cfg["bufferSize"] > 0 else 1


# --- 3. the kernel's words are the doc's tables
def table_words(text, header):
    words, on = [], False
    for line in text.splitlines():
        if line.startswith(f"| {header} |"):
            on = True
            continue
        if on and not line.startswith("|"):
            break
        m = re.match(r"\| `([a-z-]+)` \|", line) if on else None
        if m:
            words.append(m.group(1))
    return words


try:
    hw = open(f"{top}/kernel/neuron_hw.c").read()
    doc = open(f"{top}/docs/decisions/0014-hw-error-log.md").read()
except OSError as e:
    hw, doc = "", ""
    print(f"# {e}")
k_causes = re.findall(r'\[NEURON_HWE_\w+\] = \{ "([a-z-]+)"', hw)
k_keys = dict(re.findall(r'\[NEURON_HWE_\w+\] = \{ "([a-z-]+)", "([A-Z_]+)"', hw))
k_actions = re.findall(r'\[NEURON_HWA_\w+\] = "([a-z-]+)"', hw)
# the record is the section: its cause and action tables are the only ones
sec = doc
d_causes, d_actions = table_words(sec, "cause"), table_words(sec, "action")
diff = [f"kernel causes {k_causes}", f"doc causes    {d_causes}",
        f"kernel actions {k_actions}", f"doc actions    {d_actions}"]
result(k_causes and k_actions and sorted(k_causes) == sorted(d_causes) and
       sorted(k_actions) == sorted(d_actions),
       f"kernel/neuron_hw.c's {len(k_causes)} causes and {len(k_actions)} actions "
       "are the tables of docs/decisions/0014-hw-error-log.md",
       [] if sorted(k_causes) == sorted(d_causes) and sorted(k_actions) == sorted(d_actions) else diff)
causes, actions = set(k_causes), set(k_actions)
bad_keys = [f"{c}: key {k_keys.get(c)!r}, want {c.upper().replace('-', '_')!r}"
            for c in k_causes if k_keys.get(c) != c.upper().replace("-", "_")]
result(k_causes and not bad_keys, f"kernel/neuron_hw.c: each of the {len(k_causes)} causes has "
       "the key NEURON_HW_ERR=<CAUSE IN UPPER CASE>", bad_keys)


# --- 4 and 5. the logs
def npd_matches(buf):
    joined = "\n".join(buf[-buffer_size:])
    return [r["reason"] for r, rx in compiled if rx is not None and rx.search(joined)]


rule_hits = {r["reason"]: 0 for r in rules}
cause_hits = {}
all_msgs = []
for log in logs:
    try:
        lines = [l.rstrip("\r\n").replace("\r", "") for l in open(log, errors="replace")]
    except OSError as e:
        result(False, f"{log}: readable", [e])
        continue
    name = log.removeprefix(top + "/")
    msgs = []      # (kind, text, npd message, priority or None)
    skipped = []
    cur = None
    for l in lines + [""]:
        if l.startswith("# kmsg: "):
            body = l[len("# kmsg: "):]
            m = re.match(r"^(\d+),\d+,\d+,[^;]*;(.*)$", body)
            if m:
                if cur:
                    msgs.append(cur)
                cur = ["kmsg", m.group(2), m.group(2), int(m.group(1)) & 7]
            elif body.startswith(" ") and cur:
                cur[2] += "\n" + body
            else:
                skipped.append(l)
            continue
        if cur:
            msgs.append(cur)
            cur = None
        if ": hw-error " in l or " hw-error core=" in l:
            m = re.match(r"^\[ *[0-9]+\.[0-9]+\] (.*)$", l)
            if m:
                msgs.append(["console", m.group(1), m.group(1), None])
            else:
                skipped.append(l)
    for mm in msgs:
        mm[2] = mm[2].strip()   # node-problem-detector trims each message
    bad_format, bad_match = [], []
    history = []
    for kind, text, npd, prio in msgs:
        f = FORMAT.match(text)
        if not f:
            bad_format.append(f"{kind}: not the format: {text}")
        else:
            if f["cause"] not in causes:
                bad_format.append(f"{kind}: unknown cause {f['cause']}: {text}")
            if f["action"] not in actions:
                bad_format.append(f"{kind}: unknown action {f['action']}: {text}")
            if f["key"] != f["cause"].upper().replace("-", "_"):
                bad_format.append(f"{kind}: key {f['key']} is not cause {f['cause']}'s: {text}")
            want = 3 if f["action"] in ERR_ACTIONS else 4
            if prio is not None and prio != want:
                bad_format.append(f"{kind}: level {prio}, want {want}: {text}")
            cause_hits[f["cause"]] = cause_hits.get(f["cause"], 0) + 1
        buf = (history if kind == "kmsg" else []) + [npd]
        hit = npd_matches(buf)
        if len(hit) != 1:
            bad_match.append(f"{kind}: {len(hit)} rules {hit}: {npd}")
        after = npd_matches(buf + [OTHER])
        if after:
            bad_match.append(f"{kind}: {after} also match the message after it: {npd}")
        for reason in hit:
            rule_hits[reason] += 1
        if kind == "kmsg":
            history = buf[-buffer_size:]
    all_msgs.append((name, msgs))
    nk = sum(1 for m in msgs if m[0] == "kmsg")
    if skipped:
        print(f"# {name}: {len(skipped)} line(s) with the marker left out "
              "(not at a console line's start):")
        for l in skipped[:5]:
            print(f"#   {l}")
    result(not bad_format, f"{name}: {lines_of(len(msgs))} with the marker ({nk} from /dev/kmsg, "
           f"{len(msgs) - nk} from the console) in the documented format", bad_format)
    result(not bad_match, f"{name}: each matches exactly one rule as node-problem-detector "
           "matches it, none the message after it", bad_match)

# --- 6. every rule is exercised
for r in rules:
    reason, hits = r["reason"], rule_hits.get(r["reason"], 0)
    if reason in UNREACHED_RULES:
        result(hits == 0, f"rule {reason}: no line (listed as unreached)",
               [f"matched {lines_of(hits)}: take it off UNREACHED_RULES"] if hits else [],
               skip=None if hits else f"no lane can: {UNREACHED_RULES[reason]}")
    else:
        result(hits > 0, f"rule {reason}: matched {lines_of(hits)}")

# --- 7. every cause is logged by some lane
for c in k_causes:
    hits = cause_hits.get(c, 0)
    if c in UNREACHED_CAUSES:
        result(hits == 0, f"cause {c}: no line (listed as unreached)",
               [f"in {lines_of(hits)}: take it off UNREACHED_CAUSES"] if hits else [],
               skip=None if hits else f"no lane can: {UNREACHED_CAUSES[c]}")
    else:
        result(hits > 0, f"cause {c}: in {lines_of(hits)}")

# --- 8. the vendor's shape of rules
vproblems, vrules = [], []
try:
    vcfg = json.load(open(vendor_path))
except (OSError, ValueError) as e:
    vcfg = {}
    vproblems.append(f"{vendor_path}: {e}")
vbuffer = vcfg.get("bufferSize") if isinstance(vcfg.get("bufferSize"), int) else 0
if vcfg and (vcfg.get("plugin") != "kmsg" or vbuffer < 1):
    vproblems.append("not a kmsg config with a bufferSize")
for r in vcfg.get("rules", []) if isinstance(vcfg.get("rules"), list) else []:
    m = re.fullmatch(r"\.\* NEURON_HW_ERR=([A-Z_]+) \.\*", str(r.get("pattern", "")))
    if not m or r.get("type") != "permanent":
        vproblems.append(f"rule {r.get('reason')}: not a permanent '.* NEURON_HW_ERR=<TYPE> .*' rule")
        continue
    vproblems += subset_problems(r["pattern"])
    vrules.append((r["reason"], m.group(1), re.compile(r["pattern"] + r"\Z")))
result(not vproblems and bool(vrules), f"{vendor_path.removeprefix(top + '/')}: {len(vrules)} "
       f"vendor-shape rules (kmsg, bufferSize {vbuffer})", vproblems)


def vendor_matches(buf):
    joined = "\n".join(buf[-vbuffer:])
    return [(reason, vtype) for reason, vtype, rx in vrules if rx.search(joined)]


vhits = {reason: [] for reason, _, _ in vrules}
for name, msgs in all_msgs:
    bad = []
    history = []
    for kind, text, npd, prio in msgs:
        f = FORMAT.match(text)
        key = f["key"] if f else None
        buf = (history if kind == "kmsg" else []) + [npd]
        hit = vendor_matches(buf)
        want = [(reason, vtype) for reason, vtype, _ in vrules if vtype == key]
        if hit != want:
            bad.append(f"{kind}: {[h[0] for h in hit]}, want {[w[0] for w in want]}: {npd}")
        after = vendor_matches(buf + [OTHER])
        if after:
            bad.append(f"{kind}: {[h[0] for h in after]} also match the message after it: {npd}")
        for reason, _ in hit:
            vhits[reason].append(f"{name}: {kind}: {npd}")
        if kind == "kmsg":
            history = buf[-vbuffer:]
    result(not bad, f"{name}: the vendor-shape rules match exactly the lines of their "
           "NEURON_HW_ERR= type, as node-problem-detector matches", bad)
for reason, vtype, rx in vrules:
    hits = vhits[reason]
    if vtype in VENDOR_UNREACHED:
        result(not hits, f"vendor rule {reason}: no line (listed as unreached)",
               [f"matched {lines_of(len(hits))}: take it off VENDOR_UNREACHED"] if hits else [],
               skip=None if hits else f"no lane can: {VENDOR_UNREACHED[vtype]}")
    else:
        result(bool(hits), f"vendor rule {reason} ({rx.pattern[:-2]!r}): matched "
               f"{lines_of(len(hits))}", [f"first: {hits[0]}"] if hits else [])

print(f"1..{n}")
print(f"# npd rules: {fails} of {n} checks failed")
sys.exit(1 if fails else 0)
PY
