// SPDX-License-Identifier: MIT
// The device clock against CLOCK_MONOTONIC (libneuron/clock.hpp has the method).
#include "libneuron/clock.hpp"

#include <vector>

#include <fmt/format.h>

namespace neuron {

Result<ClockCalibration> calibrate_clock(std::span<const TimestampSample> samples) {
  if (samples.empty()) return unexpected(errc::invalid_argument, "calibrate the device clock: no samples");
  ClockCalibration c;
  c.samples = samples.size();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const TimestampSample& s = samples[i];
    if (s.sys_after_ns < s.sys_before_ns)
      return unexpected(errc::invalid_argument,
                        fmt::format("calibrate the device clock: sample {} ends ({} ns) before it begins ({} ns)", i,
                                    s.sys_after_ns, s.sys_before_ns));
    if (i == 0 || s.sys_after_ns - s.sys_before_ns < c.window_ns) {
      c.best = i;
      c.window_ns = s.sys_after_ns - s.sys_before_ns;
    }
  }
  const TimestampSample& b = samples[c.best];
  const std::uint64_t mid = b.sys_before_ns + c.window_ns / 2;
  c.offset_ns = static_cast<std::int64_t>(mid) - static_cast<std::int64_t>(b.device_ps / 1000);
  c.uncertainty_ns = (c.window_ns + 1) / 2 + 1;
  return c;
}

Result<ClockCalibration> calibrate_clock(const Device& dev, unsigned core, unsigned samples) {
  if (samples == 0)
    return unexpected(errc::invalid_argument, fmt::format("calibrate the clock of core {}: samples is 0", core));
  std::vector<TimestampSample> got;
  got.reserve(samples);
  for (unsigned i = 0; i < samples; ++i) {
    auto s = dev.timestamp(core);
    if (!s) return unexpected(std::move(s).error());
    got.push_back(*s);
  }
  return calibrate_clock(got);
}

}  // namespace neuron
