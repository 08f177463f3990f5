// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <vector>

#include "libneuron/ring.hpp"
#include "ring_helpers.hpp"

using namespace neuron;
using neuron::test::MemRing;
using neuron::test::seq_of;
using neuron::test::seq_record;

namespace {

struct DoorbellLog {
  std::vector<std::uint32_t> heads;
  static void cb(void* ctx, std::uint32_t head) noexcept { static_cast<DoorbellLog*>(ctx)->heads.push_back(head); }
  Doorbell bell() { return Doorbell::callback(&DoorbellLog::cb, this); }
};

}  // namespace

TEST(Ring, MakeRejectsNonPowerOfTwo) {
  std::vector<Record> mem(6);
  auto v = RingView::make({mem.data(), mem.size()});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, make_error_code(errc::bad_ring));
  std::vector<Record> mem2(8);
  EXPECT_TRUE(RingView::make({mem2.data(), mem2.size()}));
}

TEST(Ring, EmptyRingDrainsNothingAndRingsNoDoorbell) {
  MemRing ring(16);  // zeroed memory: phase 0 everywhere, first pass expects 1
  DoorbellLog log;
  RingView v(ring.span(), log.bell());
  std::vector<Record> out(32);
  auto r = v.drain(out);
  EXPECT_EQ(r.count, 0u);
  EXPECT_FALSE(r.sw_overflow);
  EXPECT_FALSE(r.lap_suspected);
  EXPECT_TRUE(log.heads.empty());
  EXPECT_EQ(v.head(), 0u);
  EXPECT_EQ(v.available(), 0u);
}

TEST(Ring, ExactlyFullRing) {
  MemRing ring(8);
  for (int i = 0; i < 8; ++i) ring.push(seq_record(i));
  DoorbellLog log;
  RingView v(ring.span(), log.bell());
  EXPECT_EQ(v.available(), 8u);
  std::vector<Record> out(16);
  auto r = v.drain(out);
  ASSERT_EQ(r.count, 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(seq_of(out[i]), std::uint64_t(i));
  ASSERT_EQ(log.heads.size(), 1u);  // once per batch
  EXPECT_EQ(log.heads[0], 8u);
  EXPECT_FALSE(v.expected_phase());  // second pass expects phase 0
  EXPECT_EQ(v.drain(out).count, 0u);  // the old records are now stale
  EXPECT_EQ(log.heads.size(), 1u);
}

TEST(Ring, WrapWithPhaseFlip) {
  MemRing ring(4);
  DoorbellLog log;
  RingView v(ring.span(), log.bell());
  std::vector<Record> out(8);
  for (int i = 0; i < 3; ++i) ring.push(seq_record(i));
  ASSERT_EQ(v.drain(out).count, 3u);
  for (int i = 3; i < 7; ++i) ring.push(seq_record(i));  // counts 3..6: slot 3 phase 1, slots 0..2 phase 0
  EXPECT_FALSE(ring.mem[0].phase());
  EXPECT_TRUE(ring.mem[3].phase());
  auto r = v.drain(out);
  ASSERT_EQ(r.count, 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(seq_of(out[i]), std::uint64_t(3 + i));
  EXPECT_EQ(v.head(), 7u);
  EXPECT_EQ(log.heads, (std::vector<std::uint32_t>{3, 7}));
  // many more passes, one record at a time
  for (int i = 7; i < 100; ++i) {
    ring.push(seq_record(i));
    auto one = v.drain(out);
    ASSERT_EQ(one.count, 1u) << i;
    EXPECT_EQ(seq_of(out[0]), std::uint64_t(i));
  }
}

TEST(Ring, FreeRunningCounterWrapsAt2To32) {
  MemRing ring(4, 0xfffffffeu);
  RingView v(ring.span(), Doorbell{}, 0xfffffffeu);
  EXPECT_FALSE(v.expected_phase());
  std::vector<Record> out(8);
  for (int i = 0; i < 4; ++i) ring.push(seq_record(i));  // counts fffffffe, ffffffff, 0, 1
  auto r = v.drain(out);
  ASSERT_EQ(r.count, 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(seq_of(out[i]), std::uint64_t(i));
  EXPECT_EQ(v.head(), 2u);
  EXPECT_TRUE(v.expected_phase());
}

TEST(Ring, BatchSmallerThanAvailable) {
  MemRing ring(16);
  for (int i = 0; i < 10; ++i) ring.push(seq_record(i));
  DoorbellLog log;
  RingView v(ring.span(), log.bell());
  std::vector<Record> out(3);
  std::vector<std::uint64_t> got;
  for (;;) {
    auto r = v.drain(out);
    if (r.count == 0) break;
    for (std::size_t i = 0; i < r.count; ++i) got.push_back(seq_of(out[i]));
  }
  ASSERT_EQ(got.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(got[i], std::uint64_t(i));
  EXPECT_EQ(log.heads, (std::vector<std::uint32_t>{3, 6, 9, 10}));
}

TEST(Ring, BatchLargerThanAvailable) {
  MemRing ring(64);
  for (int i = 0; i < 5; ++i) ring.push(seq_record(i));
  RingView v(ring.span(), Doorbell{});
  std::vector<Record> out(100);
  EXPECT_EQ(v.drain(out).count, 5u);
  EXPECT_EQ(v.drain(out).count, 0u);
}

TEST(Ring, ZeroSizedBatchDoesNothing) {
  MemRing ring(4);
  ring.push(seq_record(0));
  DoorbellLog log;
  RingView v(ring.span(), log.bell());
  EXPECT_EQ(v.drain(std::span<Record>{}).count, 0u);
  EXPECT_TRUE(log.heads.empty());
  EXPECT_EQ(v.available(), 1u);
}

TEST(Ring, OverflowBitsAreReported) {
  MemRing ring(8);
  ring.push(seq_record(0));
  ring.push(seq_record(1), NEURON_ISA_HEADER_SW_OVF);
  ring.push(seq_record(2));
  RingView v(ring.span(), Doorbell{});
  std::vector<Record> out(8);
  auto r = v.drain(out);
  EXPECT_EQ(r.count, 3u);
  EXPECT_TRUE(r.sw_overflow);
  EXPECT_FALSE(r.hw_overflow);
  EXPECT_TRUE(out[1].sw_overflow());
  ring.push(seq_record(3), NEURON_ISA_HEADER_HW_OVF);
  r = v.drain(out);
  EXPECT_EQ(r.count, 1u);
  EXPECT_FALSE(r.sw_overflow);
  EXPECT_TRUE(r.hw_overflow);
  ring.push(seq_record(4));
  r = v.drain(out);
  EXPECT_FALSE(r.sw_overflow || r.hw_overflow);
}

TEST(Ring, LappedRingIsSuspectedAndResyncRecovers) {
  MemRing ring(4);
  for (int i = 0; i < 4; ++i) ring.push(seq_record(i));
  ring.push(seq_record(4), NEURON_ISA_HEADER_SW_OVF);  // lossy overwrite of slot 0 (count 4)
  RingView v(ring.span(), Doorbell{});
  std::vector<Record> out(8);
  auto r = v.drain(out);
  EXPECT_EQ(r.count, 0u);
  EXPECT_TRUE(r.lap_suspected);
  v.resync(ring.tail - ring.entries);  // what NotificationQueue does with TAIL from NQ_INFO
  r = v.drain(out);
  ASSERT_EQ(r.count, 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(seq_of(out[i]), std::uint64_t(1 + i));
  EXPECT_TRUE(r.sw_overflow);
}

TEST(Ring, ForEachIsZeroCopyAndCommitsOnce) {
  MemRing ring(8);
  for (int i = 0; i < 6; ++i) ring.push(seq_record(i));
  DoorbellLog log;
  RingView v(ring.span(), log.bell());
  std::vector<const Record*> seen;
  auto r = v.for_each([&](const Record& rec) { seen.push_back(&rec); });
  ASSERT_EQ(r.count, 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(seen[i], &ring.mem[i]);  // in place
  EXPECT_EQ(log.heads, (std::vector<std::uint32_t>{6}));
}

TEST(Ring, ForEachStopsWhenCallbackReturnsFalseAndHonoursMax) {
  MemRing ring(8);
  for (int i = 0; i < 8; ++i) ring.push(seq_record(i));
  RingView v(ring.span(), Doorbell{});
  std::vector<std::uint64_t> got;
  auto r = v.for_each([&](const Record& rec) {
    got.push_back(seq_of(rec));
    return got.size() < 3;
  });
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(v.head(), 3u);
  r = v.for_each([&](const Record& rec) { got.push_back(seq_of(rec)); }, 2);
  EXPECT_EQ(r.count, 2u);
  r = v.for_each([&](const Record& rec) { got.push_back(seq_of(rec)); });
  EXPECT_EQ(r.count, 3u);
  ASSERT_EQ(got.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], std::uint64_t(i));
}

TEST(Ring, MmioDoorbellWritesHeadToRegister) {
  MemRing ring(4);
  ring.push(seq_record(0));
  ring.push(seq_record(1));
  volatile std::uint32_t reg = 0xdead;
  RingView v(ring.span(), Doorbell::mmio(&reg));
  std::vector<Record> out(4);
  EXPECT_EQ(v.drain(out).count, 2u);
  EXPECT_EQ(reg, 2u);
}

TEST(Ring, AtomicDoorbellPublishesHead) {
  MemRing ring(4);
  ring.push(seq_record(0));
  std::atomic<std::uint32_t> head{0};
  RingView v(ring.span(), Doorbell::atomic(&head));
  std::vector<Record> out(4);
  EXPECT_EQ(v.drain(out).count, 1u);
  EXPECT_EQ(head.load(), 1u);
}

TEST(Ring, StaleSlotStopsTheBatchEvenIfLaterSlotsLookFresh) {
  // Records are consumed strictly in order: a gap at HEAD ends the batch.
  MemRing ring(8);
  ring.push(seq_record(0));
  ring.tail = 2;  // count 1 not written yet
  ring.push(seq_record(2));
  RingView v(ring.span(), Doorbell{});
  std::vector<Record> out(8);
  EXPECT_EQ(v.drain(out).count, 1u);
  EXPECT_EQ(v.drain(out).count, 0u);
}

TEST(Ring, LapInsideAFreshLookingChunkIsCaughtFromTheCopiedBytes) {
  // 8 entries; the consumer took counts 0 and 1; a lossy producer then wrote
  // counts 2..9 and overwrote unread count 2 with count 10 (slot 2, phase 0).
  // The last slot of the chunk (count 7) looks fresh, slot 2 is not.
  MemRing ring(8);
  RingView v(ring.span(), Doorbell{});
  std::vector<Record> out(8);
  ring.push(seq_record(0));
  ring.push(seq_record(1));
  ASSERT_EQ(v.drain(std::span<Record>(out.data(), 2)).count, 2u);
  for (int i = 2; i < 10; ++i) ring.push(seq_record(i));
  ring.push(seq_record(10), NEURON_ISA_HEADER_SW_OVF);
  auto r = v.drain(out);
  EXPECT_EQ(r.count, 0u);
  EXPECT_TRUE(r.lap_suspected);
  EXPECT_EQ(v.head(), 2u);
  v.resync(ring.tail - ring.entries);  // 3
  r = v.drain(out);
  ASSERT_EQ(r.count, 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(seq_of(out[i]), std::uint64_t(3 + i));
}

TEST(Ring, LargeRingManyChunksAndAvailable) {
  MemRing ring(1024);
  for (int i = 0; i < 1000; ++i) ring.push(seq_record(i));
  RingView v(ring.span(), Doorbell{});
  EXPECT_EQ(v.available(), 1000u);
  std::vector<Record> out(1024);
  auto r = v.drain(std::span<Record>(out.data(), 999));
  ASSERT_EQ(r.count, 999u);
  for (int i = 0; i < 999; ++i) ASSERT_EQ(seq_of(out[i]), std::uint64_t(i));
  EXPECT_EQ(v.available(), 1u);
  for (int i = 1000; i < 2000; ++i) ring.push(seq_record(i));  // wraps; 1001 unread of 1024
  EXPECT_EQ(v.available(), 1001u);
  std::uint64_t next = 999;
  r = v.for_each([&](const Record& rec) { EXPECT_EQ(seq_of(rec), next++); });
  EXPECT_EQ(r.count, 1001u);
}

// The fresh run is found by probing the ends of doubling strides (64, 128,
// 256, ... slots) and a binary search: every length from 0 to the whole ring
// must come out exact, from any HEAD, across the ring's end, for drain,
// for_each and available alike. The expected count is the number of records
// pushed.
TEST(Ring, FreshRunOfEveryLengthIsFoundExactly) {
  constexpr std::uint32_t kEntries = 1024;
  std::vector<Record> out(kEntries);
  for (const std::uint32_t head : {0u, 1u, 500u, 1000u}) {
    for (std::uint32_t len = 0; len <= kEntries; ++len) {
      MemRing ring(kEntries);
      RingView v(ring.span(), Doorbell{});
      // Move producer and consumer to `head`: a previous pass fills the slots
      // the new records do not reach with the other phase.
      for (std::uint32_t i = 0; i < head; ++i) ring.push(seq_record(i));
      if (head) {
        ASSERT_EQ(v.drain(std::span<Record>(out.data(), head)).count, head);
      }
      for (std::uint32_t i = 0; i < len; ++i) ring.push(seq_record(head + i));
      ASSERT_EQ(v.available(), len) << "head " << head << " len " << len;
      std::vector<std::uint64_t> seen;
      const auto r = (len % 2) ? v.drain(out) : v.for_each([&](const Record& rec) { seen.push_back(seq_of(rec)); });
      ASSERT_EQ(r.count, len) << "head " << head << " len " << len << (len % 2 ? " drain" : " for_each");
      ASSERT_FALSE(r.lap_suspected);
      for (std::uint32_t i = 0; i < len; ++i)
        ASSERT_EQ((len % 2) ? seq_of(out[i]) : seen[i], std::uint64_t(head + i)) << "head " << head << " len " << len;
      ASSERT_EQ(v.head(), head + len);
    }
  }
}

TEST(Ring, RunEndingAtAStaleSlotWithSwOverflowIsSuspected) {
  // 1024 entries. Pass 0 wrote records 700..899 while the queue was
  // overflowing (software_queue_overflow set). The consumer is on pass 1 and
  // the producer has written records 1024..1723 (slots 0..699): slot 700
  // still holds record 700, stale, with the flag. The search must stop there
  // (between the probes of slots 447 and 959, where record 959 has no flag)
  // and report the suspicion from that slot's header.
  MemRing ring(1024);
  for (int i = 0; i < 1024; ++i) ring.push(seq_record(i), i >= 700 && i < 900 ? NEURON_ISA_HEADER_SW_OVF : 0);
  RingView v(ring.span(), Doorbell{}, 1024);
  for (int i = 1024; i < 1724; ++i) ring.push(seq_record(i));
  std::vector<Record> out(1024);
  auto r = v.drain(out);
  EXPECT_EQ(r.count, 700u);
  EXPECT_TRUE(r.lap_suspected);
  EXPECT_FALSE(r.sw_overflow);  // no record handed out had it
  EXPECT_EQ(seq_of(out[699]), 1723u);
}

TEST(Ring, ForEachCrossesSpansAndTheRingsEndInOrder) {
  // 256 entries, consumer at 200: records 200..455 fill the ring (slots
  // 200..255 on pass 0, slots 0..199 on pass 1, phase flipped). for_each
  // hands them out in spans of at most 64, which must not show: 100 records
  // (max), then a stop after record 337 (fn returns false), then the rest.
  MemRing ring(256);
  for (int i = 0; i < 200; ++i) ring.push(seq_record(i));
  RingView v(ring.span(), Doorbell{}, 200);
  for (int i = 200; i < 456; ++i) ring.push(seq_record(i));
  std::vector<std::uint64_t> got;
  auto r = v.for_each([&](const Record& rec) { got.push_back(seq_of(rec)); }, 100);
  EXPECT_EQ(r.count, 100u);
  EXPECT_EQ(v.head(), 300u);
  r = v.for_each([&](const Record& rec) {
    got.push_back(seq_of(rec));
    return seq_of(rec) != 337;
  });
  EXPECT_EQ(r.count, 38u);  // 300..337
  EXPECT_EQ(v.head(), 338u);
  r = v.for_each([&](const Record& rec) { got.push_back(seq_of(rec)); });
  EXPECT_EQ(r.count, 118u);  // 338..455
  EXPECT_EQ(v.head(), 456u);
  EXPECT_FALSE(v.expected_phase());  // HEAD 456 is on pass 1
  ASSERT_EQ(got.size(), 256u);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(got[i], std::uint64_t(200 + i)) << i;
  EXPECT_EQ(v.for_each([](const Record&) {}).count, 0u);
}

TEST(Ring, ForEachOverflowFlagsCoverExactlyTheRecordsTaken) {
  // 200 records, one of them flagged. The flags are OR-ed per span of 64, by
  // vector in blocks of 8 and record by record after that: the flagged
  // record at each of these positions must set the flag exactly when it was
  // handed out (first call: records 0..cut-1, second: the rest).
  for (const std::uint8_t flag : {std::uint8_t{NEURON_ISA_HEADER_SW_OVF}, std::uint8_t{NEURON_ISA_HEADER_HW_OVF}}) {
    for (const int at : {0, 7, 8, 62, 63, 64, 71, 127, 130, 199}) {
      for (const int cut : {at, at + 1}) {
        MemRing ring(256);
        for (int i = 0; i < 200; ++i) ring.push(seq_record(i), i == at ? flag : 0);
        RingView v(ring.span(), Doorbell{});
        const bool sw = flag == NEURON_ISA_HEADER_SW_OVF;
        auto r = v.for_each([](const Record&) {}, static_cast<std::size_t>(cut));
        EXPECT_EQ(r.count, static_cast<std::size_t>(cut));
        EXPECT_EQ(sw ? r.sw_overflow : r.hw_overflow, cut == at + 1) << "at " << at << " cut " << cut;
        EXPECT_FALSE(sw ? r.hw_overflow : r.sw_overflow);
        r = v.for_each([](const Record&) {});
        EXPECT_EQ(r.count, static_cast<std::size_t>(200 - cut));
        EXPECT_EQ(sw ? r.sw_overflow : r.hw_overflow, cut == at) << "at " << at << " cut " << cut;
        // The same with a stop from fn instead of max.
        MemRing ring2(256);
        for (int i = 0; i < 200; ++i) ring2.push(seq_record(i), i == at ? flag : 0);
        RingView v2(ring2.span(), Doorbell{});
        if (cut == 0) continue;
        r = v2.for_each([&](const Record& rec) { return seq_of(rec) + 1 != static_cast<std::uint64_t>(cut); });
        EXPECT_EQ(r.count, static_cast<std::size_t>(cut));
        EXPECT_EQ(sw ? r.sw_overflow : r.hw_overflow, cut == at + 1) << "stop: at " << at << " cut " << cut;
      }
    }
  }
}
