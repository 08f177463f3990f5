// SPDX-License-Identifier: MIT
//
// The Reaper at scale (userspace/README.md#reaper-at-scale), on fake queues
// that raise their threshold edge like the device (tests/fake_device.hpp):
// a wake drains only the queues whose eventfd fired, each until its own
// drain comes back empty; the ordering promise to waiters still holds for a
// record on a queue that never fired; one file per device is polled for
// device loss; arrivals, completions, filters and batches carry their
// device. Options::rescan is 0 and moderation Fixed unless said otherwise,
// so every wake comes from an edge and the queues keep their settings.
// Expected counts are worked out by hand in the comments.
#include <fcntl.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "fake_device.hpp"
#include "libneuron/reaper.hpp"

using namespace neuron;
using neuron::test::FakeEvents;
using neuron::test::FakeQueue;
using neuron::test::VanishingFd;
using neuron::test::seq_of;
using neuron::test::seq_record;
using neuron::test::wait_until;
using namespace std::chrono_literals;

namespace {

/// Record number `seq` (bytes 8..15) of SP's EXPLICIT type.
Record rec(std::uint64_t seq) {
  return seq_record(seq, NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_SP, NEURON_ENGINE_RECORD_EXPLICIT));
}

Reaper::Options quiet() {
  Reaper::Options o;
  o.rescan = 0ms;
  o.moderation = Reaper::Moderation::Fixed;
  return o;
}

/// A Trainium-like host: `devices` devices x 8 cores x 10 queues, queue i
/// on device i / 80, core (i % 80) / 10, queue i % 10; every queue holds a
/// descriptor of its device's one file (as each NotificationQueue dup()s
/// the device's), 64 entries, count limit `threshold`, an eventfd.
struct Host {
  std::vector<std::shared_ptr<VanishingFd>> files;
  std::vector<FakeQueue*> q;
  std::vector<std::unique_ptr<ReapQueue>> owned;

  Host(unsigned devices, std::uint32_t threshold) {
    for (unsigned d = 0; d < devices; ++d) files.push_back(std::make_shared<VanishingFd>(VanishingFd::Kind::Hup));
    for (unsigned i = 0; i < devices * 80; ++i) {
      auto p = std::make_unique<FakeQueue>((i % 80) / 10, i % 10, 64, threshold);
      p->set_device(i / 80);
      p->share_device(files[i / 80]);
      q.push_back(p.get());
      owned.push_back(std::move(p));
    }
  }
};

}  // namespace

// 320 queues on 4 devices, records on 4 of them. Each hot queue gets 10
// records and has count limit 10, so its edge fires with its 10th record,
// after all of them are in the ring. The first look (a full pass) drains
// each of the 320 queues once and finds nothing: 320 drains. Each hot
// queue's wake then drains it twice: 10 records (< batch 256), then empty
// after that HEAD write: 4 x 2 = 8 drains for the 4 wakes, none of the 316
// idle queues. So: drains 320 + 8 = 328; per queue 3 (hot) or 1 (idle);
// 4 queue wakes, 1 full pass, 40 records. The old reaper drained all 320
// queues at least twice on every wake (>= 640 drains per wake).
TEST(ReaperScale, AWakeDrainsOnlyTheQueuesThatFired) {
  Host host(4, 10);
  const std::vector<std::size_t> hot = {5, 87, 170, 319};
  auto r = Reaper::start(std::move(host.owned), nullptr, quiet());
  ASSERT_TRUE(r) << r.error().message();
  Reaper& reaper = **r;
  ASSERT_TRUE(wait_until([&] { return reaper.stats().drains == 320; }, 10s)) << reaper.stats().drains;
  EXPECT_EQ(4u, reaper.device_files()) << "one file per device, not one per queue";

  std::uint64_t seq = 0;
  for (const std::size_t i : hot)
    for (int k = 0; k < 10; ++k) host.q[i]->push(rec(seq++));
  ASSERT_TRUE(wait_until([&] { return reaper.stats().records == 40; }, 10s)) << reaper.stats().records;

  const auto st = reaper.stats();
  EXPECT_EQ(328u, st.drains);
  EXPECT_EQ(4u, st.queue_wakes);
  EXPECT_EQ(1u, st.full_passes);
  EXPECT_LE(st.wakes, 4u);
  for (std::size_t i = 0; i < host.q.size(); ++i) {
    const bool is_hot = std::find(hot.begin(), hot.end(), i) != hot.end();
    EXPECT_EQ(is_hot ? 3u : 1u, host.q[i]->drains()) << "queue " << i;
  }
  std::printf("reaper at scale: 320 queues on 4 devices, 4 with records: %llu wakes, %llu drains in them "
              "(%.1f per wake; a full pass is 320), %zu files polled for device loss\n",
              static_cast<unsigned long long>(st.wakes), static_cast<unsigned long long>(st.drains - 320),
              static_cast<double>(st.drains - 320) / static_cast<double>(st.wakes), reaper.device_files());
  reaper.stop();
  EXPECT_EQ(2u, reaper.stats().full_passes) << "the final look";
}

// The ordering promise with partial passes: record 1 on queue X, whose
// count limit (100) it does not reach, so X never fires; then the matching
// record 1000 on queue Y (count limit 1). The wake drains only Y, finds the
// match, and must drain every queue before it signals the waiter: record 1
// is delivered by then. Full passes: the first look, the one after the
// match: 2. X raised no edge. Repeated for timing variety.
TEST(ReaperScale, ARecordOnAQueueThatNeverFiredIsDeliveredBeforeTheWaiter) {
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    std::vector<std::unique_ptr<ReapQueue>> qs;
    std::vector<FakeQueue*> fq;
    for (unsigned i = 0; i < 32; ++i) {
      auto p = std::make_unique<FakeQueue>(i / 10, i % 10, 256, i == 7 ? 100u : 1u);
      fq.push_back(p.get());
      qs.push_back(std::move(p));
    }
    FakeQueue& x = *fq[7];
    FakeQueue& y = *fq[20];
    std::mutex mu;
    std::vector<std::uint64_t> seen;
    Reaper::Options o = quiet();
    o.on_records = [&](unsigned, unsigned, std::span<const Record> recs) {
      std::lock_guard lk(mu);
      for (const auto& rr : recs) seen.push_back(seq_of(rr));
    };
    auto r = Reaper::start(std::move(qs), nullptr, o);
    ASSERT_TRUE(r) << r.error().message();
    Reaper& reaper = **r;
    ASSERT_TRUE(wait_until([&] { return reaper.stats().drains == 32; }, 10s));
    auto w = reaper.expect([](const Arrival& a) { return a.record && seq_of(*a.record) == 1000; });
    ASSERT_TRUE(w);
    x.push(rec(1));
    y.push(rec(1000));
    ASSERT_EQ(WaitStatus::Completed, w->wait(10s));
    {
      std::lock_guard lk(mu);
      const bool delivered = std::find(seen.begin(), seen.end(), 1u) != seen.end();
      EXPECT_TRUE(delivered) << "record 1 of queue X (which never fired) was not delivered before the waiter "
                                "completed; delivered: "
                             << seen.size() << " record(s)";
    }
    EXPECT_EQ(0u, x.edges());
    EXPECT_EQ(2u, reaper.stats().full_passes);
    EXPECT_EQ(1u, reaper.stats().queue_wakes);
  }
}

// Several devices: the same core and queue numbers on devices 0 and 1 are
// told apart by the device, on arrivals, completions, filters, on_batch;
// on_records still gets (core, queue). Edges carry Event::device.
TEST(ReaperScale, ArrivalsCompletionsAndBatchesCarryTheirDevice) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  std::vector<FakeQueue*> fq;
  for (unsigned d = 0; d < 3; ++d) {
    auto p = std::make_unique<FakeQueue>(0, 1, 16, 1);
    p->set_device(d);
    fq.push_back(p.get());
    qs.push_back(std::move(p));
  }
  auto ev = std::make_unique<FakeEvents>();
  FakeEvents* fe = ev.get();
  std::mutex mu;
  std::vector<std::pair<QueueId, std::uint64_t>> batches;
  std::vector<std::pair<unsigned, unsigned>> legacy;
  Reaper::Options o = quiet();
  o.on_batch = [&](const QueueId& id, std::span<const Record> recs) {
    std::lock_guard lk(mu);
    for (const auto& rr : recs) batches.emplace_back(id, seq_of(rr));
  };
  o.on_records = [&](unsigned core, unsigned queue, std::span<const Record> recs) {
    std::lock_guard lk(mu);
    for (std::size_t i = 0; i < recs.size(); ++i) legacy.emplace_back(core, queue);
  };
  auto r = Reaper::start(std::move(qs), std::move(ev), o);
  ASSERT_TRUE(r) << r.error().message();
  Reaper& reaper = **r;

  Reaper::Filter only1;
  only1.device = 1;
  auto w1 = reaper.expect([](const Arrival& a) { return a.record && seq_of(*a.record) == 7; }, only1);
  Reaper::Filter edges2;
  edges2.device = 2;
  edges2.records = false;
  auto w2 = reaper.expect([](const Arrival& a) { return a.event != nullptr; }, edges2);
  ASSERT_TRUE(w1 && w2);

  fq[0]->push(rec(7));  // device 0: same core, queue and record; filtered out
  fq[1]->push(rec(7));  // device 1: the one
  Event e{};
  e.device = 0;
  fe->push(e);  // device 0's edge: filtered out
  e.device = 2;
  e.count = 42;
  fe->push(e);
  ASSERT_EQ(WaitStatus::Completed, w1->wait(10s));
  ASSERT_EQ(WaitStatus::Completed, w2->wait(10s));
  EXPECT_EQ(1u, w1->completion().device);
  EXPECT_EQ(0u, w1->completion().core);
  EXPECT_EQ(1u, w1->completion().queue);
  EXPECT_EQ(2u, w2->completion().device);
  ASSERT_TRUE(w2->completion().event);
  EXPECT_EQ(42u, w2->completion().event->count);
  reaper.stop();

  std::lock_guard lk(mu);
  ASSERT_EQ(2u, batches.size());
  std::sort(batches.begin(), batches.end(), [](auto& a, auto& b) { return a.first.device < b.first.device; });
  EXPECT_EQ((QueueId{0, 0, 1}), batches[0].first);
  EXPECT_EQ((QueueId{1, 0, 1}), batches[1].first);
  EXPECT_EQ(7u, batches[0].second);
  EXPECT_EQ(7u, batches[1].second);
  ASSERT_EQ(2u, legacy.size());
  EXPECT_EQ((std::pair<unsigned, unsigned>{0, 1}), legacy[0]);
}

// Device files are told apart by st_rdev: three open files of /dev/random
// and three of /dev/ptmx (character devices 1:8 and 5:2, both pollable,
// neither ever hangs up; every open of /dev/ptmx is another pty, but the
// same device number) are 2 devices.
TEST(ReaperScale, FilesOfOneDeviceNodeArePolledOnce) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  for (unsigned i = 0; i < 6; ++i) {
    auto p = std::make_unique<FakeQueue>(0, i, 16, 1);
    const int fd = ::open(i < 3 ? "/dev/random" : "/dev/ptmx", O_RDONLY | O_NOCTTY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    p->adopt_device_file(UniqueFd(fd));
    qs.push_back(std::move(p));
  }
  auto r = Reaper::start(std::move(qs), nullptr, quiet());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(2u, (*r)->device_files());
  std::this_thread::sleep_for(20ms);
  EXPECT_TRUE((*r)->running());
  EXPECT_FALSE((*r)->device_gone());
}

// One device of four goes: its one polled file hangs up, its rings are
// revoked; every waiter gets DeviceGone, every queue is marked gone, the
// thread exits (docs/decisions/0027-device-loss.md: one device's loss ends the
// Reaper).
TEST(ReaperScale, TheLossOfOneDeviceSeenThroughItsOneFile) {
  Host host(4, 1);
  auto r = Reaper::start(std::move(host.owned), nullptr, quiet());
  ASSERT_TRUE(r) << r.error().message();
  Reaper& reaper = **r;
  EXPECT_EQ(4u, reaper.device_files());
  auto w = reaper.expect([](const Arrival& a) { return a.record && seq_of(*a.record) == 3; });
  ASSERT_TRUE(w);
  host.q[170]->push(rec(3));  // device 2 works first
  ASSERT_EQ(WaitStatus::Completed, w->wait(10s));
  EXPECT_EQ(2u, w->completion().device);

  auto gone = reaper.expect([](const Arrival&) { return false; });
  ASSERT_TRUE(gone);
  // The file hangs up first; the rings go PROT_NONE only once the loss is
  // declared. The pass that completed `w` may still be reading queue 170 (a
  // pass drains a queue until it comes back empty), and the driver keeps a
  // removed device's rings readable
  // (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset):
  // only a read after DeviceGone would be wrong, and that one would fault.
  host.files[2]->vanish();
  EXPECT_EQ(WaitStatus::DeviceGone, gone->wait(10s));
  for (std::size_t i = 160; i < 240; ++i) host.q[i]->vanish();
  EXPECT_TRUE(wait_until([&] { return !reaper.running(); }, 5s));
  EXPECT_TRUE(reaper.device_gone());
  for (auto* q : host.q) EXPECT_TRUE(q->marked_gone());
}
