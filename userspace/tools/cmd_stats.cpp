// SPDX-License-Identifier: MIT
//
// neuron-nq stats: the driver's per-queue and per-core counters over
// netlink, text or JSON. Registered by add_monitor_commands(), after monitor.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "output.hpp"

namespace neuron::cli {
namespace {

/// The lines of /sys/class/nnq/nnqN/moderation: each queue under the
/// driver's adaptive moderation, "core<c> queue<q> profile <p> threshold <t>
/// coalesce_ns <ns> changes <n>" (docs/decisions/0047-adaptive-moderation.md);
/// none when the file is missing (an older driver) or unreadable (not root).
std::vector<std::string> moderation_lines(std::uint32_t device) {
  std::vector<std::string> out;
  std::ifstream f(fmt::format("/sys/class/nnq/" NEURON_DEV_NAME "{}/moderation", device));
  for (std::string l; std::getline(f, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

/// stats: every device's counters, or with --device (`one`) that device's
/// only: a node that does not open (read-only is enough: the counters come
/// from netlink) or whose name has no number is an error (exit 2), never
/// every device instead.
int cmd_stats(const DeviceArgs& a, bool one) {
  std::optional<std::uint32_t> idx;
  if (one) {
    auto dev = Device::open_read_only(a.device);
    if (!dev) return fail(dev.error());
    idx = dev->index();
    if (!idx) {
      fmt::print(stderr, "neuron-nq: stats: {} is not named " NEURON_DEV_NAME "N\n", a.device);
      return kExitDevice;
    }
  }
  auto mon = EventMonitor::open(false);
  if (!mon) return fail(mon.error());
  auto devs = mon->get_device(idx);
  if (!devs) return fail(devs.error());
  auto nqs = mon->get_nq(idx);
  if (!nqs) return fail(nqs.error());
  if (a.json) {
    nlohmann::json j = {{"schema", kJsonSchemaVersion}, {"object", "stats"}};
    j["devices"] = nlohmann::json::array();
    for (const auto& d : *devs) {
      nlohmann::json cores = nlohmann::json::array();
      for (const auto& c : d.cores) {
        nlohmann::json per;
        for (unsigned i = 0; i < c.counts.size(); ++i) per[notific_cause_names(1u << i)] = c.counts[i];
        cores.push_back({{"core", c.core}, {"edges_by_cause", per}});
      }
      j["devices"].push_back({{"device", d.device}, {"num_cores", d.num_cores}, {"gen", gen_name(d.gen)},
                              {"mem_size", d.mem_size}, {"cores", cores}, {"throttle_edges", d.throttle_count},
                              {"fault_edges", d.fault_count}});
    }
    j["queues"] = nlohmann::json::array();
    for (const auto& q : *nqs)
      j["queues"].push_back({{"device", q.device}, {"core", q.core}, {"queue", q.queue}, {"head", q.head},
                             {"tail", q.tail}, {"unread", q.tail - q.head}, {"phase", q.phase}, {"size", q.size},
                             {"flags", q.flags}, {"records", q.tail}, {"overflows", q.overflow_count},
                             {"drops", q.drop_count}, {"threshold_edges", q.threshold_count}});
    j["moderation"] = nlohmann::json::array();
    for (const auto& d : *devs)
      for (const auto& l : moderation_lines(d.device)) j["moderation"].push_back({{"device", d.device}, {"line", l}});
    fmt::print("{}\n", json_text(j, 2));
    return kExitOk;
  }
  for (const auto& d : *devs) {
    fmt::print(NEURON_DEV_NAME "{}: {} cores, gen {}, {} MiB; throttle edges {}, fault edges {}\n", d.device, d.num_cores,
               gen_name(d.gen), d.mem_size >> 20, d.throttle_count, d.fault_count);
    for (const auto& c : d.cores) {
      std::string s;
      std::uint64_t total = 0;
      for (unsigned i = 0; i < c.counts.size(); ++i) {
        total += c.counts[i];
        if (c.counts[i]) s += fmt::format(" {} {}", notific_cause_names(1u << i), c.counts[i]);
      }
      fmt::print("  core {} NOTIFIC edges by cause: {}\n", c.core, total ? s.substr(1) : "none");
    }
  }
  if (nqs->empty()) {
    fmt::print("no live queues (a queue lives while the file that made it, e.g. `neuron-nq run` or `monitor`, "
               "holds it)\n");
    return kExitOk;
  }
  fmt::print("{:<6} {:<4} {:<5} {:>8} {:<11} {:>10} {:>10} {:>6} {:>5} {:>10} {:>9} {:>6} {:>7}\n", "device", "core",
             "queue", "size", "policy", "head", "tail", "unread", "phase", "records", "overflows", "drops", "edges");
  for (const auto& q : *nqs)
    fmt::print("{:<6} {:<4} {:<5} {:>8} {:<11} {:>10} {:>10} {:>6} {:>5} {:>10} {:>9} {:>6} {:>7}\n", q.device, q.core,
               q.queue, q.size, (q.flags & NEURON_NQ_F_IGNORE_FULL) ? "ignore-full" : "backpress.", q.head, q.tail,
               q.tail - q.head, q.phase, q.tail, q.overflow_count, q.drop_count, q.threshold_count);
  fmt::print("(records = TAIL: written since the queue was made; overflows, drops: since it was made; edges = "
             "threshold interrupts of this core/queue slot since the driver was loaded)\n");
  for (const auto& d : *devs)
    for (const auto& l : moderation_lines(d.device))
      fmt::print(NEURON_DEV_NAME "{} adaptive moderation (DIM): {}\n", d.device, l);
  return kExitOk;
}

}  // namespace

void add_stats_command(CLI::App& app, Commands& out) {
  auto sa = std::make_shared<DeviceArgs>();
  auto* stats = app.add_subcommand("stats", "Per queue: records, overflows, drops, edges; per core: edges by cause");
  auto* stats_dev = stats->add_option("--device,-d", sa->device, "Only this device (default: every device)");
  stats->add_flag("--json", sa->json, "JSON output");
  out.push_back({stats, [sa, stats_dev] { return cmd_stats(*sa, stats_dev->count() > 0); }});
}

}  // namespace neuron::cli
