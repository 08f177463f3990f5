#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the build tree into a scratch prefix, then build and run a consumer
# with find_package(neuron) and with pkg-config.
# usage: run.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
work=$build/install-test
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# the man page (help2man at build time) and the bash completion
if [ -x "$build/neuron-nq" ]; then
	test -s "$work/prefix/share/man/man1/neuron-nq.1" || { echo "no share/man/man1/neuron-nq.1 installed"; exit 1; }
	grep -q '^\.SH "EXIT STATUS"' "$work/prefix/share/man/man1/neuron-nq.1" || { echo "man page has no EXIT STATUS section"; exit 1; }
	grep -q 'metrics' "$work/prefix/share/man/man1/neuron-nq.1" || { echo "man page does not mention metrics"; exit 1; }
	test -s "$work/prefix/share/bash-completion/completions/neuron-nq" || { echo "no bash completion installed"; exit 1; }
fi
cmake -S "$src" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
static=""
[ -e "$work/prefix/lib/libneuron.a" ] && static=--static  # a static libneuron needs its private deps too
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config $static --cflags --libs neuron)
# shellcheck disable=SC2086
c++ "$src/main.cpp" $flags -Wl,-rpath,"$work/prefix/lib" -o "$work/pc-consumer"
"$work/pc-consumer"
