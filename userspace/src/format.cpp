// SPDX-License-Identifier: MIT
#include "libneuron/format.hpp"
#include "libneuron/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <endian.h>
#include <optional>
#include <type_traits>

#include "neuron/regs.h"  // NEURON_ENG_NUM_SREGS (private: not in the installed headers)

namespace neuron {

namespace {

template <class>
inline constexpr bool kAlwaysFalse = false;

std::string engine_of_block(std::uint8_t block_id) {
  return block_id < kEnginesPerCore ? engine_name(block_id) : fmt::format("block {}", block_id);
}

std::string direction_name(std::uint8_t dir) {
  switch (dir) {
    case NEURON_DGE_DIR_SRC: return "src";
    case NEURON_DGE_DIR_DST: return "dst";
    case NEURON_DGE_DIR_SRC | NEURON_DGE_DIR_DST: return "src and dst";
    default: return "an unnamed direction";
  }
}

std::string flags_suffix(const Meta& m) {
  std::string s;
  if (m.header.sw_overflow())
    s += " [SW OVERFLOW: the queue was full and unread records were overwritten; drain faster, "
         "enlarge the ring or use backpressure]";
  if (m.header.hw_overflow())
    s += " [HW OVERFLOW: records before this one were lost on the way to the ring: the NOTIFIC "
         "input buffer dropped them or a ring write failed]";
  return s;
}

std::string dma_engines(std::uint16_t map) {
  std::string s;
  for (unsigned i = 0; i < 16; ++i)
    if (map & (1u << i)) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s.empty() ? "none" : s;
}

// metadata info of a DGE structural error (docs/device-model.md "DGE copy"
// step 1, #dma-engines): 0x01 src, 0x02 dst (BOUND_CHECK_REG or indirect
// flags), 0x04 backend, 0x08 index encoding, 0x10 length (more packets than
// 16 DMA engines x 4096 take: above 4 MiB)
constexpr std::uint8_t kDgeInvalidLength = 0x10;
std::string dge_invalid_parts(std::uint8_t info) {
  std::string s;
  const auto add = [&s](const char* p) { s += (s.empty() ? "" : ", ") + std::string(p); };
  if (info & 1) add("bad src bound check");
  if (info & 2) add("bad dst bound check");
  if (info & 4) add("unknown backend");
  if (info & 8) add("bad index encoding");
  if (info & kDgeInvalidLength) add("length above 4 MiB (more than 16 DMA engines x 4096 packets of 64 bytes)");
  if (info & ~0x1f) add(fmt::format("unknown bits 0x{:02x}", info & ~0x1f).c_str());
  return s.empty() ? fmt::format("info 0x{:02x}", info) : s;
}

nlohmann::json meta_json(const Meta& m) {
  return {{"type", notific_type_name(m.notific_type)},
          {"notific_type", m.notific_type},
          {"phase", m.header.phase() ? 1 : 0},
          {"sw_overflow", m.header.sw_overflow()},
          {"hw_overflow", m.header.hw_overflow()},
          {"device_time_ps", m.timestamp.ps}};
}

}  // namespace

std::string format_time(Timestamp t) {
  const std::uint64_t ns = t.ps / 1000;
  return fmt::format("{}.{:09}", ns / 1000000000ull, ns % 1000000000ull);
}

std::string notific_cause_names(std::uint32_t cause) {
  static constexpr const char* names[] = {"THRESHOLD",        "DISABLED_QUEUE", "SW_OVERFLOW",
                                          "HW_OVERFLOW",      "AXI_WRITE_ERROR", "BACKPRESSURE",
                                          "ENGINE_FATAL",     "BAD_HEAD",       "WRBUF_FULL"};
  std::string s;
  for (unsigned i = 0; i < 32; ++i) {
    if (!(cause & (1u << i))) continue;
    if (!s.empty()) s += '|';
    s += i < 9 ? std::string(names[i]) : fmt::format("bit{}", i);
  }
  return s.empty() ? "none" : s;
}

std::string explain(const TpbError& e) {
  const auto& q = e.sequencer;
  const std::string where = fmt::format("on {} at pc 0x{:x}", engine_of_block(q.block_id), q.program_counter);
  const std::string name = tpb_error_name(e.error_id);
  const char* after = e.is_fatal() ? "engine halted; reset it (ENGINE_RESET) before submitting again"
                                   : "engine continued";

  if (e.is_sequencer()) {
    switch (q.info_kind) {
      case NEURON_ISA_SEQ_INFO_DGE_BOUNDS:
        return fmt::format("DGE OOB {}: {} address > limit in $S[{}] (Failed bounds check); descriptor skipped, "
                           "no bytes moved, {} ({})",
                           where, direction_name(q.direction), q.bc_reg, after, name);
      case NEURON_ISA_SEQ_INFO_DGE_INVALID:
        return fmt::format("DGE descriptor structurally invalid {}: {} (bound register $S[{}]); {} ({})", where,
                           dge_invalid_parts(q.info), q.bc_reg, after, name);
      case NEURON_ISA_SEQ_INFO_BAD_OPCODE:
        return fmt::format("bad opcode 0x{:02x} {}; {} ({})", q.info, where, after, name);
      case NEURON_ISA_SEQ_INFO_SIGNAL:
        return fmt::format("signal {} {}; {} ({})", q.info, where, after, name);
      case NEURON_ISA_SEQ_INFO_FP:
        return fmt::format("floating-point exception flags 0x{:02x} {}; {} ({})", q.info, where, after, name);
      case NEURON_ISA_SEQ_INFO_EXCEPTION:
        return fmt::format("exception type {} cause {} {}; {} ({})", q.info >> 4, q.info & 0xf, where, after, name);
      default:
        return fmt::format("{} {}: info 0x{:02x}; {}", name, where, q.info, after);
    }
  }
  switch (e.error_id) {
    case NEURON_ISA_TPB_ERROR_FP_UNDERFLOW:
    case NEURON_ISA_TPB_ERROR_FP_NAN:
    case NEURON_ISA_TPB_ERROR_FP_INF:
    case NEURON_ISA_TPB_ERROR_FP_OVERFLOW:
      return fmt::format("{} {}: check the inputs and scaling of that instruction (metadata 0x{:012x})", name, where,
                         e.metadata);
    case NEURON_ISA_TPB_ERROR_MEMORY_ERROR:
      return fmt::format("MEMORY_ERROR {}: a memory access failed (metadata 0x{:012x})", where, e.metadata);
    case NEURON_ISA_TPB_ERROR_SEMAPHORE_ERROR:
    case NEURON_ISA_TPB_ERROR_EVENT_ERROR:
      return fmt::format("{} {}: bad semaphore/event use (metadata 0x{:012x})", name, where, e.metadata);
    default:
      return fmt::format("{} {} (metadata 0x{:012x})", name, where, e.metadata);
  }
}

std::string explain(const Interrupt& e) {
  switch (e.group) {
    case NEURON_ISA_INTERRUPT_GROUP_NOTIFIC:
      return fmt::format("NOTIFIC interrupt from block {}: {} (cause 0x{:x})", e.block_id,
                         notific_cause_names(e.cause_bits), e.cause_bits);
    case NEURON_ISA_INTERRUPT_GROUP_THROTTLE:
      return fmt::format("throttle interrupt from block {}: level {}", e.block_id, e.cause_bits);
    case NEURON_ISA_INTERRUPT_GROUP_DEVICE:
      return fmt::format("device fault interrupt from block {}: cause 0x{:x}", e.block_id, e.cause_bits);
    default:
      return fmt::format("interrupt group {} block {}: cause 0x{:x}", e.group, e.block_id, e.cause_bits);
  }
}

namespace {

/// The value a program leaves in $S[reg] before `pc` (its last `reg` write), if any.
std::optional<std::pair<std::uint32_t, unsigned>> sreg_before(const EngineProgram& ep, std::uint32_t pc, unsigned reg) {
  std::optional<std::pair<std::uint32_t, unsigned>> v;
  for (std::uint32_t i = 0; i < pc && i < ep.insns.size(); ++i)
    if (ep.insns[i].opcode == NEURON_OP_REG_WRITE && le32toh(ep.insns[i].operand.arg.idx) == reg)
      v = std::pair{le32toh(ep.insns[i].operand.arg.value), i < ep.lines.size() ? ep.lines[i] : 0u};
  return v;
}

/// Why one direction's BOUND_CHECK_REG fails the structural checks of
/// docs/hardware.md#dge-indirect, #dge-validity (docs/device-model.md "DGE
/// copy" step 1).
std::string bc_problem(const char* dir, std::uint8_t b, bool indexed, bool idx_bound_is_err) {
  const bool enabled = b & NEURON_ISA_BC_ENABLED_MASK, quiet = b & NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_MASK;
  const unsigned reg = (b & NEURON_ISA_BC_REG_MASK) >> NEURON_ISA_BC_REG_SHIFT;
  if (!enabled && b != 0)
    return fmt::format("bc_{}=0x{:02x} has the check off but other bits set (has_valid_bound_check_reg wants "
                       "0x00, or bc_enabled with a readable register)",
                       dir, b);
  if (enabled && reg > NEURON_ENG_NUM_SREGS - 2)
    return fmt::format("bc_{} names $S[{}], but with offsets=wide the limit is $S[{}] | $S[{}] << 32 and there "
                       "is no $S[{}]",
                       dir, reg, reg, reg + 1, reg + 1);
  if (indexed && quiet && !idx_bound_is_err)
    return fmt::format("the {} is indexed (indirect) with its OOB notification disabled and idx_bound_is_err "
                       "clear: a silent index OOB (has_valid_idx_bound_check_reg)",
                       dir);
  return fmt::format("bc_{}=0x{:02x}", dir, b);
}

}  // namespace

std::string explain(const TpbError& e, const Program& program, unsigned core) {
  const auto& q = e.sequencer;
  const EngineProgram* ep = program.find(core, q.block_id);
  if (!ep || q.program_counter >= ep->insns.size()) return explain(e);
  const std::uint32_t pc = q.program_counter;
  const auto& in = ep->insns[pc];
  const unsigned line = pc < ep->lines.size() ? ep->lines[pc] : 0;
  const std::string where = fmt::format("on {} at pc 0x{:x} ({}:{})", engine_of_block(q.block_id), pc, program.name, line);
  const std::string name = tpb_error_name(e.error_id);
  std::string eng = engine_of_block(q.block_id);
  std::transform(eng.begin(), eng.end(), eng.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::string after =
      e.is_fatal() ? fmt::format("engine halted; reset it (neuron-nq reset --core {} --engine {}) and fix the descriptor",
                                 core, eng)
                   : "engine continued";
  if (in.opcode != NEURON_OP_DGE_COPY) return explain(e) + fmt::format(" ({}:{})", program.name, line);
  const auto& d = in.operand.dge;
  const std::uint8_t ind = d.indirect;
  // the instruction's fields are little-endian (include/uapi/linux/neuron_isa.h)
  const std::uint32_t d_src = le32toh(d.src), d_dst = le32toh(d.dst), d_length = le32toh(d.length);
  const auto bc_reg = [](std::uint8_t b) { return (b & NEURON_ISA_BC_REG_MASK) >> NEURON_ISA_BC_REG_SHIFT; };

  if (e.is_sequencer() && q.info_kind == NEURON_ISA_SEQ_INFO_DGE_BOUNDS) {
    std::string parts;
    // narrow offsets read $S[r] alone (include/neuron/emu_isa.h NEURON_DGE_F_WIDE_OFFSET)
    const bool wide = in.flags & NEURON_DGE_F_WIDE_OFFSET;
    for (std::uint8_t dir : {std::uint8_t(NEURON_DGE_DIR_SRC), std::uint8_t(NEURON_DGE_DIR_DST)}) {
      if (!(q.direction & dir)) continue;
      const bool src = dir == NEURON_DGE_DIR_SRC;
      if (q.info & (dir << 2)) {  // an index of this direction above its bound (docs/decisions/0018-dge-index-path.md)
        parts += fmt::format("{}{} index > bound in $S[{}]", parts.empty() ? "" : "; ", src ? "src" : "dst",
                             bc_reg(src ? d.bc_src : d.bc_dst));
        continue;
      }
      const std::uint64_t addr = src ? d_src : d_dst;
      const std::uint64_t last = addr + std::max<std::uint32_t>(d_length, 1) - 1;
      const unsigned reg = bc_reg(src ? d.bc_src : d.bc_dst);
      const auto lo = sreg_before(*ep, pc, reg);
      const auto hi = wide ? sreg_before(*ep, pc, reg + 1) : std::nullopt;
      std::string p;
      if (lo) {
        const std::uint64_t limit = lo->first | (static_cast<std::uint64_t>(hi ? hi->first : 0) << 32);
        p = fmt::format("{} $S[{}]+0x{:x} > limit: bytes 0x{:x}..0x{:x}, limit $S[{}] = 0x{:x} (line {}{})",
                        src ? "src" : "dst", reg, last > limit ? last - limit : 0, addr, last, reg, limit, lo->second,
                        hi || !wide ? "" : fmt::format(", $S[{}] assumed 0", reg + 1));
      } else {
        p = fmt::format("{} bytes 0x{:x}..0x{:x} > limit in $S[{}] (not set by this program)", src ? "src" : "dst",
                        addr, last, reg);
      }
      parts += (parts.empty() ? "" : "; ") + p;
    }
    return fmt::format("DGE OOB {}: {}; descriptor skipped, no bytes moved, {} ({})", where, parts, after, name);
  }
  if (e.is_sequencer() && q.info_kind == NEURON_ISA_SEQ_INFO_DGE_INVALID) {
    std::string parts;
    const auto add = [&parts](const std::string& p) { parts += (parts.empty() ? "" : "; ") + p; };
    const bool idx_err = ind & NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_MASK;
    const unsigned mode = (ind & NEURON_ISA_INDIRECT_MODE_MASK) >> NEURON_ISA_INDIRECT_MODE_SHIFT;
    if (q.info & 1) add(bc_problem("src", d.bc_src, mode & NEURON_ISA_INDIRECT_MODE_GATHER, idx_err));
    if (q.info & 2) add(bc_problem("dst", d.bc_dst, mode & NEURON_ISA_INDIRECT_MODE_SCATTER, idx_err));
    if (q.info & 4) add(fmt::format("backend {} is none of none (0), pool (1), rtl (2)", d.backend));
    if (q.info & 8) add(fmt::format("index encoding: mode byte 0x{:02x}, index table 0x{:x}, len {}", in.flags,
                                    le32toh(in.reserved0), d_length));
    if (q.info & kDgeInvalidLength)
      add(fmt::format("len {} (0x{:x}) is above 4 MiB: more than 16 DMA engines x 4096 packets of 64 bytes",
                      d_length, d_length));
    if (parts.empty()) parts = fmt::format("info 0x{:02x}", q.info);
    return fmt::format("DGE descriptor structurally invalid {}: {}; {} ({}); the host sees no completion "
                       "(TIMEOUT) plus this record",
                       where, parts, after, name);
  }
  if (e.error_id == NEURON_ISA_TPB_ERROR_MEMORY_ERROR)
    return fmt::format("MEMORY_ERROR {}: DGE copy src 0x{:x} -> dst 0x{:x}, {} bytes, leaves device memory; "
                       "descriptor skipped, engine continued",
                       where, d_src, d_dst, d_length);
  return explain(e) + fmt::format(" ({}:{})", program.name, line);
}

std::string to_text(const Decoded& d) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        std::string s;
        if constexpr (std::is_same_v<T, Trace>) {
          s = fmt::format("{} {} pc=0x{:05x} hint={} run={} crc=0x{:04x}", engine_name(unsigned(x.engine)),
                          x.start ? "INST_START" : "INST_END", x.program_counter, x.debug_hint,
                          x.soft_reset_counter, x.data_crc);
        } else if constexpr (std::is_same_v<T, Explicit>) {
          s = fmt::format("{} EXPLICIT pc=0x{:05x} hint={} ext=0x{:04x} run={}", engine_name(unsigned(x.engine)),
                          x.program_counter, x.debug_hint, x.debug_hint_extended, x.soft_reset_counter);
        } else if constexpr (std::is_same_v<T, DgeMetadata>) {
          s = fmt::format("{} DGE_METADATA pc=0x{:05x}: {} packets per DMA engine on engines {{{}}} "
                          "(dma_map=0x{:04x}), group {}{}",
                          engine_name(unsigned(x.engine)), x.program_counter, x.num_packets,
                          dma_engines(x.dma_map), x.dma_map, x.dma_group_id,
                          x.infer_program_counter ? ", pc inferred" : "");
        } else if constexpr (std::is_same_v<T, EvtSem>) {
          // an AXI_EVT_SEM record's block_id is 0xff: a host write, no engine
          s = fmt::format("{} {} {} {} -> {} ({})",
                          x.axi ? std::string("AXI_EVT_SEM") : engine_name(unsigned(*x.engine)) + " EVT_SEM",
                          x.is_event ? "event" : "semaphore", x.id, update_mode_name(x.update_mode), x.value,
                          x.axi ? fmt::format("a host write, block_id 0x{:02x}", x.block_id)
                          : x.block_id < kEnginesPerCore ? "block " + engine_of_block(x.block_id)
                                                         : engine_of_block(x.block_id));
        } else if constexpr (std::is_same_v<T, Dma>) {
          s = fmt::format("DMA engine {} queue {}: {} descriptors completed", x.dma_engine, x.dma_queue,
                          x.descriptor_count);
        } else if constexpr (std::is_same_v<T, Interrupt>) {
          s = "ERROR " + explain(x);
        } else if constexpr (std::is_same_v<T, TpbError>) {
          s = "TPB_ERROR " + explain(x);
        } else if constexpr (std::is_same_v<T, Unknown>) {
          Record r;
          r.bytes = x.bytes;
          s = fmt::format("UNKNOWN notific_type 0x{:02x}: bytes {}", x.meta.notific_type, r.hex());
        } else {
          static_assert(kAlwaysFalse<T>, "unhandled record type");
        }
        return s + flags_suffix(x.meta);
      },
      d);
}

nlohmann::json to_json(const Decoded& d) {
  nlohmann::json j = meta_json(meta_of(d));
  j["kind"] = kind_name(d);
  std::visit(
      [&j](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Trace>) {
          j["engine"] = engine_name(unsigned(x.engine));
          j["trace"] = x.start ? "INST_START" : "INST_END";
          j["program_counter"] = x.program_counter;
          j["debug_hint"] = x.debug_hint;
          j["soft_reset_counter"] = x.soft_reset_counter;
          j["data_crc"] = x.data_crc;
        } else if constexpr (std::is_same_v<T, Explicit>) {
          j["engine"] = engine_name(unsigned(x.engine));
          j["program_counter"] = x.program_counter;
          j["debug_hint"] = x.debug_hint;
          j["soft_reset_counter"] = x.soft_reset_counter;
          j["debug_hint_extended"] = x.debug_hint_extended;
        } else if constexpr (std::is_same_v<T, DgeMetadata>) {
          j["engine"] = engine_name(unsigned(x.engine));
          j["program_counter"] = x.program_counter;
          j["debug_hint"] = x.debug_hint;
          j["dma_map"] = x.dma_map;
          j["num_packets"] = x.num_packets;
          j["num_packets_raw"] = x.num_packets_raw;
          j["infer_program_counter"] = x.infer_program_counter;
          j["dma_group_id"] = x.dma_group_id;
        } else if constexpr (std::is_same_v<T, EvtSem>) {
          if (x.engine) j["engine"] = engine_name(unsigned(*x.engine));
          j["axi"] = x.axi;
          j["event_semaphore_id"] = x.id;
          j["is_event"] = x.is_event;
          j["update_mode"] = update_mode_name(x.update_mode);
          j["block_id"] = x.block_id;
          j["event_semaphore_value"] = x.value;
        } else if constexpr (std::is_same_v<T, Dma>) {
          j["dma_engine"] = x.dma_engine;
          j["dma_queue"] = x.dma_queue;
          j["descriptor_count"] = x.descriptor_count;
        } else if constexpr (std::is_same_v<T, Interrupt>) {
          j["group"] = x.group;
          j["block_id"] = x.block_id;
          j["cause_bits"] = x.cause_bits;
          if (x.group == NEURON_ISA_INTERRUPT_GROUP_NOTIFIC) j["causes"] = notific_cause_names(x.cause_bits);
          j["text"] = explain(x);
        } else if constexpr (std::is_same_v<T, TpbError>) {
          j["error_id"] = x.error_id;
          j["error"] = tpb_error_name(x.error_id);
          j["fatal"] = x.is_fatal();
          j["metadata_lo"] = x.metadata_lo;
          j["metadata_hi"] = x.metadata_hi;
          j["metadata"] = x.metadata;
          j["sequencer"] = {{"block_id", x.sequencer.block_id},
                            {"engine", engine_of_block(x.sequencer.block_id)},
                            {"program_counter", x.sequencer.program_counter},
                            {"info", x.sequencer.info},
                            {"info_kind", seq_info_kind_name(x.sequencer.info_kind)},
                            {"bc_reg", x.sequencer.bc_reg},
                            {"direction", x.sequencer.direction}};
          j["text"] = explain(x);
        } else if constexpr (std::is_same_v<T, Unknown>) {
          Record r;
          r.bytes = x.bytes;
          j["bytes"] = r.hex();
        }
      },
      d);
  return j;
}

}  // namespace neuron
