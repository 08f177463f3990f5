// SPDX-License-Identifier: MIT
//
// Lossy (ignore-full) queues through NotificationQueue and the Reaper
// (userspace/README.md#lossy-queues), on tests/fake_device.hpp's LossyFake,
// which runs the queue as the device does: it never moves HEAD, overwrites
// at TAIL with software_queue_overflow, accepts a HEAD write anywhere in
// [HEAD, TAIL] and counts any other as a BAD_HEAD edge. Expected values are
// worked out by hand in the comments.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "fake_device.hpp"
#include "libneuron/reaper.hpp"
#include "nq_read_ref.hpp"

using namespace neuron;
using neuron::test::LossyFake;
using neuron::test::seq_of;
using namespace std::chrono_literals;

namespace {

// Bytes 8..15: sequence number; bytes 4..7: a checksum of it, so a copy
// whose body belongs to another record shows.
std::uint32_t check_of(std::uint64_t seq) {
  return static_cast<std::uint32_t>((seq * 2654435761u) ^ 0x5a5a5a5au);
}
Record lossy_record(std::uint64_t seq) {
  Record r;
  r.bytes[3] = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_PE, NEURON_ENGINE_RECORD_EXPLICIT);
  const std::uint32_t c = check_of(seq);
  std::memcpy(r.bytes.data() + 4, &c, 4);
  std::memcpy(r.bytes.data() + 8, &seq, 8);
  return r;
}
bool intact(const Record& r) {
  std::uint32_t c;
  std::memcpy(&c, r.bytes.data() + 4, 4);
  return c == check_of(seq_of(r));
}

std::uint64_t lossy_records() {
  if (const char* s = std::getenv("NEURON_RACE_RECORDS")) {
    const unsigned long long v = std::strtoull(s, nullptr, 0);
    if (v > 0) return v / 5 ? v / 5 : 1;
  }
  return 200'000;
}

}  // namespace

// 20 records into an 8-entry ring nobody read. Slots now hold: 0..3 records
// 16..19 (pass 2, phase 1, the phase record 0 had), 4..7 records 12..15
// (pass 1, phase 0), all written into a full ring (software_queue_overflow).
// drain(32) from HEAD 0: slots 0..3 look fresh (4 copies, marked) -> NQ_INFO:
// TAIL 20, 20 - 0 > 8: records 0..11 unsound (20 - 8 = 12 >= 4 copies),
// all dropped; resync to 20 - 8 + 8/4 = 14, HEAD write 14 (accepted); lost
// 14, overwritten 20 - 8 - 0 = 12. Then records 14..19 (6, marked) -> NQ_INFO:
// 20 - 14 = 6 < 8: sound. Then nothing. Device HEAD ends at 20.
TEST(LossyQueue, LappedQueueRecoversInOneCall) {
  LossyFake dev(0, 1, 8, 0);
  NotificationQueue q = dev.queue();
  ASSERT_TRUE(q.lossy());
  for (std::uint64_t i = 0; i < 20; ++i) dev.push(lossy_record(i));
  EXPECT_EQ(dev.info().overflow_count, 12u);  // records 8..19 went into a full ring
  std::vector<Record> out(32);
  const DrainResult r = q.drain(out);
  ASSERT_EQ(r.count, 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(seq_of(out[i]), 14u + i);
    EXPECT_TRUE(intact(out[i]));
  }
  EXPECT_EQ(r.lost, 14u);
  EXPECT_EQ(r.overwritten, 12u);
  EXPECT_EQ(r.resyncs, 1u);
  EXPECT_TRUE(r.sw_overflow);
  EXPECT_TRUE(r.lap_suspected);
  EXPECT_EQ(q.lost(), 14u);
  EXPECT_EQ(dev.head(), 20u);
  EXPECT_EQ(dev.bad_heads(), 0u);
  // Idle now: another drain takes nothing and loses nothing.
  const DrainResult again = q.drain(out);
  EXPECT_EQ(again.count, 0u);
  EXPECT_EQ(again.lost, 0u);
}

// The guard slot (issue 25 item 6). 4 entries, records 0..3 written: the
// ring is exactly full, nothing overwritten, and the producer is idle. drain(8)
// from 0 copies 0..3 (fresh, none marked); the guard, slot 3 (record "-1",
// expected phase 0), holds record 3 (phase 1): the producer has finished
// record -1 + 4, so it may have begun record 4 over record 0 -> suspected.
// NQ_INFO: TAIL 4. A TAIL read never falls inside a record write
// (docs/device-model.md#lossy-tail), so had record 4 been begun before the
// read, TAIL would be 5: 4 - 0 = 4 <= 4 entries, every copy is sound.
// count 4 (records 0, 1, 2, 3), lost 0, overwritten 0, no resync, HEAD 4.
TEST(LossyQueue, FullButIdleRingLosesNothing) {
  LossyFake dev(0, 1, 4, 0);
  NotificationQueue q = dev.queue();
  for (std::uint64_t i = 0; i < 4; ++i) dev.push(lossy_record(i));
  std::vector<Record> out(8);
  const DrainResult r = q.drain(out);
  ASSERT_EQ(r.count, 4u);
  EXPECT_EQ(seq_of(out[0]), 0u);
  EXPECT_EQ(seq_of(out[1]), 1u);
  EXPECT_EQ(seq_of(out[2]), 2u);
  EXPECT_EQ(seq_of(out[3]), 3u);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.overwritten, 0u);
  EXPECT_EQ(r.resyncs, 0u);
  EXPECT_FALSE(r.lap_suspected);
  EXPECT_EQ(q.lost(), 0u);
  EXPECT_EQ(dev.head(), 4u);
  EXPECT_EQ(dev.bad_heads(), 0u);
}

// One record more: records 0..4 into 4 entries; slot 0 now holds record 4
// (phase 0, marked). drain(8) from 0: slot 0 is stale for record 0 (phase 1
// expected) and marked -> suspected, nothing copied. NQ_INFO: TAIL 5,
// 5 - 0 = 5 > 4: record 0 (below 5 - 4 = 1) is gone, overwritten 1; no sound
// copy, so resync to 5 - 4 + 4/4 = 2 (lost 2: record 0 and the margin's
// record 1), HEAD write 2. Then records 2, 3 (fresh, phase 1) and 4 (slot 0,
// phase 0, marked) -> NQ_INFO: 5 - 2 = 3 <= 4: sound. count 3, HEAD 5.
TEST(LossyQueue, OneRecordPastFullLosesTheOverwrittenOneAndTheMargin) {
  LossyFake dev(0, 1, 4, 0);
  NotificationQueue q = dev.queue();
  for (std::uint64_t i = 0; i < 5; ++i) dev.push(lossy_record(i));
  std::vector<Record> out(8);
  const DrainResult r = q.drain(out);
  ASSERT_EQ(r.count, 3u);
  EXPECT_EQ(seq_of(out[0]), 2u);
  EXPECT_EQ(seq_of(out[1]), 3u);
  EXPECT_EQ(seq_of(out[2]), 4u);
  EXPECT_EQ(r.lost, 2u);
  EXPECT_EQ(r.overwritten, 1u);
  EXPECT_EQ(r.resyncs, 1u);
  EXPECT_TRUE(r.lap_suspected);
  EXPECT_EQ(dev.head(), 5u);
  EXPECT_EQ(dev.bad_heads(), 0u);
}

// for_each hands out records in place: refused on a lossy queue.
TEST(LossyQueue, ForEachRefusesLossyQueue) {
  LossyFake dev(0, 1, 8, 0);
  NotificationQueue q = dev.queue();
  for (std::uint64_t i = 0; i < 3; ++i) dev.push(lossy_record(i));
  std::size_t calls = 0;
  const DrainResult r = q.for_each([&](const Record&) { ++calls; });
  EXPECT_TRUE(r.refused);
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(calls, 0u);
  EXPECT_EQ(dev.head(), 0u);
  std::vector<Record> out(8);
  EXPECT_EQ(q.drain(out).count, 3u);  // drain still works
}

// A live producer laps a 64-entry lossy queue again and again while the
// Reaper (rescan off: every wake-up comes from the threshold edge) delivers
// to a slow consumer. Checks: every delivered record intact and in order;
// the gaps in the sequence add up to Stats::lost exactly, and delivered +
// lost = produced; no BAD_HEAD; the last record arrives (a Reaper that took
// a lap for "empty" would wait for ever with rescan off: the waiter's
// timeout fails the test). Figure, not asserted: the worst delay from push
// to delivery.
TEST(LossyQueue, ReaperUnderLiveProducerExactLossNoRescan) {
  const std::uint64_t n = lossy_records();
  LossyFake dev(0, 1, 64, 1);
  std::vector<std::unique_ptr<ReapQueue>> qs;
  qs.push_back(make_reap_queue(dev.queue()));

  using clk = std::chrono::steady_clock;
  std::vector<std::int64_t> pushed(n, 0);  // written before the record, read after it
  std::mutex mu;
  std::vector<std::uint64_t> seen;
  seen.reserve(n);
  std::uint64_t torn = 0;
  std::int64_t worst_ns = 0;
  std::uint64_t batches = 0;

  Reaper::Options o;
  o.rescan = 0ms;
  o.batch = 16;
  o.on_records = [&](unsigned, unsigned, std::span<const Record> recs) {
    const std::int64_t now = clk::now().time_since_epoch().count();
    {
      std::lock_guard lk(mu);
      for (const auto& rec : recs) {
        if (!intact(rec)) {
          ++torn;
          continue;
        }
        const std::uint64_t s = seq_of(rec);
        seen.push_back(s);
        if (s < n) worst_ns = std::max(worst_ns, now - pushed[s]);
      }
      ++batches;
    }
    // A slow consumer: every 8th batch takes 200 us, long enough for the
    // producer to lap the ring.
    if (batches % 8 == 0) std::this_thread::sleep_for(200us);
  };
  auto reaper = Reaper::start(std::move(qs), nullptr, std::move(o));
  ASSERT_TRUE(reaper) << reaper.error().message();
  auto last = (*reaper)->expect(
      [n](const Arrival& a) { return a.record && intact(*a.record) && seq_of(*a.record) == n - 1; });
  ASSERT_TRUE(last);

  std::thread producer([&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      pushed[i] = clk::now().time_since_epoch().count();
      dev.push(lossy_record(i));
      if ((i & 1023) == 0) std::this_thread::yield();
    }
  });
  producer.join();
  ASSERT_EQ(last->wait(30s), WaitStatus::Completed)
      << "the last record never arrived (rescan is off): " << dev.describe() << "; reaper: "
      << (*reaper)->stats().drains << " drains, " << (*reaper)->stats().wakes << " wakes, "
      << (*reaper)->stats().resyncs << " resyncs, " << (*reaper)->stats().budget_hits << " budget hits";
  (*reaper)->stop();
  const Reaper::Stats st = (*reaper)->stats();

  std::lock_guard lk(mu);
  EXPECT_EQ(torn, 0u);
  std::uint64_t gaps = 0, expect_next = 0;
  bool ordered = true;
  for (std::uint64_t s : seen) {
    if (s < expect_next) ordered = false;
    else gaps += s - expect_next;
    expect_next = s + 1;
  }
  EXPECT_TRUE(ordered);
  EXPECT_EQ(expect_next, n);
  EXPECT_EQ(gaps, st.lost);
  EXPECT_EQ(seen.size() + st.lost, n);
  EXPECT_GT(st.lost, 0u) << "the producer never lapped the consumer: the test proves nothing";
  EXPECT_LE(st.overwritten, st.lost);
  EXPECT_EQ(dev.bad_heads(), 0u);
  EXPECT_EQ(st.rescans, 0u);
  std::printf("# lossy reaper: %llu records, %zu delivered, %llu lost (%llu overwritten), %llu resyncs, "
              "worst push-to-delivery %.3f ms (rescan off)\n",
              static_cast<unsigned long long>(n), seen.size(), static_cast<unsigned long long>(st.lost),
              static_cast<unsigned long long>(st.overwritten), static_cast<unsigned long long>(st.resyncs),
              static_cast<double>(worst_ns) / 1e6);
}

// ---- A drain that counts modulo the ring, on a lapped lossy queue ----------
// (docs/hardware.md#nq-lapped)
//
// The real runtime's drain (docs/hardware.md#host-drain) works on ring
// positions: the hardware's tail_ptr moves one record modulo the ring size,
// so the records available are (tail - head) mod entries and the record at
// head is slot head mod entries. modulo_drain() is that arithmetic over our
// registers: it reads TAIL (NQ_INFO) and keeps HEAD as the register's count
// (so every HEAD it writes is one the device accepts), but it counts and
// indexes modulo `entries`. On our device HEAD and TAIL are free-running
// counts and a lossy queue leaves HEAD alone when it overwrites, so TAIL -
// HEAD can exceed `entries`; the tests below show, on the same rings, what
// that drain delivers and what libneuron's NotificationQueue::drain does.
namespace {

/// One modulo drain: the sequence numbers of the records it takes (in the
/// order it takes them), HEAD moved past them through the doorbell.
std::vector<std::uint64_t> modulo_drain(LossyFake& dev, std::uint32_t& head) {
  const NqInfo in = dev.info();
  const std::uint32_t entries = in.size / static_cast<std::uint32_t>(sizeof(Record));
  const std::uint32_t avail = (in.tail - head) % entries;
  const std::span<const Record> ring = dev.ring();
  std::vector<std::uint64_t> got;
  for (std::uint32_t i = 0; i < avail; ++i) got.push_back(seq_of(ring[(head + i) % entries]));
  head += avail;
  dev.doorbell().ring(head);
  return got;
}

std::vector<std::uint64_t> seqs(std::span<const Record> recs) {
  std::vector<std::uint64_t> v;
  for (const Record& r : recs) v.push_back(seq_of(r));
  return v;
}

}  // namespace

// 20 records (0..19) into an 8-entry lossy ring nobody read: TAIL 20, HEAD 0.
// Slots 0..3 hold records 16..19, slots 4..7 records 12..15; records 8..19
// were written into a full ring (OVERFLOW_COUNT 12).
//  - The modulo drain: (20 - 0) mod 8 = 4 available, slots 0..3, so it takes
//    16, 17, 18, 19 as if they were the records at counts 0..3, and HEAD 4.
//    Next call: (20 - 4) mod 8 = 0, nothing: records 12..15, still in the
//    ring, are never read, and nothing says 16 records were lost. TAIL - HEAD
//    stays 16 >= 8, so the device keeps overwriting: 4 more records (20..23)
//    all count as overflows (OVERFLOW_COUNT 16) and land in slots 4..7,
//    which the next call takes ((24 - 4) mod 8 = 4: 20..23), leaving HEAD 8
//    against TAIL 24, still two laps behind for good.
//  - The runtime's own drain (userspace/reference, counts in place of
//    positions): 20 - 0 = 20 records "available" in an 8-entry ring is
//    impossible, so it flags the ring bad (where the runtime calls
//    al_abort_program) and reads nothing.
//  - libneuron on the same ring (the hand-worked case of
//    LossyQueue.LappedQueueRecoversInOneCall): records 14..19, lost 14 (12
//    overwritten, 2 skipped as the margin), HEAD 20. Then 20..23 arrive with
//    no overwrite (OVERFLOW_COUNT stays 12) and are delivered, lost 0, HEAD 24.
TEST(LappedLossyQueue, ModuloDrainMisreadsWhatLibneuronRecovers) {
  LossyFake mod(0, 1, 8, 0);
  for (std::uint64_t i = 0; i < 20; ++i) mod.push(lossy_record(i));
  ASSERT_EQ(mod.tail(), 20u);
  ASSERT_EQ(mod.info().overflow_count, 12u);
  std::uint32_t head = 0;
  EXPECT_EQ(modulo_drain(mod, head), (std::vector<std::uint64_t>{16, 17, 18, 19}));
  EXPECT_EQ(head, 4u);
  EXPECT_EQ(modulo_drain(mod, head), (std::vector<std::uint64_t>{}));
  EXPECT_EQ(seq_of(mod.ring()[4]), 12u);  // still there, never read
  for (std::uint64_t i = 20; i < 24; ++i) mod.push(lossy_record(i));
  EXPECT_EQ(mod.info().overflow_count, 16u);
  EXPECT_EQ(modulo_drain(mod, head), (std::vector<std::uint64_t>{20, 21, 22, 23}));
  EXPECT_EQ(mod.head(), 8u);
  EXPECT_EQ(mod.tail(), 24u);
  EXPECT_EQ(mod.bad_heads(), 0u);  // every HEAD it wrote was accepted

  LossyFake ref_dev(0, 1, 8, 0);
  for (std::uint64_t i = 0; i < 20; ++i) ref_dev.push(lossy_record(i));
  volatile std::uint32_t tail = ref_dev.tail();
  reference::EnsNq nq{8, 0, ref_dev.ring()[0].bytes.data(), &tail};
  std::vector<Record> buf(8);
  std::uint32_t consumed = 0;
  EXPECT_EQ(reference::nq_read_cayman(&nq, buf.data(), 8 * 16, &consumed), 0u);
  EXPECT_TRUE(nq.bad_ring);
  EXPECT_EQ(consumed, 0u);

  LossyFake dev(0, 1, 8, 0);
  NotificationQueue q = dev.queue();
  for (std::uint64_t i = 0; i < 20; ++i) dev.push(lossy_record(i));
  std::vector<Record> out(32);
  DrainResult r = q.drain(out);
  EXPECT_EQ(seqs(std::span(out.data(), r.count)), (std::vector<std::uint64_t>{14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(r.lost, 14u);
  EXPECT_EQ(r.overwritten, 12u);
  EXPECT_EQ(dev.head(), 20u);
  for (std::uint64_t i = 20; i < 24; ++i) dev.push(lossy_record(i));
  EXPECT_EQ(dev.info().overflow_count, 12u);
  r = q.drain(out);
  EXPECT_EQ(seqs(std::span(out.data(), r.count)), (std::vector<std::uint64_t>{20, 21, 22, 23}));
  EXPECT_EQ(r.lost, 0u);
  EXPECT_FALSE(r.lap_suspected);
  EXPECT_EQ(dev.head(), 24u);
  EXPECT_EQ(q.lost(), 14u);
  EXPECT_EQ(dev.bad_heads(), 0u);
}

// Exactly two laps: 16 records into 8 entries, TAIL 16, HEAD 0; slots 0..7
// hold records 8..15 (second pass, phase 0, all marked).
//  - The modulo drain: (16 - 0) mod 8 = 0: a ring holding 8 unread records
//    looks empty, and stays so until the producer writes again.
//  - libneuron: slot 0 is stale for count 0 (phase 1 expected) and marked ->
//    NQ_INFO: 16 - 0 > 8, nothing sound; resync to 16 - 8 + 8/4 = 10 (lost
//    10: records 0..7 overwritten, 8 and 9 the margin), HEAD write 10; then
//    records 10..15 (phase 0, expected for counts 10..15); slot 0 for count
//    16 (phase 1 expected) is stale and marked -> NQ_INFO: 16 - 10 = 6 <= 8,
//    sound. count 6, lost 10, overwritten 8, one resync, HEAD 16.
TEST(LappedLossyQueue, TwoLapsLookEmptyModuloEntries) {
  LossyFake mod(0, 1, 8, 0);
  for (std::uint64_t i = 0; i < 16; ++i) mod.push(lossy_record(i));
  std::uint32_t head = 0;
  EXPECT_EQ(modulo_drain(mod, head), (std::vector<std::uint64_t>{}));
  EXPECT_EQ(head, 0u);
  EXPECT_EQ(seq_of(mod.ring()[0]), 8u);

  LossyFake dev(0, 1, 8, 0);
  NotificationQueue q = dev.queue();
  for (std::uint64_t i = 0; i < 16; ++i) dev.push(lossy_record(i));
  std::vector<Record> out(32);
  const DrainResult r = q.drain(out);
  EXPECT_EQ(seqs(std::span(out.data(), r.count)), (std::vector<std::uint64_t>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(r.lost, 10u);
  EXPECT_EQ(r.overwritten, 8u);
  EXPECT_EQ(r.resyncs, 1u);
  EXPECT_TRUE(r.lap_suspected);
  EXPECT_TRUE(r.sw_overflow);
  EXPECT_EQ(dev.head(), 16u);
  EXPECT_EQ(dev.bad_heads(), 0u);
}

// Not lapped, only full: 8 records into 8 entries, nothing overwritten. The
// modulo drain sees (8 - 0) mod 8 = 0 (the full ring and the empty one look
// alike, docs/decisions/0002-departures.md#head-tail-counts); under backpressure the
// producer would now wait for a HEAD write that never comes. libneuron
// takes all 8 (records 0..7), lost 0.
TEST(LappedLossyQueue, FullRingLooksEmptyModuloEntries) {
  LossyFake mod(0, 1, 8, 0);
  for (std::uint64_t i = 0; i < 8; ++i) mod.push(lossy_record(i));
  std::uint32_t head = 0;
  EXPECT_EQ(modulo_drain(mod, head), (std::vector<std::uint64_t>{}));
  EXPECT_EQ(mod.info().overflow_count, 0u);

  LossyFake dev(0, 1, 8, 0);
  NotificationQueue q = dev.queue();
  for (std::uint64_t i = 0; i < 8; ++i) dev.push(lossy_record(i));
  std::vector<Record> out(32);
  const DrainResult r = q.drain(out);
  EXPECT_EQ(seqs(std::span(out.data(), r.count)), (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(dev.head(), 8u);
}
