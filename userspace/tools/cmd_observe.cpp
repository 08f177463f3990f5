// SPDX-License-Identifier: MIT
//
// neuron-nq monitor --passive: watch a core someone else owns, from its
// counters and edges over netlink (docs/cli-json.md#observe). monitor's
// option checks (cmd_monitor.cpp) send --passive here.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "merge.hpp"
#include "output.hpp"
#include "program.hpp"
#include "storm.hpp"


namespace neuron::cli {

/// The counters of one core that `monitor --passive` follows.
struct CoreCounters {
  std::array<std::uint64_t, NEURON_NOTIFIC_INTR_BITS> edges{};  // NOTIFIC edges by cause (GET_DEVICE)
  std::map<unsigned, GenlNq> queues;                            // live queues of the core (GET_NQ)
};

/// monitor --passive: watch a core that someone else owns. Opens the node
/// read-only, makes no queue, takes no core and submits nothing, so it
/// cannot block or slow the workload it watches. Every --interval it prints
/// what changed on the core: NOTIFIC edges by cause (NEURON_CMD_GET_DEVICE,
/// open to every user) and, per live queue of the core, records written
/// (TAIL), overflows, drops and threshold edges (NEURON_CMD_GET_NQ); and the
/// core's edges as they come (the "events" group). GET_NQ and the events
/// group need CAP_NET_ADMIN: without it those parts are marked unavailable
/// (null in JSON), never shown as 0. docs/cli-json.md#observe.
int cmd_observe(const MonitorArgs& a) {
  auto dev = Device::open_read_only(a.device);
  if (!dev) return fail(dev.error());
  const auto idx = dev->index();
  if (!idx) {
    fmt::print(stderr, "neuron-nq: monitor: {} is not named " NEURON_DEV_NAME "N\n", a.device);
    return kExitDevice;
  }
  auto info = dev->info();
  if (!info) return fail(info.error());
  if (a.core >= info->num_cores)
    return fail(Error::make(make_error_code(errc::invalid_argument),
                            fmt::format("--core {} is not a core of {} (0..{})", a.core, a.device,
                                        info->num_cores - 1)));
  auto ctl = EventMonitor::open(false);
  if (!ctl) return fail(ctl.error());
  std::optional<EventMonitor> edges;
  std::string edges_why;
  if (!a.no_events) {
    auto m = EventMonitor::open(true);
    if (m) edges = std::move(m).value();
    else edges_why = m.error().message();
  }
  auto sigfd = stop_signal_fd();
  if (!sigfd) return fail(sigfd.error());

  // one sample of the counters; queues nullopt when GET_NQ is refused
  std::string queues_why;
  const auto sample = [&](CoreCounters& c, bool& have_queues) -> Status {
    auto d = ctl->get_device(*idx);
    if (!d) return unexpected(std::move(d).error());
    for (const auto& dd : *d)
      for (const auto& cc : dd.cores)
        if (cc.core == a.core) c.edges = cc.counts;
    c.queues.clear();
    auto q = ctl->get_nq(*idx);
    have_queues = static_cast<bool>(q);
    if (!q) {
      queues_why = q.error().message();
      return {};
    }
    for (const auto& n : *q)
      if (n.core == a.core) c.queues[n.queue] = n;
    return {};
  };
  CoreCounters prev;
  bool have_queues = false;
  if (auto s = sample(prev, have_queues); !s) return fail(s.error());
  if (!a.json)
    fmt::print(stderr, "monitor --passive: core {} of {}, taking nothing (no queue, no ownership){}{}; Ctrl-C to stop\n",
               a.core, a.device,
               have_queues ? "" : fmt::format("; per-queue counters unavailable ({}: needs CAP_NET_ADMIN)", queues_why),
               edges || a.no_events ? "" : fmt::format("; live edges unavailable ({}: needs CAP_NET_ADMIN)", edges_why));

  Merger merger;
  Program none;
  std::uint64_t shown = 0, n_edges = 0;
  unsigned reports = 0;
  const std::int64_t interval_ns = static_cast<std::int64_t>(a.run.interval * 1e9);
  const std::int64_t start = monotonic_ns();
  const std::int64_t end = a.duration > 0 ? start + static_cast<std::int64_t>(a.duration * 1e9) : INT64_MAX;
  std::int64_t next = start + interval_ns;
  const auto report = [&](std::int64_t now) -> Status {
    CoreCounters cur;
    if (auto s = sample(cur, have_queues); !s) return s;
    nlohmann::json by_cause = nlohmann::json::object();
    std::string text;
    for (unsigned i = 0; i < cur.edges.size(); ++i)
      if (const auto dlt = cur.edges[i] - prev.edges[i]) {
        by_cause[notific_cause_names(1u << i)] = dlt;
        text += fmt::format(" {} {}", notific_cause_names(1u << i), dlt);
      }
    nlohmann::json qs = have_queues ? nlohmann::json::array() : nlohmann::json(nullptr);
    std::string qtext;
    for (const auto& [qn, q] : cur.queues) {
      const auto it = prev.queues.find(qn);
      const GenlNq base = it != prev.queues.end() ? it->second : GenlNq{};
      const std::uint32_t recs = q.tail - base.tail;
      qs.push_back({{"queue", qn}, {"records", recs}, {"unread", q.tail - q.head},
                    {"overflows", q.overflow_count - base.overflow_count}, {"drops", q.drop_count - base.drop_count},
                    {"threshold_edges", q.threshold_count - base.threshold_count}});
      qtext += fmt::format("  q{} +{} records, {} unread, +{} overflows, +{} drops", qn, recs, q.tail - q.head,
                           q.overflow_count - base.overflow_count, q.drop_count - base.drop_count);
    }
    if (a.json) {
      nlohmann::json j = {{"schema", kJsonSchemaVersion}, {"object", "observe"}, {"time_ns", now},
                          {"device", *idx}, {"core", a.core}, {"interval", reports},
                          {"edges_by_cause", by_cause}, {"queues", qs}};
      fmt::print("{}\n", json_text(j));
    } else {
      fmt::print("{:>18}  core {} edges:{}{}\n", ns_text(now), a.core, text.empty() ? " none" : text,
                 have_queues ? (qtext.empty() ? "  (no live queue)" : qtext) : "  (queues: needs CAP_NET_ADMIN)");
    }
    std::fflush(stdout);
    ++reports;
    prev = std::move(cur);
    return {};
  };

  std::vector<NetlinkEvent> evs;
  while (true) {
    const std::int64_t now = monotonic_ns();
    if (now >= end || (a.count && shown >= a.count)) break;
    pollfd p[2] = {{sigfd->get(), POLLIN, 0}, {edges ? edges->fd() : -1, POLLIN, 0}};
    const int ms = static_cast<int>(std::clamp<std::int64_t>((std::min(next, end) - now) / 1'000'000 + 1, 1, 1000));
    if (::poll(p, 2, ms) < 0 && errno != EINTR) return fail(Error::from_errno(errno, "poll (monitor --passive)"));
    if (p[0].revents & POLLIN) break;
    if (dev->device_gone()) {
      fmt::print(stderr, "neuron-nq: monitor: the device was removed or reset (DEVICE_GONE)\n");
      return kExitDevice;
    }
    if (edges) {
      evs.clear();
      auto n = edges->receive(evs, std::chrono::milliseconds(0));
      if (!n) return fail(n.error());
      for (const auto& e : evs) {
        if (e.device != *idx || e.core != a.core) continue;
        ++n_edges;
        merger.add_event(e);
      }
      for (const auto& it : merger.take(monotonic_ns(), true)) {
        if (a.count && shown >= a.count) break;
        ++shown;
        print_item(it, none, merger.offset(), a.json);
      }
    }
    if (monotonic_ns() >= next) {
      if (auto s = report(monotonic_ns()); !s) return fail(s.error());
      ++shown;
      while (next <= monotonic_ns()) next += interval_ns;
    }
  }
  if (!a.json)
    fmt::print(stderr, "monitor --passive: {} reports, {} edges of core {} shown\n", reports, n_edges, a.core);
  return kExitOk;
}

}  // namespace neuron::cli
