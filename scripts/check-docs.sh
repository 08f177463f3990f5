#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that the repository's documentation stands on its own, as TAP
# ("ok N - ..." / "not ok N - ...", details as "# " lines):
#   1. no file cites pages that are not in the repository (the original
#      design and environment notes, the reverse-engineered hardware pages):
#      only the sources note of docs/decisions.md, between its
#      "<!-- sources-note -->" markers, may name them;
#   2. every cited anchor exists, one line per cited document: plain
#      "docs/<file>.md#<anchor>" (and "docs/<file>.md#<a>, #<b>") anywhere,
#      and markdown links "[text](<path>.md#<anchor>)" or "(#<anchor>)" in
#      *.md files. An anchor exists if the document has id="anchor" (or
#      name="anchor") or a heading whose GitHub slug is "anchor";
#   3. every relative link in docs/*.md and README.md points to a file or
#      directory that exists, one line per document;
#   4. the interrupt-cause table (docs/device-model.md#intr-cause-table)
#      agrees with the UAPI and the tests: its rows are exactly the causes
#      of enum neuron_notific_intr (include/uapi/linux/neuron_record.h),
#      each under the enum's name and number; and for each cause some test
#      asserts that it was raised, one line per cause. A test asserts cause
#      N NAME when one statement (lines joined up to the ';') of the qtest
#      (emulator/tests/qtest/neuron-tpb-test.c), devtest
#      (emulator/tests/devtest.c) or a kselftest
#      (selftests/drivers/neuron/*.c) is an assertion (g_assert*, CHECK,
#      EXPECT_*, ASSERT_*) that names NEURON_NOTIFIC_INTR_NAME, or, in the
#      qtest's style, reads N_INTR_STATUS and names "1u << N"; an assertion
#      that the cause is absent (CHECK(!..., EXPECT_EQ(0, ..., EXPECT_FALSE,
#      "==, 0)") does not count. Cheap and textual: it proves a test looks
#      for the number, not that the test passes (make check runs them);
#   5. every "FILE:LINE" a row of docs/record-fields.md cites (a bare
#      ":LINE" is of the file named before it in the row) is a line of a
#      test file (emulator/tests, selftests/drivers/neuron, userspace/tests)
#      that asserts or holds a literal: an assertion call (g_assert*,
#      CHECK, EXPECT_*, ASSERT_*, chk, check_*), a row of a table of
#      expected values ("... },", or its opening "[] = {") or a #define. Line numbers drift when a
#      test grows; this catches a citation left pointing at a brace.
# Files: those git tracks plus untracked ones it does not ignore (or every
# file, outside a git tree). Exits non-zero if any line is "not ok".
#
# Usage: scripts/check-docs.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export LC_ALL=C

n=0 fails=0
result() { # result STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}
diag() { sed 's/^/# /'; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# text files, one per line
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard
else
	find . -type f ! -path './.git/*' ! -path './build/*' | sed 's|^\./||'
fi | sort -u | while IFS= read -r f; do
	[ -f "$f" ] && [ ! -L "$f" ] && grep -Iq . "$f" && printf '%s\n' "$f"
done >"$tmp/files"
grep '\.md$' "$tmp/files" >"$tmp/md"

# anchors_of FILE: every anchor FILE defines, one per line
anchors_of() {
	grep -oE '(id|name)="[^"]+"' "$1" | sed -E 's/^(id|name)="(.*)"$/\2/'
	awk '
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence || !/^#+[ \t]/ { next }
		{
			h = $0
			sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#*[ \t]*$/, "", h)
			# a link keeps only its text
			while (match(h, /\[[^]]*\]\([^)]*\)/)) {
				t = substr(h, RSTART + 1); t = substr(t, 1, index(t, "]") - 1)
				h = substr(h, 1, RSTART - 1) t substr(h, RSTART + RLENGTH)
			}
			gsub(/<[^>]*>/, "", h)
			h = tolower(h)
			gsub(/[^a-z0-9 _-]/, "", h)
			gsub(/ /, "-", h)
			if (h in seen) { seen[h]++; print h "-" seen[h] - 1 } else { seen[h] = 1; print h }
		}' "$1"
}

# ---- 1. no citation of pages outside the repository
forbidden='DESIGN[.]md|ENVIRONMENT[.]md|shared/see[d]s|[Ss]eeds? 00[01]'
while IFS= read -r f; do
	awk -v f="$f" -v re="$forbidden" '
		f == "docs/decisions.md" && /<!-- sources-note -->/ { note = 1 }
		f == "docs/decisions.md" && /<!-- \/sources-note -->/ { note = 0; next }
		!note && $0 ~ re { print f ":" FNR ": " $0 }' "$f"
done <"$tmp/files" >"$tmp/forbidden"
if [ -s "$tmp/forbidden" ]; then
	diag <"$tmp/forbidden"
	result 1 "no citation of pages outside the repository ($(wc -l <"$tmp/forbidden") found)"
else
	result 0 "no citation of pages outside the repository ($(wc -l <"$tmp/files") files)"
fi

# ---- 2. cited anchors exist
# "SOURCE:LINE TARGET ANCHOR" for every citation; TARGET relative to the top
while IFS= read -r f; do
	grep -noE 'docs/[A-Za-z0-9_.-]+[.]md#[A-Za-z0-9_-]+(, #[A-Za-z0-9_-]+)*' "$f" |
		while IFS= read -r hit; do
			line=${hit%%:*} cite=${hit#*:}
			target=${cite%%#*}
			printf '%s\n' "${cite#*#}" | tr -d ' ' | tr ',' '\n' | tr -d '#' |
				while IFS= read -r a; do echo "$f:$line $target $a"; done
		done
done <"$tmp/files" >"$tmp/cites"
while IFS= read -r f; do
	dir=$(dirname "$f")
	awk '
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence { next }
		{
			s = $0
			while (match(s, /\]\([^) \t]*#[A-Za-z0-9_-]+\)/)) {
				t = substr(s, RSTART + 2, RLENGTH - 3)
				print FNR " " t
				s = substr(s, RSTART + RLENGTH)
			}
		}' "$f" | while read -r line t; do
		path=${t%%#*} a=${t#*#}
		case $path in *://*) continue ;; esac
		if [ -z "$path" ]; then
			path=$f
		else
			case $path in *.md) ;; *) continue ;; esac
			path=$(realpath -m --relative-to=. "$dir/$path")
		fi
		echo "$f:$line $path $a"
	done
done <"$tmp/md" >>"$tmp/cites"
if [ ! -s "$tmp/cites" ]; then
	result 1 "cited anchors exist (no citation found at all)"
fi
for target in $(awk '{ print $2 }' "$tmp/cites" | sort -u); do
	if [ ! -f "$target" ]; then
		awk -v t="$target" '$2 == t { print $1 ": " t " does not exist" }' "$tmp/cites" | diag
		result 1 "$target: cited, but there is no such file"
		continue
	fi
	anchors_of "$target" | sort -u >"$tmp/anchors"
	awk -v t="$target" '$2 == t' "$tmp/cites" >"$tmp/these"
	awk 'NR == FNR { have[$0] = 1; next } !($3 in have) { print $1 ": " $2 "#" $3 ": no such anchor" }' \
		"$tmp/anchors" "$tmp/these" >"$tmp/missing"
	total=$(wc -l <"$tmp/these") distinct=$(awk '{ print $3 }' "$tmp/these" | sort -u | wc -l)
	if [ -s "$tmp/missing" ]; then
		diag <"$tmp/missing"
		result 1 "$target: $(wc -l <"$tmp/missing") of $total citations name a missing anchor"
	else
		result 0 "$target: $total citations of $distinct anchors, all defined"
	fi
done

# ---- 3. relative links in docs/ and README.md point to existing files
for f in README.md docs/*.md; do
	[ -f "$f" ] || continue
	dir=$(dirname "$f")
	awk '
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence { next }
		/^[ \t]*\[[^]]+\]:[ \t]*[^ \t]+/ {            # [ref]: target
			t = $0; sub(/^[ \t]*\[[^]]+\]:[ \t]*/, "", t); sub(/[ \t].*/, "", t)
			print FNR " " t
		}
		{
			s = $0
			while (match(s, /\]\([^)]*\)/)) {
				t = substr(s, RSTART + 2, RLENGTH - 3)
				sub(/^[ \t]*</, "", t); sub(/>.*$/, "", t); sub(/[ \t].*$/, "", t)
				print FNR " " t
				s = substr(s, RSTART + RLENGTH)
			}
		}' "$f" | while read -r line t; do
		case $t in '' | '#'* | *://* | mailto:*) continue ;; esac
		p=${t%%#*}
		if [ -e "$dir/$p" ]; then echo "ok"; else echo "$f:$line: $t: no such file"; fi
	done >"$tmp/links"
	grep -v '^ok$' "$tmp/links" >"$tmp/broken"
	count=$(wc -l <"$tmp/links")
	if [ -s "$tmp/broken" ]; then
		diag <"$tmp/broken"
		result 1 "$f: $(wc -l <"$tmp/broken") of $count relative links point nowhere"
	else
		result 0 "$f: $count relative links, all resolve"
	fi
done

# ---- 4. the interrupt-cause table against the UAPI enum and the tests
uapi=include/uapi/linux/neuron_record.h
# "N NAME" for each enum neuron_notific_intr value but the alias RESERVED
sed -n '/^enum neuron_notific_intr {/,/^};/p' "$uapi" |
	sed -nE 's/^[ \t]*NEURON_NOTIFIC_INTR_([A-Z0-9_]+)[ \t]*=[ \t]*([0-9]+).*/\2 \1/p' |
	grep -v ' RESERVED$' | sort -n >"$tmp/enum"
# "N NAME" for each "| intr_N | NAME |" row of the table
awk '
	/<a id="intr-cause-table">/ { t = 1; next }
	t && /^## / && seen { exit }
	t && /^## / { seen = 1; next }
	t && /^\| intr_[0-9]+ \|/ {
		split($0, c, "|"); n = c[2]; name = c[3]
		gsub(/[ \t]|intr_/, "", n); gsub(/[ \t`]/, "", name)
		print n " " name
	}' docs/device-model.md | sort -n >"$tmp/table"
if [ ! -s "$tmp/enum" ] || [ ! -s "$tmp/table" ]; then
	result 1 "intr-cause table: no enum ($(wc -l <"$tmp/enum")) or no table rows ($(wc -l <"$tmp/table"))"
elif ! diff "$tmp/enum" "$tmp/table" >"$tmp/tdiff"; then
	sed -e 's/^</uapi enum:/' -e 's/^>/docs table:/' "$tmp/tdiff" | grep -E '^(uapi|docs)' | diag
	result 1 "docs/device-model.md#intr-cause-table: rows differ from enum neuron_notific_intr"
else
	result 0 "docs/device-model.md#intr-cause-table: $(wc -l <"$tmp/table") rows, the causes of enum neuron_notific_intr"
fi
# "FILE:LINE<TAB>statement" for every assertion statement of the tests
for f in emulator/tests/qtest/neuron-tpb-test.c emulator/tests/devtest.c selftests/drivers/neuron/*.c; do
	[ -f "$f" ] || continue
	awk -v f="$f" '
		{
			if (st == "") first = FNR
			line = $0; sub(/\/\/.*/, "", line)
			st = st " " line
			if (line ~ /;[ \t]*$/ || line ~ /[{}][ \t]*$/) {
				if (st ~ /(g_assert[a-z_]*|[^A-Za-z_]CHECK|EXPECT_[A-Z_]+|ASSERT_[A-Z_]+)[ \t]*\(/)
					print f ":" first "\t" st
				st = ""
			}
		}' "$f"
done >"$tmp/asserts"
absent='CHECK[ \t]*\([ \t]*!|(EXPECT|ASSERT)_EQ[ \t]*\([ \t]*0[ \t]*,|(EXPECT|ASSERT)_FALSE|==,[ \t]*0[ \t]*\)'
while read -r num name; do
	hit=$(grep -E "NEURON_NOTIFIC_INTR_${name}([^A-Z0-9_]|\$)|N_INTR_STATUS.*1u << ${num}([^0-9]|\$)" "$tmp/asserts" |
		grep -Ev "$absent" | head -1 | cut -f1)
	if [ -n "$hit" ]; then
		result 0 "intr_$num $name: a test asserts it was raised ($hit)"
	else
		echo "no assertion that intr_$num ($name) was raised in the qtest, devtest or kselftests" | diag
		result 1 "intr_$num $name: named in docs/device-model.md#intr-cause-table, asserted raised by no test"
	fi
done <"$tmp/table"

# ---- 5. docs/record-fields.md's test citations land on assertions
awk '
	/^\|/ {
		last = ""
		s = $0
		while (match(s, /[A-Za-z0-9_.-]*\.(c|cpp):[0-9]+|`:[0-9]+/)) {
			c = substr(s, RSTART, RLENGTH)
			s = substr(s, RSTART + RLENGTH)
			sub(/^`/, "", c)
			if (c ~ /^:/) { if (last == "") continue; c = last c }
			last = c; sub(/:[0-9]+$/, "", last)
			print FNR " " c
		}
	}' docs/record-fields.md | sort -u -k2 >"$tmp/cites"
: >"$tmp/badcites"
while read -r row cite; do
	base=${cite%%:*} num=${cite##*:}
	path=$(find emulator/tests selftests/drivers/neuron userspace/tests -name "$base" -type f | head -1)
	if [ -z "$path" ]; then
		echo "docs/record-fields.md:$row: $cite: no such test file" >>"$tmp/badcites"
		continue
	fi
	text=$(sed -n "${num}p" "$path")
	if ! printf '%s\n' "$text" |
		grep -Eq 'g_assert|CHECK|EXPECT_|ASSERT_|chk\(|check_[a-z_]+\(|\},?[ \t]*(/\*.*)?$|\[\] = \{$|^#define'; then
		echo "docs/record-fields.md:$row: $cite is not an assertion: '$text'" >>"$tmp/badcites"
	fi
done <"$tmp/cites"
total=$(wc -l <"$tmp/cites")
if [ -s "$tmp/badcites" ]; then
	diag <"$tmp/badcites"
	result 1 "docs/record-fields.md: $(wc -l <"$tmp/badcites") of $total test citations are not assertions"
else
	result 0 "docs/record-fields.md: $total test citations, each an assertion or a literal"
fi

echo "1..$n"
[ "$fails" -eq 0 ]
