// SPDX-License-Identifier: MIT
//
// Byte offsets and bit positions follow include/neuron/notification.h
// (little-endian words; bitfields from the least significant bit).
#include "libneuron/decode.hpp"

#include <fmt/format.h>

namespace neuron {

namespace {

Meta meta(const Record& r) noexcept {
  Meta m;
  m.header.raw = r.header();
  m.notific_type = m.header.type();
  m.timestamp.ps = r.timestamp_ps();
  return m;
}

// Word 0 of trace / explicit / DGE metadata: program_counter:20, debug_hint:4, header:8.
constexpr std::uint32_t kPcMask = 0xfffff;
std::uint32_t pc20(const Record& r) noexcept { return r.u32(0) & kPcMask; }
std::uint8_t hint4(const Record& r) noexcept { return static_cast<std::uint8_t>((r.u32(0) >> 20) & 0xf); }

DgeMetadata as_dge(const Record& r, Engine e) noexcept {
  DgeMetadata d;
  d.meta = meta(r);
  d.engine = e;
  d.program_counter = pc20(r);
  d.debug_hint = hint4(r);
  d.dma_map = r.u16(4);
  const std::uint16_t w = r.u16(6);  // num_packets:12, reserved:2, infer_pc:1, dma_group_id:1
  d.num_packets_raw = static_cast<std::uint16_t>(w & 0xfff);
  d.num_packets = d.num_packets_raw == 0 ? 4096u : d.num_packets_raw;
  d.reserved = static_cast<std::uint8_t>((w >> 12) & 0x3);
  d.infer_program_counter = ((w >> 14) & 1) != 0;
  d.dma_group_id = static_cast<std::uint8_t>((w >> 15) & 1);
  return d;
}

}  // namespace

QueueClass queue_class(unsigned queue, std::uint32_t route) noexcept {
  // The lowest class routed to this queue names it (DMA shares queue 1 with
  // EXPLICIT by default; EXPLICIT wins, and DMA records decode the same anyway).
  static constexpr QueueClass classes[] = {QueueClass::Trace, QueueClass::Explicit, QueueClass::EvtSem,
                                           QueueClass::Error, QueueClass::Throttle, QueueClass::Dge,
                                           QueueClass::Dma};
  for (unsigned c = 0; c < sizeof(classes) / sizeof(classes[0]); ++c)
    if (NEURON_ROUTE_QUEUE(route, c) == queue) return classes[c];
  return QueueClass::Any;
}

std::optional<DgeMetadata> decode_dge_metadata(const Record& r) noexcept {
  const std::uint8_t t = r.notific_type();
  if (t < NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START || t > NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM) return std::nullopt;
  if ((t - 4u) % 4u != NEURON_ENGINE_RECORD_EXPLICIT) return std::nullopt;
  return as_dge(r, static_cast<Engine>((t - 4u) / 4u));
}

Decoded decode(const Record& r, QueueClass hint) noexcept {
  const Meta m = meta(r);
  const std::uint8_t t = m.notific_type;

  if (t >= NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START && t <= NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM) {
    const auto engine = static_cast<Engine>((t - 4u) / 4u);
    switch ((t - 4u) % 4u) {
      case NEURON_ENGINE_RECORD_INST_START:
      case NEURON_ENGINE_RECORD_INST_END: {
        Trace x;
        x.meta = m;
        x.engine = engine;
        x.start = (t - 4u) % 4u == NEURON_ENGINE_RECORD_INST_START;
        x.program_counter = pc20(r);
        x.debug_hint = hint4(r);
        x.soft_reset_counter = r.u16(4);
        x.data_crc = r.u16(6);
        return x;
      }
      case NEURON_ENGINE_RECORD_EXPLICIT: {
        if (hint == QueueClass::Dge && hint4(r) == NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE)
          return as_dge(r, engine);
        Explicit x;
        x.meta = m;
        x.engine = engine;
        x.program_counter = pc20(r);
        x.debug_hint = hint4(r);
        x.soft_reset_counter = r.u16(4);
        x.debug_hint_extended = r.u16(6);
        return x;
      }
      default: {
        EvtSem x;
        x.meta = m;
        x.engine = engine;
        x.id = r.bytes[0];
        x.update_mode = r.bytes[1] & 0xf;
        x.is_event = ((r.bytes[1] >> 4) & 1) != 0;
        x.block_id = r.bytes[2];
        x.value = r.u32(4);
        return x;
      }
    }
  }

  switch (t) {
    case NEURON_ISA_NOTIFICATION_TYPE_AXI_EVT_SEM: {
      EvtSem x;
      x.meta = m;
      x.axi = true;
      x.id = r.bytes[0];
      x.update_mode = r.bytes[1] & 0xf;
      x.is_event = ((r.bytes[1] >> 4) & 1) != 0;
      x.block_id = r.bytes[2];
      x.value = r.u32(4);
      return x;
    }
    case NEURON_ISA_NOTIFICATION_TYPE_DMA: {
      Dma x;
      x.meta = m;
      x.dma_engine = r.bytes[0];
      x.dma_queue = r.bytes[1];
      x.descriptor_count = r.u32(4);
      return x;
    }
    case NEURON_ISA_NOTIFICATION_TYPE_ERROR: {
      Interrupt x;
      x.meta = m;
      const std::uint16_t w = r.u16(0);  // group:3, block_id:7, reserved:6
      x.group = static_cast<std::uint8_t>(w & 0x7);
      x.block_id = static_cast<std::uint8_t>((w >> 3) & 0x7f);
      x.cause_bits = r.u32(4);
      return x;
    }
    case NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR: {
      TpbError x;
      x.meta = m;
      x.error_id = r.bytes[0];     // +0
      x.metadata_lo = r.u16(1);    // +1..+2 (straddles nothing: header is +3)
      x.metadata_hi = r.u32(4);    // +4..+7
      x.metadata = static_cast<std::uint64_t>(x.metadata_lo) | (static_cast<std::uint64_t>(x.metadata_hi) << 16);
      x.sequencer.block_id = static_cast<std::uint8_t>(x.metadata_hi & 0xf);
      x.sequencer.program_counter = static_cast<std::uint16_t>((x.metadata_hi >> 4) & 0xfff);
      x.sequencer.info = static_cast<std::uint8_t>((x.metadata_hi >> 16) & 0xff);
      x.sequencer.info_kind = static_cast<std::uint8_t>(x.metadata_lo & 0xf);
      x.sequencer.bc_reg = static_cast<std::uint8_t>((x.metadata_lo >> 4) & 0x3f);
      x.sequencer.direction = static_cast<std::uint8_t>((x.metadata_lo >> 10) & 0x3);
      return x;
    }
    default: {
      Unknown x;
      x.meta = m;
      x.bytes = r.bytes;
      return x;
    }
  }
}

const Meta& meta_of(const Decoded& d) noexcept {
  return std::visit([](const auto& x) -> const Meta& { return x.meta; }, d);
}

const char* kind_name(const Decoded& d) noexcept {
  static constexpr const char* names[] = {"TRACE", "EXPLICIT", "DGE_METADATA", "EVT_SEM",
                                          "DMA",   "INTERRUPT", "TPB_ERROR",   "UNKNOWN"};
  static_assert(std::variant_size_v<Decoded> == 8);
  return names[d.index()];
}

bool is_error(const Decoded& d) noexcept {
  return std::holds_alternative<TpbError>(d) || std::holds_alternative<Interrupt>(d);
}

std::string tpb_error_name(std::uint8_t id) {
  switch (id) {
    case NEURON_ISA_TPB_ERROR_FP_UNDERFLOW: return "FP_UNDERFLOW";
    case NEURON_ISA_TPB_ERROR_FP_NAN: return "FP_NAN";
    case NEURON_ISA_TPB_ERROR_FP_INF: return "FP_INF";
    case NEURON_ISA_TPB_ERROR_FP_OVERFLOW: return "FP_OVERFLOW";
    case NEURON_ISA_TPB_ERROR_MEMORY_ERROR: return "MEMORY_ERROR";
    case NEURON_ISA_TPB_ERROR_FAKE_ERROR: return "FAKE_ERROR";
    case NEURON_ISA_TPB_ERROR_SEMAPHORE_ERROR: return "SEMAPHORE_ERROR";
    case NEURON_ISA_TPB_ERROR_EVENT_ERROR: return "EVENT_ERROR";
    case NEURON_ISA_TPB_ERROR_PSUM_COLLISION: return "PSUM_COLLISION";
    case NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL: return "SEQUENCER_NONFATAL";
    case NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL: return "SEQUENCER_FATAL";
    default: return fmt::format("ERROR_0x{:02x}", id);
  }
}

std::string update_mode_name(std::uint8_t mode) {
  switch (mode) {
    case NEURON_EVT_SEM_UPDATE_NONE: return "NONE";
    case NEURON_EVT_SEM_UPDATE_SEM_SET: return "SEM_SET";
    case NEURON_EVT_SEM_UPDATE_SEM_INC: return "SEM_INC";
    case NEURON_EVT_SEM_UPDATE_SEM_DEC: return "SEM_DEC";
    case NEURON_EVT_SEM_UPDATE_EVENT_SET: return "EVENT_SET";
    case NEURON_EVT_SEM_UPDATE_EVENT_CLEAR: return "EVENT_CLEAR";
    default: return fmt::format("MODE_{}", mode);
  }
}

std::string seq_info_kind_name(std::uint8_t kind) {
  switch (kind) {
    case NEURON_ISA_SEQ_INFO_OTHER: return "OTHER";
    case NEURON_ISA_SEQ_INFO_BAD_OPCODE: return "BAD_OPCODE";
    case NEURON_ISA_SEQ_INFO_SIGNAL: return "SIGNAL";
    case NEURON_ISA_SEQ_INFO_FP: return "FP";
    case NEURON_ISA_SEQ_INFO_EXCEPTION: return "EXCEPTION";
    case NEURON_ISA_SEQ_INFO_DGE_BOUNDS: return "DGE_BOUNDS";
    case NEURON_ISA_SEQ_INFO_DGE_INVALID: return "DGE_INVALID";
    default: return fmt::format("KIND_{}", kind);
  }
}

}  // namespace neuron
