// SPDX-License-Identifier: MIT
//
// The Reaper (docs/hardware.md#completion) on fake queues that raise their
// threshold edge exactly like the device (once, re-armed only by a HEAD write):
// no record lost or reordered, waiters completed through their own eventfd, no
// spinning while idle, RAII shutdown. Options::rescan is 0 (off) in these
// tests unless said otherwise, so every wake-up comes from an edge: a lost
// edge would hang a test (bounded by its timeout) instead of being papered over.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "fake_device.hpp"
#include "libneuron/reaper.hpp"

using namespace neuron;
using neuron::test::FakeEvents;
using neuron::test::FakeQueue;
using neuron::test::seq_of;
using neuron::test::wait_until;
using namespace std::chrono_literals;

namespace {

std::uint64_t reaper_race_records() {
  if (const char* s = std::getenv("NEURON_RACE_RECORDS")) {
    const unsigned long long v = std::strtoull(s, nullptr, 0);
    if (v > 0) return v / 10 ? v / 10 : 1;
  }
  return 1'000'000;
}

Record seq_record(std::uint64_t seq, unsigned engine = NEURON_ENGINE_SP) {
  Record r;
  r.bytes[3] = NEURON_ENGINE_NOTIFIC_TYPE(engine, NEURON_ENGINE_RECORD_EXPLICIT);
  for (int i = 0; i < 4; ++i) r.bytes[4 + i] = static_cast<std::uint8_t>(seq >> (8 * i));
  for (int i = 0; i < 8; ++i) r.bytes[8 + i] = static_cast<std::uint8_t>(seq >> (8 * i));
  return r;
}

struct Collected {
  std::mutex mu;
  std::vector<std::pair<unsigned, std::uint64_t>> seen;  // (queue, seq)
};

Reaper::Options collecting(Collected& c) {
  Reaper::Options o;
  o.rescan = 0ms;
  o.on_records = [&c](unsigned, unsigned queue, std::span<const Record> recs) {
    std::lock_guard lk(c.mu);
    for (const auto& r : recs) c.seen.emplace_back(queue, seq_of(r));
  };
  return o;
}

Reaper::Match record_with_seq(std::uint64_t seq) {
  return [seq](const Arrival& a) { return a.record && seq_of(*a.record) == seq; };
}

}  // namespace

TEST(Reaper, DrainsEveryQueueAndCompletesAWaiterThroughItsEventfd) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  std::vector<FakeQueue*> fq;
  for (unsigned q = 0; q < 3; ++q) {
    auto p = std::make_unique<FakeQueue>(0, q, 16, 1);
    fq.push_back(p.get());
    qs.push_back(std::move(p));
  }
  Collected c;
  auto reaper = Reaper::start(std::move(qs), nullptr, collecting(c));
  ASSERT_TRUE(reaper) << reaper.error().message();
  constexpr std::uint64_t kN = 3000;
  auto w = (*reaper)->expect(record_with_seq(kN - 1));
  ASSERT_TRUE(w);
  EXPECT_GE(w->fd(), 0);
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kN; ++i) fq[i % 3]->push(seq_record(i));
  });
  EXPECT_EQ(w->wait(20s), WaitStatus::Completed);
  producer.join();
  ASSERT_TRUE(w->completion().record);
  EXPECT_EQ(seq_of(*w->completion().record), kN - 1);
  EXPECT_EQ(w->completion().queue, (kN - 1) % 3);
  (*reaper)->stop();
  std::vector<std::uint64_t> next = {0, 1, 2};
  ASSERT_EQ(c.seen.size(), kN);
  for (auto [q, seq] : c.seen) {
    EXPECT_EQ(seq, next[q]) << "queue " << q;
    next[q] = seq + 3;
  }
  const auto st = (*reaper)->stats();
  EXPECT_EQ(st.records, kN);
  EXPECT_EQ(st.completed, 1u);
  EXPECT_EQ(st.rescans, 0u);
  EXPECT_EQ(st.late_records, 0u);
  EXPECT_GT(st.queue_wakes, 0u);
}

// docs/hardware.md#completion: the reap thread sleeps; it does not spin on the
// ring.
TEST(Reaper, SleepsWhileNothingArrives) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 1, 64, 1));
  auto* q = static_cast<FakeQueue*>(qs.back().get());
  Collected c;
  auto reaper = Reaper::start(std::move(qs), nullptr, collecting(c));
  ASSERT_TRUE(reaper);
  std::this_thread::sleep_for(200ms);
  const auto st = (*reaper)->stats();
  EXPECT_EQ(st.wakes, 0u);
  EXPECT_LE(q->drains(), 2u);  // the first look only
  EXPECT_LT((*reaper)->cpu_time(), 50ms);
  q->push(seq_record(7));
  auto w = (*reaper)->expect(record_with_seq(8));
  q->push(seq_record(8));
  EXPECT_EQ(w->wait(10s), WaitStatus::Completed);
  EXPECT_GE((*reaper)->stats().wakes, 1u);
}

// A waiter is signalled only after the pass that found its match has emptied
// every queue: what was written before the match (on any queue) came first.
TEST(Reaper, RecordsWrittenBeforeTheMatchAreDeliveredFirst) {
  for (int round = 0; round < 50; ++round) {
    std::vector<std::unique_ptr<ReapQueue>> qs;
    std::vector<FakeQueue*> fq;
    for (unsigned q = 0; q < 4; ++q) {
      auto p = std::make_unique<FakeQueue>(0, q, 64, 1);
      fq.push_back(p.get());
      qs.push_back(std::move(p));
    }
    Collected c;
    auto reaper = Reaper::start(std::move(qs), nullptr, collecting(c));
    ASSERT_TRUE(reaper);
    auto w = (*reaper)->expect(record_with_seq(1000));
    fq[3]->push(seq_record(1));   // "error" on queue 3
    fq[0]->push(seq_record(1000));  // "completion" on queue 0, written after it
    ASSERT_EQ(w->wait(10s), WaitStatus::Completed);
    std::lock_guard lk(c.mu);  // the reaper may still be running: lock
    bool saw_first = false;
    for (auto [q, seq] : c.seen) saw_first = saw_first || seq == 1;
    EXPECT_TRUE(saw_first) << "round " << round;
  }
}

TEST(Reaper, EdgesReachTheCallbackAndWaiters) {
  auto ev = std::make_unique<FakeEvents>();
  FakeEvents* fe = ev.get();
  std::vector<Event> got;
  std::mutex mu;
  Reaper::Options o;
  o.rescan = 0ms;
  o.on_event = [&](const Event& e) {
    std::lock_guard lk(mu);
    got.push_back(e);
  };
  auto reaper = Reaper::start({}, std::move(ev), o);
  ASSERT_TRUE(reaper);
  auto w = (*reaper)->expect([](const Arrival& a) {
    return a.event && a.event->edge == NEURON_EDGE_NOTIFIC && (a.event->cause & (1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW));
  });
  Event e{};
  e.edge = NEURON_EDGE_THROTTLE;
  fe->push(e);
  e.edge = NEURON_EDGE_NOTIFIC;
  e.core = 1;
  e.cause = 1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW;
  e.count = 9;
  fe->push(e);
  ASSERT_EQ(w->wait(10s), WaitStatus::Completed);
  ASSERT_TRUE(w->completion().event);
  EXPECT_EQ(w->completion().event->count, 9u);
  EXPECT_EQ(w->completion().core, 1u);
  EXPECT_FALSE(w->completion().record);
  (*reaper)->stop();
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ((*reaper)->stats().events, 2u);
}

TEST(Reaper, StopReportsStoppedAndWaitersMayOutliveIt) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 0, 16, 1));
  auto reaper = Reaper::start(std::move(qs));
  ASSERT_TRUE(reaper);
  auto w = (*reaper)->expect(record_with_seq(1));
  auto w2 = (*reaper)->expect(record_with_seq(2));
  EXPECT_EQ(w->wait(20ms), WaitStatus::TimedOut);
  std::thread t([&] { EXPECT_EQ(w2->wait(-1ms), WaitStatus::Stopped); });  // blocks until the stop
  reaper->reset();  // destructor: stop, join, destroy the queues
  t.join();
  EXPECT_EQ(w->wait(0ms), WaitStatus::Stopped);
  EXPECT_EQ(w->status(), WaitStatus::Stopped);
}

TEST(Reaper, ExpectAfterStopIsStoppedAtOnce) {
  auto reaper = Reaper::start({});
  ASSERT_TRUE(reaper);
  (*reaper)->stop();
  (*reaper)->stop();  // idempotent
  auto w = (*reaper)->expect([](const Arrival&) { return true; });
  ASSERT_TRUE(w);
  EXPECT_EQ(w->wait(0ms), WaitStatus::Stopped);
}

TEST(Reaper, DestroyedWaiterIsDeregistered) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 0, 16, 1));
  auto* q = static_cast<FakeQueue*>(qs.back().get());
  auto reaper = Reaper::start(std::move(qs));
  ASSERT_TRUE(reaper);
  { auto w = (*reaper)->expect(record_with_seq(5)); }
  auto w2 = (*reaper)->expect(record_with_seq(5));
  Waiter moved = std::move(*w2);  // moving keeps the registration
  q->push(seq_record(5));
  EXPECT_EQ(moved.wait(10s), WaitStatus::Completed);
  EXPECT_EQ((*reaper)->stats().completed, 1u);
}

// A queue with no eventfd (or an edge lost on the way) is still drained by the
// periodic rescan, and the reaper counts what it found that way.
TEST(Reaper, RescanFindsRecordsThatCameWithoutAnEdge) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 0, 16, 1, /*with_eventfd=*/false));
  auto* q = static_cast<FakeQueue*>(qs.back().get());
  Reaper::Options o;
  o.rescan = 10ms;
  auto reaper = Reaper::start(std::move(qs), nullptr, o);
  ASSERT_TRUE(reaper);
  auto w = (*reaper)->expect(record_with_seq(3));
  while (q->drains() == 0) std::this_thread::sleep_for(1ms);  // its first look is over
  q->push(seq_record(3));
  EXPECT_EQ(w->wait(10s), WaitStatus::Completed);
  EXPECT_GE((*reaper)->stats().late_records, 1u);
  EXPECT_GE((*reaper)->stats().rescans, 1u);
}

// The producer/consumer race through the Reaper: a producer thread writes
// through a 64-entry backpressured ring while the reap thread sleeps on the
// threshold edge; every record arrives once, in order, with no rescan.
// NEURON_RACE_RECORDS (divided by 10) sets the count, for ThreadSanitizer.
TEST(Reaper, ProducerThreadRaceNoLossNoDuplication) {
  const std::uint64_t n = reaper_race_records();
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 1, 64, 1));
  auto* q = static_cast<FakeQueue*>(qs.back().get());
  std::uint64_t next = 0, bad = 0;
  Reaper::Options o;
  o.rescan = 0ms;
  o.batch = 32;
  o.on_records = [&](unsigned, unsigned, std::span<const Record> recs) {
    for (const auto& r : recs) {
      if (seq_of(r) != next || r.u32(4) != static_cast<std::uint32_t>(next)) ++bad;
      next = seq_of(r) + 1;
    }
  };
  auto reaper = Reaper::start(std::move(qs), nullptr, o);
  ASSERT_TRUE(reaper);
  auto w = (*reaper)->expect(record_with_seq(n - 1));
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < n; ++i) q->push(seq_record(i));
  });
  const auto st = w->wait(120s);
  producer.join();
  (*reaper)->stop();
  EXPECT_EQ(st, WaitStatus::Completed);
  EXPECT_EQ(next, n);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ((*reaper)->stats().records, n);
  EXPECT_EQ((*reaper)->stats().late_records, 0u);
  std::printf("reaper race: %llu records, %llu edges, %llu wakes, %llu drains\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(q->edges()),
              static_cast<unsigned long long>((*reaper)->stats().wakes),
              static_cast<unsigned long long>(q->drains()));
}

// The Filter's cheap tests run before the predicate: records of other queues,
// types or cores, and edges when events=false, never reach it.
TEST(Reaper, FilterKeepsOtherArrivalsFromThePredicate) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 0, 64, 1));
  qs.push_back(std::make_unique<FakeQueue>(1, 1, 64, 1));
  auto* q0 = static_cast<FakeQueue*>(qs[0].get());
  auto* q1 = static_cast<FakeQueue*>(qs[1].get());
  auto ev = std::make_unique<FakeEvents>();
  auto* fe = ev.get();
  Reaper::Options o;
  o.rescan = 0ms;
  auto reaper = Reaper::start(std::move(qs), std::move(ev), o);
  ASSERT_TRUE(reaper);
  std::atomic<int> calls{0};
  Reaper::Filter f;
  f.core = 1;
  f.queue = 1;
  f.notific_type = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_ACT, NEURON_ENGINE_RECORD_EXPLICIT);
  f.events = false;
  auto w = (*reaper)->expect(
      [&calls](const Arrival& a) {
        ++calls;
        return seq_of(*a.record) == 9;
      },
      f);
  q0->push(seq_record(1, NEURON_ENGINE_ACT));  // other core/queue
  q1->push(seq_record(2, NEURON_ENGINE_PE));   // other type
  Event e{};
  e.core = 1;
  fe->push(e);                                 // an edge
  q1->push(seq_record(3, NEURON_ENGINE_ACT));  // offered, not the one
  q1->push(seq_record(9, NEURON_ENGINE_ACT));  // the one
  ASSERT_EQ(w->wait(10s), WaitStatus::Completed);
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(w->completion().core, 1u);
}

// Edge-triggered eventfds, never read (the argument at the top of
// reaper.hpp): queue A is signalled while a pass drains it (a record pushed
// right after its drain wrote HEAD, which re-armed its threshold) and again
// after the pass has left it (a record pushed from queue B's last, empty
// drain). With rescans off, only those signals can bring the records in:
// every record arrives, none by a rescan, and each eventfd's counter, read
// here at the end, equals the firings of its queue: the Reaper read none.
TEST(Reaper, EdgeTriggeredEventfdsLoseNoWakeWhenSignalledDuringAPass) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(std::make_unique<FakeQueue>(0, 0, 16, 1));
  qs.push_back(std::make_unique<FakeQueue>(0, 1, 16, 1));
  auto* a = static_cast<FakeQueue*>(qs[0].get());
  auto* b = static_cast<FakeQueue*>(qs[1].get());
  std::atomic<int> during_a{0}, after_a{0};  // rounds still to inject
  std::atomic<std::uint64_t> next_seq{1000};
  // A's drain took records and wrote HEAD: a record now fires A's edge
  // while this pass still holds A (its next drain takes it)
  a->on_drain([&](const DrainResult& r) {
    if (r.count > 0 && during_a.fetch_sub(1) > 0) a->push(seq_record(next_seq++));
  });
  // B's empty drain ends the pass for B, after A's empty drain ended it for
  // A: a record for A now fires an edge nobody is draining for
  b->on_drain([&](const DrainResult& r) {
    if (r.count == 0 && after_a.fetch_sub(1) > 0) a->push(seq_record(next_seq++));
  });
  Collected c;
  auto reaper = Reaper::start(std::move(qs), nullptr, collecting(c));
  ASSERT_TRUE(reaper) << reaper.error().message();
  while (a->drains() == 0 || b->drains() == 0) std::this_thread::sleep_for(1ms);  // first look over
  constexpr int kRounds = 50;
  for (int i = 0; i < kRounds; ++i) {
    const std::uint64_t base = 2 * static_cast<std::uint64_t>(i);
    during_a = 1;
    after_a = 1;
    auto w = (*reaper)->expect([&](const Arrival& ar) { return ar.record && seq_of(*ar.record) == base + 1; });
    ASSERT_TRUE(w);
    // both queues in one wake's pass: A first, then B (the wake's order)
    a->push(seq_record(base));
    b->push(seq_record(base + 1));
    ASSERT_EQ(WaitStatus::Completed, w->wait(10s)) << "round " << i;
    // what the hooks pushed must come in on its own edges, no rescan
    auto all_in = [&] {
      std::lock_guard lk(c.mu);
      return c.seen.size() == 2 * static_cast<std::size_t>(i + 1) + (next_seq.load() - 1000);
    };
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!all_in() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(all_in()) << "round " << i << ": a record waits for an edge that was lost";
  }
  (*reaper)->stop();
  const auto st = (*reaper)->stats();
  EXPECT_EQ(0u, st.late_records);
  EXPECT_EQ(0u, st.rescans);
  EXPECT_GE(next_seq.load() - 1000, static_cast<std::uint64_t>(kRounds));  // the hooks ran
  const std::uint64_t fa = a->edges(), fb = b->edges();
  EXPECT_EQ(fa, a->take_eventfd_count()) << "the Reaper read queue A's eventfd";
  EXPECT_EQ(fb, b->take_eventfd_count()) << "the Reaper read queue B's eventfd";
  std::printf("reaper edge-triggered: %d rounds, %llu records injected during passes, %llu + %llu edges, %llu "
              "wakes\n",
              kRounds, static_cast<unsigned long long>(next_seq.load() - 1000), static_cast<unsigned long long>(fa),
              static_cast<unsigned long long>(fb), static_cast<unsigned long long>(st.wakes));
}

// ------------------------------------------------------------------ budget
namespace {

/// A queue whose producer keeps pace with any drain (a backpressured queue
/// whose engine refills every slot the drain hands back): every drain() fills
/// the span it is given, records numbered 0, 1, 2, ... It never comes back
/// empty until the test calls finish() (then it is empty for good), so a
/// Reaper that drains until empty never leaves it.
class EndlessQueue final : public ReapQueue {
 public:
  EndlessQueue() : efd_(::eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC)) {}  // "records waiting" from the start
  unsigned core() const noexcept override { return 0; }
  unsigned queue() const noexcept override { return 0; }
  std::uint32_t entries() const noexcept override { return 64; }
  int wake_fd() const noexcept override { return efd_.get(); }
  DrainResult drain(std::span<Record> out) noexcept override {
    DrainResult r;
    if (!finished_.load(std::memory_order_acquire)) {
      for (auto& rec : out) rec = seq_record(next_++);
      r.count = out.size();
    }
    drains_.fetch_add(1, std::memory_order_release);
    return r;
  }
  void finish() { finished_.store(true, std::memory_order_release); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  std::uint64_t drains() const { return drains_.load(std::memory_order_acquire); }

 private:
  UniqueFd efd_;
  std::uint64_t next_ = 0;  // the reaper thread's
  std::atomic<bool> finished_{false};
  std::atomic<std::uint64_t> drains_{0};
};

}  // namespace

// Options::budget (userspace/README.md#reaper-budget): a queue that never
// runs empty next to 63 cold queues with one record each. Every cold record
// is delivered, a waiter on one is signalled and stop() returns, all while
// the hot queue is still endless; the hot queue's records come in order.
// Without the budget the thread never leaves the hot queue: the waits below
// run into their limits (they only bound a failure, nothing is timed), then
// finish() lets the old loop end.
TEST(Reaper, ANeverEmptyQueueDoesNotStarveColdQueuesOrStop) {
  constexpr unsigned kCold = 63;
  std::vector<std::unique_ptr<ReapQueue>> qs;
  auto hot_q = std::make_unique<EndlessQueue>();
  EndlessQueue& hot = *hot_q;
  qs.push_back(std::move(hot_q));
  std::vector<FakeQueue*> cold;
  for (unsigned q = 1; q <= kCold; ++q) {
    auto p = std::make_unique<FakeQueue>(1, q, 16, 1);
    cold.push_back(p.get());
    qs.push_back(std::move(p));
  }
  std::mutex mu;
  std::vector<unsigned> delivered;  // cold queues, as their record arrived
  std::uint64_t delivered_while_finished = 0, hot_next = 0, hot_out_of_order = 0;
  Reaper::Options o;
  o.rescan = 0ms;
  o.on_records = [&](unsigned core, unsigned queue, std::span<const Record> recs) {
    std::lock_guard lk(mu);
    if (core == 0) {
      for (const auto& r : recs) hot_out_of_order += seq_of(r) != hot_next++;
      return;
    }
    for (std::size_t i = 0; i < recs.size(); ++i) delivered.push_back(queue);
    if (hot.finished()) ++delivered_while_finished;
  };
  auto reaper = Reaper::start(std::move(qs), nullptr, o);
  ASSERT_TRUE(reaper) << reaper.error().message();
  ASSERT_TRUE(wait_until([&] { return hot.drains() >= 100; }, 10s));  // the thread is on the hot queue
  Reaper::Filter cold_only;
  cold_only.core = 1;  // the hot queue's records are numbered too
  auto w = (*reaper)->expect(record_with_seq(7 + 1000), cold_only);
  ASSERT_TRUE(w);
  for (unsigned i = 0; i < kCold; ++i) cold[i]->push(seq_record(i + 1000));
  const bool all = wait_until(
      [&] {
        std::lock_guard lk(mu);
        return delivered.size() >= kCold;
      },
      20s);
  EXPECT_TRUE(all) << "cold records delivered while the hot queue never ran empty: " << [&] {
    std::lock_guard lk(mu);
    return delivered.size();
  }() << " of " << kCold;
  EXPECT_EQ(WaitStatus::Completed, w->wait(all ? 20s : 0ms));
  // stop() on another thread, so that a thread that never leaves the hot
  // queue fails the test instead of hanging it
  std::promise<void> stopped;
  auto stopped_f = stopped.get_future();
  std::thread stopper([&] {
    (*reaper)->stop();
    stopped.set_value();
  });
  const bool stop_returned = stopped_f.wait_for(20s) == std::future_status::ready;
  EXPECT_TRUE(stop_returned) << "stop() did not return while the hot queue never ran empty";
  EXPECT_FALSE(hot.finished());
  hot.finish();  // now even a loop without a budget ends
  stopper.join();
  std::lock_guard lk(mu);
  EXPECT_EQ(0u, delivered_while_finished);
  EXPECT_EQ(0u, hot_out_of_order);
  std::vector<unsigned> sorted = delivered;
  std::sort(sorted.begin(), sorted.end());
  std::vector<unsigned> expected;
  for (unsigned q = 1; q <= 63; ++q) expected.push_back(q);
  EXPECT_EQ(expected, sorted);  // each cold record once
  EXPECT_GE((*reaper)->stats().budget_hits, 100u);
}

// Issue 41: the lost-edge guard (Options::rescan) also runs under load. A
// queue that never runs empty keeps the thread from ever sleeping a whole
// rescan period; next to it a queue whose edge never comes (count limit 2,
// no time limit, one record) holds a record only a rescan can find. The
// rescan looks at the queues no pass has drained since the last one.
TEST(Reaper, RescanRunsUnderLoadForAQueueWhoseEdgeNeverCame) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  auto hot_q = std::make_unique<EndlessQueue>();
  EndlessQueue& hot = *hot_q;
  qs.push_back(std::move(hot_q));
  auto silent_q = std::make_unique<FakeQueue>(1, 0, 16, /*threshold=*/2);
  FakeQueue& silent = *silent_q;
  qs.push_back(std::move(silent_q));
  Reaper::Options o;
  o.rescan = 20ms;
  o.moderation = Reaper::Moderation::Fixed;  // Adaptive would add a time limit: an edge after all
  auto reaper = Reaper::start(std::move(qs), nullptr, o);
  ASSERT_TRUE(reaper) << reaper.error().message();
  ASSERT_TRUE(wait_until([&] { return hot.drains() >= 100 && silent.drains() >= 1; }, 10s));  // first look over
  Reaper::Filter silent_only;
  silent_only.core = 1;
  auto w = (*reaper)->expect(record_with_seq(41), silent_only);
  ASSERT_TRUE(w);
  silent.push(seq_record(41));  // below the count limit: no edge
  EXPECT_EQ(0u, silent.edges());
  // bounds a failure only: a rescan comes 20 ms after the last one
  EXPECT_EQ(WaitStatus::Completed, w->wait(10s)) << "rescans " << (*reaper)->stats().rescans;
  const auto st = (*reaper)->stats();
  EXPECT_GE(st.rescans, 1u);
  EXPECT_GE(st.late_records, 1u);
  EXPECT_FALSE(hot.finished());  // it was under load all along
  hot.finish();
}

// The ordering promise under the budget: a record written on a busy queue
// before the match on another queue is delivered before the waiter is
// signalled, although the busy queue holds more than one budget of records
// (a settling pass takes a ring's worth).
TEST(Reaper, TheOrderingPromiseHoldsWhenAQueueHoldsMoreThanItsBudget) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  auto busy_p = std::make_unique<FakeQueue>(0, 0, 64, 64);  // a count limit of 64: no edge before it is full
  auto other_p = std::make_unique<FakeQueue>(0, 1, 16, 1);
  FakeQueue& busy = *busy_p;
  FakeQueue& other = *other_p;
  qs.push_back(std::move(busy_p));
  qs.push_back(std::move(other_p));
  Collected c;
  std::atomic<const Waiter*> waiter{nullptr};
  std::atomic<std::uint64_t> busy_after_signal{0};
  Reaper::Options o = collecting(c);
  o.on_batch = [&](const QueueId& id, std::span<const Record> recs) {
    // on the reaper thread, which alone completes the waiter: a record
    // delivered after it did so is one the promise was about
    const Waiter* wp = waiter.load(std::memory_order_acquire);
    if (id.queue == 0 && wp && wp->status() == WaitStatus::Completed) busy_after_signal += recs.size();
  };
  o.budget = 4;  // the busy queue holds 60 records: fifteen budgets
  o.batch = 4;
  o.moderation = Reaper::Moderation::Fixed;
  auto reaper = Reaper::start(std::move(qs), nullptr, o);
  ASSERT_TRUE(reaper) << reaper.error().message();
  ASSERT_TRUE(wait_until([&] { return busy.drains() > 0 && other.drains() > 0; }, 10s));  // the first look is over
  for (std::uint64_t i = 0; i < 60; ++i) busy.push(seq_record(i));  // 60 < 64: no edge, unread
  auto w = (*reaper)->expect(record_with_seq(1000));
  ASSERT_TRUE(w);
  waiter.store(&*w, std::memory_order_release);
  other.push(seq_record(1000));
  ASSERT_EQ(WaitStatus::Completed, w->wait(10s));
  const auto busy_seen = [&] {
    std::lock_guard lk(c.mu);
    std::size_t n = 0;
    for (const auto& [queue, seq] : c.seen) n += queue == 0;
    return n;
  };
  (*reaper)->stop();
  EXPECT_EQ(60u, busy_seen());
  EXPECT_EQ(0u, busy_after_signal.load());  // all 60 before the signal
}

// Issue 25 item 5: Waiter::wait's now + timeout saturates. milliseconds::max()
// (and a timeout whose nanoseconds overflow) used to wrap into the past and
// return TimedOut at once; it must sleep until the record comes (30 ms later,
// from another thread).
TEST(Reaper, WaiterTimeoutsAtTheEndOfTheRangeSleepUntilARecord) {
  for (const std::chrono::milliseconds t : {std::chrono::milliseconds::max(), std::chrono::milliseconds(LLONG_MAX / 1000),
                                            std::chrono::milliseconds(LLONG_MAX / 1000000 + 1)}) {
    std::vector<std::unique_ptr<ReapQueue>> qs;
    auto p = std::make_unique<FakeQueue>(0, 1, 16, 1);
    FakeQueue& fq = *p;
    qs.push_back(std::move(p));
    Reaper::Options o;
    o.rescan = 0ms;
    auto reaper = Reaper::start(std::move(qs), nullptr, o);
    ASSERT_TRUE(reaper) << reaper.error().message();
    auto w = (*reaper)->expect(record_with_seq(5));
    ASSERT_TRUE(w);
    std::thread producer([&] {
      std::this_thread::sleep_for(30ms);
      fq.push(seq_record(5));
    });
    const WaitStatus st = w->wait(t);
    producer.join();
    ASSERT_EQ(WaitStatus::Completed, st) << "timeout " << t.count() << " ms";
    ASSERT_TRUE(w->completion().record);
    EXPECT_EQ(5u, seq_of(*w->completion().record));
  }
}
