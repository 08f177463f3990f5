// SPDX-License-Identifier: MIT
//
// reaper_budget: the Reaper's per-pass budget on the host, with fakes (issue
// 25: "a producer that never lets a queue empty, 319 other queues with a
// record each second: every cold record delivered within 10 ms of arrival,
// stop() returns within 50 ms; before and after").
//
// One queue never runs empty (every drain finds its whole span filled, as a
// backpressured queue whose engine keeps pace would) next to --cold fake
// queues (tests/fake_device.hpp's FakeQueue: 16 entries, threshold 1, an
// eventfd) that each get one record a second, their arrivals spread evenly
// over the second, for --seconds seconds. Then stop() is called with the
// hot queue still endless. Printed, per budget:
//   budget B: every cold record delivered within X ms of arrival, stop() returned in Y ms
// X is the largest delay from a cold record's push to its on_records call
// (steady_clock), Y the duration of stop(), called once every cold record
// is in or a second after the last push, whichever comes first, with the
// hot queue still endless. "before" is the loop without a
// budget (Options::budget = SIZE_MAX: each queue drained until it comes back
// empty, which the endless queue never does): to let that run end at all,
// the hot queue turns empty --valve-s seconds after the start (so X and Y
// then measure the valve). "after" is the default budget (256).
//
//   reaper_budget [--cold 319] [--seconds 3] [--valve-s 6] [--only-after]
// Figures only: it checks that every cold record arrived once, nothing else.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../tests/fake_device.hpp"
#include "libneuron/reaper.hpp"

using namespace neuron;
using clk = std::chrono::steady_clock;

namespace {

class EndlessQueue final : public ReapQueue {
 public:
  explicit EndlessQueue(clk::time_point valve) : valve_(valve), efd_(::eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  unsigned core() const noexcept override { return 0; }
  unsigned queue() const noexcept override { return 0; }
  std::uint32_t entries() const noexcept override { return 256; }
  int wake_fd() const noexcept override { return efd_.get(); }
  DrainResult drain(std::span<Record> out) noexcept override {
    DrainResult r;
    if (clk::now() >= valve_) return r;  // the valve: only so that a loop without a budget ends
    for (auto& rec : out) rec = test::seq_record(next_++);
    r.count = out.size();
    records_.store(next_, std::memory_order_relaxed);
    return r;
  }
  std::uint64_t records() const { return records_.load(std::memory_order_relaxed); }

 private:
  clk::time_point valve_;
  UniqueFd efd_;
  std::uint64_t next_ = 0;
  std::atomic<std::uint64_t> records_{0};
};

struct Figures {
  double worst_ms = 0;
  double stop_ms = 0;
  std::size_t delivered = 0, expected = 0, duplicates = 0;
  std::uint64_t hot = 0;
};

Figures run(std::size_t budget, unsigned cold, unsigned seconds, unsigned valve_s) {
  const auto t0 = clk::now();
  std::vector<std::unique_ptr<ReapQueue>> qs;
  auto hot_p = std::make_unique<EndlessQueue>(t0 + std::chrono::seconds(valve_s));
  EndlessQueue& hot = *hot_p;
  qs.push_back(std::move(hot_p));
  std::vector<test::FakeQueue*> fq;
  for (unsigned i = 0; i < cold; ++i) {
    auto p = std::make_unique<test::FakeQueue>(1 + i / 10, i % 10, 16, 1);
    fq.push_back(p.get());
    qs.push_back(std::move(p));
  }
  const std::size_t n = static_cast<std::size_t>(cold) * seconds;
  std::vector<std::atomic<std::int64_t>> pushed_at(n);  // ns since t0, by record number
  std::vector<std::uint8_t> seen(n, 0);
  std::mutex mu;
  Figures f;
  f.expected = n;
  std::int64_t worst_ns = 0;
  Reaper::Options o;
  o.budget = budget;
  o.on_records = [&](unsigned core, unsigned, std::span<const Record> recs) {
    if (core == 0) return;
    const auto now = (clk::now() - t0).count();
    std::lock_guard lk(mu);
    for (const auto& r : recs) {
      const auto k = static_cast<std::size_t>(test::seq_of(r));
      if (k >= n) continue;
      if (seen[k]++) {
        ++f.duplicates;
        continue;
      }
      ++f.delivered;
      worst_ns = std::max(worst_ns, now - pushed_at[k].load(std::memory_order_acquire));
    }
  };
  auto reaper = Reaper::start(std::move(qs), nullptr, o);
  if (!reaper) {
    std::fprintf(stderr, "reaper_budget: %s\n", reaper.error().message().c_str());
    std::exit(1);
  }
  // one record a second on every cold queue, the queues' turns spread over the second
  for (unsigned s = 0; s < seconds; ++s)
    for (unsigned i = 0; i < cold; ++i) {
      std::this_thread::sleep_until(t0 + std::chrono::seconds(s) + std::chrono::microseconds(1'000'000ull * i / cold));
      const std::size_t k = static_cast<std::size_t>(s) * cold + i;
      pushed_at[k].store((clk::now() - t0).count(), std::memory_order_release);
      fq[i]->push(test::seq_record(k));
    }
  // the last round's records: wait until they are in, for a second at most
  // (then stop() is called with the hot queue still endless either way)
  while (clk::now() < t0 + std::chrono::seconds(seconds + 1)) {
    {
      std::lock_guard lk(mu);
      if (f.delivered == n) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto s0 = clk::now();
  (*reaper)->stop();
  f.stop_ms = std::chrono::duration<double, std::milli>(clk::now() - s0).count();
  f.hot = hot.records();
  std::lock_guard lk(mu);
  f.worst_ms = static_cast<double>(worst_ns) / 1e6;
  return f;
}

void print(const char* label, const Figures& f) {
  std::printf("%s: every cold record delivered within %.3f ms of arrival, stop() returned in %.3f ms "
              "(%zu of %zu cold records, %zu duplicates; %llu hot records)\n",
              label, f.worst_ms, f.stop_ms, f.delivered, f.expected, f.duplicates,
              static_cast<unsigned long long>(f.hot));
}

}  // namespace

int main(int argc, char** argv) {
  unsigned cold = 319, seconds = 3, valve_s = 6;
  bool only_after = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> unsigned {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "reaper_budget: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    };
    if (a == "--cold") cold = next();
    else if (a == "--seconds") seconds = next();
    else if (a == "--valve-s") valve_s = next();
    else if (a == "--only-after") only_after = true;
    else {
      std::fprintf(stderr, "usage: reaper_budget [--cold N] [--seconds S] [--valve-s S] [--only-after]\n");
      return 2;
    }
  }
  if (cold == 0 || seconds == 0 || valve_s <= seconds + 1) {
    std::fprintf(stderr, "reaper_budget: need --cold > 0, --seconds > 0 and --valve-s > --seconds + 1\n");
    return 2;
  }
  std::printf("# reaper_budget: 1 never-empty queue, %u cold queues with one record a second each, %u s\n", cold,
              seconds);
  if (!only_after) {
    char label[96];
    std::snprintf(label, sizeof label, "before (no budget, hot queue endless until %u s)", valve_s);
    print(label, run(std::numeric_limits<std::size_t>::max(), cold, seconds, valve_s));
  }
  const Reaper::Options defaults;
  char label[64];
  std::snprintf(label, sizeof label, "after (budget %zu)", defaults.budget);
  print(label, run(defaults.budget, cold, seconds, valve_s));
  return 0;
}
