// SPDX-License-Identifier: MIT
//
// Chrome/Perfetto trace (JSON "traceEvents", opens in ui.perfetto.dev) from
// INST_START/INST_END pairs: one process per core, one track (thread) per
// engine, one complete ("X") slice per instruction; EXPLICIT, EVT_SEM and
// error records become instant events on their engine's track.
#pragma once

#include <span>

#include <nlohmann/json.hpp>

#include "libneuron/execute.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

struct TraceStats {
  std::size_t slices = 0;          ///< matched INST_START/INST_END pairs
  std::size_t unmatched_starts = 0;
  std::size_t unmatched_ends = 0;
  std::size_t instants = 0;
};

nlohmann::json chrome_trace(std::span<const CollectedRecord> records, TraceStats* stats = nullptr);

}  // namespace neuron
NEURON_API_END
