// SPDX-License-Identifier: MIT
//
// The device clock against CLOCK_MONOTONIC: from NEURON_IOC_TIMESTAMP
// samples (Device::timestamp) to an offset with a stated uncertainty, so a
// record's device timestamp (ps, docs/hardware.md#timestamp) can be placed
// on the host's clock, e.g. to measure how long a record took from the
// device writing it to the consumer holding it.
//
// The method (userspace/README.md#clock-calibration), as PTP_SYS_OFFSET_EXTENDED
// users and NTP's minimum-delay filter do it: each sample says the device
// read happened somewhere in [sys_before_ns, sys_after_ns]; nothing tells
// where, so the midpoint is off by at most half the window. A sample whose
// window was stretched (the thread preempted, an interrupt, a slow MMIO
// read) says less, so of k samples only the narrowest is kept:
//   offset_ns      = (sys_before_ns + w / 2) - device_ps / 1000,  w = sys_after_ns - sys_before_ns
//   uncertainty_ns = (w + 1) / 2 + 1
// (integer division: half the window rounded up, plus 1 ns for the
// truncation of both clocks to whole ns). Then CLOCK_MONOTONIC ns = device_ps / 1000 + offset_ns,
// true to within uncertainty_ns at the time of the samples. The two clocks
// may run at slightly different rates, so the offset drifts: calibrate
// again (or before and after a run, and take the difference as the drift)
// when a measurement spans more than seconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "libneuron/device.hpp"
#include "libneuron/result.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// The device clock placed on CLOCK_MONOTONIC (see the top of this file).
struct ClockCalibration {
  /// CLOCK_MONOTONIC ns = device_ps / 1000 + offset_ns.
  std::int64_t offset_ns = 0;
  /// The true offset lies within offset_ns +- uncertainty_ns (ns).
  std::uint64_t uncertainty_ns = 0;
  /// The kept sample's window, sys_after_ns - sys_before_ns (ns).
  std::uint64_t window_ns = 0;
  /// Samples looked at, and the index of the kept (narrowest) one.
  std::size_t samples = 0;
  std::size_t best = 0;
  /// A device timestamp (ps) as CLOCK_MONOTONIC ns.
  [[nodiscard]] std::int64_t to_monotonic_ns(std::uint64_t device_ps) const noexcept {
    return static_cast<std::int64_t>(device_ps / 1000) + offset_ns;
  }
};

/// The calibration from `samples` (pure: no device). Keeps the narrowest
/// window (the first of equals). Errors: errc::invalid_argument for no
/// samples, or a sample whose sys_after_ns is before its sys_before_ns (the
/// message names its index).
Result<ClockCalibration> calibrate_clock(std::span<const TimestampSample> samples);

/// Takes `samples` NEURON_IOC_TIMESTAMP samples of core `core` back to back
/// (one ioctl each) and calibrates from them. Errors: errc::invalid_argument
/// for samples == 0; errc::not_supported from a driver without
/// NEURON_CAP_TIMESTAMP (no ioctl); otherwise Device::timestamp()'s (EINVAL
/// for a core out of range, EIO / ENODEV). Thread safety: as Device.
Result<ClockCalibration> calibrate_clock(const Device& dev, unsigned core, unsigned samples = 16);

}  // namespace neuron
NEURON_API_END
