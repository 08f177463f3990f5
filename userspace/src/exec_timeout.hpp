// SPDX-License-Identifier: MIT
//
// The execution budget from NEURON_RT_EXEC_TIMEOUT and the line a run that
// outlives it is reported with (docs/hardware.md#exec-timeout,
// docs/decisions/0037-exec-timeout.md). Private to libneuron; neuron-nq
// compiles this file too (userspace/CMakeLists.txt, neuron_cli), so run
// resolves the budget before it opens the device.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "libneuron/result.hpp"

namespace neuron::detail {

/// NEURON_RT_EXEC_TIMEOUT's value as a budget. `value`: whole seconds in
/// decimal, 0 to 2147483647 (INT_MAX), no sign, blanks or unit; 0 means no
/// limit and gives std::chrono::milliseconds::max(). Errors:
/// errc::invalid_argument, the text naming the variable, the value and the
/// range ("NEURON_RT_EXEC_TIMEOUT='1.5': not a whole number of seconds
/// from 0 to 2147483647 (0: no limit)").
Result<std::chrono::milliseconds> parse_exec_timeout(std::string_view value);

/// The budget execute() waits for: `requested` unless it is
/// kExecTimeoutFromEnv (libneuron/execute.hpp); then NEURON_RT_EXEC_TIMEOUT
/// if it is set (parse_exec_timeout(), whose errors are returned), else
/// kExecTimeoutDefault.
Result<std::chrono::milliseconds> resolve_exec_timeout(std::chrono::milliseconds requested);

/// The line a TIMEOUT is reported with, in the shape of the runtime's
/// (docs/hardware.md#exec-timeout): "(FATAL-RT-UNDEFINED-STATE) PROGRAM:
/// execution timeout (BUDGET ms) on ENGINES: waiting for execution
/// completion notification". `engines` names those that did not complete,
/// e.g. "core 0 PE".
std::string exec_timeout_line(std::string_view program, std::chrono::milliseconds budget, std::string_view engines);

}  // namespace neuron::detail
