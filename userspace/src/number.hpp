// SPDX-License-Identifier: MIT
//
// The one number syntax of program files (docs/program-syntax.md),
// neuron-nq's options (docs/cli-json.md#numbers) and the sysfs attributes
// neuron-nq reads. Private: compiled into libneuron (the assembler) and into
// neuron-nq, not exported, so a number means the same in a flag and in a
// program file.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace neuron::detail {

/// Decimal digits, 0x/0X then hex digits, or 0b/0B then binary digits; no
/// sign, no spaces. A leading 0 is decimal ("010" is ten: there is no octal).
/// nullopt when `s` is empty, malformed or above `max`.
std::optional<std::uint64_t> parse_number(std::string_view s, std::uint64_t max = UINT64_MAX) noexcept;

}  // namespace neuron::detail
