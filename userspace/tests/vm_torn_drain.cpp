// SPDX-License-Identifier: MIT
//
// vm_torn_drain: the header-last argument at the top of include/libneuron/ring.hpp,
// tested through libneuron's own drain on a device (the VM's neuron-tpb), on
// the drain path this process runs (NEURON_DRAIN_PATH, else the widest the
// CPU has; userspace/README.md#drain-paths).
//
// Every engine of core 0 floods queue 1 (EXPLICIT records, default route; a
// host-memory ring of 1024 entries, backpressured) with NOTIFY programs of
// 2047 NOTIFYs and a HALT (bench_workload.hpp), run again as each ends,
// while this thread busy-polls NotificationQueue::drain() into batches of
// 256 and checks every record the drain returns:
//   - debug_hint_extended must be pc * 7 + 1 (the program's signature of the
//     pc in the header word), so a body left from another record shows;
//   - per engine, (soft_reset_counter, program_counter) must go on without a
//     gap or a repeat;
//   - the timestamp (bytes 8..15) must not go back from one record to the
//     next: the device stamps each record as it writes it, in ring order.
// A record failing any of them is torn. Expected: 0 torn records.
//
// --expect-torn is the negative control, for a device that writes the
// header word first (neuron-tpb fault-torn-header-first=on): the drain must
// then return torn records; it stops at 5 of them.
//
// Usage: vm_torn_drain [--device /dev/nnq0] [--records N] [--expect-torn]
// Prints "# torn_drain: ..." lines (the path, records, seconds, records/s,
// torn by check). Exit status: 0 as expected, 1 not, 2 bad usage, 4 the
// path NEURON_DRAIN_PATH asks for is not one this CPU has (skip: nothing ran).
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
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
constexpr unsigned kQueue = 1;             // default route: EXPLICIT -> queue 1
constexpr std::uint32_t kRingBytes = 16384;  // 1024 entries
constexpr std::uint32_t kInsns = 2048;     // 2047 NOTIFYs + HALT
constexpr std::uint64_t kControlEnough = 5;
constexpr auto kStall = std::chrono::seconds(10);  // no record for this long: the flood stopped

struct Args {
  std::string device = "/dev/nnq0";
  std::uint64_t records = 10'000'000;
  bool expect_torn = false;
};

struct Torn {
  std::uint64_t signature = 0, timestamp = 0;
};

int usage(std::string_view why) {
  fmt::print(stderr, "vm_torn_drain: {}\nusage: vm_torn_drain [--device PATH] [--records N] [--expect-torn]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view o = argv[i];
    if (o == "--expect-torn") {
      a.expect_torn = true;
    } else if ((o == "--device" || o == "--records") && i + 1 < argc) {
      const char* v = argv[++i];
      if (o == "--device") {
        a.device = v;
      } else {
        char* end = nullptr;
        a.records = std::strtoull(v, &end, 10);
        if (*v == '\0' || *end != '\0' || a.records == 0) return usage("--records wants a count above 0");
      }
    } else {
      return usage(fmt::format("unknown option {}", o));
    }
  }

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
  for (unsigned e = 0; e < kEnginesPerCore; ++e) (void)dev->engine_reset(kCore, e);  // idle, whatever ran before
  NotificationQueue::Options o;
  o.size = kRingBytes;
  auto q = NotificationQueue::create(*dev, kCore, kQueue, o);
  if (!q) {
    fmt::print(stderr, "vm_torn_drain: {}\n", q.error().message());
    return 1;
  }

  const Workload wl = make_workload("flood", kInsns, 0);
  const std::uint64_t per_round = std::uint64_t{kEnginesPerCore} * wl.per_run;
  std::vector<std::uint64_t> runs_left(kEnginesPerCore, (a.records + per_round - 1) / per_round);
  std::vector<bool> resubmit(kEnginesPerCore, false);
  Checker check(kEnginesPerCore, wl);
  Torn torn;
  std::uint64_t last_ts = 0, busy = 0;
  std::vector<Record> buf(256);

  const auto submit = [&](unsigned e) -> Status {
    for (;;) {  // an engine is busy for the HALT after its last record
      auto s = dev->submit(kCore, e, wl.prog, 0);
      if (s || s.error().code != std::errc::device_or_resource_busy) return s;
      ++busy;
    }
  };
  unsigned active = 0;
  for (unsigned e = 0; e < kEnginesPerCore; ++e) {
    if (auto s = submit(e); !s) {
      fmt::print(stderr, "vm_torn_drain: engine {}: {}\n", e, s.error().message());
      return 1;
    }
    --runs_left[e];
    ++active;
  }

  const auto t0 = clk::now();
  auto last_record = t0;
  bool stalled = false;
  while (active) {
    const DrainResult r = q->drain(buf);
    if (r.count == 0) {
      if (clk::now() - last_record > kStall) {
        stalled = true;
        break;
      }
      continue;
    }
    last_record = clk::now();
    for (std::size_t i = 0; i < r.count; ++i) {
      const Record& rec = buf[i];
      const int e = explicit_engine(rec);
      if (e >= 0 && rec.u16(NEURON_ISA_EXPLICIT_DEBUG_HINT_EXT_OFFSET) != static_cast<std::uint16_t>(record_pc(rec) * 7 + 1))
        ++torn.signature;
      const std::uint64_t ts = rec.u64(8);
      if (ts < last_ts) ++torn.timestamp;
      last_ts = ts;
      check.feed_engine(kCore, rec);
      if (e >= 0 && record_pc(rec) == wl.last_pc) {
        if (runs_left[static_cast<unsigned>(e)]) resubmit[static_cast<unsigned>(e)] = true;
        else --active;
      }
    }
    if (a.expect_torn && torn.signature + torn.timestamp >= kControlEnough) break;
    for (unsigned e = 0; e < kEnginesPerCore; ++e) {
      if (!resubmit[e]) continue;
      if (auto s = submit(e); !s) {
        fmt::print(stderr, "vm_torn_drain: engine {}: {}\n", e, s.error().message());
        return 1;
      }
      resubmit[e] = false;
      --runs_left[e];
    }
  }
  const double secs = std::chrono::duration<double>(clk::now() - t0).count();
  for (unsigned e = 0; e < kEnginesPerCore; ++e) (void)dev->engine_reset(kCore, e);

  const std::uint64_t bad = torn.signature + torn.timestamp;
  fmt::print("# torn_drain: path {}{}: {} records in {:.1f} s ({:.0f} records/s), {} engines, ring {} entries, "
             "submit retries {}{}\n",
             drain_path_name(path), env.empty() ? " (default)" : "", check.records(), secs,
             static_cast<double>(check.records()) / secs, kEnginesPerCore, kRingBytes / sizeof(Record), busy,
             stalled ? fmt::format(", no record for {} s: stopped", kStall.count()) : "");
  fmt::print("# torn_drain: {} torn records (signature {}, timestamp {}); sequence: {}\n", bad, torn.signature,
             torn.timestamp, check.report());
  if (a.expect_torn) {
    fmt::print("# torn_drain: negative control: {} torn records expected above 0\n", bad);
    return bad > 0 ? 0 : 1;
  }
  return !stalled && bad == 0 && check.ok() && check.records() >= a.records ? 0 : 1;
}
