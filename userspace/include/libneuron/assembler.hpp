// SPDX-License-Identifier: MIT
//
// A text assembler for the emulated engines (include/neuron/emu_isa.h).
// Syntax: docs/program-syntax.md. Errors carry file and line:
//   "prog.nq:7: unknown opcode 'nopp' (did you mean 'nop'?)"
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "libneuron/result.hpp"
#include "neuron/emu_isa.h"

namespace neuron {

/// The instructions of one engine of one core.
struct EngineProgram {
  unsigned core = 0;
  unsigned engine = 0;  ///< enum neuron_engine
  std::vector<neuron_emu_insn> insns;
  std::vector<unsigned> lines;  ///< source line of each instruction
};

struct Program {
  std::string name;  ///< file name, for messages
  std::vector<EngineProgram> engines;  ///< in order of first appearance
  /// `features VALUE` directive: NEURON_FEATURE_FLAGS
  /// (docs/hardware.md#dge-feature-flags) to set on every core the program uses
  /// before it runs; nullopt leaves them as they are.
  std::optional<std::uint32_t> features;

  [[nodiscard]] std::set<unsigned> cores() const;
  [[nodiscard]] const EngineProgram* find(unsigned core, unsigned engine) const;
  [[nodiscard]] std::size_t instruction_count() const;
};

/// Assemble `text`; `name` is used in error messages. On failure the Error's
/// code is errc::parse_error and its `what` holds every error found, one per
/// line (at most 20).
Result<Program> assemble(std::string_view text, std::string_view name = "<input>");
/// Read and assemble a file.
Result<Program> assemble_file(const std::string& path);

/// One instruction back to text, in the syntax assemble() accepts.
std::string disassemble(const neuron_emu_insn& insn);
/// A whole program back to text (sections and instructions).
std::string disassemble(const Program& p);

/// Engine index from a section name ("pe", "act", "pool", "dve", "sp"), -1 if none.
int engine_from_name(std::string_view name) noexcept;

}  // namespace neuron
