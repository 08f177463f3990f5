// SPDX-License-Identifier: MIT
// Adaptive interrupt moderation (libneuron/moderation.hpp has the rule).
#include "libneuron/moderation.hpp"

#include <algorithm>
#include <limits>

namespace neuron {

InterruptModerator::InterruptModerator(Config cfg, std::uint32_t threshold, std::chrono::nanoseconds now) noexcept
    : cfg_(cfg), threshold_(threshold), opened_(now) {
  if (cfg_.max_threshold == 0) cfg_.max_threshold = 1;
}

std::optional<Coalescing> InterruptModerator::observe(std::uint64_t records, std::chrono::nanoseconds now) noexcept {
  records_ += records;
  const auto span = now - opened_;
  if (span < cfg_.window || span.count() <= 0) return std::nullopt;
  const auto dt = static_cast<std::uint64_t>(span.count());
  const auto budget = static_cast<std::uint64_t>(std::max<std::int64_t>(cfg_.budget.count(), 0));
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  // T = records * B / dt, clamped; the products stay in 64 bits (else T is at the cap anyway)
  std::uint64_t t = budget && records_ > kMax / budget ? kMax : records_ * budget / dt;
  t = std::clamp<std::uint64_t>(t, 1, cfg_.max_threshold);
  rate_ = records_ > kMax / 1'000'000'000u ? kMax / dt : records_ * 1'000'000'000u / dt;
  opened_ = now;
  records_ = 0;
  const auto target = static_cast<std::uint32_t>(t);
  const std::uint64_t cur = threshold_;
  if (target >= 2 * cur || 2 * std::uint64_t{target} <= cur) {
    threshold_ = target;
    return Coalescing{target, static_cast<std::uint32_t>(budget)};
  }
  return std::nullopt;
}

}  // namespace neuron
