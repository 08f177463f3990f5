# SPDX-License-Identifier: MIT
# Sourced (not run) by the scripts that take files out of Debian packages
# into the cache without installing them: selftests/vm/fetch-kernel.sh (guest
# kernels and headers), selftests/vm/fetch-ynl.sh (the kernel's YNL tool),
# selftests/vm/trace-payload.sh (6.12's perf), scripts/fetch-promtool.sh.
# Each fills $cache/<something> once; these are the two steps they share.
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
