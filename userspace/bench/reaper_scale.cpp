// SPDX-License-Identifier: MIT
//
// reaper_scale: one Reaper over every queue of several devices (issue 14:
// "16 devices with several cores each and 10 queues per core, so one reaper
// thread must also stay cheap when hundreds of queues are idle and a few are
// hot"). Run in the VM by selftests/vm/e2e-guest.sh, which boots 4
// neuron-tpb devices of 8 cores (run-vm.sh --devices 4 --device cores=8).
//
// It opens /dev/nnq0 .. /dev/nnq{D-1}, makes every queue of every core of
// each (4 x 8 x 10 = 320: NotificationQueue, 4 KiB ring, THRESHOLD 1, an
// eventfd bound with NEURON_IOC_NQ_EVENTFD) and hands them all to ONE
// Reaper with its defaults (adaptive coalescing, 500 us latency budget, the
// 100 ms rescan guard). Then:
//  * idle: nothing runs for --idle-s seconds. Figures: the Reaper thread's
//    CPU (its thread clock) and the whole guest's (/proc/stat), as % of one
//    core; its rescans. Check: no queue woke it and no record came.
//  * hot: paced NOTIFY programs (DELAY --pace-ns between records, one engine
//    per hot queue, their phases spread over one pace) feed 1 hot queue,
//    then 4 hot queues on 4 devices and 4 different cores, all at the same
//    pace, alternately, --repeats times each; the other queues stay idle. Figures: the Reaper's CPU per record
//    (and the process's and the whole guest's), records per wake-up; the
//    ratio 4 hot / 1 hot of the median Reaper CPU per record.
// Checks on every record: it reaches on_batch from the queue its program
// was meant for (device, core, queue 1: the record's debug_hint names the
// hot queue, the batch's QueueId says where it came from), each hot queue's
// records arrive exactly once and in order ((soft_reset_counter, pc) as
// bench_workload.hpp says, none missing, repeated or torn), and no record
// was found by a rescan instead of an interrupt (Stats::late_records 0).
// Also: every device opened with the expected number of cores, every queue
// made, and the Reaper watching one file per device for its loss.
//
// Output as e2e_bench's: "# " figures, "check NAME ok|fail [why]", exit 0
// iff every check passed; --json FILE for docs/performance.md. Targets
// (printed, never asserted): idle < 1% of a core; 4 hot within 1.5x of 1.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include "bench_measure.hpp"
#include "bench_workload.hpp"
#include "libneuron/neuron.hpp"

using namespace neuron;
using namespace neuron::bench;
using nlohmann::json;

namespace {

constexpr unsigned kQueue = 1;  // EXPLICIT records' default route

struct Args {
  unsigned devices = 4;
  unsigned cores = 8;          // expected per device
  unsigned expect_queues = 0;  // 0: devices * cores * queues per core
  double idle_s = 10;
  std::uint32_t pace_ns = 100'000;  // per hot queue: 10,000 records/s
  std::uint64_t hot_records = 10'000;  // per hot queue and phase
  unsigned repeats = 3;
  std::string json_path;
};

struct Hot {
  std::uint32_t device;
  unsigned core, engine;
};

/// The hot queues of the 4-queue phase: 4 devices, 4 cores, 4 engines; the
/// 1-queue phase uses the first.
const Hot kHot[] = {{0, 0, 0}, {1, 3, 1}, {2, 5, 2}, {3, 7, 3}};

struct Phase {
  unsigned hot = 0;
  std::uint64_t records = 0, expected = 0, wakes = 0, queue_wakes = 0;
  double wall_s = 0, reaper_s = 0;
  CpuMeter cpu;
  bool in_order = false, right_queue = false;
  std::string why;
  [[nodiscard]] double reaper_ns() const { return records ? reaper_s / static_cast<double>(records) * 1e9 : 0; }
  [[nodiscard]] json to_json() const {
    return {{"hot_queues", hot},
            {"records", records},
            {"expected", expected},
            {"seconds", wall_s},
            {"records_per_s", wall_s > 0 ? static_cast<double>(records) / wall_s : 0},
            {"reaper_s", reaper_s},
            {"reaper_ns_per_record", reaper_ns()},
            {"cpu", cpu.to_json(records)},
            {"wakes", wakes},
            {"queue_wakes", queue_wakes},
            {"records_per_wake", wakes ? static_cast<double>(records) / static_cast<double>(wakes) : 0.0},
            {"in_order", in_order},
            {"right_queue", right_queue}};
  }
};

/// What on_batch saw during one phase (the Reaper thread writes, the main
/// thread reads after the phase).
struct Sink {
  std::mutex mu;
  std::unique_ptr<Checker> check;  // stream = hot queue index
  unsigned hot = 0;
  std::uint64_t wrong_queue = 0;
  std::atomic<std::uint64_t> stray{0};  // also counted outside the lock (batch()'s catch)
  std::string first_wrong;

  // on the Reaper's thread: must not throw (a failure to format a message
  // counts the batch as strays)
  void batch(const QueueId& id, std::span<const Record> recs) noexcept {
    try {
      batch_checked(id, recs);
    } catch (...) {
      stray += recs.size();
    }
  }

  void batch_checked(const QueueId& id, std::span<const Record> recs) {
    std::lock_guard lk(mu);
    for (const auto& r : recs) {
      const unsigned h = record_hint(r);
      if (!check || h == 0 || h > hot) {
        ++stray;  // not a record of this phase's programs
        if (first_wrong.empty())
          first_wrong = fmt::format("record with debug_hint {} on device {} core {} queue {}", h, id.device, id.core,
                                    id.queue);
        continue;
      }
      const Hot& want = kHot[h - 1];
      const bool right = id.device == want.device && id.core == want.core && id.queue == kQueue &&
                         explicit_engine(r) == static_cast<int>(want.engine);
      if (!right) {
        ++wrong_queue;
        if (first_wrong.empty())
          first_wrong = fmt::format("hot queue {}'s record came from device {} core {} queue {}", h - 1, id.device,
                                    id.core, id.queue);
      }
      check->feed(h - 1, r, right);
    }
  }
};

bool g_ok = true;
void check(const std::string& name, bool pass, const std::string& why) {
  fmt::print("check {} {}{}\n", name, pass ? "ok" : "fail", pass ? "" : " " + why);
  g_ok = g_ok && pass;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"reaper_scale: one Reaper over every queue of several devices, idle and with a few hot queues"};
  Args a;
  app.add_option("--devices", a.devices, "Devices /dev/nnq0.. to use (4 or more: the hot queues are on 4)")
      ->capture_default_str();
  app.add_option("--cores", a.cores, "Cores every device must have (the hot queues use cores up to 7)")
      ->capture_default_str();
  app.add_option("--expect-queues", a.expect_queues, "Queues that must be made (0: devices x cores x queues)")
      ->capture_default_str();
  app.add_option("--idle-s", a.idle_s, "Idle phase, seconds")->capture_default_str();
  app.add_option("--pace-ns", a.pace_ns, "Hot queues: DELAY between records, ns of device time")
      ->capture_default_str();
  app.add_option("--hot-records", a.hot_records, "Records per hot queue and phase")->capture_default_str();
  app.add_option("--repeats", a.repeats, "Phases of each kind (1 hot, 4 hot), alternating")->capture_default_str();
  app.add_option("--json", a.json_path, "Write the figures to this file");
  CLI11_PARSE(app, argc, argv);
  if (a.devices < 4 || a.cores < 8 || a.repeats == 0) {
    fmt::print(stderr, "reaper_scale: needs --devices >= 4, --cores >= 8, --repeats >= 1\n");
    return 2;
  }
  // two descriptors per queue (its file, its eventfd)
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }

  // ---- devices and queues
  std::vector<Device> devs;
  std::string probe_why;
  unsigned queues_per_core = 0;
  for (unsigned d = 0; d < a.devices; ++d) {
    const auto path = fmt::format("/dev/{}{}", NEURON_DEV_NAME, d);
    auto dev = Device::open(path);
    if (!dev) {
      probe_why += fmt::format("{}: {}; ", path, dev.error().message());
      continue;
    }
    auto info = dev->info();
    if (!info || info->num_cores != a.cores) {
      probe_why += fmt::format("{}: {} cores, want {}; ", path, info ? info->num_cores : 0, a.cores);
      continue;
    }
    queues_per_core = info->queues_per_core;
    for (unsigned c = 0; c < a.cores; ++c)
      for (unsigned e = 0; e < kEnginesPerCore; ++e) (void)dev->engine_reset(c, e);
    devs.push_back(std::move(dev).value());
  }
  check("scale.devices_probed", devs.size() == a.devices, probe_why);
  if (devs.size() != a.devices) return 1;
  const unsigned want_queues = a.expect_queues ? a.expect_queues : a.devices * a.cores * queues_per_core;

  std::vector<std::unique_ptr<ReapQueue>> queues;
  std::string make_why;
  for (unsigned d = 0; d < a.devices; ++d)
    for (unsigned c = 0; c < a.cores; ++c)
      for (unsigned q = 0; q < queues_per_core; ++q) {
        NotificationQueue::Options o;
        o.size = 4096;
        o.threshold = 1;
        o.eventfd = true;
        auto nq = NotificationQueue::create(devs[d], c, q, o);
        if (!nq) {
          if (make_why.empty()) make_why = nq.error().message();
          continue;
        }
        queues.push_back(make_reap_queue(std::move(nq).value()));
      }
  const std::size_t made = queues.size();
  fmt::print("# scale: {} devices x {} cores x {} queues: {} queues made (4 KiB rings, THRESHOLD 1, eventfd each)\n",
             a.devices, a.cores, queues_per_core, made);
  check("scale.queues_made", made == want_queues, fmt::format("{} of {}: {}", made, want_queues, make_why));

  Sink sink;
  Reaper::Options ro;  // the defaults: adaptive coalescing, 500 us budget, 100 ms rescan
  ro.on_batch = [&sink](const QueueId& id, std::span<const Record> recs) { sink.batch(id, recs); };
  auto reaper = Reaper::start(std::move(queues), nullptr, ro);
  if (!reaper) {
    check("scale.reaper_started", false, reaper.error().message());
    return 1;
  }
  // device loss: one status page per device (its Device's open file) and
  // no file polled; from a driver without status pages, one file per device
  const std::size_t pages = (*reaper)->status_pages(), files = (*reaper)->device_files();
  check("scale.one_loss_check_per_device", pages == a.devices ? files == 0 : pages == 0 && files == a.devices,
        fmt::format("the Reaper reads {} status pages and polls {} files for device loss, want {} of one kind",
                    pages, files, a.devices));

  // ---- idle
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the first full pass is behind us
  const auto s0 = (*reaper)->stats();
  const auto r0 = (*reaper)->cpu_time();
  CpuMeter idle;
  idle.start();
  std::this_thread::sleep_for(std::chrono::duration<double>(a.idle_s));
  idle.stop();
  const double idle_reaper_s = std::chrono::duration<double>((*reaper)->cpu_time() - r0).count();
  const auto s1 = (*reaper)->stats();
  const double idle_pct = idle_reaper_s / idle.wall_s() * 100;
  const double idle_sys_pct = idle.system_s() >= 0 ? idle.system_s() / idle.wall_s() * 100 : -1;
  fmt::print("# scale idle: {} queues idle for {:.1f} s: the Reaper used {:.4f} s of CPU = {:.3f}% of a core "
             "({} rescans of every queue); the whole guest {}\n",
             made, idle.wall_s(), idle_reaper_s, idle_pct, s1.rescans - s0.rescans,
             idle_sys_pct >= 0 ? fmt::format("{:.2f}% of a core", idle_sys_pct) : "n/a");
  check("scale.idle_no_wakes", s1.queue_wakes == s0.queue_wakes && s1.records == s0.records,
        fmt::format("{} queue wakes, {} records while idle", s1.queue_wakes - s0.queue_wakes,
                    s1.records - s0.records));

  // ---- hot phases: 1, 4, 1, 4, ...
  std::vector<Phase> phases;
  for (unsigned rep = 0; rep < a.repeats; ++rep)
    for (const unsigned hot : {1u, 4u}) {
      Phase p;
      p.hot = hot;
      // one program per hot queue (its debug_hint names it), phases spread
      // over one pace so the hot queues' records do not arrive together
      std::vector<Workload> wls;
      for (unsigned h = 0; h < hot; ++h) {
        wls.push_back(make_workload(fmt::format("hot{}", h), NEURON_MAX_PROGRAM_INSNS, a.pace_ns,
                                    static_cast<std::uint8_t>(h + 1)));
        wls.back().prog = phased_programs(wls.back(), hot)[h];
      }
      const std::uint32_t runs = static_cast<std::uint32_t>((a.hot_records + wls[0].per_run - 1) / wls[0].per_run);
      p.expected = std::uint64_t{hot} * runs * wls[0].per_run;
      {
        std::lock_guard lk(sink.mu);
        sink.check = std::make_unique<Checker>(hot, wls[0]);
        sink.hot = hot;
        sink.wrong_queue = 0;
        sink.stray = 0;
        sink.first_wrong.clear();
      }
      struct Slot {
        std::uint32_t runs_left = 0;
        std::optional<Waiter> w;
      };
      std::vector<Slot> slots(hot);
      for (auto& sl : slots) sl.runs_left = runs;
      std::string err;
      const auto arm = [&](unsigned h) -> bool {
        const Hot& x = kHot[h];
        Reaper::Filter f;
        f.device = x.device;
        f.core = x.core;
        f.queue = kQueue;
        f.notific_type = NEURON_ENGINE_NOTIFIC_TYPE(x.engine, NEURON_ENGINE_RECORD_EXPLICIT);
        f.events = false;
        auto w = (*reaper)->expect([last = wls[h].last_pc](const Arrival& ar) { return record_pc(*ar.record) == last; },
                                   f);
        if (!w) {
          err = w.error().message();
          return false;
        }
        slots[h].w = std::move(w).value();
        --slots[h].runs_left;
        for (int i = 0; i < 100'000; ++i) {
          auto s = devs[x.device].submit(x.core, x.engine, wls[h].prog, 0);
          if (s) return true;
          if (s.error().code != std::errc::device_or_resource_busy) {
            err = s.error().message();
            return false;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        err = "engine stayed busy";
        return false;
      };
      const auto st0 = (*reaper)->stats();
      const auto rc0 = (*reaper)->cpu_time();
      p.cpu.start();
      bool good = true;
      for (unsigned h = 0; h < hot && good; ++h) good = arm(h);
      unsigned active = good ? hot : 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
      std::vector<pollfd> pfd(hot);
      while (active && std::chrono::steady_clock::now() < deadline) {
        for (unsigned h = 0; h < hot; ++h) pfd[h] = {slots[h].w ? slots[h].w->fd() : -1, POLLIN, 0};
        if (::poll(pfd.data(), pfd.size(), 1000) < 0 && errno != EINTR) break;
        for (unsigned h = 0; h < hot; ++h) {
          if (!slots[h].w || !(pfd[h].revents & POLLIN)) continue;
          const WaitStatus ws = slots[h].w->wait(std::chrono::milliseconds(0));
          if (ws == WaitStatus::TimedOut) continue;
          slots[h].w.reset();
          if (ws != WaitStatus::Completed) {
            err = fmt::format("waiter {}", wait_status_name(ws));
            active = 0;
            break;
          }
          if (slots[h].runs_left == 0) --active;
          else if (!arm(h)) active = 0;
        }
      }
      p.cpu.stop();
      if (active && err.empty()) err = fmt::format("{} hot queues did not finish in 300 s", active);
      p.reaper_s = std::chrono::duration<double>((*reaper)->cpu_time() - rc0).count();
      const auto st1 = (*reaper)->stats();
      p.wakes = st1.wakes - st0.wakes;
      p.queue_wakes = st1.queue_wakes - st0.queue_wakes;
      p.wall_s = p.cpu.wall_s();
      {
        std::lock_guard lk(sink.mu);
        p.records = sink.check->records();
        p.in_order = err.empty() && sink.check->ok() && p.records == p.expected;
        p.right_queue = sink.wrong_queue == 0 && sink.stray.load() == 0;
        p.why = fmt::format("{} of {} records, {}; {} from a wrong queue, {} strays{}{}", p.records, p.expected,
                            sink.check->report(), sink.wrong_queue, sink.stray.load(),
                            sink.first_wrong.empty() ? "" : " (first: " + sink.first_wrong + ")",
                            err.empty() ? "" : "; " + err);
      }
      fmt::print("# scale hot {}: {} records in {:.2f} s = {:.0f} records/s; Reaper CPU {:.0f} ns/record, process "
                 "{:.0f} ns/record, whole guest {}; {} wakes ({:.1f} records/wake)\n",
                 hot, p.records, p.wall_s, p.wall_s > 0 ? static_cast<double>(p.records) / p.wall_s : 0,
                 p.reaper_ns(), p.records ? p.cpu.process_s() / static_cast<double>(p.records) * 1e9 : 0,
                 p.cpu.system_s() >= 0 && p.records
                     ? fmt::format("{:.0f} ns/record", p.cpu.system_s() / static_cast<double>(p.records) * 1e9)
                     : "n/a",
                 p.wakes, p.wakes ? static_cast<double>(p.records) / static_cast<double>(p.wakes) : 0.0);
      const auto name = fmt::format("hot{}.round{}", hot, rep);
      check("scale.records_once_in_order." + name, p.in_order, p.why);
      check("scale.records_from_their_queue." + name, p.right_queue, p.why);
      phases.push_back(std::move(p));
    }
  (*reaper)->stop();
  const auto fin = (*reaper)->stats();
  check("scale.no_rescan_needed", fin.late_records == 0,
        fmt::format("{} records were found by a rescan, not an interrupt", fin.late_records));
  if (auto f = (*reaper)->failure()) check("scale.reaper_did_not_fail", false, f->message());

  std::vector<double> one, four;
  for (const auto& p : phases) (p.hot == 1 ? one : four).push_back(p.reaper_ns());
  const double m1 = median(one), m4 = median(four);
  const double ratio = m1 > 0 ? m4 / m1 : 0;
  fmt::print("# scale: Reaper CPU per record, medians of {}: 1 hot queue {:.0f} ns, 4 hot queues {:.0f} ns: 4 / 1 = "
             "{:.2f}x\n",
             a.repeats, m1, m4, ratio);
  json targets = json::array();
  const auto target = [&](const std::string& name, const std::string& figure, double value, const std::string& t,
                          bool met, const std::string& detail) {
    fmt::print("# target {}: {} = {:.3g} (target {}) {}; {}\n", name, figure, value, t, met ? "MET" : "MISSED",
               detail);
    targets.push_back(
        {{"name", name}, {"figure", figure}, {"value", value}, {"target", t}, {"met", met}, {"detail", detail}});
  };
  target("scale_idle", "Reaper CPU with every queue idle, % of a core", idle_pct, "< 1", idle_pct < 1.0,
         fmt::format("{} queues on {} devices, {:.1f} s; the whole guest {:.2f}%", made, a.devices, idle.wall_s(),
                     idle_sys_pct));
  target("scale_hot_ratio", "Reaper CPU per record, 4 hot / 1 hot", ratio, "<= 1.5", ratio > 0 && ratio <= 1.5,
         fmt::format("{:.0f} vs {:.0f} ns/record, {} records/s per hot queue (pace {} ns), {} other queues idle", m4,
                     m1, a.pace_ns ? 1e9 / a.pace_ns : 0.0, a.pace_ns, made - 1));

  if (!a.json_path.empty()) {
    json ph = json::array();
    for (const auto& p : phases) ph.push_back(p.to_json());
    const json doc = {{"schema", 1},
                      {"bench", "reaper_scale"},
                      {"setup",
                       {{"devices", a.devices},
                        {"cores", a.cores},
                        {"queues_per_core", queues_per_core},
                        {"queues", made},
                        {"pace_ns", a.pace_ns},
                        {"hot_records", a.hot_records},
                        {"repeats", a.repeats}}},
                      {"idle",
                       {{"seconds", idle.wall_s()},
                        {"reaper_s", idle_reaper_s},
                        {"reaper_core_percent", idle_pct},
                        {"system_s", idle.system_s()},
                        {"system_core_percent", idle_sys_pct},
                        {"rescans", s1.rescans - s0.rescans}}},
                      {"phases", ph},
                      {"median_reaper_ns_per_record", {{"hot1", m1}, {"hot4", m4}}},
                      {"ratio_hot4_hot1", ratio},
                      {"late_records", fin.late_records},
                      {"targets", targets},
                      {"ok", g_ok}};
    std::ofstream out(a.json_path);
    out << doc.dump(1) << "\n";
    if (!out) {
      fmt::print(stderr, "reaper_scale: cannot write {}\n", a.json_path);
      return 1;
    }
  }
  return g_ok ? 0 : 1;
}
