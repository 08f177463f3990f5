// SPDX-License-Identifier: MIT
#include "bench_measure.hpp"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace neuron::bench {

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double process_cpu_seconds() noexcept {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

double thread_cpu_seconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::optional<SystemCpu> SystemCpu::parse(const std::string& proc_stat) {
  std::istringstream in(proc_stat);
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal (guest and guest_nice are
  // already inside user and nice)
  std::uint64_t v[8] = {};
  for (auto& x : v)
    if (!(in >> x)) return std::nullopt;
  SystemCpu s;
  s.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  s.idle = v[3] + v[4];
  return s;
}

std::optional<SystemCpu> SystemCpu::read() {
  std::ifstream f("/proc/stat");
  std::string line;
  if (!std::getline(f, line)) return std::nullopt;
  return parse(line);
}

void CpuMeter::start() {
  s0_ = SystemCpu::read();
  p0_ = process_cpu_seconds();
  t0_ = monotonic_ns();
}

void CpuMeter::stop() {
  const std::int64_t t1 = monotonic_ns();
  const double p1 = process_cpu_seconds();
  const auto s1 = SystemCpu::read();
  wall_s_ = static_cast<double>(t1 - t0_) * 1e-9;
  process_s_ = p1 - p0_;
  system_s_ = -1;
  if (s0_ && s1) {
    static const long hz = ::sysconf(_SC_CLK_TCK);
    system_s_ = static_cast<double>(s1->busy - s0_->busy) / static_cast<double>(hz > 0 ? hz : 100);
  }
}

nlohmann::json CpuMeter::to_json(std::uint64_t records) const {
  nlohmann::json j = {{"wall_s", wall_s_}, {"process_s", process_s_}};
  j["system_s"] = system_s_ >= 0 ? nlohmann::json(system_s_) : nlohmann::json(nullptr);
  if (records > 0) {
    const double n = static_cast<double>(records);
    j["process_ns_per_record"] = process_s_ / n * 1e9;
    j["system_ns_per_record"] = system_s_ >= 0 ? nlohmann::json(system_s_ / n * 1e9) : nlohmann::json(nullptr);
  }
  return j;
}

const std::vector<std::int64_t>& latency_edges_ns() {
  static const std::vector<std::int64_t> edges = [] {
    std::vector<std::int64_t> e;
    for (int k = 0; k <= 70; ++k) e.push_back(std::llround(1000.0 * std::pow(10.0, k / 10.0)));
    return e;
  }();
  return edges;
}

LatencySummary summarize_latencies(std::vector<std::int64_t>& v) {
  LatencySummary s;
  const auto& edges = latency_edges_ns();
  s.buckets.assign(edges.size() + 1, 0);
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const auto rank = [&](std::uint64_t per_mille) {
    // nearest rank: the smallest value with at least p of the values at or
    // below it, rank ceil(p * n), in integers (99.9% in doubles rounds up)
    auto r = static_cast<std::size_t>((per_mille * n + 999) / 1000);
    r = std::clamp<std::size_t>(r, 1, n);
    return v[r - 1];
  };
  s.count = n;
  s.min_ns = v.front();
  s.max_ns = v.back();
  s.p50_ns = rank(500);
  s.p90_ns = rank(900);
  s.p99_ns = rank(990);
  s.p999_ns = rank(999);
  long double sum = 0;
  for (const std::int64_t x : v) {
    sum += static_cast<long double>(x);
    if (x < 0) ++s.below_zero;
    // first edge above x: bucket index (0: below 1 us; edges.size(): >= 10 s)
    const auto it = std::upper_bound(edges.begin(), edges.end(), x);
    ++s.buckets[static_cast<std::size_t>(it - edges.begin())];
  }
  s.mean_ns = static_cast<double>(sum / static_cast<long double>(n));
  return s;
}

nlohmann::json LatencySummary::to_json() const {
  return {{"count", count},   {"min_ns", min_ns},         {"p50_ns", p50_ns},    {"p90_ns", p90_ns},
          {"p99_ns", p99_ns}, {"p999_ns", p999_ns},       {"max_ns", max_ns},    {"mean_ns", mean_ns},
          {"below_zero", below_zero}, {"buckets", buckets}};
}

std::int64_t interpolate_offset(std::int64_t t, std::int64_t t0, std::int64_t o0, std::int64_t t1,
                                std::int64_t o1) noexcept {
  if (t1 == t0) return o0;
  const long double f = static_cast<long double>(t - t0) / static_cast<long double>(t1 - t0);
  return o0 + static_cast<std::int64_t>(std::llround(f * static_cast<long double>(o1 - o0)));
}

LatencyRecorder::LatencyRecorder(const Device& dev, unsigned cores, unsigned samples)
    : dev_(dev), samples_per_cal_(samples), per_core_(cores) {}

bool LatencyRecorder::calibrate() {
  if (!ok_) return false;
  for (unsigned c = 0; c < per_core_.size(); ++c) {
    std::vector<TimestampSample> s;
    for (unsigned i = 0; i < samples_per_cal_; ++i) {
      auto t = dev_.timestamp(c);
      if (!t) {
        ok_ = false;
        why_ = t.error().message();
        return false;
      }
      s.push_back(*t);
    }
    auto cal = calibrate_clock(s);
    if (!cal) {
      ok_ = false;
      why_ = cal.error().message();
      return false;
    }
    const auto& k = s[cal->best];
    per_core_[c].push_back(
        {static_cast<std::int64_t>(k.sys_before_ns + (k.sys_after_ns - k.sys_before_ns) / 2), *cal});
  }
  return true;
}

std::optional<LatencySummary> LatencyRecorder::summary() {
  if (!ok_) return std::nullopt;
  for (const auto& pc : per_core_)
    if (pc.size() < 2) return std::nullopt;
  std::vector<std::int64_t> lat;
  lat.reserve(samples_.size());
  for (const Sample& s : samples_) {
    const auto& b = per_core_[s.core].front();
    const auto& a = per_core_[s.core].back();
    const std::int64_t off = interpolate_offset(s.seen_ns, b.at_ns, b.c.offset_ns, a.at_ns, a.c.offset_ns);
    lat.push_back(s.seen_ns - (s.device_ns + off));
  }
  std::vector<Sample>().swap(samples_);
  return summarize_latencies(lat);
}

std::int64_t LatencyRecorder::drift_ns() const {
  std::int64_t d = 0;
  for (const auto& pc : per_core_)
    if (pc.size() >= 2) {
      const std::int64_t x = pc.back().c.offset_ns - pc.front().c.offset_ns;
      if (std::llabs(x) > std::llabs(d)) d = x;
    }
  return d;
}

double LatencyRecorder::drift_ppm() const {
  double d = 0;
  for (const auto& pc : per_core_)
    if (pc.size() >= 2 && pc.back().at_ns > pc.front().at_ns) {
      const double x = static_cast<double>(pc.back().c.offset_ns - pc.front().c.offset_ns) /
                       static_cast<double>(pc.back().at_ns - pc.front().at_ns) * 1e6;
      if (std::fabs(x) > std::fabs(d)) d = x;
    }
  return d;
}

nlohmann::json LatencyRecorder::calibration_json() const {
  nlohmann::json cores = nlohmann::json::array();
  for (unsigned c = 0; c < per_core_.size(); ++c) {
    nlohmann::json one = {{"core", c}};
    const char* names[] = {"before", "after"};
    for (std::size_t i = 0; i < per_core_[c].size() && i < 2; ++i) {
      const auto& k = per_core_[c][i];
      one[names[i]] = {{"at_ns", k.at_ns},
                       {"offset_ns", k.c.offset_ns},
                       {"uncertainty_ns", k.c.uncertainty_ns},
                       {"window_ns", k.c.window_ns},
                       {"samples", k.c.samples}};
    }
    cores.push_back(one);
  }
  nlohmann::json j = {{"cores", cores}, {"drift_ns", drift_ns()}, {"drift_ppm", drift_ppm()}};
  if (!ok_) j["error"] = why_;
  return j;
}

}  // namespace neuron::bench
