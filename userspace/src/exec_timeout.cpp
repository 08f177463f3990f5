// SPDX-License-Identifier: MIT
//
// NEURON_RT_EXEC_TIMEOUT and the timeout line (exec_timeout.hpp).
#include "exec_timeout.hpp"

#include <climits>
#include <cstdint>
#include <cstdlib>

#include "libneuron/execute.hpp"

namespace neuron::detail {

Result<std::chrono::milliseconds> parse_exec_timeout(std::string_view value) {
  std::uint64_t seconds = 0;
  bool ok = !value.empty() && value.size() <= 10;
  for (char c : value) {
    if (c < '0' || c > '9') ok = false;
    if (ok) seconds = seconds * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!ok || seconds > static_cast<std::uint64_t>(INT_MAX))
    return unexpected(errc::invalid_argument, std::string(kExecTimeoutEnv) + "='" + std::string(value) +
                                                  "': not a whole number of seconds from 0 to " +
                                                  std::to_string(INT_MAX) + " (0: no limit)");
  if (seconds == 0) return std::chrono::milliseconds::max();
  return std::chrono::milliseconds(std::chrono::seconds(seconds));
}

Result<std::chrono::milliseconds> resolve_exec_timeout(std::chrono::milliseconds requested) {
  // the header's constants as constant expressions only: a reference to one
  // would make the library define (and export) it
  constexpr auto from_env = kExecTimeoutFromEnv.count();
  constexpr auto fallback = kExecTimeoutDefault.count();
  if (requested.count() != from_env) return requested;
  if (const char* env = std::getenv(kExecTimeoutEnv)) return parse_exec_timeout(env);
  return std::chrono::milliseconds(fallback);
}

std::string exec_timeout_line(std::string_view program, std::chrono::milliseconds budget, std::string_view engines) {
  return "(FATAL-RT-UNDEFINED-STATE) " + std::string(program) + ": execution timeout (" +
         std::to_string(budget.count()) + " ms) on " + std::string(engines) +
         ": waiting for execution completion notification";
}

}  // namespace neuron::detail
