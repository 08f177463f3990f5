// SPDX-License-Identifier: MIT
//
// Byte offsets, masks and shifts are those of the UAPI record header,
// include/uapi/linux/neuron_record.h, read through its NEURON_REC_*
// accessors; none is restated here.
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

// Word 0 of trace / explicit / DGE metadata: program_counter, debug_hint.
std::uint32_t pc20(const Record& r) noexcept { return NEURON_REC_PC(r.bytes); }
std::uint8_t hint4(const Record& r) noexcept { return NEURON_REC_DEBUG_HINT(r.bytes); }

Engine engine_of(std::uint8_t type) noexcept { return static_cast<Engine>(NEURON_NOTIFIC_TYPE_ENGINE(type)); }

bool is_engine_type(std::uint8_t t) noexcept {
  return t >= NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START && t <= NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM;
}

void evt_sem_fields(const Record& r, EvtSem& x) noexcept {
  x.id = NEURON_REC_EVT_SEM_ID(r.bytes);
  x.update_mode = NEURON_REC_EVT_SEM_UPDATE_MODE(r.bytes);
  x.is_event = NEURON_REC_EVT_SEM_IS_EVENT(r.bytes) != 0;
  x.block_id = NEURON_REC_EVT_SEM_BLOCK_ID(r.bytes);
  x.value = NEURON_REC_EVT_SEM_VALUE(r.bytes);
}

DgeMetadata as_dge(const Record& r, Engine e) noexcept {
  DgeMetadata d;
  d.meta = meta(r);
  d.engine = e;
  d.program_counter = pc20(r);
  d.debug_hint = hint4(r);
  d.dma_map = NEURON_REC_DGE_DMA_MAP(r.bytes);
  d.num_packets_raw = NEURON_REC_DGE_NUM_PACKETS(r.bytes);
  // 0 means the field's full range: 4096 packets
  d.num_packets = d.num_packets_raw == 0 ? NEURON_ISA_DGE_NUM_PACKETS_MASK + 1u : d.num_packets_raw;
  d.reserved = static_cast<std::uint8_t>(NEURON_REC_DGE_RESERVED(r.bytes));
  d.infer_program_counter = NEURON_REC_DGE_INFER_PC(r.bytes) != 0;
  d.dma_group_id = static_cast<std::uint8_t>(NEURON_REC_DGE_DMA_GROUP_ID(r.bytes));
  return d;
}

}  // namespace

namespace {

QueueClass to_queue_class(unsigned cls) noexcept {
  switch (cls) {
    case NEURON_CLASS_TRACE: return QueueClass::Trace;
    case NEURON_CLASS_EXPLICIT: return QueueClass::Explicit;
    case NEURON_CLASS_EVT_SEM: return QueueClass::EvtSem;
    case NEURON_CLASS_ERROR: return QueueClass::Error;
    case NEURON_CLASS_THROTTLE: return QueueClass::Throttle;
    case NEURON_CLASS_DGE: return QueueClass::Dge;
    case NEURON_CLASS_DMA: return QueueClass::Dma;
    default: return QueueClass::Any;
  }
}

}  // namespace

QueueClass queue_class(unsigned queue, std::uint32_t route) noexcept {
  // The lowest class routed to this queue names it (DMA shares queue 1 with
  // EXPLICIT by default; EXPLICIT wins, and DMA records decode the same anyway).
  for (unsigned c = NEURON_CLASS_TRACE; c <= NEURON_CLASS_DMA; ++c)
    if (NEURON_ROUTE_QUEUE(route, c) == queue) return to_queue_class(c);
  return QueueClass::Any;
}

std::optional<DgeMetadata> decode_dge_metadata(const Record& r) noexcept {
  const std::uint8_t t = r.notific_type();
  if (!is_engine_type(t) || NEURON_NOTIFIC_TYPE_KIND(t) != NEURON_ENGINE_RECORD_EXPLICIT) return std::nullopt;
  return as_dge(r, engine_of(t));
}

Decoded decode(const Record& r, QueueClass hint) noexcept {
  const Meta m = meta(r);
  const std::uint8_t t = m.notific_type;

  if (is_engine_type(t)) {
    const auto engine = engine_of(t);
    switch (NEURON_NOTIFIC_TYPE_KIND(t)) {
      case NEURON_ENGINE_RECORD_INST_START:
      case NEURON_ENGINE_RECORD_INST_END: {
        Trace x;
        x.meta = m;
        x.engine = engine;
        x.start = NEURON_NOTIFIC_TYPE_KIND(t) == NEURON_ENGINE_RECORD_INST_START;
        x.program_counter = pc20(r);
        x.debug_hint = hint4(r);
        x.soft_reset_counter = NEURON_REC_TRACE_SOFT_RESET_COUNTER(r.bytes);
        x.data_crc = NEURON_REC_TRACE_DATA_CRC(r.bytes);
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
        x.soft_reset_counter = NEURON_REC_EXPLICIT_SOFT_RESET_COUNTER(r.bytes);
        x.debug_hint_extended = NEURON_REC_EXPLICIT_DEBUG_HINT_EXT(r.bytes);
        return x;
      }
      default: {
        EvtSem x;
        x.meta = m;
        x.engine = engine;
        evt_sem_fields(r, x);
        return x;
      }
    }
  }

  switch (t) {
    case NEURON_ISA_NOTIFICATION_TYPE_AXI_EVT_SEM: {
      EvtSem x;
      x.meta = m;
      x.axi = true;
      evt_sem_fields(r, x);
      return x;
    }
    case NEURON_ISA_NOTIFICATION_TYPE_DMA: {
      Dma x;
      x.meta = m;
      x.dma_engine = NEURON_REC_DMA_ENGINE(r.bytes);
      x.dma_queue = NEURON_REC_DMA_QUEUE(r.bytes);
      x.descriptor_count = NEURON_REC_DMA_DESC_COUNT(r.bytes);
      return x;
    }
    case NEURON_ISA_NOTIFICATION_TYPE_ERROR: {
      Interrupt x;
      x.meta = m;
      x.group = NEURON_REC_INTR_GROUP(r.bytes);
      x.block_id = NEURON_REC_INTR_BLOCK_ID(r.bytes);
      x.cause_bits = NEURON_REC_INTR_CAUSE(r.bytes);
      return x;
    }
    case NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR: {
      TpbError x;
      x.meta = m;
      x.error_id = NEURON_REC_TPB_ERROR_ID(r.bytes);
      x.metadata_lo = NEURON_REC_TPB_METADATA_LO(r.bytes);  // metadata bits 15:0
      x.metadata_hi = NEURON_REC_TPB_METADATA_HI(r.bytes);  // metadata bits 47:16
      x.metadata = static_cast<std::uint64_t>(x.metadata_lo) | (static_cast<std::uint64_t>(x.metadata_hi) << 16);
      x.sequencer.block_id = NEURON_REC_SEQ_BLOCK_ID(r.bytes);
      x.sequencer.program_counter = NEURON_REC_SEQ_PC(r.bytes);
      x.sequencer.info = NEURON_REC_SEQ_INFO(r.bytes);
      x.sequencer.info_kind = NEURON_REC_SEQ_INFO_KIND(r.bytes);
      x.sequencer.bc_reg = NEURON_REC_SEQ_BC_REG(r.bytes);
      x.sequencer.direction = NEURON_REC_SEQ_DIRECTION(r.bytes);
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

bool is_throttle(const Decoded& d) noexcept {
  const auto* i = std::get_if<Interrupt>(&d);
  return i != nullptr && i->group == NEURON_ISA_INTERRUPT_GROUP_THROTTLE;
}

bool is_error(const Decoded& d) noexcept {
  return std::holds_alternative<TpbError>(d) || (std::holds_alternative<Interrupt>(d) && !is_throttle(d));
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
