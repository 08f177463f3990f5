// SPDX-License-Identifier: MIT
//
// Programs as the neuron-nq commands take them: numbers from the command
// line, assembling a file with a --features override, starting it on a device.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "libneuron/assembler.hpp"  // not in the umbrella header
#include "libneuron/json.hpp"
#include "libneuron/neuron.hpp"
#include "libneuron/perfetto.hpp"

namespace neuron::cli {

/// A 32-bit number as parse_number() (cli.hpp) reads it: decimal (a leading
/// 0 too), 0x hex or 0b binary, as the assembler does; nullopt when empty,
/// malformed or above UINT32_MAX.
std::optional<std::uint32_t> parse_u32(const std::string& s);

/// Assemble `file`; a non-empty `features` (a number, e.g. "0x2") replaces
/// the program's `features` directive. Errors: the assembler's (parse_error,
/// open), invalid_argument when `features` is not a number.
Result<Program> load_program(const std::string& file, const std::string& features);

/// Before any device is opened: every core `prog` uses must be in the
/// cores programs may use (`cores`, the global --cores, else
/// NEURON_VISIBLE_CORES; unset: every core a mask can hold), so a program on
/// a core outside them is refused as an input error (exit 1) whether or not
/// the device is there. The device's own core count is checked later
/// (ProgramClaim). Errors: invalid_argument naming the core, its line and
/// the list (visible_cores(), check_program_cores()).
Status check_cores_early(const Program& prog, const std::optional<CoreList>& cores);

/// Submit one engine's program: its image (program_image(): the
/// instructions with `src=@NAME`/`idx=@NAME` resolved to where SUBMIT loads
/// it, then its data; docs/program-syntax.md#data) with `flags`
/// (NEURON_SUBMIT_F_*). Errors: DEVICE_INFO's, program_image()'s (naming
/// the file and line), SUBMIT's.
Status submit_engine(const Device& dev, const Program& prog, const EngineProgram& e, std::uint32_t flags);

/// A started program and what it holds: its cores and device memory
/// (ProgramClaim) until destroyed, when engines of it still running are
/// reset (the driver stops them when the file closes anyway).
struct StartedProgram {
  std::unique_ptr<DeviceTarget> target;  // declared first: the claim goes first
  ProgramClaim claim;
};

/// Claim what the program needs (its cores, checked against `cores` or
/// NEURON_VISIBLE_CORES; the device memory its DGE_COPY instructions name),
/// set its feature flags (if any) on its cores and submit every engine's
/// instructions, with NEURON_SUBMIT_F_TRACE when `trace`. Does not wait.
/// Errors: the claim's or the first failing ioctl's.
Result<StartedProgram> start_program(const Device& dev, const Program& prog, bool trace,
                                     const std::optional<CoreList>& cores);

/// "PE,ACT": the engines of `core` that run or wait, by ENGINE_STATUS (""
/// if none, or if the status cannot be read).
std::string busy_engines(const Device& dev, unsigned core);

}  // namespace neuron::cli
