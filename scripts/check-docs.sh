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
#      directory that exists, one line per document.
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

echo "1..$n"
[ "$fails" -eq 0 ]
