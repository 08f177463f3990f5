// SPDX-License-Identifier: MIT
//
// Adaptive interrupt moderation of one queue (userspace/README.md#coalescing),
// like Linux's DIM / ethtool adaptive-rx: few threshold interrupts while a
// queue's record rate is high, one per record while it is low, and never a
// record that waits longer than a latency budget for its interrupt. The
// Reaper keeps one per queue (Reaper::Moderation::Adaptive); the class is
// pure arithmetic on what the caller tells it, so any consumer of a queue
// (NotificationQueue::wait() users too) can drive it.
//
// The rule, for a budget B, a window W and a cap C:
//  * rate: the records the consumer took from the queue over at least W of
//    time (a window closes at the first observe() W or more after it
//    opened; an idle queue's window simply stays open, so its first records
//    after a pause are measured over the pause);
//  * target threshold T = clamp(floor(records * B / window), 1, C): the count
//    that arrives in one budget's time. At a rate r the count limit and the
//    time limit B come due together, so a wake takes about r * B records;
//    below 1 / B records per second T is 1: every record wakes at once;
//  * C = entries / 4 (at least 1): a quarter of the ring, so a backpressured
//    ring never stalls its producer waiting for the count;
//  * change only when T differs from the threshold programmed now by a
//    factor of 2 or more (this covers going back to 1), at most once per
//    window: the ioctl never lands on the per-record path and a rate that
//    wobbles around a value does not flap the setting;
//  * the time limit is always B, so a record waits at most B for its
//    interrupt whatever the threshold (the device's time limit,
//    docs/device-model.md#coalescing).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "libneuron/device.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

class InterruptModerator {
 public:
  struct Config {
    /// The latency budget B: the time limit programmed with every change,
    /// 1 ns .. NEURON_NQ_COALESCE_NS_MAX (10 ms).
    std::chrono::nanoseconds budget = std::chrono::microseconds(500);
    /// The window W: the shortest time a rate is measured over, and so the
    /// least time between two changes (> 0).
    std::chrono::nanoseconds window = std::chrono::milliseconds(10);
    /// The cap C on the threshold (max_threshold_for(entries)).
    std::uint32_t max_threshold = 1;
  };

  /// C for a ring of `entries` records: entries / 4, at least 1.
  static constexpr std::uint32_t max_threshold_for(std::uint32_t entries) noexcept {
    return entries / 4 > 0 ? entries / 4 : 1;
  }

  /// `threshold`: the queue's count limit now; `now`: when the first window
  /// opens (any monotonic clock, the same for every call).
  InterruptModerator(Config cfg, std::uint32_t threshold, std::chrono::nanoseconds now) noexcept;

  /// The consumer took `records` records from the queue (0 is fine: it
  /// looked and found none) at `now`. Returns the coalescing to program if
  /// the threshold should change (the moderator then takes it as programmed;
  /// if programming fails, stop using this moderator), else nullopt.
  [[nodiscard]] std::optional<Coalescing> observe(std::uint64_t records, std::chrono::nanoseconds now) noexcept;

  /// The threshold as programmed (the constructor's, or the last change).
  [[nodiscard]] std::uint32_t threshold() const noexcept { return threshold_; }
  /// The last closed window's rate, records per second (0 before one closed).
  [[nodiscard]] std::uint64_t rate() const noexcept { return rate_; }
  [[nodiscard]] const Config& config() const noexcept { return cfg_; }

 private:
  Config cfg_;
  std::uint32_t threshold_;
  std::chrono::nanoseconds opened_;  // the window's start
  std::uint64_t records_ = 0;        // taken in this window
  std::uint64_t rate_ = 0;
};

}  // namespace neuron
NEURON_API_END
