// SPDX-License-Identifier: MIT
//
// The reference drain transcribed from the real runtime
// (docs/hardware.md#host-drain) and RingView::drain must return the same
// records for the same ring, batch by batch.
#include <gtest/gtest.h>

#include <vector>

#include "libneuron/ring.hpp"
#include "nq_read_ref.hpp"
#include "ring_helpers.hpp"

using namespace neuron;
using neuron::test::MemRing;
using neuron::test::seq_record;

TEST(Reference, CapUnderOneRecordFails) {
  MemRing ring(8);
  ring.push(seq_record(0));
  volatile std::uint32_t tail = ring.tail;
  reference::EnsNq nq{8, 0, ring.mem[0].bytes.data(), &tail};
  std::uint32_t consumed = 77;
  std::uint8_t buf[16];
  EXPECT_EQ(reference::nq_read_cayman(&nq, buf, 15, &consumed), 0u);
  EXPECT_EQ(consumed, 0u);
  EXPECT_EQ(nq.head, 0u);
  EXPECT_EQ(reference::nq_read_cayman(&nq, buf, 16, &consumed), 1u);
  EXPECT_EQ(consumed, 16u);
  EXPECT_EQ(nq.head, 1u);
}

TEST(Reference, FlushCallbackRunsPerRecord) {
  MemRing ring(8);
  for (int i = 0; i < 5; ++i) ring.push(seq_record(i));
  volatile std::uint32_t tail = ring.tail;
  int flushes = 0;
  reference::EnsNq nq{8, 0, ring.mem[0].bytes.data(), &tail};
  nq.needs_flush = true;
  nq.flush_ctx = &flushes;
  nq.flush_cb = [](void* c) { ++*static_cast<int*>(c); };
  std::vector<Record> out(8);
  std::uint32_t consumed = 0;
  EXPECT_EQ(reference::nq_read_cayman(&nq, out.data(), 8 * 16, &consumed), 5u);
  EXPECT_EQ(flushes, 5);
  EXPECT_EQ(consumed, 80u);
}

TEST(Reference, BadRingIsFlagged) {
  MemRing ring(4);
  volatile std::uint32_t tail = 9;  // 9 unread in a 4-entry ring: impossible
  reference::EnsNq nq{4, 0, ring.mem[0].bytes.data(), &tail};
  std::uint32_t consumed = 0;
  Record out[4];
  EXPECT_EQ(reference::nq_read_cayman(&nq, out, sizeof(out), &consumed), 0u);
  EXPECT_TRUE(nq.bad_ring);
}

TEST(Reference, EquivalentToRingViewDrainOverManyWraps) {
  constexpr std::uint32_t kEntries = 64;
  MemRing ring(kEntries);
  volatile std::uint32_t tail = 0;
  reference::EnsNq nq{kEntries, 0, ring.mem[0].bytes.data(), &tail};
  RingView view(ring.span(), Doorbell{});
  std::uint32_t lcg = 7;
  std::uint64_t seq = 0;
  std::vector<Record> a(kEntries), b(kEntries);
  for (int round = 0; round < 2000; ++round) {
    lcg = lcg * 1103515245u + 12345u;
    const std::uint32_t room = kEntries - (ring.tail - view.head());
    const std::uint32_t produce = room ? (lcg >> 16) % (room + 1) : 0;
    for (std::uint32_t i = 0; i < produce; ++i) ring.push(seq_record(seq++));
    tail = ring.tail;
    const std::size_t cap = 1 + (lcg >> 4) % kEntries;
    std::uint32_t consumed = 0;
    const std::size_t n_ref = reference::nq_read_cayman(&nq, a.data(), static_cast<std::uint32_t>(cap * 16), &consumed);
    const auto r = view.drain(std::span<Record>(b.data(), cap));
    ASSERT_EQ(n_ref, r.count) << "round " << round;
    ASSERT_EQ(consumed, r.count * 16);
    for (std::size_t i = 0; i < n_ref; ++i) ASSERT_EQ(a[i], b[i]) << "round " << round << " record " << i;
    ASSERT_EQ(nq.head, view.head());
  }
  EXPECT_GT(seq, 10000u);
}
