// SPDX-License-Identifier: MIT
//
// A program for the emulated engines as data: the instructions of each
// engine of each core (include/uapi/linux/neuron_isa.h). The assembler
// (libneuron/assembler.hpp) makes one from text; execute(), the tenancy
// helpers and explain() take one. This header does not include the assembler.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "libneuron/export.hpp"
#include "uapi/linux/neuron_isa.h"

NEURON_API_BEGIN
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

}  // namespace neuron
NEURON_API_END
