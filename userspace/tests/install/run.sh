#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the build tree into a scratch prefix, then build and run the
# consumers with find_package(neuron) (C++ and C) and with pkg-config
# (C++ with -std=c++20 of our own: neuron.pc forces no language flag; C99).
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
"$work/consumer/c-consumer"
# lib, or lib/<multiarch> for the /usr prefix on Debian (GNUInstallDirs)
libdir=$work/prefix/$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
static=""
[ -e "$libdir/libneuron.a" ] && static=--static  # a static libneuron needs its private deps too
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags=$(pkg-config $static --cflags --libs neuron)
case " $(pkg-config --cflags neuron) " in
*" -std="*) echo "neuron.pc forces a language standard: $(pkg-config --cflags neuron)"; exit 1 ;;
esac
# shellcheck disable=SC2086
c++ -std=c++20 "$src/main.cpp" $flags -Wl,-rpath,"$libdir" -o "$work/pc-consumer"
"$work/pc-consumer"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -pedantic -Werror "$src/consumer.c" $flags -Wl,-rpath,"$libdir" -o "$work/pc-c-consumer"
"$work/pc-c-consumer"
