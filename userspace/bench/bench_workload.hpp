// SPDX-License-Identifier: MIT
//
// The programs the VM benchmarks (e2e_bench, reaper_scale) run on the
// emulated engines, and the per-engine sequence check of their records.
//
// A workload is one program of `insns` instructions, HALT last. Flood:
// NOTIFY at every pc. Paced: a DELAY of `phase` at pc 0, then NOTIFY at pc
// 1, 3, 5, ... with DELAY pace_ns between them: phased_programs() gives the
// engines phases spread evenly over one pace, so their records arrive
// evenly spaced rather than in bursts of one per engine. Each NOTIFY's
// debug_hint_extended is pc*7+1, so a torn or misplaced record shows, and
// its debug_hint (4 bits, record word 0 bits 23:20) is the caller's tag
// (which hot queue a program was meant for). An engine that runs the
// program again and again writes EXPLICIT records (soft_reset_counter r,
// pc): (r, first_pc), (r, first_pc + step), ... (r, last_pc), (r+1,
// first_pc), ...
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libneuron/neuron.hpp"

namespace neuron::bench {

struct Workload {
  std::string name;
  std::vector<Instruction> prog;
  std::uint32_t pace_ns = 0;   // DELAY between NOTIFYs, ns of device time (0: back to back)
  std::uint32_t step = 1;      // pc distance between NOTIFYs
  std::uint32_t first_pc = 0;  // the first NOTIFY
  std::uint32_t last_pc = 0;   // the last NOTIFY
  std::uint32_t per_run = 0;   // records per run
};

inline Workload make_workload(std::string name, std::uint32_t insns, std::uint32_t pace_ns, std::uint8_t hint = 0) {
  Workload w;
  w.name = std::move(name);
  w.pace_ns = pace_ns;
  w.step = pace_ns ? 2 : 1;
  w.first_pc = pace_ns ? 1 : 0;
  w.prog.resize(insns);
  for (std::uint32_t pc = 0; pc + 1 < insns; ++pc) {
    if (pc >= w.first_pc && (pc - w.first_pc) % w.step == 0) {
      w.prog[pc].opcode = NEURON_OP_NOTIFY;
      w.prog[pc].debug_hint = hint;
      w.prog[pc].operand.arg.debug_hint_extended = static_cast<std::uint16_t>(pc * 7 + 1);
      w.last_pc = pc;
      ++w.per_run;
    } else if (pc == 0) {
      w.prog[pc].opcode = NEURON_OP_NOP;  // the phase: phased_programs() makes it a DELAY
    } else {
      w.prog[pc].opcode = NEURON_OP_DELAY;
      w.prog[pc].operand.arg.value = pace_ns;
    }
  }
  w.prog[insns - 1].opcode = NEURON_OP_HALT;
  return w;
}

/// The program of each of `n` engines: a paced workload's with engine k's
/// first instruction a DELAY of k * pace_ns / n (engine 0: none), so the n
/// engines' records are spread over each pace; a flood's unchanged.
inline std::vector<std::vector<Instruction>> phased_programs(const Workload& w, std::size_t n) {
  std::vector<std::vector<Instruction>> progs(n, w.prog);
  if (w.pace_ns == 0) return progs;
  for (std::size_t k = 1; k < n; ++k) {
    progs[k][0].opcode = NEURON_OP_DELAY;
    progs[k][0].operand.arg.value = static_cast<std::uint32_t>(std::uint64_t{w.pace_ns} * k / n);
  }
  return progs;
}

/// The engine (0..4) of an EXPLICIT record, or -1 for any other record.
inline int explicit_engine(const Record& r) noexcept {
  const std::uint8_t t = r.notific_type();
  if (t < NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START || t > NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM ||
      (t - 4u) % 4u != NEURON_ENGINE_RECORD_EXPLICIT)
    return -1;
  return static_cast<int>((t - 4u) / 4u);
}

inline std::uint32_t record_pc(const Record& r) noexcept { return r.u32(0) & NEURON_ISA_W0_PC_MASK; }
inline std::uint8_t record_hint(const Record& r) noexcept {
  return static_cast<std::uint8_t>((r.u32(0) & NEURON_ISA_W0_DEBUG_HINT_MASK) >> NEURON_ISA_W0_DEBUG_HINT_SHIFT);
}

/// Per-stream sequence check over EXPLICIT records: `streams` independent
/// streams (one per engine of each core, or one per hot queue), each
/// expected to go (r, first_pc), (r, first_pc + step), ... (r, last_pc),
/// (r+1, first_pc), ... from whatever run it starts at.
class Checker {
 public:
  Checker(std::size_t streams, const Workload& w)
      : step_(w.step), first_(w.first_pc), last_(w.last_pc), next_(streams) {}

  /// A record of stream `stream`; `valid` false (not EXPLICIT, wrong
  /// stream) counts it as foreign.
  void feed(std::size_t stream, const Record& r, bool valid = true) {
    if (!valid || stream >= next_.size()) {
      ++foreign_;
      return;
    }
    const std::uint32_t pc = record_pc(r);
    const std::uint16_t run = r.u16(NEURON_ISA_EXPLICIT_SOFT_RESET_COUNTER_OFFSET);
    const std::uint16_t ext = r.u16(NEURON_ISA_EXPLICIT_DEBUG_HINT_EXT_OFFSET);
    auto& n = next_[stream];
    ++records_;
    if (ext != static_cast<std::uint16_t>(pc * 7 + 1)) ++torn_;  // the program's signature of its pc
    if (!n.started) {
      n = {true, run, pc};
      if (pc != first_) ++gaps_;
    } else if (run != n.run || pc != n.pc) {
      if (static_cast<std::uint16_t>(run - n.run) > 0x8000 || (run == n.run && pc < n.pc)) ++dups_;
      else ++gaps_;
      n.run = run;
      n.pc = pc;
    }
    if (n.pc == last_) {  // next expected
      n.pc = first_;
      ++n.run;
    } else {
      n.pc += step_;
    }
  }
  /// A record of an engine of core `core` (kEnginesPerCore streams per core).
  void feed_engine(unsigned core, const Record& r) {
    const int e = explicit_engine(r);
    feed(core * kEnginesPerCore + static_cast<unsigned>(e < 0 ? 0 : e), r, e >= 0);
  }
  [[nodiscard]] std::uint64_t records() const { return records_; }
  [[nodiscard]] bool ok() const { return gaps_ == 0 && dups_ == 0 && torn_ == 0 && foreign_ == 0; }
  [[nodiscard]] std::string report() const {
    return fmt::format("gaps={} duplicates={} torn={} foreign={}", gaps_, dups_, torn_, foreign_);
  }

 private:
  struct Next {
    bool started = false;
    std::uint16_t run = 0;
    std::uint32_t pc = 0;
  };
  std::uint32_t step_, first_, last_;
  std::vector<Next> next_;
  std::uint64_t records_ = 0, gaps_ = 0, dups_ = 0, torn_ = 0, foreign_ = 0;
};

}  // namespace neuron::bench
