# SPDX-License-Identifier: MIT
# Sourced (not run) by the scripts that take files out of Debian packages
# into the cache without installing them: selftests/vm/fetch-kernel.sh (guest
# kernels and headers), selftests/vm/fetch-ynl.sh (the kernel's YNL tool),
# selftests/vm/trace-payload.sh (6.12's perf), scripts/fetch-promtool.sh and
# scripts/fetch-kubectl.sh.
# Each fills $cache/<something> once; these are the steps they share.
# The caller sets $cache and defines die().

# deb_lock NAME: holds $cache/NAME.lock until the calling script exits, so a
# concurrent caller waits here and then finds the cache filled (callers test
# the cache again after taking it).
deb_lock() {
	local fd
	mkdir -p "$cache"
	exec {fd}>"$cache/$1.lock"
	flock "$fd"
}

# deb_download DIR PACKAGE[=VERSION]...: the .debs into DIR (apt-get
# download, which runs as the _apt user, hence the mode); package lists too
# old to know a version are refreshed once before giving up.
deb_download() {
	local dir=$1
	shift
	chmod 755 "$dir"
	(cd "$dir" && apt-get download "$@" >/dev/null 2>&1) && return 0
	apt-get update -q >/dev/null 2>&1
	(cd "$dir" && apt-get download "$@" >/dev/null 2>&1) || die "apt-get download $* failed"
}

# deb_binary PACKAGE BINARY: usr/bin/BINARY of the candidate version VER of
# PACKAGE, extracted once into $cache/BINARY-VER/ (under a lock; nothing
# installed), for a tool needed only as a binary (scripts/fetch-promtool.sh,
# scripts/fetch-kubectl.sh). Prints that directory.
deb_binary() {
	local pkg=$1 bin=$2 ver d tmp
	ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		apt-get update -q >/dev/null 2>&1 || true
		ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
	fi
	[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "apt knows no package $pkg (apt-get update?)"
	d=$cache/$bin-$ver
	if [ ! -x "$d/$bin" ]; then
		deb_lock "fetch-$bin"
		if [ ! -x "$d/$bin" ]; then
			tmp=$(mktemp -d)
			deb_download "$tmp" "$pkg=$ver"
			dpkg-deb -x "$tmp/${pkg}_"*.deb "$tmp/x"
			[ -x "$tmp/x/usr/bin/$bin" ] || { rm -rf "$tmp"; die "no usr/bin/$bin in ${pkg}_$ver"; }
			rm -rf "$d.tmp" "$d"
			mkdir -p "$d.tmp"
			cp "$tmp/x/usr/bin/$bin" "$d.tmp/$bin"
			mv "$d.tmp" "$d"
			rm -rf "$tmp"
		fi
	fi
	echo "$d"
}
