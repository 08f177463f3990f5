// SPDX-License-Identifier: MIT
//
// neuron-nq run's summary (run_summary.hpp).
#include "run_summary.hpp"

#include <fmt/format.h>

#include "output.hpp"

namespace neuron::cli {
namespace {

/// How bad a status is, to report the worst of several runs (--repeat).
int severity(ExecStatus s) {
  switch (s) {
    case ExecStatus::Ok: return 0;
    case ExecStatus::CompletedThrottled: return 1;
    case ExecStatus::CompletedWithError: return 2;
    case ExecStatus::Timeout: return 3;
    case ExecStatus::SwNqOverflow: return 4;
    case ExecStatus::Failure: return 6;
  }
  return 5;
}

std::string edges_summary(const std::map<std::string, std::size_t>& n) {
  std::string s;
  for (const auto& [k, v] : n) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", k, v);
  return s;
}

std::string first_error_text(const CollectedRecord& c, const Program& prog) {
  return record_sentence(c.decoded, prog, c.core);
}

}  // namespace

void add_run(RunTotals& t, const ExecResult& r) {
  if (t.runs++ == 0 || severity(r.status) > severity(t.status)) t.status = r.status;
  t.completed = t.completed && r.completed;
  if (!t.first_error && r.first_error) t.first_error = r.first_error;
  if (!t.first_throttle && r.first_throttle) t.first_throttle = r.first_throttle;
  t.throttle_records += r.throttle_records;
  for (const auto& e : r.events) {
    ++t.n_edges;
    std::string key = edge_name(e.edge);
    if (e.edge == NEURON_EDGE_NOTIFIC) key += " " + notific_cause_names(e.cause);
    if (e.edge == NEURON_EDGE_ENGINE_STOPPED) key += " " + stop_cause_name(e.cause);
    ++t.edges[key];
  }
  t.lost += r.lost;
  t.wakes += r.reaper.wakes;
  t.late_records += r.reaper.late_records;
  t.reaper_events += r.reaper.events;
  t.engines = r.engines;
  t.features = r.features;
  t.routes = r.routes;
  t.triggers = r.triggers;
  if (r.axi_dropped) t.axi_dropped += *r.axi_dropped;
  else t.axi_counted = false;
  t.elapsed_ms += std::chrono::duration<double, std::milli>(r.elapsed).count();
}

void print_run_summary_json(std::FILE* out, const RunTotals& t, const Program& prog, const Storm::Totals& st,
                            unsigned group_lines) {
  nlohmann::json engines = nlohmann::json::array();
  for (const auto& e : t.engines)
    engines.push_back({{"core", e.core}, {"engine", engine_name(e.engine)}, {"state", engine_state_name(e.state)},
                       {"program_counter", e.pc}});
  nlohmann::json j = summary_json("run", st, group_lines);
  j["status"] = status_name(t.status);
  j["status_code"] = static_cast<int>(t.status);
  j["exit_code"] = exit_code(t.status);
  j["completed"] = t.completed;
  j["runs"] = t.runs;
  j["edges"] = t.edges;
  j["lost"] = t.lost;
  j["engines"] = engines;
  j["reaper"] = {{"wakes", t.wakes}, {"late_records", t.late_records}, {"events", t.reaper_events}};
  j["elapsed_ms"] = t.elapsed_ms;
  j["features"] = t.features ? nlohmann::json(*t.features) : nlohmann::json(nullptr);
  j["first_error"] = t.first_error ? nlohmann::json(first_error_text(*t.first_error, prog)) : nlohmann::json(nullptr);
  nlohmann::json routes = nlohmann::json::object();
  for (const auto& [core, route] : t.routes) routes[std::to_string(core)] = fmt::format("{:#010x}", route);
  j["routes"] = routes;
  j["throttle_records"] = t.throttle_records;
  nlohmann::json armed = nlohmann::json::object();
  bool axi = false;
  for (const auto& [core, tr] : t.triggers) {
    armed[std::to_string(core)] = {{"dma_queues", fmt::format("{:#06x}", tr.dma_armed)}, {"axi_evt_sem", tr.axi_armed}};
    axi = axi || tr.axi_armed;
  }
  j["notifications"] = armed;
  // null: not armed, or a driver that does not count them
  j["axi_dropped"] = axi && t.axi_counted ? nlohmann::json(t.axi_dropped) : nlohmann::json(nullptr);
  j["first_throttle"] =
      t.first_throttle ? nlohmann::json(first_error_text(*t.first_throttle, prog)) : nlohmann::json(nullptr);
  fmt::print(out, "{}\n", json_text(j));
}

void print_run_summary_text(std::FILE* out, const RunTotals& t, const Program& prog, const Storm::Totals& st,
                            unsigned group_lines) {
  fmt::print(out, "\n");
  if (t.runs > 1) fmt::print(out, "runs: {}\n", t.runs);
  print_totals_text(out, st, group_lines);
  for (const auto& [core, route] : t.routes)
    if (route != NEURON_ROUTE_DEFAULT) fmt::print(out, "core {} route: {:#010x}\n", core, route);
  for (const auto& [core, tr] : t.triggers) {
    fmt::print(out, "core {} notifications: DMA queues {:#06x}, AXI_EVT_SEM {}\n", core, tr.dma_armed,
               tr.axi_armed ? "on" : "off");
    if (!tr.axi_armed) continue;
    if (tr.axi_dropped)
      fmt::print(out, "core {} AXI_EVT_SEM records lost (AXI_DROPPED): {}\n", core, *tr.axi_dropped);
    else
      fmt::print(out, "core {} AXI_EVT_SEM records lost: not counted by this driver (no NEURON_CAP_AXI_DROPPED)\n",
                 core);
  }
  if (t.first_error) fmt::print(out, "first error: {}\n", first_error_text(*t.first_error, prog));
  if (t.throttle_records)
    fmt::print(out, "throttled: {} throttle record{} (not errors), first: {}\n", t.throttle_records,
               t.throttle_records == 1 ? "" : "s", first_error_text(*t.first_throttle, prog));
  if (!t.edges.empty()) fmt::print(out, "interrupt edges meanwhile: {}\n", edges_summary(t.edges));
  if (t.lost) fmt::print(out, "lost to overflow: {} records\n", t.lost);
  for (const auto& e : t.engines)
    fmt::print(out, "engine core {} {:<4} {}{}\n", e.core, engine_name(e.engine), engine_state_name(e.state),
               e.state == NEURON_ENGINE_HALTED
                   ? fmt::format(" (fatal: reset with `neuron-nq reset --core {} --engine {}`)", e.core,
                                 lower(engine_name(e.engine)))
                   : std::string());
  std::string why;
  if (t.status == ExecStatus::Timeout)
    why = t.first_error ? " — no completion record arrived in time; the error above is why"
                        : " — no completion record arrived in time (an engine still running or waiting?)";
  fmt::print(out, "status: {} ({}) in {:.1f} ms{}; exit status {}\n", status_name(t.status),
             static_cast<int>(t.status), t.elapsed_ms, why, exit_code(t.status));
}

}  // namespace neuron::cli
