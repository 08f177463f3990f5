// SPDX-License-Identifier: MIT
//
// The version of the libneuron a program runs with (userspace/README.md#versions).
#pragma once

#include <compare>

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// A libneuron version: `major` is the SONAME's (libneuron.so.MAJOR; it
/// bumps on an incompatible ABI change), `minor` bumps when symbols are added
/// (each minor release has its own version node, LIBNEURON_MAJOR.MINOR),
/// `patch` for fixes that change no interface. Ordered by (major, minor, patch).
struct Version {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned patch = 0;
  friend constexpr auto operator<=>(const Version&, const Version&) = default;
};

/// The version of the libneuron.so loaded at run time (not of the headers
/// the caller was built with: kHeaderVersion). Never fails, thread-safe, no
/// system call. C API: libneuron_version(). Since LIBNEURON_0.1.
Version version() noexcept;

/// The version of these headers (LIBNEURON_VERSION_* in libneuron/neuron.h).
inline constexpr Version kHeaderVersion{1, 1, 0};

}  // namespace neuron
NEURON_API_END
