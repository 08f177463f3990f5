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
#include "libneuron/result.hpp"
#include "uapi/linux/neuron.h"
#include "uapi/linux/neuron_isa.h"

NEURON_API_BEGIN
namespace neuron {

/// The bytes of one `data NAME u32|bytes ...` directive
/// (docs/program-syntax.md#data): laid out in the engine's image after its
/// instructions (data_offset()), each block starting on a 4-byte boundary.
struct DataBlock {
  std::string name;
  bool u32 = false;  ///< written as little-endian u32 words (else bytes)
  std::vector<std::uint8_t> bytes;
  unsigned line = 0;  ///< source line of the directive
};

/// The address field of a DGE_COPY that names a data block: `src=@NAME`
/// (operand.dge.src) or `idx=@NAME` (reserved0, the index table). A
/// destination cannot be one: the driver lets a program write only memory
/// its file allocated (docs/decisions/0005-tenancy.md).
enum class DataField : std::uint8_t { Source = 0, IndexTable = 1 };

/// An instruction field resolved to the device address of a data block when
/// the program is submitted (program_image()): until then the field holds
/// the block's offset in the image, data_offset().
struct DataRef {
  std::uint32_t pc = 0;     ///< the instruction (an index into insns)
  DataField field = DataField::Source;
  std::uint32_t block = 0;  ///< an index into EngineProgram::data
};

/// The instructions of one engine of one core, and the data it brings.
/// The image NEURON_IOC_SUBMIT loads is the instructions followed by the
/// data blocks, padded to whole 32-byte slots (program_image()); the
/// instructions end in a `halt` when there is data, so the engine never
/// runs into it.
struct EngineProgram {
  unsigned core = 0;
  unsigned engine = 0;  ///< enum neuron_engine
  std::vector<neuron_emu_insn> insns;
  std::vector<unsigned> lines;  ///< source line of each instruction
  std::vector<DataBlock> data;  ///< `data` directives, in source order
  std::vector<DataRef> refs;    ///< fields naming a block, by pc
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

/// Byte offset of data block `block` from the start of the engine's image:
/// 32 * insns.size() plus the earlier blocks, each rounded up to 4 bytes.
/// `block == e.data.size()` gives the end of the data. Summed in 64 bits;
/// an offset above 0xffffffff is returned as UINT32_MAX, never wrapped
/// (such an image is far larger than any program area).
/// docs/program-syntax.md#data.
std::uint32_t data_offset(const EngineProgram& e, std::size_t block);

/// Instructions (32-byte slots) of the engine's image: insns.size() plus
/// the data rounded up to whole slots (summed in 64 bits); an assembled
/// program's is at most NEURON_MAX_PROGRAM_INSNS.
std::size_t image_slots(const EngineProgram& e);

/// BAR4 offset at which NEURON_IOC_SUBMIT loads the program of `engine`
/// (< info.engines_per_core) of `core` (< info.num_cores): the engine's
/// NEURON_PROG_AREA_BYTES area below the top of device memory
/// (include/uapi/linux/neuron.h, struct neuron_submit).
std::uint64_t program_area_offset(const neuron_device_info& info, unsigned core, unsigned engine);

/// The image to submit when the engine's program is loaded at BAR4 offset
/// `base` (program_area_offset()): insns with every DataRef's field set to
/// base + data_offset(block), then the data blocks, zero-padded to
/// image_slots() slots. Without data it is insns. Errors:
/// errc::invalid_argument when the image with its data is larger than the
/// program area (NEURON_MAX_PROGRAM_INSNS slots; "data too big", naming the
/// core, engine and sizes) or an address does not fit the 32-bit field,
/// naming the line; docs/program-syntax.md#data.
Result<std::vector<neuron_emu_insn>> program_image(const EngineProgram& e, std::uint64_t base);

}  // namespace neuron
NEURON_API_END
