// SPDX-License-Identifier: MIT
//
// e2e_bench: end-to-end figures on a real (emulated) device, run in the VM
// (selftests/vm/e2e-guest.sh, issue 3 "In the VM"):
//
//  (a) records/s from the emulated engines to a userspace consumer with
//      backpressure on and no loss: every engine of every core runs a long
//      program of NOTIFY instructions (2047 EXPLICIT records per run, tracing
//      off) again and again into its core's EXPLICIT queue (queue 1), a small
//      backpressured ring (lossless: a full ring stalls the engine). Every
//      record is checked: per engine, (soft_reset_counter, program_counter)
//      must go (r, 0), (r, 1), ... (r, 2046), (r+1, 0), ... with nothing
//      missing, repeated or torn, and NQ_INFO must show no overflow or drop.
//  (b) the consumer's CPU time per record, sleeping on the eventfds (the
//      Reaper: threshold 1 + NEURON_IOC_NQ_EVENTFD, the submitting thread
//      waiting on per-engine waiters' eventfds) versus busy-polling the rings
//      (one thread spinning on drain()), from getrusage(RUSAGE_SELF) (user +
//      system, the whole process: the same submit work is in both), and the
//      ratio busy-poll / eventfd. Two workloads: "flood" (back-to-back
//      NOTIFYs: the producer outruns the consumer, so the consumer is never
//      idle and both ways cost about the same per record — the figure says
//      how fast the path is) and "paced" (NOTIFY, DELAY pace-ns, NOTIFY, ...:
//      the producer sets the rate, the consumer waits between records — the
//      figure says what waiting costs, which is what eventfd vs polling is
//      about).
//
//  (c) a lossy queue lapped under a live producer (userspace/README.md#lossy-queues):
//      every engine of core 0 floods a 64-entry ignore-full ring; the Reaper
//      (threshold 1, eventfd, rescan OFF) delivers to a consumer that stalls
//      now and then, so the engines lap it again and again. Checks: every
//      record delivered intact and in per-engine order, delivered + the
//      Reaper's exact `lost` = every record written, lap recoveries happened,
//      no BAD_HEAD edge on the event stream, and the last records arrive with
//      no rescan. Figure: the worst delay from a record's device timestamp
//      to its delivery, relative to the quickest record (the device clock
//      and CLOCK_MONOTONIC tick alike but start apart).
//
// Output: figures as "# ..." lines, checks as "check NAME ok|fail [why]"
// (the guest script turns them into TAP), exit status 0 iff every check
// passed. Figures are never asserted: under TCG absolute times mean little.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "libneuron/neuron.hpp"

using namespace neuron;
using clk = std::chrono::steady_clock;

namespace {

constexpr unsigned kQueue = 1;  // default route: EXPLICIT -> queue 1

double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/// The program every engine runs, and what its records look like.
struct Workload {
  std::string name;
  std::vector<Instruction> prog;
  std::uint32_t step = 1;      // pc distance between NOTIFYs
  std::uint32_t last_pc = 0;   // the last NOTIFY
  std::uint32_t per_run = 0;   // records per run
};

/// `insns` instructions: NOTIFY at pc 0, step, 2*step, ..., DELAY pace_ns in
/// between when pacing, HALT last. Each NOTIFY's debug_hint_extended is
/// pc*7+1, so a torn or misplaced record shows.
Workload make_workload(std::string name, std::uint32_t insns, std::uint32_t pace_ns) {
  Workload w;
  w.name = std::move(name);
  w.step = pace_ns ? 2 : 1;
  w.prog.resize(insns);
  for (std::uint32_t pc = 0; pc + 1 < insns; ++pc) {
    if (pc % w.step == 0) {
      w.prog[pc].opcode = NEURON_OP_NOTIFY;
      w.prog[pc].operand.arg.debug_hint_extended = static_cast<std::uint16_t>(pc * 7 + 1);
      w.last_pc = pc;
      ++w.per_run;
    } else {
      w.prog[pc].opcode = NEURON_OP_DELAY;
      w.prog[pc].operand.arg.value = pace_ns;
    }
  }
  w.prog[insns - 1].opcode = NEURON_OP_HALT;
  return w;
}

/// Per-engine sequence checker over EXPLICIT records.
class Checker {
 public:
  Checker(unsigned cores, const Workload& w) : step_(w.step), last_(w.last_pc), next_(cores * kEnginesPerCore) {}

  void feed(unsigned core, const Record& r) {
    const std::uint8_t t = r.notific_type();
    if (t < NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START || t > NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM ||
        (t - 4u) % 4u != NEURON_ENGINE_RECORD_EXPLICIT) {
      ++foreign_;
      return;
    }
    const unsigned engine = (t - 4u) / 4u;
    const std::uint32_t pc = r.u32(0) & 0xfffff;
    const std::uint16_t run = r.u16(4);
    const std::uint16_t ext = r.u16(6);
    auto& n = next_[core * kEnginesPerCore + engine];
    ++records_;
    if (ext != static_cast<std::uint16_t>(pc * 7 + 1)) ++torn_;  // the program's signature of its pc
    if (!n.started) {
      n = {true, run, pc};
      if (pc != 0) ++gaps_;
    } else if (run != n.run || pc != n.pc) {
      if (static_cast<std::uint16_t>(run - n.run) > 0x8000 || (run == n.run && pc < n.pc)) ++dups_;
      else ++gaps_;
      n.run = run;
      n.pc = pc;
    }
    // next expected
    if (n.pc == last_) {
      n.pc = 0;
      ++n.run;
    } else {
      n.pc += step_;
    }
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
  std::uint32_t step_, last_;
  std::vector<Next> next_;
  std::uint64_t records_ = 0, gaps_ = 0, dups_ = 0, torn_ = 0, foreign_ = 0;
};

struct Args {
  std::string device = kDefaultDevicePath;
  std::uint64_t records = 400'000;  // flood: per mode, rounded up to whole runs
  std::uint64_t paced_records = 40'000;
  std::uint32_t pace_ns = 200'000;  // paced: DELAY between NOTIFYs (virtual time)
  std::uint32_t ring = 4096;        // bytes: 256 entries, so backpressure stalls engines
  std::uint32_t threshold = 1;      // eventfd mode: unread records per wake-up edge
  std::uint32_t insns = NEURON_MAX_PROGRAM_INSNS;
  std::string mode = "both";
  std::uint64_t lossy_records = 100'000;  // (c): 0 skips it
};

struct Figures {
  std::string workload;
  std::string mode;
  std::uint64_t expected = 0, records = 0;
  double seconds = 0, cpu = 0, consumer_thread_cpu = -1;
  std::uint64_t overflow = 0, drops = 0, lost = 0, late = 0, wakes = 0, busy_retries = 0;
  bool seq_ok = false;
  std::string seq_report;
  std::optional<Error> error;
};

/// Submit, retrying while the engine is still finishing its previous run
/// (its HALT comes after the last record). `spin`: retry at once (the
/// busy-poller), else sleep 20 us between tries.
Status submit_retry(const Device& dev, unsigned core, unsigned engine, std::span<const Instruction> prog, bool spin,
                    std::uint64_t& retries) {
  for (int i = 0; i < 1'000'000; ++i) {
    auto s = dev.submit(core, engine, prog, 0);
    if (s || s.error().code != std::errc::device_or_resource_busy) return s;
    ++retries;
    if (!spin) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return unexpected(errc::invalid_argument, fmt::format("core {} engine {} stayed busy", core, engine));
}

void queue_counters(std::vector<NotificationQueue*> qs, Figures& f) {
  for (auto* q : qs)
    if (auto i = q->info()) {
      f.overflow += i->overflow_count;
      f.drops += i->drop_count;
    }
}

Figures run_reaper(const Device& dev, unsigned cores, const Args& a, const Workload& wl, std::uint32_t runs) {
  Figures f;
  f.workload = wl.name;
  f.mode = "eventfd";
  const auto& prog = wl.prog;
  f.expected = std::uint64_t{cores} * kEnginesPerCore * runs * wl.per_run;
  Checker check(cores, wl);

  std::vector<std::unique_ptr<ReapQueue>> queues;
  std::vector<NotificationQueue*> raw;  // for NQ_INFO at the end (owned by the Reaper)
  for (unsigned c = 0; c < cores; ++c) {
    NotificationQueue::Options o;
    o.size = a.ring;
    o.threshold = a.threshold;
    o.eventfd = true;
    auto q = NotificationQueue::create(dev, c, kQueue, o);
    if (!q) {
      f.error = q.error();
      return f;
    }
    queues.push_back(make_reap_queue(std::move(q).value()));
  }
  Reaper::Options ro;
  ro.batch = 256;
  ro.moderation = Reaper::Moderation::Fixed;  // --threshold is the figure's setting
  ro.on_records = [&check](unsigned core, unsigned, std::span<const Record> recs) {
    for (const auto& r : recs) check.feed(core, r);
  };
  auto reaper = Reaper::start(std::move(queues), nullptr, ro);
  if (!reaper) {
    f.error = reaper.error();
    return f;
  }

  struct Slot {
    unsigned core, engine;
    std::uint32_t runs_left;
    std::optional<Waiter> w;
  };
  std::vector<Slot> slots;
  const auto arm = [&](Slot& s) -> Status {
    Reaper::Filter flt;
    flt.core = s.core;
    flt.notific_type = NEURON_ENGINE_NOTIFIC_TYPE(s.engine, NEURON_ENGINE_RECORD_EXPLICIT);
    flt.events = false;
    auto w = (*reaper)->expect(
        [last = wl.last_pc](const Arrival& ar) { return (ar.record->u32(0) & 0xfffff) == last; }, flt);
    if (!w) return unexpected(std::move(w).error());
    s.w = std::move(w).value();
    --s.runs_left;
    return submit_retry(dev, s.core, s.engine, prog, false, f.busy_retries);
  };

  const double cpu0 = cpu_seconds();
  const auto rcpu0 = (*reaper)->cpu_time();
  const auto t0 = clk::now();
  for (unsigned c = 0; c < cores; ++c)
    for (unsigned e = 0; e < kEnginesPerCore; ++e) slots.push_back({c, e, runs, std::nullopt});
  for (auto& s : slots)
    if (auto st = arm(s); !st) {
      f.error = st.error();
      return f;
    }
  std::size_t active = slots.size();
  std::vector<pollfd> pfd(slots.size());
  const auto deadline = t0 + std::chrono::seconds(600);
  while (active && clk::now() < deadline) {
    for (std::size_t i = 0; i < slots.size(); ++i) pfd[i] = {slots[i].w ? slots[i].w->fd() : -1, POLLIN, 0};
    if (::poll(pfd.data(), pfd.size(), 1000) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      auto& s = slots[i];
      if (!s.w || !(pfd[i].revents & POLLIN)) continue;
      const WaitStatus ws = s.w->wait(std::chrono::milliseconds(0));
      if (ws == WaitStatus::TimedOut) continue;
      if (ws == WaitStatus::Stopped) {
        f.error = Error::make(errc::invalid_argument, "the reaper stopped");
        return f;
      }
      s.w.reset();
      if (s.runs_left == 0) {
        --active;
        continue;
      }
      if (auto st = arm(s); !st) {
        f.error = st.error();
        return f;
      }
    }
  }
  const auto t1 = clk::now();
  f.cpu = cpu_seconds() - cpu0;
  f.consumer_thread_cpu = std::chrono::duration<double>((*reaper)->cpu_time() - rcpu0).count();
  f.seconds = std::chrono::duration<double>(t1 - t0).count();
  (*reaper)->stop();
  const auto st = (*reaper)->stats();
  f.wakes = st.wakes;
  f.late = st.late_records;
  f.lost = st.lost;
  f.records = check.records();
  f.seq_ok = check.ok();
  f.seq_report = check.report();
  if (active) f.error = Error::make(errc::invalid_argument, fmt::format("{} engines did not finish in 600 s", active));
  // NQ_INFO counters: the queues are owned by the Reaper; ask the device file directly.
  for (unsigned c = 0; c < cores; ++c)
    if (auto i = dev.nq_info(c, kQueue)) {
      f.overflow += i->overflow_count;
      f.drops += i->drop_count;
    }
  return f;
}

Figures run_poll(const Device& dev, unsigned cores, const Args& a, const Workload& wl, std::uint32_t runs) {
  Figures f;
  f.workload = wl.name;
  f.mode = "busy-poll";
  const auto& prog = wl.prog;
  f.expected = std::uint64_t{cores} * kEnginesPerCore * runs * wl.per_run;
  Checker check(cores, wl);
  std::vector<NotificationQueue> qs;
  for (unsigned c = 0; c < cores; ++c) {
    NotificationQueue::Options o;
    o.size = a.ring;
    auto q = NotificationQueue::create(dev, c, kQueue, o);
    if (!q) {
      f.error = q.error();
      return f;
    }
    qs.push_back(std::move(q).value());
  }
  std::vector<std::uint32_t> runs_left(cores * kEnginesPerCore, runs);
  std::vector<bool> resubmit(cores * kEnginesPerCore, false);
  std::vector<Record> buf(256);
  const double cpu0 = cpu_seconds();
  timespec th0{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &th0);
  const auto t0 = clk::now();
  std::size_t active = 0;
  for (unsigned c = 0; c < cores; ++c)
    for (unsigned e = 0; e < kEnginesPerCore; ++e) {
      --runs_left[c * kEnginesPerCore + e];
      ++active;
      if (auto s = submit_retry(dev, c, e, prog, true, f.busy_retries); !s) {
        f.error = s.error();
        return f;
      }
    }
  const auto deadline = t0 + std::chrono::seconds(600);
  std::uint64_t spins = 0;
  while (active) {
    bool any = false;
    for (unsigned c = 0; c < cores; ++c) {
      const DrainResult r = qs[c].drain(buf);
      f.lost += r.lost;
      for (std::size_t i = 0; i < r.count; ++i) {
        check.feed(c, buf[i]);
        const std::uint8_t t = buf[i].notific_type();
        const std::uint32_t pc = buf[i].u32(0) & 0xfffff;
        if (pc == wl.last_pc && t >= 4 && t <= 0x17) {
          const unsigned slot = c * kEnginesPerCore + (t - 4u) / 4u;
          if (runs_left[slot]) resubmit[slot] = true;
          else --active;
        }
      }
      any = any || r.count;
    }
    for (unsigned slot = 0; slot < resubmit.size(); ++slot) {
      if (!resubmit[slot]) continue;
      auto s = dev.submit(slot / kEnginesPerCore, slot % kEnginesPerCore, prog, 0);
      if (s) {
        resubmit[slot] = false;
        --runs_left[slot];
      } else if (s.error().code == std::errc::device_or_resource_busy) {
        ++f.busy_retries;  // still finishing its HALT: try again next round (spinning)
      } else {
        f.error = s.error();
        return f;
      }
    }
    if (!any && (++spins & 0xffff) == 0 && clk::now() > deadline) {
      f.error = Error::make(errc::invalid_argument, "engines did not finish in 600 s");
      break;
    }
  }
  const auto t1 = clk::now();
  f.cpu = cpu_seconds() - cpu0;
  timespec th1{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &th1);
  f.consumer_thread_cpu = static_cast<double>(th1.tv_sec - th0.tv_sec) + static_cast<double>(th1.tv_nsec - th0.tv_nsec) * 1e-9;
  f.seconds = std::chrono::duration<double>(t1 - t0).count();
  f.records = check.records();
  f.seq_ok = check.ok();
  f.seq_report = check.report();
  std::vector<NotificationQueue*> raw;
  for (auto& q : qs) raw.push_back(&q);
  queue_counters(raw, f);
  return f;
}

bool report(const Figures& f) {
  const double rps = f.seconds > 0 ? static_cast<double>(f.records) / f.seconds : 0;
  const double cpr = f.records ? f.cpu / static_cast<double>(f.records) * 1e9 : 0;
  fmt::print("# {} {}: {} records in {:.3f} s = {:.0f} records/s; process CPU {:.3f} s = {:.0f} ns/record "
             "(consumer thread {:.3f} s); submit retries {}\n",
             f.workload, f.mode, f.records, f.seconds, rps, f.cpu, cpr, f.consumer_thread_cpu, f.busy_retries);
  if (f.mode == "eventfd")
    fmt::print("# {} {}: reaper woke {} times ({:.1f} records/wake); records found by a rescan instead of an edge: {}\n",
               f.workload, f.mode, f.wakes, f.wakes ? static_cast<double>(f.records) / static_cast<double>(f.wakes) : 0.0,
               f.late);
  bool ok = true;
  const auto check = [&](const std::string& name, bool pass, const std::string& why) {
    fmt::print("check {}.{}.{} {}{}\n", name, f.workload, f.mode == "eventfd" ? "eventfd" : "busy_poll",
               pass ? "ok" : "fail", pass ? "" : " " + why);
    ok = ok && pass;
  };
  if (f.error) fmt::print("# {} {}: error: {}\n", f.workload, f.mode, f.error->message());
  check("ran", !f.error, f.error ? f.error->message() : "");
  check("no_loss", f.records == f.expected && f.overflow == 0 && f.drops == 0 && f.lost == 0,
        fmt::format("records {} of {}, overflow {}, drops {}, lost {}", f.records, f.expected, f.overflow, f.drops,
                    f.lost));
  check("sequence_in_order", f.seq_ok, f.seq_report);
  return ok;
}

/// (c): see the top of this file. Returns whether every check passed.
bool run_lossy(const Device& dev, const Args& a) {
  constexpr unsigned core = 0;
  constexpr std::uint32_t ring_bytes = 64 * sizeof(Record);
  const Workload wl = make_workload("lossy", a.insns, 0);
  const std::uint32_t per_round = kEnginesPerCore * wl.per_run;
  const auto runs = static_cast<std::uint32_t>((a.lossy_records + per_round - 1) / per_round);
  const std::uint64_t expected = std::uint64_t{runs} * per_round;
  fmt::print("# lossy: core {} x {} engines, {} NOTIFY per run, {} runs each ({} records) into a {}-entry "
             "ignore-full ring, Reaper rescan off\n",
             core, kEnginesPerCore, wl.per_run, runs, expected, ring_bytes / sizeof(Record));
  bool ok = true;
  const auto check = [&](const std::string& name, bool pass, const std::string& why) {
    fmt::print("check lossy.{} {}{}\n", name, pass ? "ok" : "fail", pass ? "" : " " + why);
    ok = ok && pass;
  };

  NotificationQueue::Options o;
  o.size = ring_bytes;
  o.flags = NEURON_NQ_F_IGNORE_FULL;
  o.threshold = 1;
  o.eventfd = true;
  auto q = NotificationQueue::create(dev, core, kQueue, o);
  auto es = dev.open_event_stream();
  if (!q || !es) {
    check("ran", false, !q ? q.error().message() : es.error().message());
    return false;
  }
  std::vector<std::unique_ptr<ReapQueue>> queues;
  queues.push_back(make_reap_queue(std::move(q).value()));

  std::mutex mu;
  struct Next {
    bool started = false;
    std::uint16_t run = 0;
    std::uint32_t pc = 0;
  };
  std::vector<Next> next(kEnginesPerCore);
  std::uint64_t delivered = 0, torn = 0, disorder = 0, batches = 0;
  std::int64_t dmin = std::numeric_limits<std::int64_t>::max(), dmax = std::numeric_limits<std::int64_t>::min();
  std::atomic<std::uint64_t> bad_head{0}, sw_overflow_edges{0};

  Reaper::Options ro;
  ro.rescan = std::chrono::milliseconds(0);
  ro.batch = 16;
  ro.moderation = Reaper::Moderation::Fixed;  // threshold 1, as the check's figures assume
  ro.on_records = [&](unsigned, unsigned, std::span<const Record> recs) {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    const std::int64_t now = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    std::lock_guard lk(mu);
    for (const auto& r : recs) {
      const std::uint8_t t = r.notific_type();
      const std::uint32_t pc = r.u32(0) & 0xfffff;
      if (t < NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START || t > NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM ||
          r.u16(6) != static_cast<std::uint16_t>(pc * 7 + 1)) {
        ++torn;
        continue;
      }
      ++delivered;
      auto& n = next[(t - 4u) / 4u];
      const std::uint16_t run = r.u16(4);
      if (n.started && (static_cast<std::uint16_t>(run - n.run) > 0x8000 || (run == n.run && pc < n.pc)))
        ++disorder;
      n = {true, run, pc + 1};
      const std::int64_t d = now - static_cast<std::int64_t>(r.u64(8) / 1000);
      dmin = std::min(dmin, d);
      dmax = std::max(dmax, d);
    }
    // A slow consumer: every 4th batch stalls 2 ms, long enough for five
    // engines to lap a 64-entry ring.
    if (++batches % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  ro.on_event = [&](const Event& e) {
    if (e.edge != NEURON_EDGE_NOTIFIC || e.core != core) return;
    if (e.cause & (1u << NEURON_NOTIFIC_INTR_BAD_HEAD)) bad_head.fetch_add(1);
    if (e.cause & (1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW)) sw_overflow_edges.fetch_add(1);
  };
  auto reaper = Reaper::start(std::move(queues), make_event_source(std::move(es).value()), std::move(ro));
  if (!reaper) {
    check("ran", false, reaper.error().message());
    return false;
  }

  const auto t0 = clk::now();
  std::vector<std::uint32_t> runs_left(kEnginesPerCore, runs);
  std::uint64_t retries = 0;
  std::size_t active = kEnginesPerCore;
  std::optional<Error> err;
  while (active && !err && clk::now() < t0 + std::chrono::seconds(600)) {
    active = 0;
    for (unsigned e = 0; e < kEnginesPerCore; ++e) {
      auto st = dev.engine_status(core, e);
      if (!st) {
        err = st.error();
        break;
      }
      if (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING) {
        ++active;
        continue;
      }
      if (!runs_left[e]) continue;
      if (auto s = submit_retry(dev, core, e, wl.prog, false, retries); !s) {
        err = s.error();
        break;
      }
      --runs_left[e];
      ++active;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto t_prod = clk::now();
  // The producer is done: the Reaper must reach TAIL without a rescan.
  std::uint64_t lost = 0;
  const auto settle = clk::now() + std::chrono::seconds(30);
  for (;;) {
    lost = (*reaper)->stats().lost;
    std::uint64_t got;
    {
      std::lock_guard lk(mu);
      got = delivered + torn;
    }
    if (got + lost >= expected || clk::now() > settle) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto t1 = clk::now();
  (*reaper)->stop();
  const auto st = (*reaper)->stats();
  auto info = dev.nq_info(core, kQueue);
  std::lock_guard lk(mu);
  fmt::print("# lossy: {} records written, {} delivered, {} lost ({} already overwritten when TAIL was read), "
             "{} lap recoveries, device OVERFLOW_COUNT {}, {} SW_OVERFLOW edges, {:.1f} s\n",
             expected, delivered, st.lost, st.overwritten, st.resyncs, info ? info->overflow_count : 0,
             sw_overflow_edges.load(), std::chrono::duration<double>(t1 - t0).count());
  if (delivered)
    fmt::print("# lossy: worst arrival-to-delivery delay with rescan off: {:.3f} ms (device timestamp to "
               "on_records, relative to the quickest record); the producer finished {:.3f} s before the last "
               "delivery\n",
               static_cast<double>(dmax - dmin) / 1e6, std::chrono::duration<double>(t1 - t_prod).count());
  check("ran", !err, err ? err->message() : "");
  check("records_intact_in_order", torn == 0 && disorder == 0, fmt::format("torn {} out of order {}", torn, disorder));
  check("delivered_plus_lost_is_written", delivered + st.lost == expected,
        fmt::format("delivered {} + lost {} != {}", delivered, st.lost, expected));
  check("lapped_and_recovered", st.resyncs > 0 && st.lost > 0 && info && info->overflow_count > 0,
        fmt::format("resyncs {} lost {}: the producer never lapped the consumer", st.resyncs, st.lost));
  check("no_bad_head_edge", bad_head.load() == 0, fmt::format("{} BAD_HEAD edges", bad_head.load()));
  check("no_rescan", st.rescans == 0 && st.late_records == 0, fmt::format("rescans {}", st.rescans));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"e2e_bench: records/s and CPU per record, eventfd (Reaper) vs busy-poll, on /dev/nnqN"};
  Args a;
  app.add_option("--device,-d", a.device, "Device node")->capture_default_str();
  app.add_option("--records", a.records, "Flood: records per mode (rounded up to whole runs)")->capture_default_str();
  app.add_option("--paced-records", a.paced_records, "Paced: records per mode (0: skip)")->capture_default_str();
  app.add_option("--pace-ns", a.pace_ns, "Paced: DELAY between NOTIFYs, ns of device time")->capture_default_str();
  app.add_option("--ring", a.ring, "Ring bytes (small: backpressure stalls the engines)")->capture_default_str();
  app.add_option("--threshold", a.threshold,
                 "eventfd mode: the queues' THRESHOLD (records per edge; > 1 batches wake-ups but a run's "
                 "last records then wait for the 100 ms rescan)")
      ->capture_default_str();
  app.add_option("--insns", a.insns, "Instructions per program (NOTIFYs [+ DELAYs] + HALT)")->capture_default_str();
  app.add_option("--mode", a.mode, "eventfd, poll or both")->capture_default_str();
  app.add_option("--lossy-records", a.lossy_records, "(c) lossy queue: records written (0: skip)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (a.insns < 3 || a.insns > NEURON_MAX_PROGRAM_INSNS) {
    fmt::print(stderr, "e2e_bench: --insns must be 3..{}\n", NEURON_MAX_PROGRAM_INSNS);
    return 2;
  }

  auto dev = Device::open(a.device);
  if (!dev) {
    fmt::print(stderr, "e2e_bench: {}\n", dev.error().message());
    return 1;
  }
  auto info = dev->info();
  if (!info) {
    fmt::print(stderr, "e2e_bench: {}\n", info.error().message());
    return 1;
  }
  const unsigned cores = info->num_cores;
  // the engines must be idle (a previous fatal halt would make submit fail with EIO)
  for (unsigned c = 0; c < cores; ++c)
    for (unsigned e = 0; e < kEnginesPerCore; ++e) (void)dev->engine_reset(c, e);

  bool ok = true;
  const auto bench = [&](const Workload& wl, std::uint64_t records) {
    const std::uint64_t per_round = std::uint64_t{cores} * kEnginesPerCore * wl.per_run;
    const auto runs = static_cast<std::uint32_t>((records + per_round - 1) / per_round);
    fmt::print("# {}: {} cores x {} engines, {} NOTIFY per run{}, {} runs each, {}-byte backpressured ring "
               "(queue {}) per core, tracing off\n",
               wl.name, cores, kEnginesPerCore, wl.per_run,
               wl.step > 1 ? fmt::format(" with DELAY {} ns between", a.pace_ns) : std::string(), runs, a.ring,
               kQueue);
    std::optional<Figures> ev, poll;
    if (a.mode == "both" || a.mode == "eventfd") {
      ev = run_reaper(*dev, cores, a, wl, runs);
      ok = report(*ev) && ok;
    }
    if (a.mode == "both" || a.mode == "poll") {
      poll = run_poll(*dev, cores, a, wl, runs);
      ok = report(*poll) && ok;
    }
    if (ev && poll && ev->records && poll->records && ev->cpu > 0) {
      const double e = ev->cpu / static_cast<double>(ev->records), p = poll->cpu / static_cast<double>(poll->records);
      fmt::print("# {}: CPU per record: busy-poll {:.0f} ns, eventfd {:.0f} ns: busy-poll / eventfd = {:.1f}x "
                 "(records/s: busy-poll {:.0f}, eventfd {:.0f})\n",
                 wl.name, p * 1e9, e * 1e9, p / e, static_cast<double>(poll->records) / poll->seconds,
                 static_cast<double>(ev->records) / ev->seconds);
    }
  };
  bench(make_workload("flood", a.insns, 0), a.records);
  if (a.paced_records) bench(make_workload("paced", a.insns, a.pace_ns), a.paced_records);
  if (a.lossy_records) ok = run_lossy(*dev, a) && ok;
  return ok ? 0 : 1;
}
