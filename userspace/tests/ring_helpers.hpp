// SPDX-License-Identifier: MIT
// A tiny in-memory producer for synthetic rings (tests only). It writes what
// the device writes: the record with the phase of its pass, then TAIL++.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "libneuron/ring.hpp"

namespace neuron::test {

/// The phase bit record number `count` (free-running) carries in a ring of
/// `entries` records, a power of two (docs/hardware.md#rec-phase): what the
/// device writes, for every fake producer.
inline bool pass_phase(std::uint32_t count, std::uint32_t entries) {
  unsigned shift = 0;
  while ((1u << shift) < entries) ++shift;
  return RingView::phase_of(count, shift);
}

inline Record seq_record(std::uint64_t seq, std::uint8_t type = NEURON_ISA_NOTIFICATION_TYPE_PE_EXPLICIT) {
  Record r;
  for (int i = 0; i < 4; ++i) r.bytes[4 + i] = static_cast<std::uint8_t>(seq >> (8 * i));
  for (int i = 0; i < 8; ++i) r.bytes[8 + i] = static_cast<std::uint8_t>(seq >> (8 * i));
  r.bytes[3] = type;
  return r;
}

struct MemRing {
  explicit MemRing(std::uint32_t entries_, std::uint32_t start = 0)
      : mem(entries_), entries(entries_), tail(start) {}
  std::vector<Record> mem;
  std::uint32_t entries;
  std::uint32_t tail;

  bool phase_of(std::uint32_t count) const { return pass_phase(count, entries); }
  /// Write `r` as record number `tail` (its header type/flags kept, phase set).
  void push(Record r, std::uint8_t extra_flags = 0) {
    r.bytes[3] = static_cast<std::uint8_t>((r.bytes[3] & 0x7f) | extra_flags | (phase_of(tail) ? 0x80 : 0));
    mem[tail & (entries - 1)] = r;
    ++tail;
  }
  std::span<const Record> span() const { return {mem.data(), mem.size()}; }
};

inline std::uint64_t seq_of(const Record& r) { return r.u64(8); }

/// Polls `pred` every millisecond until it holds (true) or `limit` passes
/// (false): for tests that wait on another thread, never for timing.
inline bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace neuron::test
