# SPDX-License-Identifier: MIT
# Sourced by scripts/check.sh and scripts/demo.sh after setup-host.sh: every
# CMake build they start (the library and CLI, the TSan build, the package
# build under dpkg-buildpackage) compiles through ccache, whose cache lives
# with the other caches outside the repo. ccache keys each object by its
# preprocessed source and flags, so a warm run recompiles only what changed;
# paths are taken relative to the checkout, so a fresh clone elsewhere hits.
if command -v ccache >/dev/null 2>&1; then
	export CCACHE_DIR="${NEURON_CACHE:-/var/cache/neuron}/ccache"
	export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=3G
	# read by CMake (3.17+) when a build directory is first configured
	export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
