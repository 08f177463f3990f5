// SPDX-License-Identifier: MIT
//
// neuron-nq's shared output helpers (output.hpp).
#include "output.hpp"

#include <time.h>

#include <algorithm>
#include <cctype>

namespace neuron::cli {

int fail(const Error& e) {
  fmt::print(stderr, "neuron-nq: {}\n", e.message());
  return kExitError;
}

int print_parse_or_device_error(const Error& e) {
  if (e.code == make_error_code(errc::parse_error)) {
    fmt::print(stderr, "{}\n", e.what);
    return kExitError;
  }
  return fail(e);
}

const char* gen_name(std::uint32_t gen) {
  switch (gen) {
    case NEURON_GEN_SUNDA: return "sunda";
    case NEURON_GEN_CAYMAN: return "cayman";
    default: return "unknown";
  }
}

std::string features_text(std::uint32_t f) {
  std::string s = fmt::format("0x{:x}", f);
  std::string names;
  const auto add = [&names](const char* n) { names += (names.empty() ? "" : ", ") + std::string(n); };
  if (f & NEURON_FEATURE_DVE_PERF_MODE) add("DVE perf mode");
  if (f & NEURON_FEATURE_DGE_PACKET_NOTIF) add("DGE packet notification");
  if (f & NEURON_FEATURE_EVT_ACCEL_ADDR) add("EVT accel address");
  return names.empty() ? s : s + " (" + names + ")";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string ns_text(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:09}", neg ? "-" : "", a / 1'000'000'000ull, a % 1'000'000'000ull);
}

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace neuron::cli
