// SPDX-License-Identifier: MIT
//
// The NNQCORE devcoredump the driver takes of a hung or halted core
// (include/uapi/linux/neuron.h, struct neuron_coredump_header and what
// follows it; docs/decisions/0013-coredump.md) as data, its text and its JSON
// (docs/cli-json.md#coredump). No I/O: `neuron-nq coredump` (cmd_coredump.cpp)
// reads the file, and the fuzz target userspace/fuzz/fuzz_coredump.cpp feeds
// it arbitrary bytes.
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

#include "libneuron/record.hpp"
#include "libneuron/result.hpp"
#include "uapi/linux/neuron.h"
#include "uapi/linux/neuron_isa.h"

namespace neuron::cli {

/// One dumped queue: its header and its last records.
struct DumpQueue {
  neuron_coredump_queue q{};
  std::vector<Record> records;
};

/// A whole dump: the header, one entry per engine, the queues, the program words.
struct Dump {
  neuron_coredump_header h{};
  std::vector<neuron_coredump_engine> engines;
  std::vector<DumpQueue> queues;
  std::vector<neuron_emu_insn> insns;
};

/// The dump's parts from the bytes `b` of a dump file, checked against each
/// other and against b.size() (every field little-endian as the UAPI says,
/// read on a little-endian host). `path` names the file in errors, which
/// are errc::invalid_argument ("coredump PATH: truncated: ..."). Never reads
/// outside `b`.
Result<Dump> parse_coredump(std::span<const char> b, const std::string& path);

/// The dump as `neuron-nq coredump` prints it (several lines, each ending
/// in a newline).
std::string coredump_text(const Dump& d, const std::string& path);

/// The dump as `neuron-nq coredump --json`'s object (docs/cli-json.md#coredump).
nlohmann::json coredump_json(const Dump& d, const std::string& path);

}  // namespace neuron::cli
