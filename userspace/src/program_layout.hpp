// SPDX-License-Identifier: MIT
//
// Where a program's data blocks sit in its engine's image
// (docs/program-syntax.md#data): 32 bytes per instruction, then each block
// rounded up to 4 bytes. In 64 bits: 4 GiB of data must not wrap an offset
// to a small one that passes the program area's size check and then
// overflows the image (issue 41). Private (not exported): the assembler's
// and program_image()'s arithmetic, and the host test's, which asks it
// about sizes no test could allocate.
#pragma once

#include <cstddef>
#include <cstdint>

#include "uapi/linux/neuron_isa.h"

namespace neuron::detail {

/// Byte offset of block `block` from the start of the image (`block` =
/// `blocks`: the end of the data); `size_of(i)` is block i's size in bytes.
template <class SizeOf>
std::uint64_t image_offset(std::uint64_t insns, std::size_t blocks, SizeOf size_of, std::size_t block) noexcept {
  std::uint64_t off = insns * NEURON_EMU_INSN_BYTES;
  for (std::size_t i = 0; i < block && i < blocks; ++i)
    off += (static_cast<std::uint64_t>(size_of(i)) + 3) & ~std::uint64_t{3};
  return off;
}

/// Whole 32-byte slots that `bytes` of image take.
constexpr std::uint64_t image_slots_of(std::uint64_t bytes) noexcept {
  return bytes / NEURON_EMU_INSN_BYTES + (bytes % NEURON_EMU_INSN_BYTES != 0);
}

}  // namespace neuron::detail
