#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that the repository's documentation stands on its own, as TAP
# ("ok N - ..." / "not ok N - ...", details as "# " lines):
#   1. no file cites pages that are not in the repository (the original
#      design and environment notes, the reverse-engineered hardware pages):
#      only the sources note of docs/decisions.md, between its
#      "<!-- sources-note -->" markers, may name them;
#   2. every cited anchor exists, one line per cited document: plain
#      "docs/<path>.md#<anchor>" (and "docs/<path>.md#<a>, #<b>") anywhere,
#      and markdown links "[text](<path>.md#<anchor>)" or "(#<anchor>)" in
#      *.md files. An anchor exists if the document has id="anchor" (or
#      name="anchor") or a heading whose GitHub slug is "anchor";
#   3. every relative link in docs/*.md, docs/decisions/*.md and README.md
#      points to a file or directory that exists, one line per document;
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
#   5. test citations stay true, two lines per document that cites a test
#      (docs/record-fields.md always): every "FILE:LINE" (or "FILE:A-B"; a
#      bare ":LINE" is of the file named before it in the row or paragraph),
#      in a table row or in prose alike, is a line of a test file
#      (emulator/tests, selftests/drivers/neuron, userspace/tests) that
#      asserts or holds a literal: an assertion call (g_assert*, CHECK,
#      EXPECT_*, ASSERT_*, chk, check_*), a row of a table of expected
#      values ("... },", or its opening "[] = {") or a #define; and every
#      "`FILE.c` `a/b-c`" names a test FILE registers. A cited assertion
#      must also be about what the text says it checks: the field and the
#      record bytes of the row (its field and bits / bytes columns), or of
#      the prose clause after the citation ("byte N", "bytes N..M", a
#      backquoted field name, else the previous citation's subject). Its
#      statement must name the field (or the UAPI accessor that abbreviates
#      it) or read one of those bytes (r[N], a whole-record loop or memory
#      compare, a ld*_le_p() load). Line numbers drift when a test grows,
#      and a comment can claim a byte the assertion does not read; this
#      catches a citation left pointing at a brace, at a register write or
#      at an assertion of another byte;
#   6. docs/metrics.md#fdinfo agrees with kernel/neuron_fdinfo.c: the table's
#      keys, and the list in the file's header comment, are the keys the
#      code prints in its order, and "shows the first N" (both files) is the
#      number of lines printed before the register-backed ones;
#   7. names and numbers restated from include/uapi/linux/neuron.h: a line
#      of docs/*.md, docs/*/*.md or README.md naming a /dev/neuron... node says, on it or
#      the line before, that it is the real driver's (real, AWS, runtime)
#      or names ours beside it (/dev/NEURON_DEV_NAME); the first value
#      within 40 characters after "magic" or "type byte" is
#      NEURON_IOCTL_MAGIC;
#   8. the decision records, docs/decisions/NNNN-slug.md, and their index
#      docs/decisions.md: each record is numbered as its file is and has a
#      Status line and Context, Decision and Consequences sections, and the
#      index links it; every anchor a record defines is listed in the index,
#      and every anchor the page had when it held the records itself (the
#      list docs/decisions/.old-anchors) is still defined there, so an old
#      link lands on the entry of its record; every "docs/decisions/NNNN-
#      slug.md" cited without an anchor (any file) is a record; and no file
#      cites a record's anchor through the index (decisions.md#<anchor>
#      where the anchor is a record's): cite the record, the index is for
#      people. The fuzzers' corpus (userspace/fuzz/corpus) is input, not a
#      citation, and is left out.
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
	grep -noE 'docs/([A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]+[.]md#[A-Za-z0-9_-]+(, #[A-Za-z0-9_-]+)*' "$f" |
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
for f in README.md docs/*.md docs/decisions/*.md; do
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

# ---- 5. test citations land on assertions that name what the text is about
# The test files, "PATH" per line; a citation names a file by its basename.
find emulator/tests selftests/drivers/neuron userspace/tests -type f \
	\( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) 2>/dev/null |
	sort >"$tmp/testfiles"
# Every citation of a test, one per line, tab-separated: DOC, LINE, GROUP (the
# table row, or the paragraph's clause), FILE (a basename), WHAT (a line
# number, or a test name), BYTES (the record bytes the row or clause is
# about, "-" if none), FIELDS (the field names it is about, "-" if none).
# In a table row the subject comes from its field and bits / bytes columns;
# in prose, from the clause after the citation (up to the next citation or
# the end of the sentence): "byte N", "bytes N..M" and backquoted field
# names; a clause naming neither is about what the previous citation of the
# paragraph was ("... checks bytes 0..7 of ..., `:1304` those of ...").
extract_cites() { # extract_cites DOC...
	awk -v OFS='\t' -v fieldfile="$tmp/fieldnames" '
	function addr(a, b,   i) {
		for (i = a; i <= b; i++)
			if (!(i in seenb)) { seenb[i] = 1; bl = bl (bl == "" ? "" : " ") i }
	}
	# the record bytes a "bits / bytes" text names: "byte N", "bytes A..B",
	# "u16 @N"; "bits H..L" or "bit B" count from the last "bytes A.."/"@N",
	# else from `metadata_lo` (byte 1) or `metadata_hi` (byte 4), else from 0,
	# and are ignored after a lone "byte N" (bits of that byte)
	function bytes_of(t,   m, base, inbyte, cb, cs, x, a, b, n, w) {
		bl = ""; split("", seenb)
		cb = 0; cs = 0
		if (t ~ /metadata_lo/) { cb = 1; cs = 2 } else if (t ~ /metadata_hi/) { cb = 4; cs = 4 }
		base = cb; inbyte = 0
		while (match(t, /bytes [0-9]+\.\.[0-9]+|byte [0-9]+|u(8|16|32|64) @[0-9]+|bits [0-9]+\.\.[0-9]+|bit [0-9]+/)) {
			m = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
			if (m ~ /^bytes /) {
				sub(/^bytes /, "", m); split(m, x, /\.\./)
				addr(x[1] + 0, x[2] + 0); base = x[1] + 0; inbyte = 0
			} else if (m ~ /^byte /) {
				sub(/^byte /, "", m); addr(m + 0, m + 0); inbyte = 1
			} else if (m ~ /^u/) {
				split(m, x, / @/); w = substr(x[1], 2) / 8
				addr(x[2] + 0, x[2] + w - 1); base = x[2] + 0; inbyte = 0
			} else if (!inbyte) {
				sub(/^bits? /, "", m); n = split(m, x, /\.\./)
				a = x[1] + 0; b = (n > 1) ? x[2] + 0 : a
				if (a < b) { n = a; a = b; b = n }
				addr(base + int(b / 8), base + int(a / 8))
			}
		}
		if (bl == "" && cs) addr(cb, cb + cs - 1)
		return bl == "" ? "-" : bl
	}
	# backquoted names in t; known: only names of table fields (prose)
	function fields_of(t, known,   out, m) {
		out = ""
		while (match(t, /`[A-Za-z_][A-Za-z0-9_]*`/)) {
			m = tolower(substr(t, RSTART + 1, RLENGTH - 2)); t = substr(t, RSTART + RLENGTH)
			if (m ~ /\.(c|cpp|h)$/ || (known && !(m in isfield))) continue
			out = out (out == "" ? "" : " ") m
		}
		return out
	}
	# the citations of text t (a row, or a paragraph whose line k starts at
	# offset ls[k]); bare ":N" is of the file named before it in t
	function cites(t, row, rbytes, rfields,   off, m, c, f, k, ln, rest, nxt, cl, sb, sf, prevb, prevf, g, a, b) {
		last = ""; off = 0; prevb = "-"; prevf = "-"; g = 0
		while (match(t, /`[A-Za-z0-9_.-]+\.(c|cpp)` `[A-Za-z0-9_\/-]+`|[A-Za-z0-9_.-]+\.(c|cpp|h):[0-9]+(-[0-9]+)?|`:[0-9]+(-[0-9]+)?/)) {
			m = substr(t, RSTART, RLENGTH)
			off += RSTART; rest = substr(t, RSTART + RLENGTH); t = rest
			ln = FNR
			if (!row) { ln = pstart; for (k = 1; k <= nls; k++) if (ls[k] <= off) ln = pstart + k - 1 }
			if (row) { sb = rbytes; sf = rfields; grp = FILENAME ":" FNR }
			else {
				nxt = rest
				if (match(nxt, /[A-Za-z0-9_.-]+\.(c|cpp|h):[0-9]|`:[0-9]/)) nxt = substr(nxt, 1, RSTART - 1)
				if (match(nxt, /\. [A-Z(]/)) nxt = substr(nxt, 1, RSTART)
				sb = bytes_of(nxt); cl = fields_of(nxt, 1); sf = (cl == "") ? "-" : cl
				if (sb == "-" && sf == "-") { sb = prevb; sf = prevf } else g++
				prevb = sb; prevf = sf
				grp = FILENAME ":p" pstart "." g
			}
			off += RLENGTH - 1
			if (m ~ /^`[^`]*` `/) {               # `file.c` `test/name`
				split(m, c, /` `/); f = substr(c[1], 2); sub(/`$/, "", c[2])
				print FILENAME, ln, grp, f, "name:" c[2], sb, sf
				last = f
				continue
			}
			sub(/^`/, "", m)
			if (m ~ /^:/) { if (last == "") continue; m = last m }
			f = m; sub(/:.*/, "", f); last = f
			c[1] = m; sub(/^[^:]*:/, "", c[1])
			split(c[1], k2, /-/); a = k2[1] + 0; b = (c[1] ~ /-/) ? k2[2] + 0 : a
			print FILENAME, ln, grp, f, a, sb, sf
			if (b != a) print FILENAME, ln, grp, f, b, sb, sf
		}
	}
	function flush() {
		if (ptext != "") cites(ptext, 0)
		ptext = ""; nls = 0
	}
	BEGIN { while ((getline l < fieldfile) > 0) isfield[l] = 1 }
	FNR == 1 { flush(); fence = 0 }
	/^[ \t]*(```|~~~)/ { flush(); fence = !fence; next }
	fence { next }
	/^\|/ {
		flush()
		if ($0 ~ /^\|[-| ]+\|$/) next
		split($0, col, "|")
		rf = fields_of(col[3], 0)
		if (rf == "") { rf = tolower(col[3]); sub(/^[^a-z]+/, "", rf); sub(/[^a-z].*$/, "", rf) }
		cites($0, 1, bytes_of(col[4]), rf == "" ? "-" : rf)
		next
	}
	/^[ \t]*$/ || /^#/ { flush(); next }
	{
		if (ptext == "") pstart = FNR
		ls[++nls] = length(ptext) + 1
		ptext = ptext $0 " "
	}
	END { flush() }' "$@"
}
# the field names of docs/record-fields.md's tables: what prose may name
awk '/^\|/ && !/^\|[-| ]+\|$/ {
	split($0, col, "|"); t = col[3]; n = 0
	while (match(t, /`[A-Za-z_][A-Za-z0-9_]*`/)) {
		print tolower(substr(t, RSTART + 1, RLENGTH - 2)); t = substr(t, RSTART + RLENGTH); n++
	}
}' docs/record-fields.md | sort -u >"$tmp/fieldnames"
extract_cites docs/*.md README.md >"$tmp/testcites"
# Judge each citation. A cited line must assert or hold a literal: an
# assertion call (g_assert*, CHECK, EXPECT_*, ASSERT_*, chk, check_*), a row
# of a table of expected values ("... },", or its opening "[] = {") or a
# #define. A cited assertion (not a literal, not a check_*() helper call)
# must also be about what the row or clause says it checks: its statement
# (the line joined up to the ';', comments dropped, plus the assignment of a
# variable it compares, from the 40 lines above) names one of the fields
# (or the UAPI accessor that abbreviates it: NEURON_REC_HW_OVF for
# hardware_queue_overflow, ...), or reads one of the bytes: r[N] (also
# rec, bytes, buf), a loop over every byte (r[i]), g_assert_cmpmem or
# memcmp over a range holding it, or a ld*_le_p() load of it. A
# table-driven assertion (it compares a member of a table entry, w->value)
# passes when the same row or clause also cites the table. A test name
# ("`FILE.c` `a/b-c`") must be registered in FILE (a string ending in
# "/a/b-c", or TEST(_F)(..., a_b)). Docs other than record-fields.md are
# checked only for citations of files that exist under the test directories.
awk -F '\t' -v rf=docs/record-fields.md -v out="$tmp/testcite-results" -v q="'" '
	function load(p,   l, n) {
		if (p in nl) return
		n = 0
		while ((getline l < p) > 0) L[p, ++n] = l
		close(p); nl[p] = n
	}
	function strip(s) {
		gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", s); sub(/\/\/.*/, "", s); sub(/\/\*.*/, "", s)
		return s
	}
	function statement(p, n,   s, i) {
		s = strip(L[p, n]); i = n
		while (s !~ /;[ \t]*$|[{}][ \t]*$/ && i < n + 8 && i < nl[p]) s = s " " strip(L[p, ++i])
		return tolower(s)
	}
	# the statement plus the assignment of each variable it names
	function augment(p, n, s,   t, k, w, j, l, add) {
		add = ""; t = s; gsub(/[^a-z0-9_]+/, " ", t)
		k = split(t, w, " ")
		for (j = 1; j <= k; j++) {
			if (w[j] !~ /^[a-z_][a-z0-9_]*$/ || (w[j] in done)) continue
			done[w[j]] = 1
			for (l = n - 1; l >= 1 && l >= n - 40; l--)
				if (match(tolower(strip(L[p, l])), "(^|[^a-z0-9_.>])" w[j] "[ \t]*=[^=]")) {
					add = add " " tolower(strip(L[p, l])); break
				}
		}
		split("", done)
		return s add
	}
	function touch(a, b,   i) { for (i = a; i <= b; i++) got[i] = 1 }
	# the record bytes statement s reads, into got[]
	function bytes_read(s,   t, m, k, w, v, y, n) {
		split("", got)
		t = s
		while (match(t, /(^|[^a-z0-9_])(r|rec|bytes|buf)\[([0-9]+|i)\]/)) {
			m = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
			sub(/^.*\[/, "", m); sub(/\]$/, "", m)
			if (m == "i") touch(0, 15); else touch(m + 0, m + 0)
		}
		t = s
		while (match(t, /cmpmem\([ \t]*&?[a-z0-9_.>-]*(\[[0-9]+\])?[ \t]*(\+[ \t]*[0-9]+)?[ \t]*,[ \t]*[0-9]+|memcmp\([ \t]*&?[a-z0-9_.>-]*(\[[0-9]+\])?[ \t]*(\+[ \t]*[0-9]+)?[ \t]*,[^,]*,[ \t]*[0-9]+/)) {
			m = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
			n = split(m, y, ","); w = y[n] + 0; m = y[1]; k = 0
			if (match(m, /\[[0-9]+\]/)) k = substr(m, RSTART + 1, RLENGTH - 2) + 0
			if (match(m, /\+[ \t]*[0-9]+/)) { v = substr(m, RSTART + 1, RLENGTH - 1); gsub(/[ \t]/, "", v); k = v + 0 }
			if (w > 0) touch(k, k + w - 1)
		}
		t = s
		while (match(t, /ld(ub|uw|sw|l|q)_(le_)?p\([ \t]*&?(r|rec|bytes|buf)(\[[0-9]+\])?[ \t]*(\+[ \t]*[0-9]+)?[ \t]*\)/)) {
			m = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
			w = (m ~ /^ldub/) ? 1 : (m ~ /^ld[us]w/) ? 2 : (m ~ /^ldl/) ? 4 : 8
			k = 0
			if (match(m, /\[[0-9]+\]/)) k = substr(m, RSTART + 1, RLENGTH - 2) + 0
			if (match(m, /\+[ \t]*[0-9]+/)) { v = substr(m, RSTART + 1, RLENGTH - 1); gsub(/[ \t]/, "", v); k = v + 0 }
			touch(k, k + w - 1)
		}
	}
	function names(s, f) { return match(s, "(^|[^a-z0-9])" f "([^a-z0-9_]|$)") }
	function about(s, bytes, fields,   x, k, i, a) {
		k = split(fields, x, " ")
		for (i = 1; i <= k; i++) {
			if (x[i] == "-") continue
			if (names(s, x[i])) return 1
			for (a in alias) if (index(" " alias[a] " ", " " x[i] " ") && names(s, a)) return 1
		}
		bytes_read(s)
		k = split(bytes, x, " ")
		for (i = 1; i <= k; i++) if (x[i] != "-" && ((x[i] + 0) in got)) return 1
		return 0
	}
	BEGIN {
		# UAPI accessors whose names abbreviate a field
		alias["hw_ovf"] = "hardware_queue_overflow"; alias["sw_ovf"] = "software_queue_overflow"
		alias["desc_count"] = "descriptor_count"; alias["rec_type"] = "notific_type header"
		alias["rec_pc"] = "program_counter"; alias["seq_pc"] = "program_counter"
		alias["infer_pc"] = "infer_program_counter"; alias["debug_hint_ext"] = "debug_hint_extended"
		alias["sem_id"] = "event_semaphore_id"; alias["sem_value"] = "event_semaphore_value"
		alias["intr_cause"] = "cause_bits"; alias["intr_group"] = "group"
	}
	FILENAME != "-" && NR == FNR { b = $0; sub(/.*\//, "", b); if (!(b in path)) path[b] = $0; next }
	{
		doc = $1; ln = $2; grp = $3; f = $4; what = $5; bytes = $6; fields = $7
		where = doc ":" ln ": " f ":" what
		if (!(f in path)) {
			if (doc == rf && what !~ /^name:/) { print "bad\t" doc "\t" doc ":" ln ": " f ": no such test file"; nbad[doc]++ }
			next
		}
		p = path[f]; load(p); ncite[doc]++
		if (what ~ /^name:/) {
			name = substr(what, 6); id = name; gsub(/[\/-]/, "_", id); ok = 0
			for (i = 1; i <= nl[p]; i++)
				if (index(L[p, i], "/" name "\"") || index(L[p, i], "\"" name "\"") ||
				    match(L[p, i], "TEST(_F)?\\(([^,]*,[ \t]*)?" id "\\)")) { ok = 1; break }
			if (!ok) { print "bad\t" doc "\t" doc ":" ln ": " f " registers no test " name; nbad[doc]++ }
			next
		}
		text = L[p, what + 0]
		if (what + 0 > nl[p] || text !~ /g_assert|CHECK|EXPECT_|ASSERT_|chk\(|check_[a-z_]+\(|\},?[ \t]*(\/\*.*)?$|\[\] = \{$|^#define/) {
			print "bad\t" doc "\t" where " is not an assertion: " q text q; nbad[doc]++
			next
		}
		if (text ~ /check_[a-z_]+\(|\},?[ \t]*(\/\*.*)?$|\[\] = \{$|^#define/) { lit[grp] = 1; next }
		if (bytes == "-" && fields == "-") next
		nfield[doc]++
		s = augment(p, what + 0, statement(p, what + 0))
		if (about(s, bytes, fields)) next
		if (s ~ /[a-z_]+->[a-z_]+/) { pend[++np] = grp "\t" doc "\t" where; next }
		gsub(/[ \t]+/, " ", text)
		print "field\t" doc "\t" where " asserts neither byte (" bytes ") nor field (" fields ") it is cited for: " q text q
		nbadf[doc]++
	}
	END {
		for (i = 1; i <= np; i++) {
			split(pend[i], x, "\t")
			if (!(x[1] in lit)) {
				print "field\t" x[2] "\t" x[3] " is table-driven, and no table is cited beside it"
				nbadf[x[2]]++
			}
		}
		for (d in ncite) print "count\t" d "\t" ncite[d] "\t" (nfield[d] + 0) > out
	}' "$tmp/testfiles" "$tmp/testcites" >"$tmp/testcite-bad"
for doc in $({ echo docs/record-fields.md; cut -f1 "$tmp/testcites"; } | sort -u); do
	count=$(awk -F '\t' -v d="$doc" '$2 == d { print $3 }' "$tmp/testcite-results" 2>/dev/null)
	checked=$(awk -F '\t' -v d="$doc" '$2 == d { print $4 }' "$tmp/testcite-results" 2>/dev/null)
	[ -n "$count" ] || [ "$doc" = docs/record-fields.md ] || continue
	prose=$(awk -F '\t' -v d="$doc" '$1 == d && $3 ~ /:p[0-9]/' "$tmp/testcites" | wc -l)
	awk -F '\t' -v d="$doc" '$1 == "bad" && $2 == d { print $3 }' "$tmp/testcite-bad" >"$tmp/bad"
	if [ -s "$tmp/bad" ]; then
		diag <"$tmp/bad"
		result 1 "$doc: $(wc -l <"$tmp/bad") of ${count:-0} test citations ($prose in prose) land on no assertion or test"
	else
		result 0 "$doc: ${count:-0} test citations ($prose in prose), each an assertion, a literal or a registered test"
	fi
	awk -F '\t' -v d="$doc" '$1 == "field" && $2 == d { print $3 }' "$tmp/testcite-bad" >"$tmp/bad"
	if [ -s "$tmp/bad" ]; then
		diag <"$tmp/bad"
		result 1 "$doc: $(wc -l <"$tmp/bad") of ${checked:-0} cited assertions are not about the byte or field they are cited for"
	else
		result 0 "$doc: ${checked:-0} cited assertions, each about the byte or field its row or clause names"
	fi
done

# ---- 6. docs/metrics.md#fdinfo against kernel/neuron_fdinfo.c
# "KEY" for each fdinfo line the code prints, in order (a call of another
# function of the file prints that function's lines there), "<C>"-style
# placeholders and printf conversions both read as "*"; "live" marks where
# the register-backed lines begin (the first "if (live)").
fdc=kernel/neuron_fdinfo.c
awk '
	function norm(k) { gsub(/%[a-z]+|<[^>]*>/, "*", k); return k }
	/^[a-z].*[ *](neuron_[a-z0-9_]+)\(/ && !/;[ \t]*$/ {
		fn = $0; sub(/\(.*/, "", fn); sub(/.*[ *]/, "", fn); n[fn] = 0; next
	}
	fn != "" && /seq_(printf|puts)\([^"]*"nnq-/ {
		k = $0; sub(/^[^"]*"/, "", k); sub(/:.*/, "", k)
		key[fn, ++n[fn]] = norm(k); next
	}
	fn != "" && /if \(live\)/ && !(fn in live) { live[fn] = n[fn] }
	fn != "" && /^\}/ { fn = "" ; next }
	fn != "" {
		for (g in n) if (g != fn && index($0, g "(")) { for (i = 1; i <= n[g]; i++) key[fn, ++n[fn]] = key[g, i] }
	}
	END {
		f = "neuron_fdinfo_show"
		for (i = 1; i <= n[f]; i++) { if (f in live && i == live[f] + 1) print "live"; print key[f, i] }
	}' "$fdc" >"$tmp/fd-code"
# the table's keys, in order
awk '/<a id="fdinfo">/ { t = 1; next } t && /^## / && seen { exit } t && /^## / { seen = 1; next }
	t && /^\| `nnq-/ { k = $0; sub(/^\| `/, "", k); sub(/`.*/, "", k); gsub(/<[^>]*>/, "*", k); print k }' \
	docs/metrics.md >"$tmp/fd-doc"
# the keys the code's header comment lists, in order
awk '/^ \*   nnq-/ { k = $2; sub(/:.*/, "", k); gsub(/<[^>]*>/, "*", k); print k }' "$fdc" >"$tmp/fd-comment"
grep -vx live "$tmp/fd-code" >"$tmp/fd-keys"
always=$(awk '$0 == "live" { print NR - 1; f = 1; exit } END { if (!f) print NR }' "$tmp/fd-code")
if [ ! -s "$tmp/fd-keys" ] || [ ! -s "$tmp/fd-doc" ]; then
	result 1 "docs/metrics.md#fdinfo: no keys found in $fdc ($(wc -l <"$tmp/fd-keys")) or in the table ($(wc -l <"$tmp/fd-doc"))"
else
	: >"$tmp/fd-bad"
	diff "$tmp/fd-keys" "$tmp/fd-doc" | sed -n 's/^< /code prints: /p; s/^> /docs table: /p' >>"$tmp/fd-bad"
	diff "$tmp/fd-keys" "$tmp/fd-comment" | sed -n "s|^< |code prints: |p; s|^> |$fdc comment: |p" >>"$tmp/fd-bad"
	# "shows the first N" (N a number or its word) must be the lines printed
	# before the register-backed ones
	for f in docs/metrics.md "$fdc"; do
		tr '\n' ' ' <"$f" | sed 's/ \* / /g' | grep -oiE 'shows the first [a-z0-9]+' |
			while read -r _ _ _ w; do
				num=$(printf '%s\n' "$w" | awk '{ split("one two three four five six seven eight nine ten eleven twelve", w, " ")
					for (i = 1; i <= 12; i++) if (tolower($1) == w[i]) { print i; exit } print $1 + 0 }')
				[ "$num" -eq "$always" ] || echo "$f: a stale file \"shows the first $w\"; the code prints $always lines before the register-backed ones"
			done
	done >>"$tmp/fd-bad"
	if [ -s "$tmp/fd-bad" ]; then
		diag <"$tmp/fd-bad"
		result 1 "docs/metrics.md#fdinfo: the table or the line counts differ from $fdc"
	else
		result 0 "docs/metrics.md#fdinfo: $(wc -l <"$tmp/fd-keys") keys in the code's order, $always of them shown to a stale file, as $fdc prints them"
	fi
fi

# ---- 7. names and numbers the docs restate from the UAPI
# Device nodes: a line of docs/*.md, docs/*/*.md or README.md that names a /dev/neuron...
# node (the real driver's name) must say whose it is, on it or the line
# before: the real device or runtime, AWS's, or ours (/dev/nnq...) beside
# it. The ioctl magic: the first value ('c' or 0xNN) within 40 characters
# after "magic" or "type byte" must be NEURON_IOCTL_MAGIC. Link targets are
# not prose (a record's file name says "magic"); a superseded decision
# record, and its index entry, keep the value they decided.
magic=$(sed -nE 's/^#define[ \t]+NEURON_IOCTL_MAGIC[ \t]+([^ \t]+).*/\1/p' include/uapi/linux/neuron.h)
devname=$(sed -nE 's/^#define[ \t]+NEURON_DEV_NAME[ \t]+"([^"]+)".*/\1/p' include/uapi/linux/neuron.h)
if [ -z "$magic" ] || [ -z "$devname" ]; then
	result 1 "UAPI names: NEURON_IOCTL_MAGIC ($magic) or NEURON_DEV_NAME ($devname) not found in include/uapi/linux/neuron.h"
else
	for f in README.md docs/*.md docs/*/*.md; do
		super=0
		grep -q '^\*\*Status:\*\* Superseded' "$f" && super=1
		awk -v f="$f" -v magic="$magic" -v super="$super" -v dev="$devname" -v q="'" '
			function up(v) { return (v ~ /^0[xX]/) ? "0x" toupper(substr(v, 3)) : v }
			/\/dev\/neuron/ {
				w = prev " " $0
				if (w !~ /real|AWS|runtime/ && index(w, "/dev/" dev) == 0)
					print f ":" FNR ": names /dev/neuron... without saying it is the real driver" q "s node (ours is /dev/" dev "N)"
			}
			{
				t = $0
				gsub(/\]\([^)]*\)/, "]", t)
				if (t ~ /Superseded/)
					t = ""
				while (!super && match(t, /[Mm]agic|type byte/)) {
					t = substr(t, RSTART + RLENGTH); s = substr(t, 1, 40)
					if (match(s, q "." q "|0[xX][0-9A-Fa-f][0-9A-Fa-f]")) {
						v = substr(s, RSTART, RLENGTH)
						if (up(v) != up(magic))
							print f ":" FNR ": the ioctl magic is given as " v "; include/uapi/linux/neuron.h has " magic
					}
				}
				prev = $0
			}' "$f"
	done >"$tmp/uapi-names"
	if [ -s "$tmp/uapi-names" ]; then
		diag <"$tmp/uapi-names"
		result 1 "UAPI names: $(wc -l <"$tmp/uapi-names") lines of the docs name another device node or ioctl magic"
	else
		result 0 "UAPI names: the docs name /dev/${devname}N and ioctl magic $magic as include/uapi/linux/neuron.h defines them"
	fi
fi

# ---- 8. the decision records and their index
idx=docs/decisions.md recdir=docs/decisions
if [ ! -f "$idx" ] || [ ! -d "$recdir" ]; then
	result 1 "decision records: no $idx or no $recdir"
else
	# the records: numbered as their files, the four parts, an index entry each
	: >"$tmp/rec-bad"
	nrec=0
	for r in "$recdir"/[0-9][0-9][0-9][0-9]-*.md; do
		[ -f "$r" ] || continue
		nrec=$((nrec + 1))
		b=$(basename "$r") num=${b%%-*}
		grep -qE "^# $num\. " "$r" || echo "$r: no title \"# $num. ...\"" >>"$tmp/rec-bad"
		grep -qE '^\*\*Status:\*\* ' "$r" || echo "$r: no \"**Status:**\" line" >>"$tmp/rec-bad"
		for s in Context Decision Consequences; do
			grep -qx "## $s" "$r" || echo "$r: no \"## $s\" section" >>"$tmp/rec-bad"
		done
		grep -qF "](decisions/$b)" "$idx" || echo "$idx: no entry links $r" >>"$tmp/rec-bad"
	done
	ls "$recdir" | sed -n 's/^\([0-9][0-9][0-9][0-9]\)-.*\.md$/\1/p' | sort | uniq -d |
		sed "s|^|$recdir: two records numbered |" >>"$tmp/rec-bad"
	if [ "$nrec" -eq 0 ]; then
		result 1 "decision records: none in $recdir"
	elif [ -s "$tmp/rec-bad" ]; then
		diag <"$tmp/rec-bad"
		result 1 "decision records: $(wc -l <"$tmp/rec-bad") problems in $nrec records"
	else
		result 0 "decision records: $nrec, each numbered as its file, with Status, Context, Decision and Consequences, each in $idx"
	fi
	# anchors: the old page's all resolve in the index; the records' all listed there
	anchors_of "$idx" | sort -u >"$tmp/idx-anchors"
	: >"$tmp/anchor-bad" >"$tmp/rec-anchors"
	for r in "$recdir"/[0-9][0-9][0-9][0-9]-*.md; do
		[ -f "$r" ] || continue
		grep -oE '<a id="[^"]+"></a>' "$r" | sed -E 's/<a id="([^"]*)"><\/a>/\1/' |
			while IFS= read -r a; do printf '%s %s\n' "$a" "$r"; done
	done | sort >"$tmp/rec-anchors"
	grep -v '^#' "$recdir/.old-anchors" 2>/dev/null | grep . | sort -u >"$tmp/old-anchors"
	[ -s "$tmp/old-anchors" ] || echo "$recdir/.old-anchors: missing or empty" >>"$tmp/anchor-bad"
	comm -23 "$tmp/old-anchors" "$tmp/idx-anchors" |
		sed "s|^|$idx: the old anchor |; s|\$| is gone|" >>"$tmp/anchor-bad"
	awk '{ print $1 }' "$tmp/rec-anchors" | sort | uniq -d |
		sed 's|^|two records define the anchor |' >>"$tmp/anchor-bad"
	awk 'NR == FNR { have[$0] = 1; next } !($1 in have) { print $2 ": anchor " $1 " is not listed in the index" }' \
		"$tmp/idx-anchors" "$tmp/rec-anchors" >>"$tmp/anchor-bad"
	if [ -s "$tmp/anchor-bad" ]; then
		diag <"$tmp/anchor-bad"
		result 1 "$idx: $(wc -l <"$tmp/anchor-bad") anchors lost or unlisted"
	else
		result 0 "$idx: the $(wc -l <"$tmp/old-anchors") anchors of the page before the split all resolve, the $(wc -l <"$tmp/rec-anchors") anchors of the records all listed"
	fi
	# citations: a bare record path names a record; none reaches a record's anchor through the index
	grep -v '^userspace/fuzz/corpus/' "$tmp/files" | grep -vxF -e "$idx" -e "$recdir/.old-anchors" >"$tmp/citers"
	: >"$tmp/cite-bad"
	ncite=0
	while IFS= read -r f; do
		grep -noE 'docs/decisions/[0-9]{4}-[A-Za-z0-9_.-]+[.]md|decisions[.]md#[A-Za-z0-9_-]+' "$f" | sed "s|^|$f:|"
	done <"$tmp/citers" >"$tmp/dcites"
	while IFS= read -r hit; do
		f=${hit%%:*} rest=${hit#*:} line=${rest%%:*} c=${rest#*:}
		ncite=$((ncite + 1))
		case $c in
		docs/decisions/*)
			[ -f "$c" ] || echo "$f:$line: $c: no such record" ;;
		*)
			a=${c#*#} in=$(awk -v a="$a" '$1 == a { print $2; exit }' "$tmp/rec-anchors")
			[ -z "$in" ] || echo "$f:$line: $c: cite the record, $in#$a" ;;
		esac
	done <"$tmp/dcites" >>"$tmp/cite-bad"
	if [ -s "$tmp/cite-bad" ]; then
		diag <"$tmp/cite-bad"
		result 1 "decision citations: $(wc -l <"$tmp/cite-bad") of $ncite name no record, or a record's anchor through the index"
	else
		result 0 "decision citations: $ncite, each of a record (or of the index's own anchors)"
	fi
fi

echo "1..$n"
[ "$fails" -eq 0 ]
