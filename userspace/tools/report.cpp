// SPDX-License-Identifier: MIT
//
// list and metrics output, text and JSON (report.hpp); the Prometheus
// exposition and its textfile are prometheus.cpp.
#include "report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <map>

#include "libneuron/decode.hpp"
#include "libneuron/format.hpp"
#include "libneuron/record.hpp"
#include "output.hpp"
#include "report_fields.hpp"

namespace neuron::cli {
namespace {

/// The tpb_notific_intr causes that report an error (docs/metrics.md#error-summary);
/// THRESHOLD, BACKPRESSURE and WRBUF_FULL (a producer stalled, nothing lost;
/// docs/device-model.md#wrbuf) are normal operation.
constexpr unsigned kErrorCauses[] = {NEURON_NOTIFIC_INTR_DISABLED_QUEUE, NEURON_NOTIFIC_INTR_SW_OVERFLOW,
                                     NEURON_NOTIFIC_INTR_HW_OVERFLOW,    NEURON_NOTIFIC_INTR_AXI_WRITE_ERROR,
                                     NEURON_NOTIFIC_INTR_ENGINE_FATAL,   NEURON_NOTIFIC_INTR_BAD_HEAD};

nlohmann::json null_or(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

nlohmann::json numa_json(const DeviceSample& d) {
  return d.numa_node ? nlohmann::json(*d.numa_node) : nlohmann::json(nullptr);
}

std::string numa_text(const DeviceSample& d) {
  if (!d.numa_node) return "unknown";
  if (*d.numa_node < 0) return "none";
  return std::to_string(*d.numa_node);
}

/// A counter as JSON: its value, or null when it could not be read.
nlohmann::json opt_json(const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
/// A counter as text: its value, or "unknown".
std::string opt_text(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string("unknown"); }
/// A counter map as JSON: an object, or null when its file could not be read.
nlohmann::json map_json(const std::optional<std::map<std::string, std::uint64_t>>& m) {
  if (!m) return nullptr;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : *m) j[k] = v;
  return j;
}

nlohmann::json owner_json(const CoreSample& c) {
  if (!c.owner || c.owner->is_free()) return nullptr;
  nlohmann::json o = {{"pid", *c.owner->pid}, {"comm", c.owner->comm}, {"uid", nullptr}};
  if (c.uid) o["uid"] = *c.uid;
  return o;
}

/// The fields list and metrics share for a device.
nlohmann::json device_base_json(const DeviceSample& d) {
  nlohmann::json j = {{"index", d.index},
                      {"path", d.path},
                      {"pci_address", null_or(d.pci_address)},
                      {"numa_node", numa_json(d)},
                      {"local_cpulist", null_or(d.local_cpulist)},
                      {"gen", d.info ? nlohmann::json(gen_name(d.info->gen)) : nlohmann::json(nullptr)},
                      {"num_cores", num_cores(d)}};
  if (!d.info_error.empty()) j["error"] = d.info_error;
  if (!d.owners_error.empty()) j["owners_error"] = d.owners_error;
  return j;
}

}  // namespace

std::string list_text(const std::vector<DeviceSample>& devs) {
  std::string s;
  for (const auto& d : devs) {
    s += fmt::format("{}  PCI {}  NUMA node {}  local CPUs {}", d.path, d.pci_address.empty() ? "unknown" : d.pci_address,
                     numa_text(d), d.local_cpulist.empty() ? "unknown" : d.local_cpulist);
    if (d.info)
      s += fmt::format("  gen {}  {} cores x {} engines  {} MiB device memory\n", gen_name(d.info->gen),
                       d.info->num_cores, d.info->engines_per_core, d.info->mem_size >> 20);
    else
      s += fmt::format("  {} cores\n  device information unavailable: {}\n", d.cores.size(), d.info_error);
    if (!d.owners_error.empty()) s += fmt::format("  core owners unknown: {}\n", d.owners_error);
    for (const auto& c : d.cores)
      if (c.owner) s += fmt::format("  core {}  {}\n", c.core, core_owner_text(c));
  }
  return s;
}

nlohmann::json list_json(const std::vector<DeviceSample>& devs) {
  nlohmann::json j = {{"schema", kJsonSchemaVersion}, {"object", "list"}, {"devices", nlohmann::json::array()}};
  for (const auto& d : devs) {
    nlohmann::json x = device_base_json(d);
    if (d.info) {
      const auto& i = *d.info;
      x.update({{"abi_version", i.abi_version},
                {"pci_vendor_id", fmt::format("0x{:04x}", i.vendor)},
                {"pci_device_id", fmt::format("0x{:04x}", i.device)},
                {"engines_per_core", i.engines_per_core},
                {"queues_per_core", i.queues_per_core},
                {"mem_size", i.mem_size},
                {"nq_size_min", i.nq_size_min},
                {"nq_size_max", i.nq_size_max},
                {"max_program_insns", i.max_program_insns},
                {"timestamp_inc_ps", i.timestamp_inc_ps},
                {"mem_alloc_limit", i.mem_alloc_limit}});
    }
    // "owners": the first schema's list ({"core", "pid", "comm"}, null when
    // free) with "uid" added; "cores": one object per core, "owner" null when free.
    x["owners"] = nlohmann::json::array();
    x["cores"] = nlohmann::json::array();
    for (const auto& c : d.cores) {
      if (!c.owner) continue;
      const auto o = owner_json(c);
      x["owners"].push_back({{"core", c.core},
                             {"pid", o.is_null() ? nlohmann::json(nullptr) : o["pid"]},
                             {"comm", o.is_null() ? nlohmann::json(nullptr) : o["comm"]},
                             {"uid", o.is_null() ? nlohmann::json(nullptr) : o["uid"]}});
      x["cores"].push_back({{"core", c.core}, {"owner", o}});
    }
    j["devices"].push_back(std::move(x));
  }
  return j;
}

// null where the counter's file could not be read (never 0)
nlohmann::json error_summary(const DeviceSample& d) {
  nlohmann::json j = nlohmann::json::object();
  for (unsigned bit : kErrorCauses) {
    std::uint64_t n = 0;
    for (const auto& c : d.cores) n += c.intr[bit];
    j[cause_name(bit)] = d.intr_known ? nlohmann::json(n) : nlohmann::json(nullptr);
  }
  // device faults under sysfs fault_counts' names in upper case: DMA_ERROR, INTR_STORM, UNNAMED
  if (d.faults)
    for (const auto& [name, n] : *d.faults) {
      std::string key = name;
      for (auto& ch : key) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      j[key] = n;
    }
  j["RECORDS_LOST_TO_RESET"] = opt_json(d.records_lost);
  return j;
}

nlohmann::json execution_summary(const DeviceSample& d) {
  nlohmann::json by_state = nlohmann::json::object();
  for (auto st : kStates) by_state[engine_state_name(st)] = 0;
  nlohmann::json halted = nlohmann::json::object();
  std::uint64_t runs = 0, retired = 0;
  for (const auto& e : d.engines) {
    const std::string st = engine_state_name(e.state);
    by_state[st] = by_state.value(st, 0) + 1;
    if (e.state == NEURON_ENGINE_HALTED) {
      const std::string err = last_error_name(e.last_error);
      halted[err] = halted.value(err, 0) + 1;
    }
    runs += e.runs;
    retired += e.retired;
  }
  nlohmann::json j = {{"engines_by_state", by_state},
                      {"halted_by_error", halted},
                      {"programs_started", runs},
                      {"instructions_retired", retired}};
  if (!d.engines_error.empty()) j["error"] = d.engines_error;
  return j;
}

nlohmann::json metrics_json(const ReportHeader& h, const std::vector<DeviceSample>& devs) {
  nlohmann::json j = {{"schema", kJsonSchemaVersion}, {"object", "metrics"}, {"report", h.report},
                      {"realtime_ns", h.time_ns},     {"interval_s", h.interval_s},
                      {"devices", nlohmann::json::array()}};
  nlohmann::json err_total = nlohmann::json::object(), exec_total = nlohmann::json::object();
  for (const auto& d : devs) {
    nlohmann::json x = device_base_json(d);
    x["counters"] = {{"throttle_edges", opt_json(d.throttle_edges)},
                     {"spurious_interrupts", opt_json(d.spurious)},
                     {"fault_edges", opt_json(d.fault_edges)},
                     {"faults", map_json(d.faults)},
                     {"resets", map_json(d.resets)},
                     {"records_lost_to_reset", opt_json(d.records_lost)},
                     {"event_fanout_edges", opt_json(d.fanout_edges)},
                     {"event_fanout_copies", opt_json(d.fanout_copies)}};
    if (!d.counter_errors.empty()) x["counter_errors"] = d.counter_errors;
    x["cores"] = nlohmann::json::array();
    for (const auto& c : d.cores) {
      nlohmann::json causes = nullptr;
      if (d.intr_known) {
        causes = nlohmann::json::object();
        for (unsigned b = 0; b < c.intr.size(); ++b) causes[cause_name(b)] = c.intr[b];
      }
      nlohmann::json engines = nlohmann::json::array();
      for (const auto& e : d.engines)
        if (e.core == c.core)
          engines.push_back({{"engine", engine_name(e.engine)},
                             {"state", engine_state_name(e.state)},
                             {"program_counter", e.pc},
                             {"programs_started", e.runs},
                             {"instructions_retired", e.retired},
                             {"last_error", last_error_name(e.last_error)}});
      x["cores"].push_back({{"core", c.core},
                            {"owner", owner_json(c)},
                            {"free", c.owner ? nlohmann::json(c.owner->is_free()) : nlohmann::json(nullptr)},
                            {"notific_edges", d.edges_known ? nlohmann::json(c.notific_edges) : nlohmann::json(nullptr)},
                            {"edges_by_cause", causes},
                            {"threshold_edges_by_queue",
                             d.threshold_known ? nlohmann::json(c.threshold) : nlohmann::json(nullptr)},
                            {"intr_storms", d.storms_known ? nlohmann::json(c.storms) : nlohmann::json(nullptr)},
                            {"storm_masked_causes", d.storms_known ? nlohmann::json(notific_cause_names(c.storm_masked))
                                                                   : nlohmann::json(nullptr)},
                            {"axi_dropped", d.axi_known ? nlohmann::json(c.axi_dropped) : nlohmann::json(nullptr)},
                            {"engines", engines}});
    }
    x["error_summary"] = error_summary(d);
    x["execution_summary"] = execution_summary(d);
    // a total over devices is null once one device's counter is unknown
    for (auto it = x["error_summary"].begin(); it != x["error_summary"].end(); ++it) {
      const bool first = !err_total.contains(it.key());
      auto& t = err_total[it.key()];
      if (it.value().is_null()) t = nullptr;
      else if (first) t = it.value();
      else if (!t.is_null()) t = t.get<std::uint64_t>() + it.value().get<std::uint64_t>();
    }
    const auto& ex = x["execution_summary"];
    for (const char* k : {"programs_started", "instructions_retired"})
      exec_total[k] = exec_total.value(k, std::uint64_t{0}) + ex[k].get<std::uint64_t>();
    for (const char* group : {"engines_by_state", "halted_by_error"}) {
      if (!exec_total.contains(group)) exec_total[group] = nlohmann::json::object();
      for (auto it = ex[group].begin(); it != ex[group].end(); ++it)
        exec_total[group][it.key()] = exec_total[group].value(it.key(), 0) + it.value().get<int>();
    }
    j["devices"].push_back(std::move(x));
  }
  if (!exec_total.contains("engines_by_state")) {
    exec_total = execution_summary(DeviceSample{});
  }
  if (err_total.empty()) err_total = error_summary(DeviceSample{});
  j["error_summary"] = err_total;
  j["execution_summary"] = exec_total;
  return j;
}

std::string metrics_text(const ReportHeader& h, const std::vector<DeviceSample>& devs) {
  std::string s = fmt::format("report {}: {} device{}\n", h.report, devs.size(), devs.size() == 1 ? "" : "s");
  for (const auto& d : devs) {
    std::optional<std::uint64_t> edges;
    if (d.edges_known) {
      edges = 0;
      for (const auto& c : d.cores) *edges += c.notific_edges;
    }
    std::optional<std::uint64_t> resets;
    if (d.resets) {
      resets = 0;
      for (const auto& [k, v] : *d.resets) *resets += v;
    }
    s += fmt::format("{} ({}, gen {}): NOTIFIC edges {}, throttle {}, fault {}, spurious {}, resets {}, records lost {}\n",
                     d.path, d.pci_address.empty() ? "PCI unknown" : d.pci_address,
                     d.info ? gen_name(d.info->gen) : "unknown", opt_text(edges), opt_text(d.throttle_edges),
                     opt_text(d.fault_edges), opt_text(d.spurious), opt_text(resets), opt_text(d.records_lost));
    std::string errs, unknown;
    const auto es = error_summary(d);
    for (auto it = es.begin(); it != es.end(); ++it)
      if (it.value().is_null()) unknown += fmt::format(", {}", it.key());
      else if (it.value().get<std::uint64_t>())
        errs += fmt::format(", {} {}", it.key(), it.value().get<std::uint64_t>());
    if (!unknown.empty()) errs += fmt::format(", unknown: {}", unknown.substr(2));
    s += fmt::format("  errors: {}\n", errs.empty() ? "none" : errs.substr(2));
    const auto ex = execution_summary(d);
    if (d.engines_error.empty()) {
      std::string st;
      for (auto it = ex["engines_by_state"].begin(); it != ex["engines_by_state"].end(); ++it)
        st += fmt::format(", {} {}", it.key(), it.value().get<int>());
      std::string halted;
      for (auto it = ex["halted_by_error"].begin(); it != ex["halted_by_error"].end(); ++it)
        halted += fmt::format(", {} {}", it.key(), it.value().get<int>());
      s += fmt::format("  engines: {}; programs started {}, instructions retired {}\n", st.substr(2),
                       ex["programs_started"].get<std::uint64_t>(), ex["instructions_retired"].get<std::uint64_t>());
      if (!halted.empty()) s += fmt::format("  halted engines by error: {}\n", halted.substr(2));
    } else {
      s += fmt::format("  engines unknown: {}\n", d.engines_error);
    }
    for (const auto& e : d.counter_errors) s += fmt::format("  counters unavailable: {}\n", e);
    for (const auto& c : d.cores) {
      std::string causes;
      if (d.intr_known) {
        for (unsigned b = 0; b < c.intr.size(); ++b)
          if (c.intr[b]) causes += fmt::format(", {} {}", cause_name(b), c.intr[b]);
      } else {
        causes = ", causes unknown";
      }
      s += fmt::format("  core {} {}: edges {}{}{}{}\n", c.core, core_owner_text(c),
                       d.edges_known ? std::to_string(c.notific_edges) : std::string("unknown"),
                       causes.empty() ? "" : " (" + causes.substr(2) + ")",
                       !d.storms_known ? ", storms unknown" : c.storms ? fmt::format(", storms {}", c.storms) : "",
                       d.axi_known && c.axi_dropped ? fmt::format(", AXI_EVT_SEM records lost {}", c.axi_dropped) : "");
    }
  }
  return s;
}

}  // namespace neuron::cli
