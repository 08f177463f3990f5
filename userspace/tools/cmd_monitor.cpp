// SPDX-License-Identifier: MIT
//
// neuron-nq monitor: a live stream of the ring records of queues the
// monitor makes and drains, merged in time order with the interrupt edges
// from netlink (merge.hpp), optionally granting its core to a user for
// detached submits (docs/decisions/0024-submit-detach.md). monitor --passive is
// cmd_observe.cpp; stats, registered here after monitor, cmd_stats.cpp.
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
namespace {

/// The user --grant-submit names: "" is our effective uid (the uid our own
/// files carry), a number is that uid, anything else a user name looked up
/// in the passwd database. Errors: invalid_argument naming the value.
Result<std::uint32_t> grant_uid(const std::string& v) {
  if (v.empty()) return static_cast<std::uint32_t>(::geteuid());
  if (const auto n = parse_u32(v)) return *n;
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(v.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found)
    return static_cast<std::uint32_t>(pw.pw_uid);
  return unexpected(errc::invalid_argument,
                    fmt::format("--grant-submit '{}' is neither a uid nor a user of this system", v));
}

int cmd_monitor(const MonitorArgs& a) {
  if (a.queues.empty()) return kExitUsage;
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  const auto dev_index = dev->index();
  {  // the monitor's own core counts as used: it must be visible too
    auto info = dev->info();
    if (!info) return fail(info.error());
    auto visible = visible_cores(a.run.cores, info->num_cores, info->file_cores);
    if (!visible) return fail(visible.error());
    if (a.core >= kMaxCores || !(visible->mask >> a.core & 1))
      return fail(Error::make(make_error_code(errc::invalid_argument),
                              fmt::format("--core {} is not among the visible cores {} ({})", a.core,
                                          core_list_text(visible->mask),
                                          visible->source.empty() ? "every core of the device" : visible->source)));
  }

  std::optional<EventMonitor> mon;
  if (!a.no_events) {
    auto m = EventMonitor::open(true);
    if (!m) return fail(m.error());
    mon = std::move(m).value();
  }

  // Ctrl-C / SIGTERM through a signalfd; blocked before the reaper thread
  // starts so it inherits the mask and the signal comes here.
  auto sigfd = stop_signal_fd();
  if (!sigfd) return fail(sigfd.error());
  UniqueFd notify(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!notify) return fail(Error::from_errno(errno, "eventfd"));

  std::vector<std::unique_ptr<ReapQueue>> queues;
  std::uint32_t our_queues = 0;
  // the core's route as the driver reports it with the queues (NQ_INFO):
  // records are decoded with it (docs/decisions/0022-route-programmable.md)
  std::uint32_t route = NEURON_ROUTE_DEFAULT;
  for (unsigned q : a.queues) {
    NotificationQueue::Options o;
    o.size = a.size;
    o.flags = a.lossy ? NEURON_NQ_F_IGNORE_FULL : 0u;
    o.threshold = 1;
    o.eventfd = true;
    auto nq = NotificationQueue::create(*dev, a.core, q, o);
    if (!nq) return fail(nq.error());
    route = nq->route();
    queues.push_back(make_reap_queue(std::move(nq).value()));
    our_queues |= 1u << q;
  }

  // The reaper thread only counts and queues (Storm): it never waits for
  // the output, so a slow terminal cannot backpressure the engines; display
  // lines beyond the Storm's buffer are dropped and counted.
  Program prog;
  Storm storm({a.run.verbose, a.run.record_lines, false, a.run.group_lines, Storm::Options{}.max_buffered}, prog);
  Reaper::Options ro;
  ro.on_records = [&](unsigned core, unsigned queue, std::span<const Record> recs) {
    const std::int64_t now = monotonic_ns();
    const QueueClass cls = queue_class(queue, route);
    for (const Record& r : recs) storm.add(core, queue, r, decode(r, cls), now);
    const std::uint64_t one = 1;
    (void)!::write(notify.get(), &one, sizeof one);
  };
  auto reaper = Reaper::start(std::move(queues), nullptr, std::move(ro));
  if (!reaper) return fail(reaper.error());

  // --grant-submit: the queues made the core ours; let the user's detached
  // programs run here, on our behalf, their records in our queues
  const std::optional<std::uint32_t> granted_uid = a.grant_uid;
  if (granted_uid) {
    auto g = dev->grant_cores(std::uint64_t{1} << a.core, *granted_uid);
    if (!g) return fail(g.error());
    fmt::print(stderr,
               "monitor: granted core {} to uid {}: its `neuron-nq submit --detach` programs run there on our behalf, "
               "their records in our queues, until they end or we exit\n",
               a.core, *granted_uid);
  }

  std::optional<StartedProgram> started;  // holds the program's cores and memory while we monitor
  unsigned submitted = 0;                 // runs of --run started (--repeat)
  if (!a.run.file.empty()) {
    auto p = load_program(a.run.file, a.run.features);
    if (!p) return print_program_error(p.error());
    prog = std::move(p).value();
    auto s = start_program(*dev, prog, !a.run.no_trace, a.run.cores);
    if (!s) return fail(s.error());
    started = std::move(s).value();
    submitted = 1;
  }
  // --repeat: once every engine of the program has stopped, submit it again
  const auto resubmit_if_idle = [&]() -> Status {
    if (!started || submitted >= a.run.repeat) return {};
    for (const auto& e : prog.engines) {
      auto st = dev->engine_status(e.core, e.engine);
      if (!st) return unexpected(std::move(st).error());
      if (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING) return {};
      if (st->state == NEURON_ENGINE_HALTED) {
        submitted = a.run.repeat;  // a fatal halt: stop repeating
        return {};
      }
    }
    for (const auto& e : prog.engines)
      if (auto s = submit_engine(*dev, prog, e, a.run.no_trace ? 0u : NEURON_SUBMIT_F_TRACE); !s) return s;
    ++submitted;
    return {};
  };

  Merger merger;
  std::uint64_t shown = 0, n_records = 0, n_edges = 0, hidden_edges = 0;
  const bool to_tty = ::isatty(STDOUT_FILENO);
  Progress progress(!to_tty);
  const auto queue_list = [&] {
    std::string s;
    for (unsigned q : a.queues) s += (s.empty() ? "" : ",") + std::to_string(q);
    return s;
  }();
  if (!a.json && to_tty)
    fmt::print(stderr, "monitor: core {} queues {} of {}{}; Ctrl-C to stop\n", a.core, queue_list, a.device,
               mon ? ", edges from netlink family \"neuron\"" : "");

  const auto emit = [&](const std::vector<Item>& items) {
    for (const auto& it : items) {
      if (a.count && shown >= a.count) return;
      ++shown;
      print_item(it, prog, merger.offset(), a.json);
    }
    std::fflush(stdout);
  };
  const auto add_batches = [&] {
    for (const auto& sh : storm.take_shown())
      merger.add_records(sh.arrival_ns, sh.core, sh.queue, queue_class(sh.queue, route), {&sh.rec, 1});
  };
  const std::int64_t interval_ns = static_cast<std::int64_t>(a.run.interval * 1e9);
  std::int64_t next_interval = monotonic_ns() + interval_ns;
  unsigned interval_no = 0;
  const auto show_groups = [&](std::int64_t now) {
    const auto iv = storm.take_interval();
    print_interval(stdout, iv, a.run.group_lines, a.json, fmt::format("{:>18}  errors", ns_text(now)), interval_no++);
    while (next_interval <= now) next_interval += interval_ns;
    std::fflush(stdout);
  };

  const std::int64_t start = monotonic_ns();
  const std::int64_t end = a.duration > 0 ? start + static_cast<std::int64_t>(a.duration * 1e9) : INT64_MAX;
  std::vector<NetlinkEvent> evs;
  bool stop = false;
  bool gone = false;
  std::int64_t done_at = 0;  // --until-done: when the last run was seen stopped
  while (!stop) {
    const std::int64_t now = monotonic_ns();
    if (now >= end) break;
    pollfd p[3] = {{sigfd->get(), POLLIN, 0}, {notify.get(), POLLIN, 0}, {mon ? mon->fd() : -1, POLLIN, 0}};
    const int ms = static_cast<int>(std::min<std::int64_t>(50, (end - now) / 1'000'000 + 1));
    if (::poll(p, 3, ms) < 0 && errno != EINTR) return fail(Error::from_errno(errno, "poll (monitor)"));
    if (p[0].revents & POLLIN) stop = true;
    // removed or reset: the Reaper has stopped (userspace/README.md#device-loss)
    if ((*reaper)->device_gone()) {
      gone = true;
      break;
    }
    if (p[1].revents & POLLIN) {
      std::uint64_t v;
      (void)!::read(notify.get(), &v, sizeof v);
    }
    add_batches();
    if (mon) {
      evs.clear();
      auto n = mon->receive(evs, std::chrono::milliseconds(0));
      if (!n) return fail(n.error());
      for (const auto& e : evs) {
        if (dev_index && e.device != *dev_index) continue;
        // ENGINE_STOPPED of any core is shown: rare, and a program lost
        if (e.edge == NEURON_EDGE_NOTIFIC && e.core != a.core) continue;
        // our own threshold edges (the reaper's wake-ups) are hidden unless asked for
        if (!a.all_edges && e.edge == NEURON_EDGE_NOTIFIC && e.cause == (1u << NEURON_NOTIFIC_INTR_THRESHOLD) &&
            (e.queues & ~our_queues) == 0) {
          ++hidden_edges;
          continue;
        }
        ++n_edges;
        merger.add_event(e);
      }
    }
    emit(merger.take(monotonic_ns(), false));
    if (a.count && shown >= a.count) break;
    if (monotonic_ns() >= next_interval) show_groups(monotonic_ns());
    if (auto s = resubmit_if_idle(); !s) return fail(s.error());
    if (a.until_done && started && submitted >= a.run.repeat) {
      // stopped = every engine idle or halted; then one more tick for the last records
      bool busy = false;
      for (const auto& e : prog.engines) {
        auto st = dev->engine_status(e.core, e.engine);
        if (!st) return fail(st.error());
        busy = busy || st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING;
      }
      if (!busy) {
        if (done_at == 0) done_at = monotonic_ns();
        else if (monotonic_ns() - done_at > 200'000'000) break;
      }
    }
    progress.update("monitor: {} records, {} edges, {:.1f} s", storm.totals().records, n_edges,
                    static_cast<double>(monotonic_ns() - start) / 1e9);
  }
  // a detached program still running on our core stops with our file: say
  // so (the driver counts it and reports ENGINE_STOPPED to the watchers)
  std::string busy;
  if (granted_uid && !gone) busy = busy_engines(*dev, a.core);
  (*reaper)->stop();
  add_batches();
  emit(merger.take(monotonic_ns(), true));
  if (!a.count || shown < a.count) show_groups(monotonic_ns());
  progress.clear();
  const auto st = (*reaper)->stats();
  const auto totals = storm.totals();
  n_records = totals.records;
  if (a.json) {
    nlohmann::json j = summary_json("monitor", totals, a.run.group_lines);
    j["edges_shown"] = n_edges;
    j["own_threshold_edges_hidden"] = hidden_edges;
    j["lines_printed"] = shown;
    j["runs"] = submitted;
    j["device_gone"] = gone;
    j["granted_uid"] = granted_uid ? nlohmann::json(*granted_uid) : nlohmann::json(nullptr);
    j["engines_still_busy"] = busy;
    j["runs_elapsed_ms"] = done_at ? nlohmann::json(static_cast<double>(done_at - start) / 1e6) : nlohmann::json(nullptr);
    j["lost"] = st.lost;
    j["reaper"] = {{"wakes", st.wakes}, {"late_records", st.late_records}, {"events", st.events}};
    j["offset_ns"] = merger.offset() ? nlohmann::json(*merger.offset()) : nlohmann::json(nullptr);
    fmt::print("{}\n", json_text(j));
  } else {
    print_totals_text(stdout, totals, a.run.group_lines);
  }
  std::fflush(stdout);
  if (!a.json || !to_tty)
    fmt::print(stderr,
               "monitor: {} records, {} edges shown ({} own threshold edges hidden), {} lines printed; "
               "device->monotonic offset {} s (min over records of arrival - device time); reaper woke {} times{}{}{}{}\n",
               n_records, n_edges, hidden_edges, shown, merger.offset() ? ns_text(*merger.offset()) : "unknown",
               st.wakes, st.lost ? fmt::format(", {} records lost to overwrite", st.lost) : "",
               mon && mon->overruns() ? fmt::format(", netlink socket overran {} times (edges lost)", mon->overruns())
                                      : "",
               totals.dropped_lines ? fmt::format(", {} display lines dropped (output too slow)", totals.dropped_lines)
                                    : "",
               done_at ? fmt::format("; {} run(s) of the program done {:.1f} s after the start", submitted,
                                     static_cast<double>(done_at - start) / 1e9)
                       : "");
  if (!busy.empty())
    fmt::print(stderr,
               "monitor: core {} {} still running or waiting (a detached program of uid {}?): our exit stops it, "
               "counted in sysfs programs_stopped and reported as an ENGINE_STOPPED edge\n",
               a.core, busy, granted_uid.value_or(0));
  if (gone) {
    fmt::print(stderr, "neuron-nq: monitor: the device was removed or reset (DEVICE_GONE); the summary above is up to that point\n");
    return kExitDevice;
  }
  return kExitOk;
}

/// monitor's defaults and checks on the parsed options, then cmd_monitor().
int check_and_monitor(MonitorArgs& a) {
  if (a.passive) {
    if (!a.queues.empty() || !a.run.file.empty() || a.grant_submit || a.lossy || a.until_done) {
      fmt::print(stderr, "neuron-nq: monitor --passive takes nothing: --queue, --run, --grant-submit, --lossy and "
                         "--until-done need the core and cannot be used with it\n");
      return kExitUsage;
    }
    return cmd_observe(a);
  }
  if (a.queues.empty()) a.queues = {0, 1, 2, 3, 4, 5};
  for (unsigned q : a.queues)
    if (q >= NEURON_NUM_SW_QUEUES) {
      fmt::print(stderr, "neuron-nq: queue {} out of range 0..{}\n", q, NEURON_NUM_SW_QUEUES - 1);
      return kExitUsage;
    }
  if ((a.run.repeat > 1 || a.until_done) && a.run.file.empty()) {
    fmt::print(stderr, "neuron-nq: {} needs --run FILE\n", a.until_done ? "--until-done" : "--repeat");
    return kExitUsage;
  }
  if (a.grant_submit) {
    auto uid = grant_uid(*a.grant_submit);
    if (!uid) return fail(uid.error());
    a.grant_uid = *uid;
  }
  a.run.device = a.device;
  return cmd_monitor(a);
}

}  // namespace

void add_monitor_commands(CLI::App& app, Commands& out, const Globals& g) {
  auto ma = std::make_shared<MonitorArgs>();
  auto* monitor = app.add_subcommand(
      "monitor", "Live stream of ring records (drains the queues it makes) and interrupt edges (netlink), in time order");
  add_device_option(*monitor, ma->device);
  monitor->add_option("--core", ma->core, "Core whose queues to drain")
      ->capture_default_str()
      ->transform(number_option(kMaxCores - 1));
  monitor->add_option("--queue,-q", ma->queues, "Queue to make and drain (repeatable; default 0..5)")
      ->transform(number_option(UINT32_MAX));
  monitor->add_flag("--json", ma->json, "JSON Lines: one object per line (docs/cli-json.md)");
  add_storm_options(*monitor, ma->run);
  monitor->add_option("--count", ma->count, "Stop after this many lines (records + edges)")
      ->transform(number_option(UINT64_MAX));
  monitor->add_option("--duration", ma->duration, "Stop after this many seconds (0: no limit)")
      ->check(seconds_option(0, 31536000));
  monitor->add_option("--size", ma->size,
                      "Ring bytes per queue: a power of two, at least 16 (the device's limits: `info`)")
      ->capture_default_str()
      ->transform(number_option(UINT32_MAX))
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const auto n = parse_number(v);
            if (n && *n >= 16 && (*n & (*n - 1)) == 0) return {};
            return "'" + v + "' bytes is not a power of two of at least 16";
          },
          "BYTES"));
  monitor->add_flag("--lossy", ma->lossy, "Ignore-full queues (overwrite when full) instead of backpressure");
  monitor->add_flag("--passive", ma->passive,
                    "Observe --core without taking it (no queue, no ownership): per interval its edges by cause and, "
                    "with CAP_NET_ADMIN, its queues' counters and live edges (docs/cli-json.md#observe)");
  monitor->add_flag("--no-events", ma->no_events, "Records only, no netlink edges");
  monitor->add_flag("--all-edges", ma->all_edges, "Also show the threshold edges of the monitor's own queues");
  monitor->add_option("--run", ma->run.file, "Start this program once the queues are ready");
  monitor->add_flag("--until-done", ma->until_done,
                    "With --run: stop once its last run (--repeat) has stopped and its records are shown");
  monitor->add_option("--features", ma->run.features, "NEURON_FEATURE_FLAGS for --run")
      ->check(number_option(UINT32_MAX));
  monitor->add_flag("--no-trace", ma->run.no_trace, "Start --run without tracing");
  monitor->add_option("--grant-submit", ma->grant_submit,
                      "Grant the monitored core to this user (uid or name; ours when given without one): programs it "
                      "submits detached run there on our behalf, their records in our queues "
                      "(docs/decisions/0024-submit-detach.md)")
      ->expected(0, 1)
      ->type_name("[UID]");
  out.push_back({monitor, [ma, g] {
                   ma->run.cores = g->core_list();
                   return check_and_monitor(*ma);
                 }});
  add_stats_command(app, out);
}

}  // namespace neuron::cli
