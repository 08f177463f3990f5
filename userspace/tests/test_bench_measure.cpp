// SPDX-License-Identifier: MIT
//
// The arithmetic of the VM benchmarks' figures (userspace/bench/bench_measure.hpp,
// docs/performance.md#method): /proc/stat parsing, the latency histogram's
// edges and buckets, nearest-rank percentiles, the clock offset's
// interpolation. Every expected value is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "bench_measure.hpp"

using neuron::bench::interpolate_offset;
using neuron::bench::latency_edges_ns;
using neuron::bench::summarize_latencies;
using neuron::bench::SystemCpu;

TEST(BenchMeasure, ProcStatBusyAndIdle) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const auto s = SystemCpu::parse("cpu  10 2 30 400 5 6 7 8 0 0\ncpu0 10 2 30 400 5 6 7 8 0 0\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->busy, 63u);  // 10 + 2 + 30 + 6 + 7 + 8
  EXPECT_EQ(s->idle, 405u);  // 400 + 5
}

TEST(BenchMeasure, ProcStatRejectsOtherLines) {
  EXPECT_FALSE(SystemCpu::parse("intr 1 2 3 4 5 6 7 8").has_value());
  EXPECT_FALSE(SystemCpu::parse("cpu 1 2 3").has_value());  // fewer than 8 fields
  EXPECT_FALSE(SystemCpu::parse("").has_value());
}

TEST(BenchMeasure, HistogramEdgesAreTenPerDecade) {
  const auto& e = latency_edges_ns();
  ASSERT_EQ(e.size(), 71u);           // 1 us .. 10 s, 7 decades
  EXPECT_EQ(e[0], 1'000);             // 1 us
  EXPECT_EQ(e[1], 1'259);             // 1000 * 10^0.1 = 1258.93
  EXPECT_EQ(e[5], 3'162);             // 1000 * 10^0.5 = 3162.28
  EXPECT_EQ(e[10], 10'000);           // 10 us
  EXPECT_EQ(e[70], 10'000'000'000);   // 10 s
}

TEST(BenchMeasure, PercentilesAreNearestRank) {
  std::vector<std::int64_t> v;
  for (int i = 1000; i >= 1; --i) v.push_back(i);  // 1..1000, unsorted
  const auto s = summarize_latencies(v);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_EQ(s.min_ns, 1);
  EXPECT_EQ(s.p50_ns, 500);   // rank ceil(0.5 * 1000) = 500
  EXPECT_EQ(s.p90_ns, 900);
  EXPECT_EQ(s.p99_ns, 990);
  EXPECT_EQ(s.p999_ns, 999);  // rank ceil(0.999 * 1000) = 999
  EXPECT_EQ(s.max_ns, 1000);
  EXPECT_DOUBLE_EQ(s.mean_ns, 500.5);
}

TEST(BenchMeasure, BucketsAndSmallSamples) {
  std::vector<std::int64_t> v = {500, 1000, 1258, 1259, 2000, -5, 10'000'000'000, 3162, 3163, 10000};
  const auto s = summarize_latencies(v);
  // sorted: -5 500 1000 1258 1259 2000 3162 3163 10000 1e10
  EXPECT_EQ(s.p50_ns, 1259);            // rank 5
  EXPECT_EQ(s.p90_ns, 10000);           // rank 9
  EXPECT_EQ(s.p99_ns, 10'000'000'000);  // rank ceil(9.9) = 10
  EXPECT_EQ(s.min_ns, -5);
  EXPECT_EQ(s.below_zero, 1u);
  ASSERT_EQ(s.buckets.size(), 72u);
  std::vector<std::uint64_t> want(72, 0);
  want[0] = 2;   // -5, 500: below 1 us
  want[1] = 2;   // 1000, 1258: [1000, 1259)
  want[2] = 1;   // 1259: [1259, 1585)
  want[4] = 1;   // 2000: [1995, 2512)
  want[6] = 2;   // 3162, 3163: [3162, 3981)
  want[11] = 1;  // 10000: [10000, 12589)
  want[71] = 1;  // 1e10: 10 s and above
  EXPECT_EQ(s.buckets, want);
  // (22337 + 1e10) / 10
  EXPECT_DOUBLE_EQ(s.mean_ns, 1000002233.7);
}

TEST(BenchMeasure, NoSamples) {
  std::vector<std::int64_t> v;
  const auto s = summarize_latencies(v);
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.buckets, std::vector<std::uint64_t>(72, 0));
}

TEST(BenchMeasure, OffsetInterpolation) {
  EXPECT_EQ(interpolate_offset(150, 100, 1000, 200, 1100), 1050);  // halfway
  EXPECT_EQ(interpolate_offset(100, 100, 1000, 200, 1100), 1000);  // at the first calibration
  EXPECT_EQ(interpolate_offset(200, 100, 1000, 200, 1100), 1100);  // at the second
  EXPECT_EQ(interpolate_offset(300, 100, 1000, 200, 1100), 1200);  // after it: the same line
  EXPECT_EQ(interpolate_offset(150, 100, 1000, 200, 900), 950);    // drifting the other way
  EXPECT_EQ(interpolate_offset(101, 100, 0, 103, 10), 3);          // 10 / 3 = 3.33, rounded
  EXPECT_EQ(interpolate_offset(500, 100, 7, 100, 9), 7);           // one calibration time: the first offset
}
