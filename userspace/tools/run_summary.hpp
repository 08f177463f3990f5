// SPDX-License-Identifier: MIT
//
// What `neuron-nq run` prints at the end: the runs it made (several with
// --repeat) added up, as text or as the JSON summary object
// (docs/cli-json.md#summary).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libneuron/execute.hpp"
#include "storm.hpp"

namespace neuron::cli {

/// What the runs of `run` add up to (several with --repeat).
struct RunTotals {
  ExecStatus status = ExecStatus::Ok;
  unsigned runs = 0;
  bool completed = true;
  std::optional<CollectedRecord> first_error;
  std::optional<CollectedRecord> first_throttle;  // a condition, not an error
  std::uint64_t throttle_records = 0;
  std::map<std::string, std::size_t> edges;  // "NOTIFIC THRESHOLD" -> edges
  std::uint64_t n_edges = 0, lost = 0, wakes = 0, late_records = 0, reaper_events = 0;
  std::vector<EngineStatus> engines;  // of the last run
  std::optional<std::uint32_t> features;
  std::map<unsigned, std::uint32_t> routes;  // of the last run: each core's ROUTE word
  std::map<unsigned, Device::NotifyTriggers> triggers;  // of the last run: what was armed
  bool axi_counted = true;                    // every run's AXI_DROPPED was read
  std::uint64_t axi_dropped = 0;              // AXI_EVT_SEM records lost, all runs
  double elapsed_ms = 0;
};

/// Add one run's result to `t`: the worst status wins.
void add_run(RunTotals& t, const ExecResult& r);

/// The summary as one JSON Lines object (docs/cli-json.md#summary).
void print_run_summary_json(std::FILE* out, const RunTotals& t, const Program& prog, const Storm::Totals& st,
                            unsigned group_lines);
/// The summary as text, ending with the status line and the exit status.
void print_run_summary_text(std::FILE* out, const RunTotals& t, const Program& prog, const Storm::Totals& st,
                            unsigned group_lines);

}  // namespace neuron::cli
