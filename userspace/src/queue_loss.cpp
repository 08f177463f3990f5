// SPDX-License-Identifier: MIT
//
// NotificationQueue when records were lost: an NQ_INFO failure that means
// the device went, the lossy (ignore-full) drain, and a backpressured
// queue's recovery from a lapped ring (device.hpp,
// userspace/README.md#lossy-queues).
#include "libneuron/device.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace neuron {

// NQ_INFO failed: ENODEV (removed) and EIO (stale after a reset, or the
// device offline) mean the driver has revoked the mappings
// (docs/decisions/0011-reset-and-recovery.md).
void NotificationQueue::note_info_error(const Error& e) noexcept {
  if (e.code == std::errc::no_such_device || e.code == std::errc::io_error) mark_device_gone();
}

// userspace/README.md#lossy-queues. A copy of record j is sound iff the
// producer had not begun writing record j + entries when the copy was made.
// The device writes a record and moves TAIL past it in one step as far as a
// register read is concerned (docs/device-model.md#lossy-tail: in the model
// both happen under QEMU's BQL, as NQ_INFO's MMIO read of TAIL does), so a
// TAIL read never falls inside a record write: if the producer had begun
// record j + entries before the copy ended, TAIL read afterwards is
// >= j + entries + 1. Records below TAIL - entries may be torn or of a later
// pass; the others are sound, record TAIL - entries included (a full ring
// whose producer is idle, or has not begun the next record, loses nothing).
DrainResult NotificationQueue::drain_lossy(std::span<Record> out) noexcept {
  constexpr unsigned kMaxResyncs = 8;
  DrainResult total;
  const std::uint32_t entries = view_.entries();
  const std::uint32_t margin = std::max<std::uint32_t>(1, entries / 4);
  std::size_t filled = 0;
  while (filled < out.size()) {
    const std::uint32_t h0 = view_.head();
    DrainResult r = view_.drain(out.subspan(filled));
    total.hw_overflow |= r.hw_overflow;
    total.sw_overflow |= r.sw_overflow;
    const bool suspect = r.lap_suspected || r.sw_overflow;
    if (!suspect) {
      filled += r.count;
      if (r.count == 0 || filled == out.size()) break;
      continue;
    }
    // An idle queue whose last record was an overwrite: one NQ_INFO per HEAD
    // and slot content (a slot lapped since then looks the same stale way
    // but holds another record).
    if (r.count == 0 && checked_ && checked_head_ == h0) {
      std::uint64_t lo, hi;
      view_.slot_words(h0, lo, hi);
      if (lo == checked_lo_ && hi == checked_hi_) break;
    }
    auto info = this->info();
    if (!info) {  // cannot tell: keep what was copied, as a backpressured drain would
      filled += r.count;
      note_info_error(info.error());
      break;
    }
    // The copies (and the slot loads above) happen before TAIL is read.
    std::atomic_thread_fence(std::memory_order_acquire);
    const std::uint32_t d = info->tail - h0;  // records written from h0 on
    if (d <= entries) {  // the producer had not begun record h0 + entries: all sound
      filled += r.count;
      if (r.count == 0) {
        checked_ = true;
        checked_head_ = h0;
        view_.slot_words(h0, checked_lo_, checked_hi_);
        break;
      }
      continue;
    }
    checked_ = false;
    total.lap_suspected = true;
    const std::uint32_t unsound = d - entries;  // records h0 .. h0 + unsound - 1: overwritten or being so
    total.overwritten += d - entries;
    if (unsound < r.count) {
      // Keep the sound tail of the copies; the view is already past them.
      Record* dst = out.data() + filled;
      std::memmove(dst, dst + unsound, (r.count - unsound) * sizeof(Record));
      filled += r.count - unsound;
      total.lost += unsound;
      continue;
    }
    // Nothing sound: skip to the oldest record, plus a margin.
    const std::uint32_t p = info->tail - entries + margin;
    total.lost += p - h0;
    view_.resync(p);
    view_.publish_head();
    if (++total.resyncs >= kMaxResyncs) break;
  }
  total.count = filled;
  total.device_gone = gone_;
  lost_ += total.lost;
  return total;
}

void NotificationQueue::recover(DrainResult& r) noexcept {
  // Backpressured queues only (drain_lossy handles ignore-full ones): only
  // when the slot at HEAD is stale but marked overflow; one syscall per HEAD
  // value at most, so an idle queue whose last record was an overwrite does
  // not cost a syscall per poll.
  if (checked_ && checked_head_ == view_.head()) return;
  auto a = info();
  if (!a) {
    note_info_error(a.error());
    return;
  }
  checked_ = true;
  checked_head_ = view_.head();
  const std::uint32_t entries = view_.entries();
  if (a->tail - view_.head() > entries) {
    const std::uint32_t oldest = a->tail - entries;
    const std::uint32_t skipped = oldest - view_.head();
    lost_ += skipped;
    r.lost += skipped;
    r.overwritten += skipped;
    r.sw_overflow = true;
    view_.resync(oldest);
    view_.publish_head();
    checked_ = false;
  }
}

}  // namespace neuron
