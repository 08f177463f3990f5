// SPDX-License-Identifier: MIT
//
// One 16-byte notification record, as raw bytes. Layouts, masks and shifts
// are defined only in the UAPI header include/uapi/linux/neuron_record.h;
// this file wraps its little-endian accessors (NEURON_REC_*), so the decoder
// depends neither on the compiler's bitfield allocation nor on the host's
// byte order.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "uapi/linux/neuron_record.h"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

struct alignas(16) Record {
  std::array<std::uint8_t, NEURON_ISA_NOTIFICATION_NBYTES> bytes{};

  [[nodiscard]] std::uint8_t header() const noexcept { return NEURON_REC_HEADER(bytes); }
  [[nodiscard]] std::uint8_t notific_type() const noexcept { return NEURON_REC_TYPE(bytes); }
  [[nodiscard]] bool phase() const noexcept { return NEURON_REC_PHASE(bytes) != 0; }
  [[nodiscard]] bool sw_overflow() const noexcept { return NEURON_REC_SW_OVF(bytes) != 0; }
  [[nodiscard]] bool hw_overflow() const noexcept { return NEURON_REC_HW_OVF(bytes) != 0; }

  /// Little-endian loads at byte `off`.
  [[nodiscard]] std::uint16_t u16(std::size_t off) const noexcept { return NEURON_REC_LE16(bytes, off); }
  [[nodiscard]] std::uint32_t u32(std::size_t off) const noexcept { return NEURON_REC_LE32(bytes, off); }
  [[nodiscard]] std::uint64_t u64(std::size_t off) const noexcept { return NEURON_REC_LE64(bytes, off); }
  /// The 64-bit timestamp at byte 8, in picoseconds
  /// (docs/hardware.md#timestamp).
  [[nodiscard]] std::uint64_t timestamp_ps() const noexcept { return NEURON_REC_TIMESTAMP(bytes); }

  /// "9f" style lowercase hex of the 16 bytes, byte 0 first, space separated.
  [[nodiscard]] std::string hex() const;

  friend bool operator==(const Record&, const Record&) = default;
};

static_assert(sizeof(Record) == NEURON_ISA_NOTIFICATION_NBYTES);
static_assert(alignof(Record) == 16);
static_assert(std::is_trivially_copyable_v<Record>);

/// The engines of a core, in notific_type order: enum neuron_engine's values.
enum class Engine : std::uint8_t {
  PE = NEURON_ENGINE_PE,
  ACT = NEURON_ENGINE_ACT,
  POOL = NEURON_ENGINE_POOL,
  DVE = NEURON_ENGINE_DVE,
  SP = NEURON_ENGINE_SP,
};
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
NEURON_API_END
