// SPDX-License-Identifier: MIT
//
// The consumer bench_drain's BM_ForEachWide hands every span to: the sum of
// byte 0 of each record, one implementation per drain path
// (userspace/README.md#drain-paths), so that for_each is timed with a
// consumer as wide as the drain it is compared with. Each reads every
// record of the span exactly once and returns the same sum.
#pragma once

#include <cstdint>
#include <span>

#include "libneuron/record.hpp"
#include "libneuron/ring.hpp"

namespace neuron::bench {

/// Sum of byte 0 of every record of `s` (16-byte aligned records, any
/// count); no error.
using SpanSum = std::uint64_t (*)(std::span<const Record> s) noexcept;

/// The SpanSum with the vector width of `path` (scalar: four running sums
/// in plain C++; sse2: one record a 16-byte load; avx2: two a 32-byte load;
/// avx512: four a 64-byte load); the scalar one for a path this build
/// cannot compile. It does not check the CPU: call the avx2 and avx512 ones
/// only where drain_path_supported(path) is true.
[[nodiscard]] SpanSum span_sum(DrainPath path) noexcept;

/// The plain C++ one (what a caller writes without vector code).
[[nodiscard]] std::uint64_t span_sum_plain(std::span<const Record> s) noexcept;

}  // namespace neuron::bench
