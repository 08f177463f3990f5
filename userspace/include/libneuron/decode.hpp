// SPDX-License-Identifier: MIT
//
// decode(): a 16-byte record to a typed value. Every one of the 24
// notific_type values (docs/hardware.md#rec-types) maps to a struct; anything
// else decodes to Unknown with the raw bytes (never undefined behaviour: the
// decoder reads bytes with explicit shifts, following
// include/uapi/linux/neuron_record.h).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "libneuron/record.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// The 1-ps device timestamp (docs/hardware.md#timestamp: fixed 1 ps unit).
struct Timestamp {
  std::uint64_t ps = 0;
  [[nodiscard]] std::chrono::duration<std::uint64_t, std::pico> duration() const noexcept {
    return std::chrono::duration<std::uint64_t, std::pico>(ps);
  }
  [[nodiscard]] std::chrono::nanoseconds ns() const noexcept {
    return std::chrono::nanoseconds(static_cast<std::int64_t>(ps / 1000));
  }
  [[nodiscard]] double seconds() const noexcept { return static_cast<double>(ps) * 1e-12; }
  [[nodiscard]] double microseconds() const noexcept { return static_cast<double>(ps) * 1e-6; }
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

/// Header byte (byte 3): notific_type:5, sw overflow, hw overflow, phase.
struct Header {
  std::uint8_t raw = 0;
  [[nodiscard]] std::uint8_t type() const noexcept {
    return static_cast<std::uint8_t>(NEURON_FIELD_GET(NEURON_ISA_HEADER_TYPE_MASK, NEURON_ISA_HEADER_TYPE_SHIFT, raw));
  }
  [[nodiscard]] bool sw_overflow() const noexcept { return raw & NEURON_ISA_HEADER_SW_OVF; }
  [[nodiscard]] bool hw_overflow() const noexcept { return raw & NEURON_ISA_HEADER_HW_OVF; }
  [[nodiscard]] bool phase() const noexcept { return raw & NEURON_ISA_HEADER_PHASE; }
};

/// Fields every record has.
struct Meta {
  std::uint8_t notific_type = 0;
  Header header;
  Timestamp timestamp;
};

/// INST_START / INST_END (per engine 0x04 + 4e + {0, 1}).
struct Trace {
  Meta meta;
  Engine engine = Engine::PE;
  bool start = true;               ///< INST_START (true) or INST_END
  std::uint32_t program_counter = 0;  ///< 20 bits
  std::uint8_t debug_hint = 0;     ///< 4 bits
  std::uint16_t soft_reset_counter = 0;
  std::uint16_t data_crc = 0;      ///< CRC16 of input (start) / output (end) data
};

/// EXPLICIT (per engine 0x06 + 4e): the op-requested notify.
struct Explicit {
  Meta meta;
  Engine engine = Engine::PE;
  std::uint32_t program_counter = 0;
  std::uint8_t debug_hint = 0;
  std::uint16_t soft_reset_counter = 0;
  std::uint16_t debug_hint_extended = 0;
};

/// DGE_METADATA (docs/hardware.md#rec-dge-metadata): an EXPLICIT record with
/// debug_hint == NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE (1), on the DGE
/// queue.
struct DgeMetadata {
  Meta meta;
  Engine engine = Engine::PE;
  std::uint32_t program_counter = 0;
  std::uint8_t debug_hint = 0;
  std::uint16_t dma_map = 0;           ///< bitmap of 16 DMA engine IDs
  std::uint16_t num_packets_raw = 0;   ///< 12 bits as written
  std::uint32_t num_packets = 0;       ///< per engine, raw 0 means 4096
  bool infer_program_counter = false;
  std::uint8_t dma_group_id = 0;
  std::uint8_t reserved = 0;
};

/// EVT_SEM (per engine 0x07 + 4e) and AXI_EVT_SEM (0x1b).
struct EvtSem {
  Meta meta;
  std::optional<Engine> engine;  ///< from notific_type; nullopt for AXI_EVT_SEM
  bool axi = false;
  std::uint8_t id = 0;           ///< event_semaphore_id
  std::uint8_t update_mode = 0;  ///< enum neuron_evt_sem_update_mode
  bool is_event = false;
  std::uint8_t block_id = 0;
  std::uint32_t value = 0;       ///< event_semaphore_value after the update
};

/// DMA (0x02).
struct Dma {
  Meta meta;
  std::uint8_t dma_engine = 0;
  std::uint8_t dma_queue = 0;
  std::uint32_t descriptor_count = 0;
};

/// ERROR (0x03): the interrupt form {group:3, block_id:7, cause_bits}.
struct Interrupt {
  Meta meta;
  std::uint8_t group = 0;  ///< enum neuron_isa_interrupt_group
  std::uint8_t block_id = 0;
  std::uint32_t cause_bits = 0;
};

/// The sequencer arm of the TPB_ERROR metadata
/// (docs/hardware.md#rec-seq-metadata for metadata_hi; metadata_lo sub-fields
/// are ours, see include/uapi/linux/neuron_record.h).
struct SequencerMetadata {
  std::uint8_t block_id = 0;          ///< 4 bits: engine that raised it
  std::uint16_t program_counter = 0;  ///< 12 bits
  std::uint8_t info = 0;              ///< 8 bits, meaning per info_kind
  std::uint8_t info_kind = 0;         ///< enum neuron_isa_seq_info_kind
  std::uint8_t bc_reg = 0;            ///< DGE: $S index of the bound
  std::uint8_t direction = 0;         ///< DGE: enum neuron_dge_direction bits
};

/// TPB_ERROR (0x1f), docs/hardware.md#rec-tpb-error byte for byte.
struct TpbError {
  Meta meta;
  std::uint8_t error_id = 0;     ///< enum neuron_isa_tpb_error_type
  std::uint16_t metadata_lo = 0; ///< bytes 1..2, metadata bits 15:0
  std::uint32_t metadata_hi = 0; ///< bytes 4..7, metadata bits 47:16
  std::uint64_t metadata = 0;    ///< the generic 48-bit arm
  SequencerMetadata sequencer;   ///< the sequencer arm of the same bits
  /// SEQUENCER_NONFATAL / SEQUENCER_FATAL: the sequencer arm is the meaning.
  [[nodiscard]] bool is_sequencer() const noexcept {
    return error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL ||
           error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL;
  }
  [[nodiscard]] bool is_fatal() const noexcept { return error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL; }
};

/// A notific_type outside the 24 known values: the bytes, untouched.
struct Unknown {
  Meta meta;
  std::array<std::uint8_t, 16> bytes{};
};

using Decoded = std::variant<Trace, Explicit, DgeMetadata, EvtSem, Dma, Interrupt, TpbError, Unknown>;

/// Which kind of queue a record came from (docs/hardware.md#nq-routing). The
/// hint matters for one case: EXPLICIT with debug_hint 1 on the DGE queue is
/// DGE_METADATA (docs/hardware.md#rec-dge-metadata); elsewhere it is a plain
/// EXPLICIT.
enum class QueueClass : std::uint8_t { Any, Trace, Explicit, EvtSem, Error, Throttle, Dge, Dma };

/// The class of software queue `queue` under a NOTIFIC route word
/// (default NEURON_ROUTE_DEFAULT: 0 trace, 1 explicit, 2 EVT_SEM, 3 errors,
/// 4 throttle, 5 DGE). Queues no class routes to are QueueClass::Any.
QueueClass queue_class(unsigned queue, std::uint32_t route = NEURON_ROUTE_DEFAULT) noexcept;

/// Decode any record.
Decoded decode(const Record& r, QueueClass hint = QueueClass::Any) noexcept;

/// Decode an EXPLICIT record as DGE_METADATA
/// (docs/hardware.md#rec-dge-metadata) regardless of queue. nullopt if the
/// record is not an engine EXPLICIT type.
std::optional<DgeMetadata> decode_dge_metadata(const Record& r) noexcept;

/// The Meta of any decoded value.
const Meta& meta_of(const Decoded& d) noexcept;

/// "TRACE", "EXPLICIT", "DGE_METADATA", "EVT_SEM", "DMA", "INTERRUPT",
/// "TPB_ERROR", "UNKNOWN": the decoded kind, for summaries.
const char* kind_name(const Decoded& d) noexcept;

/// Name of a TPB error id ("SEQUENCER_NONFATAL"); "ERROR_0x2a" beyond the enum.
std::string tpb_error_name(std::uint8_t error_id);
/// Name of an EVT_SEM update mode ("SEM_INC").
std::string update_mode_name(std::uint8_t mode);
/// Name of a sequencer info_kind ("BAD_OPCODE").
std::string seq_info_kind_name(std::uint8_t kind);

/// Error records: every TPB_ERROR, and ERROR (interrupt form) records other
/// than the throttle group. These make execute() report COMPLETED_WITH_ERR
/// (docs/cli-json.md#exit-codes). A throttle record is a condition, not an
/// error: see is_throttle().
bool is_error(const Decoded& d) noexcept;

/// A throttle record: ERROR (0x03) in the interrupt form with group
/// NEURON_ISA_INTERRUPT_GROUP_THROTTLE (1), `cause_bits` the level, which the
/// device writes to the throttle class while throttle is armed
/// (docs/hardware.md#throttle, #rec-interrupt). The group field says so on
/// its own: no queue hint is needed. execute() reports a run whose only
/// non-OK records were these as COMPLETED_THROTTLED, not COMPLETED_WITH_ERR.
bool is_throttle(const Decoded& d) noexcept;

}  // namespace neuron
NEURON_API_END
