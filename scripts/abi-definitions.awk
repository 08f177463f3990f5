# SPDX-License-Identifier: MIT
# Definitions in C and C++ sources, for scripts/check-headers.sh
# (headers.abi_defined_once): prints "NAME<TAB>FILE:LINE" for every macro
# (#define), every struct, union or enum tag defined with a body, and every
# enumerator of a C enum (not of a C++ "enum class", whose names are scoped).
# Comments are skipped. Usage: awk -f abi-definitions.awk FILE...
function emit(name) { print name "\t" FILENAME ":" FNR }
FNR == 1 { inenum = 0; incomment = 0 }
{
	line = $0
	# drop comments on the line (a block comment may span lines)
	if (incomment) { if (sub(/^.*\*\//, "", line)) incomment = 0; else next }
	gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", line)
	if (sub(/\/\*.*$/, "", line)) incomment = 1
	sub(/\/\/.*$/, "", line)
}
line ~ /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_][A-Za-z0-9_]*/ {
	n = line; sub(/^[ \t]*#[ \t]*define[ \t]+/, "", n); sub(/[^A-Za-z0-9_].*$/, "", n)
	emit(n); next
}
line ~ /(^|[^A-Za-z0-9_])(struct|union|enum)[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*(:[^{]*)?\{/ && line !~ /enum[ \t]+class/ {
	t = line; sub(/^.*(struct|union|enum)[ \t]+/, "", t); sub(/[^A-Za-z0-9_].*$/, "", t)
	emit(t)
}
line ~ /(^|[^A-Za-z0-9_])enum([ \t]+[A-Za-z_][A-Za-z0-9_]*)?[ \t]*\{/ && line !~ /enum[ \t]+class/ {
	inenum = 1; sub(/^[^{]*\{/, "", line)
}
inenum {
	body = line
	closing = sub(/\}.*$/, "", body)
	k = split(body, parts, ",")
	for (i = 1; i <= k; i++) {
		e = parts[i]; sub(/=.*$/, "", e); gsub(/[ \t]/, "", e)
		if (e ~ /^[A-Za-z_][A-Za-z0-9_]*$/) emit(e)
	}
	if (closing) inenum = 0
}
