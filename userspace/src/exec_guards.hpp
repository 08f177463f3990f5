// SPDX-License-Identifier: MIT
//
// What execute() undoes when it returns, however it returns: the engines
// it started (reset if still running) and the completion notifications it
// armed (disarmed). Private to execute.cpp.
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <vector>

#include "libneuron/execute.hpp"

namespace neuron::detail {

struct EngineKey {
  unsigned core, engine;
  friend auto operator<=>(const EngineKey&, const EngineKey&) = default;
};

/// The engines execute() started: when it returns (a TIMEOUT, a failure
/// after the submit), each still RUNNING or WAITING is reset, whoever owns
/// the core and whether or not the program uses device memory, before the
/// queues it writes to are destroyed (declared after the Reaper that owns
/// them, so destroyed first) and before ProgramClaim frees its memory and
/// releases its cores. An engine that stopped (IDLE, HALTED) is left as it is.
class StartedEngines {
 public:
  explicit StartedEngines(ExecTarget& t) : t_(t) {}
  StartedEngines(const StartedEngines&) = delete;
  StartedEngines& operator=(const StartedEngines&) = delete;
  ~StartedEngines() {
    try {
      for (const auto& k : started_) {
        auto st = t_.engine_status(k.core, k.engine);
        if (st && (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING))
          (void)t_.engine_reset(k.core, k.engine);
      }
    } catch (...) {  // an allocation failure: ProgramClaim and the file's release still stop what they own
    }
  }
  void add(EngineKey k) { started_.push_back(k); }

 private:
  ExecTarget& t_;
  std::vector<EngineKey> started_;
};

/// The completion notifications execute() armed on the program's cores
/// (ExecOptions::dma_queues, axi_evt_sem). disarm() at the end reads the
/// AXI_EVT_SEM records lost; the destructor disarms what an early return
/// left armed (a core the claim releases the driver disarms as well).
/// Declared after ProgramClaim, so destroyed before it releases the cores.
class ArmedNotifications {
 public:
  explicit ArmedNotifications(ExecTarget& t) : t_(t) {}
  ArmedNotifications(const ArmedNotifications&) = delete;
  ArmedNotifications& operator=(const ArmedNotifications&) = delete;
  ~ArmedNotifications() {
    try {
      (void)disarm(nullptr);
    } catch (...) {  // an allocation failure: the claim's release disarms a core it acquired
    }
  }

  /// Arm DMA queues `dma` (bit q) and, with `axi`, AXI_EVT_SEM records on
  /// `core`; what the device reports afterwards goes to `seen`.
  Status arm(unsigned core, std::uint16_t dma, bool axi, std::map<unsigned, Device::NotifyTriggers>& seen) {
    for (unsigned q = 0; q < NEURON_DMA_ENGINES; ++q) {
      if (!(dma & (1u << q))) continue;
      auto r = t_.notify_trigger(core, NEURON_TRIGGER_DMA_QUEUE, q, true);
      if (!r) return unexpected(std::move(r).error());
      armed_.push_back({core, NEURON_TRIGGER_DMA_QUEUE, q});
      seen[core] = *r;
    }
    if (axi) {
      auto r = t_.notify_trigger(core, NEURON_TRIGGER_AXI_EVT_SEM, 0, true);
      if (!r) return unexpected(std::move(r).error());
      armed_.push_back({core, NEURON_TRIGGER_AXI_EVT_SEM, 0});
      seen[core] = *r;
    }
    return {};
  }

  /// Disarm everything armed. Returns the AXI_EVT_SEM records lost on the
  /// cores where they were armed, summed; nullopt if none was, or if the
  /// driver does not count them (or a disarm failed: the device went).
  std::optional<std::uint64_t> disarm(std::map<unsigned, Device::NotifyTriggers>* seen) {
    std::optional<std::uint64_t> lost;
    bool counted = true;
    for (const auto& a : armed_) {
      auto r = t_.notify_trigger(a.core, a.source, a.index, false);
      if (a.source != NEURON_TRIGGER_AXI_EVT_SEM) continue;
      if (r && r->axi_dropped) lost = lost.value_or(0) + *r->axi_dropped;
      else counted = false;
      if (r && seen) (*seen)[a.core].axi_dropped = r->axi_dropped;
    }
    armed_.clear();
    return counted ? lost : std::nullopt;
  }

 private:
  struct Armed {
    unsigned core;
    neuron_trigger_source source;
    unsigned index;
  };
  ExecTarget& t_;
  std::vector<Armed> armed_;
};

}  // namespace neuron::detail
