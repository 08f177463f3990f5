// SPDX-License-Identifier: MIT
//
// One 16-byte notification record (include/neuron/notification.h), as raw
// bytes. Layouts are defined only in the shared header; this file gives the
// byte-level accessors libneuron needs (little-endian, explicit shifts, so the
// decoder does not depend on the compiler's bitfield allocation; a test checks
// both agree).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "neuron/notification.h"

namespace neuron {

struct alignas(16) Record {
  std::array<std::uint8_t, NEURON_ISA_NOTIFICATION_NBYTES> bytes{};

  [[nodiscard]] std::uint8_t header() const noexcept { return bytes[NEURON_ISA_HEADER_OFFSET]; }
  [[nodiscard]] std::uint8_t notific_type() const noexcept {
    return header() & NEURON_ISA_HEADER_TYPE_MASK;
  }
  [[nodiscard]] bool phase() const noexcept { return (header() & NEURON_ISA_HEADER_PHASE) != 0; }
  [[nodiscard]] bool sw_overflow() const noexcept { return (header() & NEURON_ISA_HEADER_SW_OVF) != 0; }
  [[nodiscard]] bool hw_overflow() const noexcept { return (header() & NEURON_ISA_HEADER_HW_OVF) != 0; }

  [[nodiscard]] std::uint16_t u16(std::size_t off) const noexcept {
    return static_cast<std::uint16_t>(bytes[off] | (bytes[off + 1] << 8));
  }
  [[nodiscard]] std::uint32_t u32(std::size_t off) const noexcept {
    return static_cast<std::uint32_t>(bytes[off]) | (static_cast<std::uint32_t>(bytes[off + 1]) << 8) |
           (static_cast<std::uint32_t>(bytes[off + 2]) << 16) |
           (static_cast<std::uint32_t>(bytes[off + 3]) << 24);
  }
  [[nodiscard]] std::uint64_t u64(std::size_t off) const noexcept {
    return static_cast<std::uint64_t>(u32(off)) | (static_cast<std::uint64_t>(u32(off + 4)) << 32);
  }
  /// The 64-bit timestamp at byte 8, in picoseconds
  /// (docs/hardware.md#timestamp).
  [[nodiscard]] std::uint64_t timestamp_ps() const noexcept { return u64(NEURON_ISA_TIMESTAMP_OFFSET); }

  /// "9f" style lowercase hex of the 16 bytes, byte 0 first, space separated.
  [[nodiscard]] std::string hex() const;

  friend bool operator==(const Record&, const Record&) = default;
};

static_assert(sizeof(Record) == NEURON_ISA_NOTIFICATION_NBYTES);
static_assert(alignof(Record) == 16);
static_assert(std::is_trivially_copyable_v<Record>);

/// The engines of a core, in notific_type order (enum neuron_engine).
enum class Engine : std::uint8_t { PE = 0, ACT = 1, POOL = 2, DVE = 3, SP = 4 };
inline constexpr unsigned kEnginesPerCore = NEURON_ENGINES_PER_CORE;

/// "PE", "ACT", "POOL", "DVE", "SP"; "engine7" beyond.
std::string engine_name(unsigned engine);

/// Name of a notific_type value ("PE_INST_START", "TPB_ERROR", "UNKNOWN_0x19").
std::string notific_type_name(std::uint8_t type);

/// true for the 24 values of enum neuron_isa_notification_type.
constexpr bool is_known_notific_type(std::uint8_t t) noexcept {
  return t == NEURON_ISA_NOTIFICATION_TYPE_DMA || t == NEURON_ISA_NOTIFICATION_TYPE_ERROR ||
         (t >= NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START && t <= NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM) ||
         t == NEURON_ISA_NOTIFICATION_TYPE_AXI_EVT_SEM || t == NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR;
}

}  // namespace neuron
