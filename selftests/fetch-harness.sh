#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Extracts kselftest_harness.h and kselftest.h from Debian's linux-source-6.1
# package (installed by scripts/setup-host.sh) into DIR, once.
# Usage: fetch-harness.sh DIR
set -euo pipefail
dir=$1
[ -f "$dir/kselftest_harness.h" ] && exit 0
tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null) || {
	echo "fetch-harness: /usr/src/linux-source-6.1.tar.xz missing (apt-get install linux-source-6.1)" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp" \
	linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
	linux-source-6.1/tools/testing/selftests/kselftest.h
mkdir -p "$dir"
cp "$tmp"/linux-source-6.1/tools/testing/selftests/kselftest*.h "$dir/"
