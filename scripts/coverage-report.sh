#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What the tests reach in nnq.ko: reads the gcov counters the debug lane's
# guests printed (selftests/vm/lane-debug.sh: a NEURON_GCOV=1 module on a
# CONFIG_GCOV_KERNEL kernel; each guest prints its .gcda files as a gzipped
# tar in base64 between "NEURON-GCOV-BEGIN" and "NEURON-GCOV-END"), adds
# the guests' counts (gcov-tool merge), and with gcov's JSON and the
# module's .gcno files (in its build directory) prints, as TAP:
#   coverage.kernel.collected.<log>  that guest's counters arrived whole
#   coverage.kernel.summary          line and function coverage, per file and
#                                    in all (a figure, not a target: the
#                                    target is docs/robustness.md#coverage's)
#   coverage.kernel.unreached_listed every function of kernel/*.c that no
#                                    test reached is in docs/robustness.md's
#                                    table of unreached functions with a
#                                    reason (a function listed there that
#                                    is reached now is printed, not failed:
#                                    some are reached only on a slow day)
# Exits non-zero if any line is "not ok".
#
# Usage: coverage-report.sh OBJDIR LOG...
#   OBJDIR  the module's build directory (build/kernel-debug/kernel)
#   LOG     a guest's console log (build/vm/lane-debug.log.1, .2)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
obj=$(cd "${1:?usage: coverage-report.sh OBJDIR LOG...}" && pwd) || exit 1
shift
doc=$top/docs/robustness.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

n=0 fails=0
result() { # result STATUS NAME [COMMENT]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2${3:+ # $3}"; else echo "not ok $n $2${3:+ # $3}"; fails=$((fails + 1)); fi
}
finish() {
	echo "1..$n"
	[ "$fails" -eq 0 ]
	exit $?
}

# every guest's counters, each in its own directory
dirs=()
for log in "$@"; do
	name=$(basename "$log")
	d=$work/$name
	mkdir -p "$d"
	# only base64 lines between the markers: the console's CRs dropped
	tr -d '\r' <"$log" 2>/dev/null |
		sed -n '/^NEURON-GCOV-BEGIN/,/^NEURON-GCOV-END/p' |
		grep -E '^[A-Za-z0-9+/=]+$' >"$d.b64"
	want=$(tr -d '\r' <"$log" 2>/dev/null | sed -n 's/^NEURON-GCOV-BEGIN \([0-9]*\).*/\1/p' | tail -1)
	if [ -s "$d.b64" ] && base64 -d <"$d.b64" | tar -C "$d" -xzf - 2>"$d.err"; then
		got=$(find "$d" -name '*.gcda' | wc -l)
		if [ "$got" -gt 0 ] && [ "$got" = "$want" ]; then
			result 0 "coverage.kernel.collected.$name" "$got .gcda files"
			dirs+=("$d")
			continue
		fi
		result 1 "coverage.kernel.collected.$name" "$got .gcda files, the guest announced ${want:-none}"
	else
		result 1 "coverage.kernel.collected.$name" "no readable NEURON-GCOV block in $log $(head -c 200 "$d.err" 2>/dev/null)"
	fi
done
[ ${#dirs[@]} -gt 0 ] || finish

# the guests' counts added up, next to copies of the .gcno files (gcov
# reads both from one place)
merged=${dirs[0]}
for d in "${dirs[@]:1}"; do
	gcov-tool merge "$merged" "$d" -o "$work/merged.$(basename "$d")" >/dev/null 2>&1 ||
		{ result 1 coverage.kernel.summary "gcov-tool merge failed"; finish; }
	merged=$work/merged.$(basename "$d")
done
cp "$obj"/*.gcno "$merged/"

# gcov's own JSON (GCC's gcov, the compiler's version; it needs no source
# file): per file of the module (its .c and .h, not the kernel's headers),
# lines with a count over lines that have code, functions entered over
# functions; an inline function of a header counts once, summed over the
# objects that hold it
(cd "$merged" && gcov -j -t -o . ./*.gcda 2>"$work/gcov.err") >"$work/gcov.json" ||
	{ result 1 coverage.kernel.summary "gcov failed: $(head -c 300 "$work/gcov.err")"; finish; }
python3 - "$obj" "$work/gcov.json" "$work/unreached" >"$work/figures" <<'PY' ||
import json, os, sys
obj, lines, funcs = sys.argv[1], {}, {}
for doc in open(sys.argv[2]):
    for f in json.loads(doc)["files"]:
        if os.path.dirname(f["file"]) != obj:
            continue
        name = os.path.basename(f["file"])
        for l in f["lines"]:
            key = (name, l["line_number"])
            lines[key] = lines.get(key, 0) + l["count"]
        for fn in f["functions"]:
            key = (name, fn["name"])
            funcs[key] = funcs.get(key, 0) + fn["execution_count"]
if not lines:
    sys.exit(1)
def figures(label, names):
    lt = [c for (n, _), c in lines.items() if n in names]
    ft = [c for (n, _), c in funcs.items() if n in names]
    lc, fc = sum(1 for c in lt if c), sum(1 for c in ft if c)
    print("# coverage: %-22s lines %5.1f%% (%4d of %4d), functions %5.1f%% (%3d of %3d)" % (
        label, 100.0 * lc / max(len(lt), 1), lc, len(lt), 100.0 * fc / max(len(ft), 1), fc, len(ft)))
files = sorted({n for n, _ in lines})
for n in files:
    figures(n, {n})
figures("total", set(files))
with open(sys.argv[3], "w") as out:
    for (n, fn), c in sorted(funcs.items()):
        if c == 0 and n.endswith(".c"):
            out.write("%s %s\n" % (n, fn))
PY
	{ result 1 coverage.kernel.summary "no line of $obj in gcov's output"; finish; }
cat "$work/figures"
result 0 coverage.kernel.summary "$(sed -n 's/^# coverage: total *//p' "$work/figures")"
sort -o "$work/unreached" "$work/unreached"
echo "# coverage: $(wc -l <"$work/unreached") functions of kernel/*.c no test reached"

# docs/robustness.md#coverage lists each as "| `file.c` | `function` | why |"
sed -n '/^## Coverage/,/^## /p' "$doc" |
	sed -n 's/^| `\([a-z_0-9]*\.c\)` | `\([A-Za-z_0-9]*\)` |.*/\1 \2/p' | sort >"$work/listed"
comm -23 "$work/unreached" "$work/listed" >"$work/new"
comm -13 "$work/unreached" "$work/listed" >"$work/reached"
while read -r f fn; do echo "# unreached and not in docs/robustness.md#coverage: $f $fn"; done <"$work/new"
while read -r f fn; do echo "# listed as unreached but reached in this run: $f $fn"; done <"$work/reached"
result "$([ -s "$work/new" ] && echo 1 || echo 0)" coverage.kernel.unreached_listed \
	"$(wc -l <"$work/new") unlisted, $(wc -l <"$work/reached") listed but reached"
finish
