// SPDX-License-Identifier: MIT
#include "libneuron/assembler.hpp"

#include <algorithm>
#include <cctype>
#include <endian.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "libneuron/decode.hpp"
#include "number.hpp"
#include "program_layout.hpp"
#include "neuron/regs.h"
#include "uapi/linux/neuron.h"

namespace neuron {

namespace {

// data_offset() in 64 bits (src/program_layout.hpp)
std::uint64_t offset64(const EngineProgram& e, std::size_t block) noexcept {
  return detail::image_offset(e.insns.size(), e.data.size(), [&](std::size_t i) { return e.data[i].bytes.size(); },
                              block);
}

constexpr const char* kEngineNames[] = {"pe", "act", "pool", "dve", "sp"};

struct OpInfo {
  const char* name;
  std::uint8_t opcode;
  int positional;  // number of positional operands
};

constexpr OpInfo kOps[] = {
    {"nop", NEURON_OP_NOP, 0},           {"notify", NEURON_OP_NOTIFY, 0},
    {"halt", NEURON_OP_HALT, 0},         {"sem.set", NEURON_OP_SEM_SET, 2},
    {"sem.inc", NEURON_OP_SEM_INC, 2},   {"sem.dec", NEURON_OP_SEM_DEC, 2},
    {"wait.ge", NEURON_OP_WAIT_GE, 2},   {"wait.ge.dec", NEURON_OP_WAIT_GE_AND_DEC, 2},
    {"event.set", NEURON_OP_EVENT_SET, 1}, {"event.clear", NEURON_OP_EVENT_CLEAR, 1},
    {"reg", NEURON_OP_REG_WRITE, 2},     {"fp_error", NEURON_OP_FP_ERROR, 1},
    {"throttle", NEURON_OP_THROTTLE, 1}, {"delay", NEURON_OP_DELAY, 1},
    {"dge", NEURON_OP_DGE_COPY, 0},
};

const OpInfo* find_op(std::string_view name) {
  for (const auto& op : kOps)
    if (name == op.name) return &op;
  return nullptr;
}

const OpInfo* find_opcode(std::uint8_t opcode) {
  for (const auto& op : kOps)
    if (op.opcode == opcode) return &op;
  return nullptr;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(std::string_view word) {
  const char* best = nullptr;
  std::size_t best_d = 3;
  for (const auto& op : kOps) {
    const std::size_t d = edit_distance(word, op.name);
    if (d < best_d) {
      best_d = d;
      best = op.name;
    }
  }
  return best ? fmt::format(" (did you mean '{}'?)", best) : std::string();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = s.find(sep, i);
    out.push_back(s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

using detail::parse_number;

class Assembler {
 public:
  Assembler(std::string_view text, std::string_view name) : text_(text) { prog_.name = std::string(name); }

  Result<Program> run() {
    std::size_t pos = 0;
    unsigned line_no = 0;
    while (pos <= text_.size() && errors_.size() < kMaxErrors) {
      const std::size_t nl = text_.find('\n', pos);
      std::string_view line = text_.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      ++line_no;
      line_ = line_no;
      if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
      line = trim(line);
      if (!line.empty()) {
        if (line.front() == '[') section(line);
        else if (line.rfind("features", 0) == 0 && (line.size() == 8 || std::isspace(static_cast<unsigned char>(line[8]))))
          features(line);
        else if (line.rfind("data", 0) == 0 && (line.size() == 4 || std::isspace(static_cast<unsigned char>(line[4]))))
          data(line);
        else instruction(line);
      }
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
    }
    for (const auto& e : prog_.engines) {
      if (e.insns.size() > NEURON_MAX_PROGRAM_INSNS)
        error_at(e.lines[NEURON_MAX_PROGRAM_INSNS], fmt::format("{} on core {} has {} instructions, at most {} fit one submission",
                                                 engine_name(e.engine), e.core, e.insns.size(), NEURON_MAX_PROGRAM_INSNS));
    }
    resolve_data();
    // A section with no instructions (e.g. its body commented out) submits nothing.
    std::erase_if(prog_.engines, [](const EngineProgram& e) { return e.insns.empty(); });
    if (errors_.empty() && prog_.engines.empty())
      errors_.push_back(fmt::format("{}: no instructions (start a section with [pe], [act], [pool], [dve] or [sp])",
                                    prog_.name));
    if (!errors_.empty()) {
      std::string all;
      for (const auto& e : errors_) all += (all.empty() ? "" : "\n") + e;
      return unexpected(errc::parse_error, all);
    }
    return std::move(prog_);
  }

 private:
  static constexpr std::size_t kMaxErrors = 20;

  void error(const std::string& msg) { error_at(line_, msg); }
  void error_at(unsigned line, const std::string& msg) {
    if (errors_.size() < kMaxErrors) errors_.push_back(fmt::format("{}:{}: {}", prog_.name, line, msg));
  }

  void section(std::string_view s) {
    if (s.back() != ']') return error(fmt::format("section header '{}' lacks its closing ']'", s));
    std::string name(trim(s.substr(1, s.size() - 2)));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    unsigned core = 0;
    std::string_view eng = name;
    if (name.rfind("core", 0) == 0) {
      const auto dot = name.find('.');
      if (dot == std::string::npos)
        return error(fmt::format("section '[{}]' names a core but no engine; write e.g. [core1.pe]", name));
      const auto n = parse_number(std::string_view(name).substr(4, dot - 4));
      if (!n || *n >= NEURON_MAX_CORES)
        return error(fmt::format("bad core in section '[{}]': cores are 0..{}", name, NEURON_MAX_CORES - 1));
      core = static_cast<unsigned>(*n);
      eng = std::string_view(name).substr(dot + 1);
    }
    const int e = engine_from_name(eng);
    if (e < 0)
      return error(fmt::format("unknown engine '{}' in section header; engines are pe, act, pool, dve, sp", eng));
    cur_ = nullptr;
    for (auto& p : prog_.engines)
      if (p.core == core && p.engine == static_cast<unsigned>(e)) cur_ = &p;
    if (!cur_) {
      prog_.engines.push_back(EngineProgram{core, static_cast<unsigned>(e), {}, {}, {}, {}});
      cur_ = &prog_.engines.back();
    }
  }

  // `features VALUE`: a program-level directive, anywhere, at most once.
  void features(std::string_view line) {
    const auto toks = split_ws(line);
    if (toks.size() != 2)
      return error(fmt::format("'features' takes 1 operand, got {}: features VALUE (e.g. features 0x2)", toks.size() - 1));
    if (prog_.features)
      return error(fmt::format("'features' given twice (first on line {})", features_line_));
    const auto v = parse_number(toks[1]);
    if (!v) return error(fmt::format("features value '{}' is not a number (decimal, 0x hex or 0b binary)", toks[1]));
    if (*v & ~static_cast<std::uint64_t>(NEURON_FEATURE_MASK))
      return error(fmt::format("features 0x{:x} has unknown bits; known: bit 0 DVE perf mode, bit 1 DGE packet "
                               "notification, bit 2 EVT accel address (mask 0x{:x})",
                               *v, NEURON_FEATURE_MASK));
    prog_.features = static_cast<std::uint32_t>(*v);
    features_line_ = line_;
  }

  std::optional<std::uint64_t> number(std::string_view what, std::string_view s, std::uint64_t max) {
    const auto v = parse_number(s);
    if (!v) {
      error(fmt::format("{} '{}' is not a number (decimal, 0x hex or 0b binary)", what, s));
      return std::nullopt;
    }
    if (*v > max) {
      error(fmt::format("{} {} out of range 0..{}", what, s, max));
      return std::nullopt;
    }
    return v;
  }

  // A BOUND_CHECK_REG byte (docs/hardware.md#dge-bounds-reg).
  bool bound_check(std::string_view key, std::string_view v, std::uint8_t& out) {
    std::uint8_t b = 0;
    for (auto item : split(v, ',')) {
      if (item == "off") continue;
      if (item == "quiet") {
        b |= NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_MASK;  // bit 6
      } else if (item.rfind("raw:", 0) == 0) {
        auto n = number(std::string(key) + " raw byte", item.substr(4), 0xff);
        if (!n) return false;
        b = static_cast<std::uint8_t>(*n);
      } else {
        auto n = number(std::string(key) + " register", item, NEURON_ENG_NUM_SREGS - 1);
        if (!n) return false;
        // bc_enabled (bit 7), bc_reg (bits 5..0)
        b = static_cast<std::uint8_t>((b & NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_MASK) | NEURON_ISA_BC_ENABLED_MASK |
                                      (*n << NEURON_ISA_BC_REG_SHIFT));
      }
    }
    out = b;
    return true;
  }

  bool indirect_flags(std::string_view v, std::uint8_t& out) {
    std::uint8_t b = 0;
    for (auto item : split(v, ',')) {
      if (item == "err") {
        b |= NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_MASK;  // docs/hardware.md#dge-indirect
      } else if (item == "nonunique") {
        b |= NEURON_ISA_INDIRECT_NON_UNIQUE_DST_IDX_MASK;
      } else if (item.rfind("gather=", 0) == 0 || item.rfind("scatter=", 0) == 0) {
        const bool g = item[0] == 'g';
        auto n = number(g ? "gather_dim" : "scatter_dim", item.substr(g ? 7 : 8), 3);
        if (!n) return false;
        b = static_cast<std::uint8_t>(
            b | (*n << (g ? NEURON_ISA_INDIRECT_GATHER_DIM_SHIFT : NEURON_ISA_INDIRECT_SCATTER_DIM_SHIFT)));
      } else if (item.rfind("raw:", 0) == 0) {
        auto n = number("indirect raw byte", item.substr(4), 0xff);
        if (!n) return false;
        b = static_cast<std::uint8_t>(*n);
      } else {
        auto n = number("indirect_mode", item, 3);
        if (!n) return false;
        b = static_cast<std::uint8_t>((b & ~NEURON_ISA_INDIRECT_MODE_MASK) | (*n << NEURON_ISA_INDIRECT_MODE_SHIFT));
      }
    }
    out = b;
    return true;
  }

  bool suffix(std::string_view tok, neuron_emu_insn& in) {
    const auto eq = tok.find('=');
    if (eq == std::string_view::npos)
      return error(fmt::format("suffix '{}' needs a value, e.g. @hint=3", tok)), false;
    const auto key = tok.substr(1, eq - 1);
    const auto val = tok.substr(eq + 1);
    if (key == "hint") {
      auto n = number("@hint", val, 15);
      if (!n) return false;
      in.debug_hint = htole16(static_cast<std::uint16_t>(*n));
      return true;
    }
    if (key == "value") {
      auto n = number("@value", val, UINT32_MAX);
      if (!n) return false;
      in.events.semaphore_value = htole32(static_cast<std::uint32_t>(*n));
      return true;
    }
    if (key == "wait" || key == "update") {
      const auto colon = val.find(':');
      if (colon == std::string_view::npos)
        return error(fmt::format("@{} needs MODE:INDEX, e.g. @{}", key, key == "wait" ? "wait=ge:3" : "update=sem.inc:3")),
               false;
      const auto mode = val.substr(0, colon);
      auto idx = number(fmt::format("@{} index", key), val.substr(colon + 1), NEURON_EVT_SEM_COUNT - 1);
      if (!idx) return false;
      if (key == "wait") {
        std::uint8_t m;
        if (mode == "ge") m = NEURON_WAIT_SEM_GE;
        else if (mode == "ge.dec") m = NEURON_WAIT_SEM_GE_AND_DEC;
        else if (mode == "event") m = NEURON_WAIT_EVENT_SET;
        else return error(fmt::format("unknown wait mode '{}'; use ge, ge.dec or event", mode)), false;
        in.events.wait_mode = m;
        in.events.wait_idx = static_cast<std::uint8_t>(*idx);
      } else {
        std::uint8_t m;
        if (mode == "sem.set") m = NEURON_EVT_SEM_UPDATE_SEM_SET;
        else if (mode == "sem.inc") m = NEURON_EVT_SEM_UPDATE_SEM_INC;
        else if (mode == "sem.dec") m = NEURON_EVT_SEM_UPDATE_SEM_DEC;
        else if (mode == "event.set") m = NEURON_EVT_SEM_UPDATE_EVENT_SET;
        else if (mode == "event.clear") m = NEURON_EVT_SEM_UPDATE_EVENT_CLEAR;
        else
          return error(fmt::format("unknown update mode '{}'; use sem.set, sem.inc, sem.dec, event.set or event.clear",
                                   mode)),
                 false;
        in.events.update_mode = m;
        in.events.update_idx = static_cast<std::uint8_t>(*idx);
      }
      return true;
    }
    return error(fmt::format("unknown suffix '@{}'; suffixes are @hint, @wait, @update, @value", key)), false;
  }

  void instruction(std::string_view line) {
    auto toks = split_ws(line);
    const std::string_view opname = toks[0];
    const OpInfo* op = find_op(opname);
    if (!op) return error(fmt::format("unknown opcode '{}'{}", opname, suggestion(opname)));
    if (!cur_) return error(fmt::format("'{}' is outside a section; start one with [pe], [act], [pool], [dve] or [sp]", opname));

    neuron_emu_insn in{};
    in.opcode = op->opcode;
    insn_refs_.clear();
    std::vector<std::string_view> pos;
    std::vector<std::pair<std::string_view, std::string_view>> kv;
    bool ok = true;
    for (std::size_t i = 1; i < toks.size(); ++i) {
      const auto t = toks[i];
      if (t.front() == '@') {
        ok = suffix(t, in) && ok;
      } else if (const auto eq = t.find('='); eq != std::string_view::npos) {
        kv.emplace_back(t.substr(0, eq), t.substr(eq + 1));
      } else {
        pos.push_back(t);
      }
    }
    if (!ok) return;

    if (static_cast<int>(pos.size()) != op->positional) {
      static constexpr const char* usage[] = {
          "nop", "notify hint=N ext=N", "halt", "sem.set IDX VAL", "sem.inc IDX VAL", "sem.dec IDX VAL",
          "wait.ge IDX VAL", "wait.ge.dec IDX VAL", "event.set IDX", "event.clear IDX", "reg IDX VAL",
          "fp_error ID", "throttle LEVEL", "delay NS", "dge src=A dst=A len=N [bc_src=..] [bc_dst=..] [indirect=..] [backend=..] [offsets=..] [elem=N] [idx=A]"};
      return error(fmt::format("'{}' takes {} operand{}, got {}: {}", opname, op->positional,
                               op->positional == 1 ? "" : "s", pos.size(), usage[op - kOps]));
    }
    if (op->opcode != NEURON_OP_NOTIFY && op->opcode != NEURON_OP_DGE_COPY && !kv.empty())
      return error(fmt::format("'{}' takes no key=value operands (got '{}=')", opname, kv[0].first));

    switch (op->opcode) {
      case NEURON_OP_NOTIFY:
        for (auto [k, v] : kv) {
          if (k == "hint") {
            auto n = number("hint", v, 15);
            if (!n) return;
            in.debug_hint = htole16(static_cast<std::uint16_t>(*n));
          } else if (k == "ext") {
            auto n = number("ext", v, 0xffff);
            if (!n) return;
            in.operand.arg.debug_hint_extended = htole16(static_cast<std::uint16_t>(*n));
          } else {
            return error(fmt::format("unknown notify operand '{}'; notify takes hint=N ext=N", k));
          }
        }
        break;
      case NEURON_OP_SEM_SET:
      case NEURON_OP_SEM_INC:
      case NEURON_OP_SEM_DEC:
      case NEURON_OP_WAIT_GE:
      case NEURON_OP_WAIT_GE_AND_DEC: {
        auto idx = number("semaphore", pos[0], NEURON_EVT_SEM_COUNT - 1);
        auto val = idx ? number("value", pos[1], UINT32_MAX) : std::nullopt;
        if (!idx || !val) return;
        in.operand.arg.idx = htole32(static_cast<std::uint32_t>(*idx));
        in.operand.arg.value = htole32(static_cast<std::uint32_t>(*val));
        break;
      }
      case NEURON_OP_EVENT_SET:
      case NEURON_OP_EVENT_CLEAR: {
        auto idx = number("event", pos[0], NEURON_EVT_SEM_COUNT - 1);
        if (!idx) return;
        in.operand.arg.idx = htole32(static_cast<std::uint32_t>(*idx));
        break;
      }
      case NEURON_OP_REG_WRITE: {
        auto idx = number("register $S index", pos[0], NEURON_ENG_NUM_SREGS - 1);
        auto val = idx ? number("value", pos[1], UINT32_MAX) : std::nullopt;
        if (!idx || !val) return;
        in.operand.arg.idx = htole32(static_cast<std::uint32_t>(*idx));
        in.operand.arg.value = htole32(static_cast<std::uint32_t>(*val));
        break;
      }
      case NEURON_OP_FP_ERROR: {
        std::optional<std::uint64_t> id;
        for (std::uint8_t e = 0; e <= NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL; ++e)
          if (pos[0] == tpb_error_name(e)) id = e;
        if (!id) id = number("error id", pos[0], 0xff);
        if (!id) return;
        in.operand.arg.value = htole32(static_cast<std::uint32_t>(*id));
        break;
      }
      case NEURON_OP_THROTTLE:
      case NEURON_OP_DELAY: {
        auto v = number(op->opcode == NEURON_OP_DELAY ? "delay" : "throttle level", pos[0], UINT32_MAX);
        if (!v) return;
        in.operand.arg.value = htole32(static_cast<std::uint32_t>(*v));
        break;
      }
      case NEURON_OP_DGE_COPY: {
        neuron_emu_dge_desc d{};
        d.backend = NEURON_DGE_BACKEND_POOL;
        bool have_src = false, have_dst = false, have_len = false;
        for (auto [k, v] : kv) {
          if ((k == "src" || k == "dst" || k == "idx") && !v.empty() && v.front() == '@') {
            // a data block of this engine's image (docs/program-syntax.md#data)
            if (k == "dst")
              return error(fmt::format("dge dst={}: a destination cannot be a program's data (the driver lets a "
                                       "program write only device memory its file allocated); use src=@NAME or idx=@NAME",
                                       v));
            insn_refs_.push_back({cur_->core, cur_->engine, static_cast<std::uint32_t>(cur_->insns.size()),
                                k == "src" ? DataField::Source : DataField::IndexTable, std::string(v.substr(1)), line_});
            if (k == "src") have_src = true;
          } else if (k == "src" || k == "dst" || k == "len") {
            auto n = number(k, v, UINT32_MAX);
            if (!n) return;
            (k == "src" ? d.src : k == "dst" ? d.dst : d.length) = htole32(static_cast<std::uint32_t>(*n));
            (k == "src" ? have_src : k == "dst" ? have_dst : have_len) = true;
          } else if (k == "bc_src" || k == "bc_dst") {
            std::uint8_t b;
            if (!bound_check(k, v, b)) return;
            (k == "bc_src" ? d.bc_src : d.bc_dst) = b;
          } else if (k == "indirect") {
            std::uint8_t b;
            if (!indirect_flags(v, b)) return;
            d.indirect = b;
          } else if (k == "backend") {
            if (v == "none") d.backend = NEURON_DGE_BACKEND_NONE;
            else if (v == "pool") d.backend = NEURON_DGE_BACKEND_POOL;
            else if (v == "rtl") d.backend = NEURON_DGE_BACKEND_RTL;
            else if (auto n = parse_number(v); n && *n <= 0xff) d.backend = static_cast<std::uint8_t>(*n);
            else return error(fmt::format("unknown DGE backend '{}'; use none, pool, rtl or a number", v));
          } else if (k == "offsets") {
            // wide-offset limits (include/neuron/emu_isa.h NEURON_DGE_F_WIDE_OFFSET)
            if (v == "wide") in.flags |= NEURON_DGE_F_WIDE_OFFSET;
            else if (v == "narrow") in.flags &= static_cast<std::uint8_t>(~NEURON_DGE_F_WIDE_OFFSET);
            else return error(fmt::format("dge offsets '{}': use narrow or wide", v));
          } else if (k == "elem") {
            // element size of an indirect descriptor: a power of two, 1..128 bytes
            auto n = number("dge elem", v, 128);
            if (!n) return;
            if (!*n || (*n & (*n - 1)))
              return error(fmt::format("dge elem {} is not a power of two in 1..128", *n));
            unsigned shift = 0;
            while ((1u << shift) < *n) ++shift;
            in.flags = static_cast<std::uint8_t>((in.flags & ~NEURON_DGE_F_ELEM_MASK) |
                                                 (shift << NEURON_DGE_F_ELEM_SHIFT));
          } else if (k == "idx") {
            // the index table of an indirect descriptor (a device-memory offset)
            auto n = number("dge idx", v, UINT32_MAX);
            if (!n) return;
            in.reserved0 = htole32(static_cast<std::uint32_t>(*n));
          } else {
            return error(fmt::format("unknown dge operand '{}'; dge takes src, dst, len, bc_src, bc_dst, indirect, "
                                     "backend, offsets, elem, idx", k));
          }
        }
        if (!have_src || !have_dst || !have_len)
          return error(fmt::format("dge needs src=, dst= and len= (missing {})",
                                   !have_src ? "src" : !have_dst ? "dst" : "len"));
        in.operand.dge = d;
        break;
      }
      default:
        break;
    }
    cur_->insns.push_back(in);
    cur_->lines.push_back(line_);
    pending_.insert(pending_.end(), insn_refs_.begin(), insn_refs_.end());
  }

  static bool is_name(std::string_view n) {
    if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
    return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }

  std::string section_name(unsigned core, unsigned engine) const {
    return core == 0 ? fmt::format("[{}]", kEngineNames[engine]) : fmt::format("[core{}.{}]", core, kEngineNames[engine]);
  }

  // `data NAME u32 V, V ...` / `data NAME bytes V V ...` (docs/program-syntax.md#data).
  void data(std::string_view line) {
    static constexpr const char* kUsage = "data NAME u32 V, V, ... or data NAME bytes V V ...";
    std::vector<std::string_view> toks;
    for (auto w : split_ws(line))
      for (auto t : split(w, ','))
        if (!t.empty()) toks.push_back(t);
    if (!cur_) return error("'data' is outside a section; its bytes belong to one engine's program, start one with [pe], [act], [pool], [dve] or [sp]");
    if (toks.size() < 4) return error(fmt::format("'data' needs a name, a kind and at least one value: {}", kUsage));
    const auto name = toks[1], kind = toks[2];
    if (!is_name(name))
      return error(fmt::format("data name '{}' is not a name (a letter or '_', then letters, digits or '_')", name));
    for (const auto& b : cur_->data)
      if (b.name == name)
        return error(fmt::format("data '{}' given twice in {} (first on line {})", name,
                                 section_name(cur_->core, cur_->engine), b.line));
    if (kind != "u32" && kind != "bytes") return error(fmt::format("data kind '{}': use u32 or bytes ({})", kind, kUsage));
    DataBlock b{std::string(name), kind == "u32", {}, line_};
    for (std::size_t i = 3; i < toks.size(); ++i) {
      const auto v = parse_number(toks[i]);
      if (!v) return error(fmt::format("data {} value '{}' is not a number (decimal, 0x hex or 0b binary)", name, toks[i]));
      if (b.u32) {
        if (*v > UINT32_MAX)
          return error(fmt::format("data {} value {} out of range for u32 (0..0xffffffff)", name, toks[i]));
        for (unsigned k = 0; k < 4; ++k) b.bytes.push_back(static_cast<std::uint8_t>(*v >> (8 * k)));  // little-endian
      } else {
        if (*v > 0xff) return error(fmt::format("data {} value {} out of range for a byte (0..0xff)", name, toks[i]));
        b.bytes.push_back(static_cast<std::uint8_t>(*v));
      }
    }
    cur_->data.push_back(std::move(b));
  }

  // Each `src=@NAME` / `idx=@NAME` to its block; each image inside its program area.
  void resolve_data() {
    for (const auto& r : pending_) {
      EngineProgram* e = nullptr;
      for (auto& p : prog_.engines)
        if (p.core == r.core && p.engine == r.engine) e = &p;
      if (!e || r.pc >= e->insns.size()) continue;  // its instruction was refused: an error is reported already
      const auto it = std::find_if(e->data.begin(), e->data.end(), [&](const DataBlock& b) { return b.name == r.name; });
      if (it == e->data.end()) {
        std::string known;
        for (const auto& b : e->data) known += (known.empty() ? "" : ", ") + b.name;
        error_at(r.line, fmt::format("unknown data '{}' in {} ({})", r.name, section_name(r.core, r.engine),
                                     known.empty() ? "it has no data directive" : "its data: " + known));
        continue;
      }
      e->refs.push_back({r.pc, r.field, static_cast<std::uint32_t>(it - e->data.begin())});
    }
    for (auto& e : prog_.engines) {
      if (e.data.empty()) continue;
      if (e.insns.empty()) {
        error_at(e.data.front().line, fmt::format("{} has data but no instructions", section_name(e.core, e.engine)));
        continue;
      }
      if (e.insns.back().opcode != NEURON_OP_HALT)
        error_at(e.lines.back(), fmt::format("{} brings data: its last instruction must be halt, so the engine stops "
                                             "before the data that follows it",
                                             section_name(e.core, e.engine)));
      if (image_slots(e) > NEURON_MAX_PROGRAM_INSNS) {
        error_at(e.data.back().line,
                 fmt::format("data too big: {} needs {} bytes ({} instructions and {} bytes of data), its program area "
                             "holds {} ({} slots of 32 bytes)",
                             section_name(e.core, e.engine), image_slots(e) * NEURON_EMU_INSN_BYTES, e.insns.size(),
                             offset64(e, e.data.size()) - e.insns.size() * NEURON_EMU_INSN_BYTES,
                             NEURON_MAX_PROGRAM_INSNS * NEURON_EMU_INSN_BYTES, NEURON_MAX_PROGRAM_INSNS));
        continue;
      }
      // until submitted, a field holds its block's offset in the image
      for (const auto& r : e.refs) {
        const std::uint32_t off = htole32(data_offset(e, r.block));
        if (r.field == DataField::Source) e.insns[r.pc].operand.dge.src = off;
        else e.insns[r.pc].reserved0 = off;
      }
    }
  }

  struct PendingRef {
    unsigned core, engine;
    std::uint32_t pc;
    DataField field;
    std::string name;
    unsigned line;
  };
  std::vector<PendingRef> pending_;    // every accepted instruction's
  std::vector<PendingRef> insn_refs_;  // the instruction being read

  std::string_view text_;
  Program prog_;
  EngineProgram* cur_ = nullptr;
  unsigned line_ = 0;
  unsigned features_line_ = 0;
  std::vector<std::string> errors_;
};

std::string bc_text(std::uint8_t b) {
  if (b == 0) return "off";
  const bool enabled = b & NEURON_ISA_BC_ENABLED_MASK, quiet = b & NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_MASK;
  const unsigned reg = (b & NEURON_ISA_BC_REG_MASK) >> NEURON_ISA_BC_REG_SHIFT;
  if (!enabled) return fmt::format("raw:0x{:02x}", b);
  return quiet ? fmt::format("{},quiet", reg) : fmt::format("{}", reg);
}

}  // namespace

int engine_from_name(std::string_view name) noexcept {
  for (int i = 0; i < 5; ++i)
    if (name == kEngineNames[i]) return i;
  return -1;
}

std::set<unsigned> Program::cores() const {
  std::set<unsigned> s;
  for (const auto& e : engines) s.insert(e.core);
  return s;
}

const EngineProgram* Program::find(unsigned core, unsigned engine) const {
  for (const auto& e : engines)
    if (e.core == core && e.engine == engine) return &e;
  return nullptr;
}

std::size_t Program::instruction_count() const {
  std::size_t n = 0;
  for (const auto& e : engines) n += e.insns.size();
  return n;
}

std::uint32_t data_offset(const EngineProgram& e, std::size_t block) {
  // saturated, never wrapped: such an image is larger than any program area
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(offset64(e, block), UINT32_MAX));
}

std::size_t image_slots(const EngineProgram& e) {
  return static_cast<std::size_t>(detail::image_slots_of(offset64(e, e.data.size())));
}

std::uint64_t program_area_offset(const neuron_device_info& info, unsigned core, unsigned engine) {
  const std::uint64_t areas = std::uint64_t{info.num_cores} * info.engines_per_core;
  return info.mem_size - areas * NEURON_PROG_AREA_BYTES +
         (std::uint64_t{core} * info.engines_per_core + engine) * NEURON_PROG_AREA_BYTES;
}

Result<std::vector<neuron_emu_insn>> program_image(const EngineProgram& e, std::uint64_t base) {
  std::vector<neuron_emu_insn> img = e.insns;
  if (e.data.empty()) return img;
  // the image is written below, slot by slot: never more than its area
  // (the assembler refuses such data first; a program built by hand is
  // checked here)
  if (const std::uint64_t end = offset64(e, e.data.size());
      detail::image_slots_of(end) > NEURON_MAX_PROGRAM_INSNS)
    return unexpected(errc::invalid_argument,
                      fmt::format("data too big: core {} engine {} needs {} bytes ({} instructions and {} bytes of "
                                  "data), its program area holds {} ({} slots of 32 bytes)",
                                  e.core, e.engine, detail::image_slots_of(end) * NEURON_EMU_INSN_BYTES,
                                  e.insns.size(), end - e.insns.size() * NEURON_EMU_INSN_BYTES,
                                  NEURON_MAX_PROGRAM_INSNS * NEURON_EMU_INSN_BYTES, NEURON_MAX_PROGRAM_INSNS));
  for (const auto& r : e.refs) {
    const std::uint64_t at = base + data_offset(e, r.block);
    if (r.pc >= img.size() || r.block >= e.data.size() || at > UINT32_MAX)
      return unexpected(errc::invalid_argument,
                        fmt::format("line {}: data at BAR4 offset 0x{:x} does not fit a DGE_COPY's 32-bit address",
                                    r.pc < e.lines.size() ? e.lines[r.pc] : 0u, at));
    if (r.field == DataField::Source) img[r.pc].operand.dge.src = htole32(static_cast<std::uint32_t>(at));
    else img[r.pc].reserved0 = htole32(static_cast<std::uint32_t>(at));
  }
  img.resize(image_slots(e), neuron_emu_insn{});
  auto* bytes = reinterpret_cast<std::uint8_t*>(img.data());
  for (std::size_t i = 0; i < e.data.size(); ++i)
    std::memcpy(bytes + data_offset(e, i), e.data[i].bytes.data(), e.data[i].bytes.size());
  return img;
}

Result<Program> assemble(std::string_view text, std::string_view name) { return Assembler(text, name).run(); }

Result<Program> assemble_file(const std::string& path) {
  // std::ifstream opens a directory and then reads nothing: say so instead
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return unexpected(Error::from_errno(EISDIR, "open " + path));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(Error::from_errno(errno ? errno : ENOENT, "open " + path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return unexpected(Error::from_errno(errno ? errno : EIO, "read " + path));
  return assemble(ss.str(), path);
}

std::string disassemble(const neuron_emu_insn& in) {
  std::string s;
  const OpInfo* op = find_opcode(in.opcode);
  const auto& a = in.operand.arg;
  if (!op) return fmt::format("# opcode 0x{:02x}", in.opcode);
  s = op->name;
  switch (in.opcode) {
    case NEURON_OP_NOTIFY:
      s += fmt::format(" hint={} ext=0x{:x}", le16toh(in.debug_hint), le16toh(a.debug_hint_extended));
      break;
    case NEURON_OP_SEM_SET: case NEURON_OP_SEM_INC: case NEURON_OP_SEM_DEC:
    case NEURON_OP_WAIT_GE: case NEURON_OP_WAIT_GE_AND_DEC: case NEURON_OP_REG_WRITE:
      s += fmt::format(" {} {}", le32toh(a.idx), le32toh(a.value));
      break;
    case NEURON_OP_EVENT_SET: case NEURON_OP_EVENT_CLEAR:
      s += fmt::format(" {}", le32toh(a.idx));
      break;
    case NEURON_OP_FP_ERROR: case NEURON_OP_THROTTLE: case NEURON_OP_DELAY:
      s += fmt::format(" {}", le32toh(a.value));
      break;
    case NEURON_OP_DGE_COPY: {
      const auto& d = in.operand.dge;
      s += fmt::format(" src=0x{:x} dst=0x{:x} len={} bc_src={} bc_dst={} indirect=raw:0x{:02x} backend={}",
                       le32toh(d.src), le32toh(d.dst), le32toh(d.length), bc_text(d.bc_src), bc_text(d.bc_dst),
                       d.indirect, d.backend);
      if (in.flags & NEURON_DGE_F_WIDE_OFFSET) s += " offsets=wide";
      if (in.flags & NEURON_DGE_F_ELEM_MASK)
        s += fmt::format(" elem={}", 1u << ((in.flags & NEURON_DGE_F_ELEM_MASK) >> NEURON_DGE_F_ELEM_SHIFT));
      if (in.reserved0) s += fmt::format(" idx=0x{:x}", le32toh(in.reserved0));
      break;
    }
    default:
      break;
  }
  if (in.opcode != NEURON_OP_NOTIFY && in.debug_hint) s += fmt::format(" @hint={}", le16toh(in.debug_hint));
  const auto& ev = in.events;
  if (ev.wait_mode) {
    static constexpr const char* w[] = {"", "ge", "ge.dec", "event"};
    s += ev.wait_mode < 4 ? fmt::format(" @wait={}:{}", w[ev.wait_mode], ev.wait_idx)
                          : fmt::format(" # wait_mode {}", ev.wait_mode);
  }
  if (ev.update_mode) {
    static constexpr const char* u[] = {"", "sem.set", "sem.inc", "sem.dec", "event.set", "event.clear"};
    s += ev.update_mode < 6 ? fmt::format(" @update={}:{}", u[ev.update_mode], ev.update_idx)
                            : fmt::format(" # update_mode {}", ev.update_mode);
  }
  if (ev.semaphore_value) s += fmt::format(" @value={}", le32toh(ev.semaphore_value));
  return s;
}

std::string disassemble(const Program& p) {
  std::string s;
  if (p.features) s += fmt::format("features 0x{:x}\n", *p.features);
  for (const auto& e : p.engines) {
    s += e.core == 0 ? fmt::format("[{}]\n", kEngineNames[e.engine])
                     : fmt::format("[core{}.{}]\n", e.core, kEngineNames[e.engine]);
    for (std::uint32_t pc = 0; pc < e.insns.size(); ++pc) {
      std::string line = disassemble(e.insns[pc]);
      // a field naming a data block prints its name (docs/program-syntax.md#data)
      for (const auto& r : e.refs) {
        if (r.pc != pc || r.block >= e.data.size()) continue;
        const auto& in = e.insns[pc];
        const std::string num = r.field == DataField::Source ? fmt::format(" src=0x{:x}", le32toh(in.operand.dge.src))
                                                             : fmt::format(" idx=0x{:x}", le32toh(in.reserved0));
        const std::string ref = fmt::format(" {}=@{}", r.field == DataField::Source ? "src" : "idx", e.data[r.block].name);
        if (const auto at = line.find(num); at != std::string::npos) line.replace(at, num.size(), ref);
        else line += ref;
      }
      s += line + "\n";
    }
    for (const auto& b : e.data) {
      s += fmt::format("data {} {}", b.name, b.u32 ? "u32" : "bytes");
      if (b.u32)
        for (std::size_t i = 0; i + 3 < b.bytes.size(); i += 4)
          s += fmt::format("{} {}", i ? "," : "",
                           b.bytes[i] | b.bytes[i + 1] << 8 | b.bytes[i + 2] << 16 | std::uint32_t{b.bytes[i + 3]} << 24);
      else
        for (auto v : b.bytes) s += fmt::format(" 0x{:02x}", v);
      s += "\n";
    }
  }
  return s;
}

}  // namespace neuron
