// SPDX-License-Identifier: MIT
//
// vm_torn_drain: the header-last argument at the top of
// include/libneuron/ring.hpp, tested through libneuron's own consumers on a
// device (the VM's neuron-tpb), on the drain path this process runs
// (NEURON_DRAIN_PATH, else the widest the CPU has;
// userspace/README.md#drain-paths).
//
// Every engine of core 0 floods queue 1 (EXPLICIT records, default route; a
// host-memory ring of 1024 entries, backpressured) with NOTIFY programs of
// 2047 NOTIFYs and a HALT (bench_workload.hpp), run again as each ends,
// while this thread busy-polls the queue, alternating
// NotificationQueue::drain() into batches of 256 (a copy, checked) and
// NotificationQueue::for_each() (in place), and checks every record it is
// given:
//   - debug_hint_extended must be pc * 7 + 1 (the program's signature of the
//     pc in the header word), so a body left from another record shows;
//   - per engine, (soft_reset_counter, program_counter) must go on without a
//     gap or a repeat;
//   - the timestamp (bytes 8..15) must not go back from one record to the
//     next: the device stamps each record as it writes it, in ring order.
// A record failing any of them is torn. Every poll's DrainResult must also
// be clean: no error, no device loss, no lap suspected, no overflow flag,
// nothing lost (a backpressured queue loses nothing). Expected: 0 torn
// records, 0 unclean polls, every record of every run.
//
// --expect-torn is the negative control, for a device that writes the
// header word first (neuron-tpb fault-torn-header-first=on): the consumers
// must then be given torn records; it stops at 5 of them.
//
// Usage: vm_torn_drain [--device PATH] [--records N] [--expect-torn]
//   --records N   1..10^10, default 10,000,000 (rounded up to whole programs)
// Prints "# torn_drain: ..." lines (the path, records, seconds, records/s,
// torn by check, the first bad records). Exit status: 0 as expected, 1 not,
// 2 bad usage, 4 the path NEURON_DRAIN_PATH asks for is not one this CPU
// has (skip: nothing ran).
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_workload.hpp"
#include "libneuron/neuron.hpp"

namespace {

using namespace neuron;
using namespace neuron::bench;
using clk = std::chrono::steady_clock;

constexpr unsigned kCore = 0;
constexpr unsigned kQueue = 1;               // default route: EXPLICIT -> queue 1
constexpr std::uint32_t kRingBytes = 16384;  // 1024 entries
constexpr std::uint32_t kInsns = 2048;       // 2047 NOTIFYs + HALT
constexpr std::uint64_t kMaxRecords = 10'000'000'000ull;
constexpr std::uint64_t kControlEnough = 5;
constexpr int kShowBad = 5;                        // bad records printed in full
constexpr auto kStall = std::chrono::seconds(10);  // no record for this long: the flood stopped
constexpr int kBusyTries = 1'000'000;              // SUBMIT refused as busy this often: stuck

struct Args {
  std::string device = "/dev/nnq0";
  std::uint64_t records = 10'000'000;
  bool expect_torn = false;
};

int usage(std::string_view why) {
  fmt::print(stderr, "vm_torn_drain: {}\nusage: vm_torn_drain [--device PATH] [--records N] [--expect-torn]\n", why);
  return 2;
}

/// Parses argv into `a`; an exit status (2) on a bad option.
std::optional<int> parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view o = argv[i];
    if (o == "--expect-torn") {
      a.expect_torn = true;
      continue;
    }
    if (o != "--device" && o != "--records") return usage(fmt::format("unknown option {}", o));
    if (i + 1 == argc) return usage(fmt::format("{} wants a value", o));
    const char* v = argv[++i];
    if (o == "--device") {
      a.device = v;
      continue;
    }
    char* end = nullptr;
    a.records = std::strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end != '\0' || a.records == 0 || a.records > kMaxRecords)
      return usage(fmt::format("--records {}: wants a count from 1 to {}", v, kMaxRecords));
  }
  return std::nullopt;
}

/// The checks of every record, in the order the consumers were given them.
class TornCheck {
 public:
  explicit TornCheck(const Workload& wl) : wl_(wl), seq_(kEnginesPerCore, wl) {}

  /// One record; the engine whose program ran to its end (its last pc), or -1.
  int feed(const Record& r) {
    const int e = explicit_engine(r);
    const std::uint32_t pc = record_pc(r);
    const std::uint16_t ext = r.u16(NEURON_ISA_EXPLICIT_DEBUG_HINT_EXT_OFFSET);
    const std::uint64_t ts = r.u64(8);
    const bool sig_bad = e >= 0 && ext != static_cast<std::uint16_t>(pc * 7 + 1);
    const bool ts_bad = ts < last_ts_;
    signature_ += sig_bad;
    timestamp_ += ts_bad;
    if ((sig_bad || ts_bad || e < 0) && shown_ < kShowBad) {
      ++shown_;
      fmt::print("# torn_drain: record {}: engine {} pc {} debug_hint_extended {:#06x} (expected {:#06x}), "
                 "soft_reset_counter {}, timestamp {} after {}{}{}{}\n",
                 seq_.records(), e, pc, ext, static_cast<std::uint16_t>(pc * 7 + 1),
                 r.u16(NEURON_ISA_EXPLICIT_SOFT_RESET_COUNTER_OFFSET), ts, last_ts_, sig_bad ? ": signature" : "",
                 ts_bad ? ": timestamp went back" : "", e < 0 ? ": not an EXPLICIT record" : "");
    }
    last_ts_ = ts;
    seq_.feed_engine(kCore, r);
    return e >= 0 && pc == wl_.last_pc ? e : -1;
  }
  [[nodiscard]] std::uint64_t torn() const { return signature_ + timestamp_; }
  [[nodiscard]] std::uint64_t records() const { return seq_.records(); }
  [[nodiscard]] bool sequence_ok() const { return seq_.ok(); }
  [[nodiscard]] std::string report() const {
    return fmt::format("{} torn records (signature {}, timestamp {}); sequence: {}", torn(), signature_, timestamp_,
                       seq_.report());
  }

 private:
  const Workload& wl_;
  Checker seq_;
  std::uint64_t signature_ = 0, timestamp_ = 0, last_ts_ = 0;
  int shown_ = 0;
};

/// Whether a poll's result is what a backpressured queue must give; says why not.
bool clean(const DrainResult& r, const char* api, std::uint64_t& unclean) {
  if (!r.error && !r.device_gone && !r.lap_suspected && !r.sw_overflow && !r.hw_overflow && !r.refused &&
      r.lost == 0)
    return true;
  if (unclean++ < kShowBad)
    fmt::print("# torn_drain: {} returned {} records with error \"{}\" device_gone {} lap_suspected {} "
               "sw_overflow {} hw_overflow {} refused {} lost {}\n",
               api, r.count, r.error.message(), r.device_gone, r.lap_suspected, r.sw_overflow, r.hw_overflow,
               r.refused, r.lost);
  return false;
}

/// Resets core 0's engines when it goes out of scope: a run that stops early
/// leaves no program writing into a queue that is being destroyed.
struct EngineReset {
  const Device& dev;
  ~EngineReset() {
    for (unsigned e = 0; e < kEnginesPerCore; ++e) (void)dev.engine_reset(kCore, e);
  }
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (const auto st = parse(argc, argv, a)) return *st;

  const DrainPath path = default_drain_path();
  const std::string_view env = drain_path_env();
  if (!env.empty() && parse_drain_path(env) != path) {
    fmt::print("# torn_drain: NEURON_DRAIN_PATH={} is not a path this CPU has; the drain would run on {}: skip\n", env,
               drain_path_name(path));
    return 4;
  }

  auto dev = Device::open(a.device);
  if (!dev) {
    fmt::print(stderr, "vm_torn_drain: {}\n", dev.error().message());
    return 1;
  }
  NotificationQueue::Options o;
  o.size = kRingBytes;
  for (unsigned e = 0; e < kEnginesPerCore; ++e) (void)dev->engine_reset(kCore, e);  // idle, whatever ran before
  auto q = NotificationQueue::create(*dev, kCore, kQueue, o);
  if (!q) {
    fmt::print(stderr, "vm_torn_drain: {}\n", q.error().message());
    return 1;
  }
  const EngineReset stop{*dev};  // destroyed before the queue: the engines stop first

  const Workload wl = make_workload("flood", kInsns, 0);
  const std::uint64_t per_round = std::uint64_t{kEnginesPerCore} * wl.per_run;
  std::vector<std::uint64_t> runs_left(kEnginesPerCore, (a.records + per_round - 1) / per_round);
  std::vector<bool> resubmit(kEnginesPerCore, false);
  TornCheck check(wl);
  std::uint64_t busy = 0, unclean = 0, by_drain = 0, by_for_each = 0;
  std::vector<Record> buf(256);

  const auto submit = [&](unsigned e) -> bool {
    for (int i = 0; i < kBusyTries; ++i) {  // an engine is busy for the HALT after its last record
      auto s = dev->submit(kCore, e, wl.prog, 0);
      if (s) return true;
      if (s.error().code != std::errc::device_or_resource_busy) {
        fmt::print(stderr, "vm_torn_drain: SUBMIT on engine {}: {}\n", e, s.error().message());
        return false;
      }
      ++busy;
    }
    fmt::print(stderr, "vm_torn_drain: SUBMIT on engine {}: still busy after {} tries\n", e, kBusyTries);
    return false;
  };
  unsigned active = 0;
  for (unsigned e = 0; e < kEnginesPerCore; ++e) {
    if (!submit(e)) return 1;
    --runs_left[e];
    ++active;
  }

  const auto t0 = clk::now();
  auto last_record = t0;
  bool stalled = false;
  const auto ended = [&](int e) {
    if (e < 0) return;
    if (runs_left[static_cast<unsigned>(e)]) resubmit[static_cast<unsigned>(e)] = true;
    else --active;
  };
  for (std::uint64_t poll = 0; active; ++poll) {
    DrainResult r;
    if (poll % 2 == 0) {
      r = q->drain(buf);
      for (std::size_t i = 0; i < r.count; ++i) ended(check.feed(buf[i]));
      by_drain += r.count;
      clean(r, "drain", unclean);
    } else {
      r = q->for_each([&](const Record& rec) { ended(check.feed(rec)); });
      by_for_each += r.count;
      clean(r, "for_each", unclean);
    }
    if (r.count == 0) {
      if (r.device_gone || clk::now() - last_record > kStall) {
        stalled = true;
        break;
      }
      continue;
    }
    last_record = clk::now();
    if (a.expect_torn && check.torn() >= kControlEnough) break;
    for (unsigned e = 0; e < kEnginesPerCore; ++e) {
      if (!resubmit[e]) continue;
      if (!submit(e)) return 1;
      resubmit[e] = false;
      --runs_left[e];
    }
  }
  const double secs = std::chrono::duration<double>(clk::now() - t0).count();

  fmt::print("# torn_drain: path {}{}: {} records in {:.1f} s ({:.0f} records/s; {} by drain, {} by for_each), "
             "{} engines, ring {} entries, submit retries {}{}\n",
             drain_path_name(path), env.empty() ? " (default)" : "", check.records(), secs,
             static_cast<double>(check.records()) / secs, by_drain, by_for_each, kEnginesPerCore,
             kRingBytes / sizeof(Record), busy, stalled ? fmt::format(", no record for {} s: stopped", kStall.count()) : "");
  fmt::print("# torn_drain: {}; unclean polls {}\n", check.report(), unclean);
  if (a.expect_torn) {
    fmt::print("# torn_drain: negative control: {} torn records, expected above 0\n", check.torn());
    return check.torn() > 0 ? 0 : 1;
  }
  const bool all = check.records() >= a.records;
  if (!all) fmt::print("# torn_drain: {} records of the {} asked for\n", check.records(), a.records);
  return !stalled && all && check.torn() == 0 && unclean == 0 && check.sequence_ok() ? 0 : 1;
}
