// SPDX-License-Identifier: MIT
//
// A text assembler for the emulated engines (include/uapi/linux/neuron_isa.h).
// Syntax: docs/program-syntax.md. Errors carry file and line:
//   "prog.nq:7: unknown opcode 'nopp' (did you mean 'nop'?)"
#pragma once

#include <string>
#include <string_view>

#include "libneuron/program.hpp"
#include "libneuron/result.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// Assemble `text`; `name` is used in error messages. On failure the Error's
/// code is errc::parse_error and its `what` holds every error found, one per
/// line (at most 20).
Result<Program> assemble(std::string_view text, std::string_view name = "<input>");
/// Read and assemble a file. Errors: assemble()'s (errc::parse_error), or
/// the errno of opening or reading it with what = "open PATH" / "read PATH"
/// (ENOENT no such file, EACCES, EISDIR a directory); Error::message() then
/// reads "open x.nq: No such file or directory".
Result<Program> assemble_file(const std::string& path);

/// One instruction back to text, in the syntax assemble() accepts.
std::string disassemble(const neuron_emu_insn& insn);
/// A whole program back to text (sections and instructions).
std::string disassemble(const Program& p);

/// Engine index from a section name ("pe", "act", "pool", "dve", "sp"), -1 if none.
int engine_from_name(std::string_view name) noexcept;

}  // namespace neuron
NEURON_API_END
