#!/bin/sh
# SPDX-License-Identifier: MIT
# The umbrella header libneuron/neuron.hpp pulls in neither JSON
# (nlohmann), the assembler nor the Perfetto writer
# (userspace/README.md#api-contract): the headers one translation unit that
# includes it reads (g++ -H) must not include them.
# usage: check-umbrella.sh CXX INCLUDE_DIR ABI_INCLUDE_DIR
set -eu
cxx=$1 inc=$2 abi=$3
out=$(echo '#include <libneuron/neuron.hpp>' |
	"$cxx" -std=c++20 -fsyntax-only -H -I"$inc" -I"$abi" -x c++ - 2>&1 >/dev/null)
n=$(echo "$out" | grep -c '^\.' || true)
bad=$(echo "$out" | grep -E '^\.+ .*(nlohmann/|libneuron/(json|assembler|perfetto)\.hpp)' || true)
echo "libneuron/neuron.hpp reads $n headers"
if [ -n "$bad" ]; then
	echo "it must not include:"
	echo "$bad"
	exit 1
fi
echo "no nlohmann, libneuron/json.hpp, libneuron/assembler.hpp or libneuron/perfetto.hpp"
