// SPDX-License-Identifier: MIT
//
// neuron-nq's shared output: exit statuses, error messages, the names and
// number formats every command prints, and the progress line on stderr.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "libneuron/neuron.hpp"

namespace neuron::cli {

/// Exit statuses: success (run: status OK), usage or device error, run
/// finished with a non-OK status.
inline constexpr int kExitOk = 0, kExitError = 1, kExitStatus = 3;

/// Print "neuron-nq: MESSAGE" on stderr; returns kExitError.
int fail(const Error& e);

/// A parse error as the assembler wrote it (FILE:LINE: ..., one per line);
/// anything else through fail(). Returns kExitError.
int print_parse_or_device_error(const Error& e);

/// "sunda", "cayman" or "unknown" for a NEURON_GEN_* value.
const char* gen_name(std::uint32_t gen);

/// Feature flags as "0x2 (DGE packet notification)"; bare hex when no bit is named.
std::string features_text(std::uint32_t f);

/// `s` in ASCII lower case.
std::string lower(std::string s);

/// Signed nanoseconds as seconds with nine decimals, e.g. "-1.000000005".
std::string ns_text(std::int64_t ns);

/// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_ns();

/// A one-line status on stderr, only when stderr is a terminal (quiet when
/// piped or redirected), at most 10 updates a second. The destructor clears it.
class Progress {
 public:
  explicit Progress(bool wanted) : on_(wanted && ::isatty(STDERR_FILENO)) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Replace the line with fmt::format(f, args...), unless updated < 100 ms ago.
  template <class... Args>
  void update(fmt::format_string<Args...> f, Args&&... args) {
    if (!on_) return;
    const auto now = monotonic_ns();
    if (now - last_ < 100'000'000) return;
    last_ = now;
    fmt::print(stderr, "\r\033[K{}", fmt::format(f, std::forward<Args>(args)...));
    std::fflush(stderr);
    shown_ = true;
  }
  /// Erase the line, if one is shown.
  void clear() {
    if (on_ && shown_) fmt::print(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
  std::int64_t last_ = 0;
};

}  // namespace neuron::cli
