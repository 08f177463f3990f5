// SPDX-License-Identifier: MIT
//
// What the VM benchmarks measure besides records/s (docs/performance.md#method):
//
// CPU. Two views of one interval, printed side by side:
//  * the process: getrusage(RUSAGE_SELF), user + system, every thread of the
//    benchmark (the consumer and the thread that submits programs);
//  * the whole guest: /proc/stat's first line, every jiffy not idle or
//    iowait, over all CPUs. This includes what the process cannot see: the
//    driver's threaded interrupt handlers, softirqs, the scheduler's and
//    timers' work, kernel threads. Its resolution is one jiffy (1/USER_HZ,
//    10 ms), so it is read over runs of a second or more.
//
// Delivery latency. A record carries the device's timestamp (bytes 8..15,
// picoseconds, docs/hardware.md#timestamp), taken when the device writes
// it into the ring; the consumer reads CLOCK_MONOTONIC when a drain hands
// it the record. The two clocks are related by NEURON_IOC_TIMESTAMP
// samples (libneuron's calibrate_clock(): of k samples, the one with the
// narrowest CLOCK_MONOTONIC window, its midpoint against the device read),
// once per core before the run and once after it. The offset is
// interpolated linearly between the two calibrations at the moment the
// record was seen, so a drift between the clocks (reported: after - before,
// in ns and ppm of the interval) is taken out; the calibrations'
// uncertainty (half the kept window) bounds what remains. Latency =
// seen_ns - (device_ps / 1000 + offset_ns). Percentiles are nearest-rank
// over every record; the histogram has 10 logarithmic buckets per decade
// from 1 us to 10 s (latency_edges_ns()), plus one below 1 us (where a
// latency within the uncertainty of 0, or just below it, lands) and one
// above 10 s.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libneuron/neuron.hpp"

namespace neuron::bench {

/// CLOCK_MONOTONIC now, ns.
std::int64_t monotonic_ns() noexcept;
/// getrusage(RUSAGE_SELF): user + system seconds of the whole process.
double process_cpu_seconds() noexcept;
/// CLOCK_THREAD_CPUTIME_ID of the calling thread, seconds.
double thread_cpu_seconds() noexcept;

/// The first line of /proc/stat ("cpu  user nice system idle iowait irq
/// softirq steal ..."), in jiffies.
struct SystemCpu {
  std::uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  std::uint64_t idle = 0;   // idle + iowait
  /// Parses the text of /proc/stat; nullopt if its first line is not "cpu ...".
  static std::optional<SystemCpu> parse(const std::string& proc_stat);
  /// Reads /proc/stat now.
  static std::optional<SystemCpu> read();
};

/// CPU over one interval: start() then stop().
class CpuMeter {
 public:
  void start();
  void stop();
  [[nodiscard]] double wall_s() const { return wall_s_; }
  [[nodiscard]] double process_s() const { return process_s_; }
  /// Busy seconds of the whole guest (every CPU), -1 if /proc/stat was unreadable.
  [[nodiscard]] double system_s() const { return system_s_; }
  /// As JSON: wall_s, process_s, system_s, and per record when records > 0.
  [[nodiscard]] nlohmann::json to_json(std::uint64_t records) const;

 private:
  std::int64_t t0_ = 0;
  double p0_ = 0;
  std::optional<SystemCpu> s0_;
  double wall_s_ = 0, process_s_ = 0, system_s_ = -1;
};

/// The histogram's upper bucket edges, ns: 10^(k/10) us for k = 0..70
/// (1 us .. 10 s), rounded to whole ns. Bucket 0 holds latencies < 1 us,
/// bucket i (1..70) those in [edge[i-1], edge[i]), bucket 71 those >= 10 s.
const std::vector<std::int64_t>& latency_edges_ns();

struct LatencySummary {
  std::uint64_t count = 0;
  std::int64_t min_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  double mean_ns = 0;
  std::uint64_t below_zero = 0;        // latencies < 0 (within the calibration's uncertainty)
  std::vector<std::uint64_t> buckets;  // latency_edges_ns().size() + 1 counts
  [[nodiscard]] nlohmann::json to_json() const;
};

/// Nearest-rank percentiles and the histogram of `latencies_ns` (sorted in
/// place): percentile p is the value at rank ceil(p/100 * n), 1-based.
LatencySummary summarize_latencies(std::vector<std::int64_t>& latencies_ns);

/// The offset at `t_ns` on the line through (t0, o0) and (t1, o1); o0 if t1 == t0.
std::int64_t interpolate_offset(std::int64_t t_ns, std::int64_t t0, std::int64_t o0, std::int64_t t1,
                                std::int64_t o1) noexcept;

/// Delivery latency of one run (see the top of this file): calibrate(),
/// seen() for every record, calibrate() again, then summary().
class LatencyRecorder {
 public:
  /// Which cores' clocks to calibrate (records of core c use core c's).
  LatencyRecorder(const Device& dev, unsigned cores, unsigned samples = 16);
  /// One calibration of every core (call once before and once after the
  /// run). False (and latency is not measured) if the device has no
  /// NEURON_IOC_TIMESTAMP or a sample failed; why() says what.
  bool calibrate();
  /// A record of core `core`, handed to the consumer at `seen_ns` (CLOCK_MONOTONIC).
  void seen(unsigned core, const Record& r, std::int64_t seen_ns) {
    if (core < per_core_.size()) samples_.push_back({seen_ns, static_cast<std::int64_t>(r.u64(8) / 1000), core});
  }
  void reserve(std::size_t n) { samples_.reserve(n); }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const std::string& why() const { return why_; }
  /// The latencies (needs two calibrations), and the calibration as JSON.
  [[nodiscard]] std::optional<LatencySummary> summary();
  [[nodiscard]] nlohmann::json calibration_json() const;
  /// The largest |after - before| offset change over the cores, ns, and per
  /// second of the interval between the calibrations (ppm).
  [[nodiscard]] std::int64_t drift_ns() const;
  [[nodiscard]] double drift_ppm() const;

 private:
  struct Cal {
    std::int64_t at_ns = 0;  // CLOCK_MONOTONIC of the kept sample (its window's midpoint)
    ClockCalibration c;
  };
  struct Sample {
    std::int64_t seen_ns, device_ns;
    unsigned core;
  };
  const Device& dev_;
  unsigned samples_per_cal_;
  std::vector<std::vector<Cal>> per_core_;  // [core] = before, after
  std::vector<Sample> samples_;
  bool ok_ = true;
  std::string why_;
};

}  // namespace neuron::bench
