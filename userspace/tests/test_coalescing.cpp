// SPDX-License-Identifier: MIT
//
// Interrupt coalescing (docs/device-model.md#coalescing,
// userspace/README.md#coalescing) without a device:
//   * FakeInterrupt, the fakes' model of the device's count + time limits;
//   * the Reaper's time-limit path: a stream that stops below the count
//     limit leaves no record behind;
//   * InterruptModerator's rule on a scripted rate (exact, hand-computed),
//     and the Reaper's adaptive moderation on a fake queue (raises the
//     threshold under a flood, back to 1 when slow, within the cap, with few
//     set_coalescing calls); Fixed never calls it, Preset once;
//   * the library's argument checks and capability checks for
//     NQ_INIT.coalesce_ns, NQ_COALESCE and NEURON_IOC_TIMESTAMP, and the
//     clock calibration from hand-made samples.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "device_access.hpp"
#include "fake_device.hpp"
#include "libneuron/clock.hpp"
#include "libneuron/moderation.hpp"
#include "libneuron/reaper.hpp"

using namespace neuron;
using neuron::test::FakeInterrupt;
using neuron::test::FakeQueue;
using neuron::test::FakeRing;
using neuron::test::seq_of;
using neuron::test::seq_record;
using neuron::test::wait_until;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
using ns = std::chrono::nanoseconds;

namespace {

/// Record number `seq` (bytes 8..15) of PE's EXPLICIT type.
Record pe_rec(std::uint64_t seq) {
  return seq_record(seq, NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_PE, NEURON_ENGINE_RECORD_EXPLICIT));
}

std::unique_ptr<Reaper> start_one(std::unique_ptr<FakeQueue> q, Reaper::Options o) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::move(q));
  auto r = Reaper::start(std::move(qs), nullptr, std::move(o));
  EXPECT_TRUE(r) << r.error().message();
  return r ? std::move(r).value() : nullptr;
}

}  // namespace

// ------------------------------------------------------------------ the fake's model
// Count limit 3, no time limit: records 1, 2 raise nothing, record 3 fires,
// record 4 nothing (fired until a HEAD write); a HEAD write that leaves 0
// re-arms; 3 more fire again. set() to count limit 2 with 2 unread fires at
// once (a live change re-evaluates).
TEST(Coalescing, FakeCountLimitFiresOnceUntilAHeadWrite) {
  FakeInterrupt irq(Coalescing{3, 0});
  irq.on_record(1);
  irq.on_record(2);
  EXPECT_EQ(0u, irq.edges());
  irq.on_record(3);
  EXPECT_EQ(1u, irq.count_edges());
  irq.on_record(4);
  EXPECT_EQ(1u, irq.count_edges());
  irq.on_head(0);
  irq.on_record(1);
  irq.on_record(2);
  irq.on_record(3);
  EXPECT_EQ(2u, irq.count_edges());
  irq.on_head(0);
  irq.on_record(1);
  irq.on_record(2);
  EXPECT_EQ(2u, irq.count_edges());
  irq.set(Coalescing{2, 0}, 2);
  EXPECT_EQ(3u, irq.count_edges());
  EXPECT_EQ(0u, irq.time_edges());
}

// Count limit 8, time limit 2 ms: one record fires by time (within the
// test's 5 s functional bound); a HEAD write leaving 1 unread starts the
// time limit again: a second time edge; a HEAD write leaving 0 starts none.
TEST(Coalescing, FakeTimeLimitFiresAfterTheFirstUnreadRecord) {
  FakeInterrupt irq(Coalescing{8, 2'000'000});
  irq.on_record(1);
  EXPECT_TRUE(wait_until([&] { return irq.time_edges() == 1; }, 5s));
  irq.on_head(1);
  EXPECT_TRUE(wait_until([&] { return irq.time_edges() == 2; }, 5s));
  irq.on_head(0);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(2u, irq.time_edges());
  EXPECT_EQ(0u, irq.count_edges());
}

// ------------------------------------------------------------------ Reaper, time-limit path
// A stream stops below the count limit: 5 records into a queue with count
// limit 16 and time limit 10 ms (the maximum; the 5 records are written well
// within it). No count edge can come; the time limit's edge wakes the
// reaper, which takes all 5: 0 count edges, 1 time edge.
TEST(Coalescing, RecordsBelowTheCountLimitArriveByTheTimeLimit) {
  auto q = std::make_unique<FakeQueue>(0, 1, 64, Coalescing{16, NEURON_NQ_COALESCE_NS_MAX});
  FakeQueue& fq = *q;
  Reaper::Options o;
  o.rescan = 0ms;
  o.moderation = Reaper::Moderation::Fixed;
  auto reaper = start_one(std::move(q), o);
  ASSERT_TRUE(reaper);
  auto w = reaper->expect([](const Arrival& a) { return a.record && seq_of(*a.record) == 4; });
  ASSERT_TRUE(w);
  ASSERT_TRUE(wait_until([&] { return fq.drains() > 0; }, 5s));  // the first look is over: only an edge wakes it
  for (std::uint64_t i = 0; i < 5; ++i) fq.push(pe_rec(i));
  ASSERT_EQ(WaitStatus::Completed, w->wait(5s));
  EXPECT_EQ(5u, reaper->stats().records);
  EXPECT_EQ(0u, fq.count_edges());
  EXPECT_EQ(1u, fq.time_edges());
  EXPECT_EQ(0u, reaper->stats().rescans);
  EXPECT_TRUE(fq.calls().empty()) << "Fixed: the queue is left alone";
}

// Adaptive, on a queue made with count limit 16 and no time limit (a few
// records could wait forever): start() bounds it by the budget (10 ms here)
// at once, set_coalescing({16, 10000000}), and 5 records arrive by the
// time limit.
TEST(Coalescing, AdaptiveBoundsACountLimitWithoutTimeLimitByTheBudget) {
  auto q = std::make_unique<FakeQueue>(0, 1, 64, Coalescing{16, 0});
  FakeQueue& fq = *q;
  // The calls start() made, taken on the Reaper's thread at its first drain,
  // which comes before the thread's first moderation (after that pass): once
  // the thread runs, a slow start (TSan, a loaded machine) may let the
  // moderator's 10 ms window pass and add a call of its own before the test
  // looks (issue 25: calls.size() 2 under TSan), so the test never reads
  // calls() while the thread may be adding to it.
  std::promise<std::vector<Coalescing>> at_first_drain;
  auto calls_f = at_first_drain.get_future();
  bool first = true;  // the reaper thread's
  fq.on_drain([&](const DrainResult&) {
    if (std::exchange(first, false)) at_first_drain.set_value(fq.calls());
  });
  Reaper::Options o;
  o.rescan = 0ms;
  o.latency_budget = 10ms;
  auto reaper = start_one(std::move(q), o);
  ASSERT_TRUE(reaper);
  ASSERT_EQ(std::future_status::ready, calls_f.wait_for(10s));
  const auto calls = calls_f.get();  // start() made them, before its thread moderated
  ASSERT_EQ(1u, calls.size());
  EXPECT_EQ((Coalescing{16, 10'000'000}), calls[0]);
  auto w = reaper->expect([](const Arrival& a) { return a.record && seq_of(*a.record) == 4; });
  ASSERT_TRUE(w);
  ASSERT_TRUE(wait_until([&] { return fq.drains() > 0; }, 5s));  // the first look is over: only an edge wakes it
  for (std::uint64_t i = 0; i < 5; ++i) fq.push(pe_rec(i));
  ASSERT_EQ(WaitStatus::Completed, w->wait(5s));
  // by the time limit, unless the moderator found the queue idle for a
  // window (10 ms) before the records came and set the count limit to 1
  EXPECT_GE(fq.time_edges() + fq.count_edges(), 1u);
}

// Preset: the given values, once per queue, in start(); a value the queue
// refuses (count limit 65 > 64 entries: the driver's EINVAL) fails start().
TEST(Coalescing, PresetIsAppliedOnceAndARefusalFailsStart) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  std::vector<FakeQueue*> fq;
  for (unsigned i = 0; i < 3; ++i) {
    qs.push_back(std::make_unique<FakeQueue>(0, i, 64, 1));
    fq.push_back(static_cast<FakeQueue*>(qs.back().get()));
  }
  Reaper::Options o;
  o.rescan = 0ms;
  o.moderation = Reaper::Moderation::Preset;
  o.preset = Coalescing{8, 10'000'000};
  auto r = Reaper::start(std::move(qs), nullptr, o);
  ASSERT_TRUE(r) << r.error().message();
  auto w = (*r)->expect([](const Arrival& a) { return a.record && seq_of(*a.record) == 2; });
  ASSERT_TRUE(wait_until([&] { return fq[2]->drains() > 0; }, 5s));
  fq[2]->push(pe_rec(1));
  fq[2]->push(pe_rec(2));  // 2 < 8: by the 10 ms time limit
  ASSERT_EQ(WaitStatus::Completed, w->wait(5s));
  (*r)->stop();
  for (auto* q : fq) {
    ASSERT_EQ(1u, q->calls().size());
    EXPECT_EQ((Coalescing{8, 10'000'000}), q->calls()[0]);
  }
  EXPECT_EQ(1u, fq[2]->time_edges());

  std::vector<std::unique_ptr<ReapQueue>> bad;
  bad.push_back(std::make_unique<FakeQueue>(0, 0, 64, 1));
  o.preset = Coalescing{65, 0};
  auto r2 = Reaper::start(std::move(bad), nullptr, o);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, std::errc::invalid_argument);
}

// Issue 41: a try_start() that fails leaves the queues and the event
// source with the caller, as given (here a Preset the second queue refuses:
// count limit 65 > its 64 entries); the same queues then start a Reaper.
// (start() takes them by value, so they are its own from the call.)
TEST(Coalescing, AFailedStartLeavesTheQueuesWithTheCaller) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 0, 128, 1));
  qs.push_back(std::make_unique<FakeQueue>(0, 1, 64, 1));
  ReapQueue* const first = qs[0].get();
  ReapQueue* const second = qs[1].get();
  std::unique_ptr<EventSource> events = std::make_unique<neuron::test::FakeEvents>();
  EventSource* const ev = events.get();
  Reaper::Options o;
  o.rescan = 0ms;
  o.moderation = Reaper::Moderation::Preset;
  o.preset = Coalescing{65, 0};
  auto r = Reaper::try_start(qs, events, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, std::errc::invalid_argument);
  ASSERT_EQ(2u, qs.size());
  EXPECT_EQ(first, qs[0].get());
  EXPECT_EQ(second, qs[1].get());
  EXPECT_EQ(ev, events.get());
  // still whole: they start a Reaper with a preset they accept
  o.preset = Coalescing{8, 0};
  auto r2 = Reaper::try_start(qs, events, o);
  ASSERT_TRUE(r2) << r2.error().message();
  EXPECT_EQ(2u, (*r2)->queue_count());
  EXPECT_TRUE(qs.empty());
  EXPECT_EQ(nullptr, events);
}

TEST(Coalescing, LatencyBudgetOutOfRangeIsRefused) {
  for (const auto budget : {std::chrono::microseconds(0), std::chrono::microseconds(10'001)}) {
    Reaper::Options o;
    o.latency_budget = budget;
    auto r = Reaper::start({}, nullptr, o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, make_error_code(errc::invalid_argument));
    EXPECT_THAT(r.error().message(), HasSubstr("latency_budget"));
  }
}

// ------------------------------------------------------------------ the moderation rule
// budget B = 500 us, window W = 10 ms, 256 entries: cap C = 64. Start at
// threshold 1, t = 0. T = clamp(floor(records * 500000 / window_ns), 1, 64).
//   t=5ms   500 records: window 5 ms < W, still open
//   t=10ms  +1500: 2000 in 10 ms -> 2000*500000/10^7 = 100 -> 64; 64 >= 2*1: {64, 500000}; 200000/s
//   t=20ms  1000 in 10 ms -> 50; 50 < 2*64 and 2*50 > 64: no change; 100000/s
//   t=30ms  400 in 10 ms -> 20; 2*20 <= 64: {20, 500000}; 40000/s
//   t=35ms  0: open (5 ms)
//   t=1030ms 3 in 1000 ms -> 0.0015 -> 1; 2*1 <= 20: {1, 500000}; 3/s
//   t=1040ms 30 in 10 ms -> 1.5 -> 1; no change
//   t=1050ms 60 in 10 ms -> 3; 3 >= 2*1: {3, 500000}
// Four changes.
TEST(Moderation, ScriptedRateGivesTheHandComputedThresholds) {
  InterruptModerator::Config c;
  c.max_threshold = InterruptModerator::max_threshold_for(256);
  EXPECT_EQ(64u, c.max_threshold);
  InterruptModerator m(c, 1, ns(0));
  EXPECT_FALSE(m.observe(500, 5ms));
  EXPECT_EQ(1u, m.threshold());
  EXPECT_EQ(std::optional(Coalescing{64, 500'000}), m.observe(1500, 10ms));
  EXPECT_EQ(200'000u, m.rate());
  EXPECT_FALSE(m.observe(1000, 20ms));
  EXPECT_EQ(64u, m.threshold());
  EXPECT_EQ(100'000u, m.rate());
  EXPECT_EQ(std::optional(Coalescing{20, 500'000}), m.observe(400, 30ms));
  EXPECT_EQ(40'000u, m.rate());
  EXPECT_FALSE(m.observe(0, 35ms));
  EXPECT_EQ(std::optional(Coalescing{1, 500'000}), m.observe(3, 1030ms));
  EXPECT_EQ(3u, m.rate());
  EXPECT_FALSE(m.observe(30, 1040ms));
  EXPECT_EQ(std::optional(Coalescing{3, 500'000}), m.observe(60, 1050ms));
  EXPECT_EQ(3u, m.threshold());
}

TEST(Moderation, CapIsAQuarterOfTheRingAndAtLeastOne) {
  EXPECT_EQ(1u, InterruptModerator::max_threshold_for(0));
  EXPECT_EQ(1u, InterruptModerator::max_threshold_for(4));
  EXPECT_EQ(2u, InterruptModerator::max_threshold_for(8));
  EXPECT_EQ(16u, InterruptModerator::max_threshold_for(64));
  EXPECT_EQ(16384u, InterruptModerator::max_threshold_for(65536));
  // a count that would overflow records * budget is at the cap
  InterruptModerator::Config c;
  c.max_threshold = 16;
  InterruptModerator m(c, 1, ns(0));
  EXPECT_EQ(std::optional(Coalescing{16, 500'000}), m.observe(~std::uint64_t{0} / 2, 10ms));
}

// The Reaper adapts a fake queue (64 entries: cap 16, budget 500 us):
//  * a flood (as fast as backpressure lets the producer, for 300 ms; well
//    above the 32000 records/s at which 16 arrive in one budget) raises the
//    threshold: a full-rate window's target is the cap, 16, and the factor-2
//    rule keeps any value from 9 up (16 < 2 x 9), so the highest value
//    programmed is in [9, 16] (16 unless a window was diluted by the
//    producer being descheduled);
//  * then one record every 20 ms (50/s: 0.025 per budget) brings it back
//    to 1 (the record that finds 16 still set arrives by the time limit);
//  * every call programs the time limit 500000 ns and a threshold in
//    [1, 16]; the last is 1; few calls (each changes the threshold by a
//    factor of 2 and there is at most one per 10 ms window; a steady
//    producer needs 2); no record lost; Stats count the changes.
TEST(Moderation, AdaptiveRaisesTheThresholdUnderAFloodAndReturnsTo1WhenSlow) {
  auto q = std::make_unique<FakeQueue>(0, 1, 64, 1);
  FakeQueue& fq = *q;
  Reaper::Options o;
  o.rescan = 0ms;
  std::atomic<std::uint64_t> got{0};
  o.on_records = [&](unsigned, unsigned, std::span<const Record> r) { got.fetch_add(r.size()); };
  const auto t0 = std::chrono::steady_clock::now();
  auto reaper = start_one(std::move(q), o);
  ASSERT_TRUE(reaper);
  EXPECT_EQ(1u, reaper->stats().moderated_queues);

  // The flood lasts 300 ms, and longer (up to 20 s) until the moderator has
  // raised the threshold to 9 or more: on a loaded machine the producer may
  // get too little CPU in 300 ms for a window at full rate (a flood that is
  // not one: top 4, or still 1, in loaded runs), so the test waits for the
  // state it checks instead of assuming the rate.
  const auto raised = [&] {
    for (const auto& c : fq.calls())
      if (c.threshold >= 9) return true;
    return false;
  };
  std::uint64_t pushed = 0;
  const auto flood_start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < flood_start + 300ms ||
         (!raised() && std::chrono::steady_clock::now() < flood_start + 20s))
    for (int k = 0; k < 64; ++k) fq.push(pe_rec(pushed++));
  const auto after_flood = fq.calls();
  ASSERT_FALSE(after_flood.empty());
  EXPECT_TRUE(raised()) << "raised to 9 or more by the flood";

  for (int k = 0; k < 25 && fq.coalescing()->threshold != 1; ++k) {
    std::this_thread::sleep_for(20ms);
    fq.push(pe_rec(pushed++));
  }
  ASSERT_TRUE(wait_until([&] { return got.load() == pushed; }, 5s))
      << got.load() << " of " << pushed << " delivered; fake HEAD " << fq.head() << " TAIL " << fq.tail() << ", "
      << fq.count_edges() << " count edges, " << fq.time_edges() << " time edges, " << fq.calls().size()
      << " calls, threshold " << fq.coalescing()->threshold << ", reaper wakes " << reaper->stats().wakes
      << " drains " << reaper->stats().drains;
  const auto calls = fq.calls();
  reaper->stop();
  EXPECT_EQ(1u, calls.back().threshold);
  EXPECT_EQ(1u, fq.coalescing()->threshold);
  std::uint32_t top = 0;
  for (const auto& c : calls) {
    EXPECT_EQ(500'000u, c.coalesce_ns);
    EXPECT_GE(c.threshold, 1u);
    EXPECT_LE(c.threshold, 16u);
    top = std::max(top, c.threshold);
  }
  EXPECT_GE(top, 9u);
  EXPECT_LE(top, 16u);
  // Few calls, by the moderator's two rules rather than by a count that
  // assumes a steady producer (under load the producer is descheduled for
  // whole 10 ms windows, the measured rate halves and the threshold
  // legitimately swings 16 -> 7 -> 16: 13 calls in a loaded run): each call
  // changes the threshold by a factor of 2 or more, and there is at most one
  // per 10 ms window of the run (a bound that only grows when the run is slow).
  std::uint32_t prev = 1;  // the queue was made with threshold 1
  for (const auto& c : calls) {
    EXPECT_TRUE(c.threshold >= 2 * prev || 2 * c.threshold <= prev) << prev << " -> " << c.threshold;
    prev = c.threshold;
  }
  const auto windows = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0) / 10ms;
  EXPECT_LE(calls.size(), static_cast<std::size_t>(windows) + 1);
  const auto st = reaper->stats();
  EXPECT_EQ(calls.size(), st.coalesce_changes);
  EXPECT_EQ(0u, st.coalesce_errors);
  EXPECT_EQ(pushed, st.records);
  // Whether a slow record met the raised threshold (and came by the time
  // limit) depends on when the last flood window closed, so it is printed,
  // not checked; Coalescing.PresetIsAppliedOnceAndARefusalFailsStart checks
  // delivery by the time limit deterministically.
  std::printf("adaptive moderation: %llu records, %llu wakes, %zu set_coalescing calls (thresholds", 
              static_cast<unsigned long long>(pushed), static_cast<unsigned long long>(st.wakes), calls.size());
  for (const auto& c : calls) std::printf(" %u", c.threshold);
  std::printf("), %llu count edges, %llu time edges\n", static_cast<unsigned long long>(fq.count_edges()),
              static_cast<unsigned long long>(fq.time_edges()));
}

// Fixed mode never calls set_coalescing, however high the rate (a 100 ms
// flood, which takes an adaptive queue to its cap within 10 ms); a queue
// that cannot be changed (an older driver) is not moderated and not an
// error, in Adaptive mode too.
TEST(Moderation, FixedModeAndAnOlderDriverNeverCallSetCoalescing) {
  for (const bool older_driver : {false, true}) {
    SCOPED_TRACE(older_driver ? "adaptive, older driver" : "fixed");
    auto q = std::make_unique<FakeQueue>(0, 1, 64, 1);
    FakeQueue& fq = *q;
    fq.set_adjustable(!older_driver);
    Reaper::Options o;
    o.rescan = 0ms;
    o.moderation = older_driver ? Reaper::Moderation::Adaptive : Reaper::Moderation::Fixed;
    auto reaper = start_one(std::move(q), o);
    ASSERT_TRUE(reaper);
    // the flood of the adaptive test, 100 ms: Adaptive would change it within 10 ms
    std::uint64_t pushed = 0;
    const auto end = std::chrono::steady_clock::now() + 100ms;
    while (std::chrono::steady_clock::now() < end)
      for (int k = 0; k < 64; ++k) fq.push(pe_rec(pushed++));
    ASSERT_TRUE(wait_until([&] { return reaper->stats().records == pushed; }, 10s));
    reaper->stop();
    EXPECT_TRUE(fq.calls().empty()) << fq.calls().size() << " calls";
    const auto st = reaper->stats();
    EXPECT_EQ(0u, st.coalesce_changes);
    EXPECT_EQ(0u, st.coalesce_errors);
    EXPECT_EQ(0u, st.moderated_queues);
    EXPECT_EQ(pushed, st.records);
  }
}

// ------------------------------------------------------------------ library checks
// No driver of ours behind /dev/null: DEVICE_INFO fails at open, so no
// capability is assumed and the new ioctls are not tried.
TEST(CoalescingApi, WithoutTheCapabilitiesNothingIsTried) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(0u, d->capabilities());
  auto init = d->nq_init(0, 1, 4096, 0, 1, 500'000);
  ASSERT_FALSE(init);
  EXPECT_EQ(init.error().code, make_error_code(errc::not_supported));
  EXPECT_THAT(init.error().message(), HasSubstr("NEURON_IOC_NQ_INIT core=0 queue=1 coalesce_ns=500000"));
  EXPECT_THAT(init.error().message(), HasSubstr("NEURON_CAP_COALESCE"));
  // coalesce_ns 0: the first release's call, the ioctl's own error
  auto plain = d->nq_init(0, 1, 4096, 0, 1, 0);
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().code, std::errc::inappropriate_io_control_operation);
  auto co = d->nq_coalesce(0, 1, 8, 500'000);
  ASSERT_FALSE(co);
  EXPECT_EQ(co.error().code, make_error_code(errc::not_supported));
  EXPECT_THAT(co.error().message(), HasSubstr("NEURON_IOC_NQ_COALESCE core=0 queue=1 threshold=8 coalesce_ns=500000"));
  auto ts = d->timestamp(0);
  ASSERT_FALSE(ts);
  EXPECT_EQ(ts.error().code, make_error_code(errc::not_supported));
  EXPECT_THAT(ts.error().message(), HasSubstr("NEURON_CAP_TIMESTAMP"));
  auto cal = calibrate_clock(*d, 0, 4);
  ASSERT_FALSE(cal);
  EXPECT_EQ(cal.error().code, make_error_code(errc::not_supported));
  auto none = calibrate_clock(*d, 0, 0);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, make_error_code(errc::invalid_argument));

  NotificationQueue::Options o;
  o.coalesce_ns = 500'000;
  auto q = NotificationQueue::create(*d, 0, 1, o);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().code, make_error_code(errc::not_supported));
  o.coalesce_ns = NEURON_NQ_COALESCE_NS_MAX + 1;
  q = NotificationQueue::create(*d, 0, 1, o);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().code, make_error_code(errc::invalid_argument));
  EXPECT_THAT(q.error().message(), HasSubstr("coalesce_ns 10000001"));
  // an eventfd with a time limit alone is fine (fails later, at the capability)
  o.coalesce_ns = 1000;
  o.threshold = 0;
  o.eventfd = true;
  q = NotificationQueue::create(*d, 0, 1, o);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().code, make_error_code(errc::not_supported));
}

// set_coalescing on a queue without a device (over()): the arguments are
// checked first (each message names the field), then not_supported.
TEST(CoalescingApi, SetCoalescingChecksItsArgumentsThenTheDevice) {
  FakeRing ring(16);
  auto efd = UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  auto q = NotificationQueue::over(std::span<const Record>(ring.records().data(), 16), Doorbell(),
                                   []() -> Result<NqInfo> { return NqInfo{}; }, 0, 3, 0, std::move(efd));
  ASSERT_TRUE(q) << q.error().message();
  EXPECT_FALSE(q->coalescing_supported());
  EXPECT_FALSE(q->device_index());
  auto s = q->set_coalescing(17, 0);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, make_error_code(errc::invalid_argument));
  EXPECT_THAT(s.error().message(), HasSubstr("threshold is above the ring's 16 entries"));
  s = q->set_coalescing(4, NEURON_NQ_COALESCE_NS_MAX + 1);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("coalesce_ns is above NEURON_NQ_COALESCE_NS_MAX"));
  s = q->set_coalescing(0, 0);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("both 0 on a queue with an eventfd"));
  s = q->set_coalescing(16, NEURON_NQ_COALESCE_NS_MAX);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, make_error_code(errc::not_supported));
  EXPECT_THAT(s.error().message(), HasSubstr("NEURON_IOC_NQ_COALESCE core=0 queue=3 threshold=16 coalesce_ns=10000000"));

  NotificationQueue moved = std::move(q).value();
  EXPECT_EQ(q->set_coalescing(4, 0).error().code, make_error_code(errc::moved_from));
  moved.mark_device_gone();
  EXPECT_EQ(moved.set_coalescing(4, 0).error().code, make_error_code(errc::device_gone));
}

// ------------------------------------------------------------------ clock calibration
// Three samples (ns, ps):
//   0: [1000000, 1000400] device 5000000000 ps   window 400
//   1: [2000000, 2000101] device 6000050000 ps   window 101 <- narrowest
//   2: [3000000, 3000250] device 7000000000 ps   window 250
// Kept: 1. midpoint 2000000 + 101/2 = 2000050; device 6000050 ns;
// offset 2000050 - 6000050 = -4000000; uncertainty (101 + 1)/2 + 1 = 52.
// A record stamped 7000000000 ps is at 7000000 - 4000000 = 3000000 ns.
TEST(ClockCalibration, KeepsTheNarrowestWindow) {
  const std::array<TimestampSample, 3> s = {{
      {1'000'000, 5'000'000'000, 1'000'400},
      {2'000'000, 6'000'050'000, 2'000'101},
      {3'000'000, 7'000'000'000, 3'000'250},
  }};
  auto c = calibrate_clock(s);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(1u, c->best);
  EXPECT_EQ(3u, c->samples);
  EXPECT_EQ(101u, c->window_ns);
  EXPECT_EQ(-4'000'000, c->offset_ns);
  EXPECT_EQ(52u, c->uncertainty_ns);
  EXPECT_EQ(3'000'000, c->to_monotonic_ns(7'000'000'000));
}

// Equal windows: the first is kept. Window 0 (even): uncertainty 0/2 + 1 = 1;
// device 999999 ps is 999 ns: offset 500 - 999 = -499.
TEST(ClockCalibration, TiesKeepTheFirstAndBadSamplesAreRefused) {
  const std::array<TimestampSample, 2> tie = {{{500, 999'999, 500}, {600, 0, 600}}};
  auto c = calibrate_clock(tie);
  ASSERT_TRUE(c);
  EXPECT_EQ(0u, c->best);
  EXPECT_EQ(-499, c->offset_ns);
  EXPECT_EQ(1u, c->uncertainty_ns);

  auto empty = calibrate_clock(std::span<const TimestampSample>());
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, make_error_code(errc::invalid_argument));
  const std::array<TimestampSample, 2> bad = {{{10, 0, 20}, {30, 0, 29}}};
  auto b = calibrate_clock(bad);
  ASSERT_FALSE(b);
  EXPECT_THAT(b.error().message(), HasSubstr("sample 1 ends (29 ns) before it begins (30 ns)"));
}
