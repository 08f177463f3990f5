// SPDX-License-Identifier: MIT
//
// neuron::version() and libneuron_version() (userspace/README.md#versions).
// CMake passes the project's version (NEURON_LIB_VERSION_*); the headers'
// constants must agree, or the build stops here.
#include "libneuron/neuron.h"
#include "libneuron/version.hpp"

static_assert(NEURON_LIB_VERSION_MAJOR == LIBNEURON_VERSION_MAJOR &&
                  NEURON_LIB_VERSION_MINOR == LIBNEURON_VERSION_MINOR &&
                  NEURON_LIB_VERSION_PATCH == LIBNEURON_VERSION_PATCH,
              "libneuron/neuron.h LIBNEURON_VERSION_* differ from project(libneuron VERSION) in CMakeLists.txt");
static_assert(neuron::kHeaderVersion ==
                  neuron::Version{LIBNEURON_VERSION_MAJOR, LIBNEURON_VERSION_MINOR, LIBNEURON_VERSION_PATCH},
              "libneuron/version.hpp kHeaderVersion differs from libneuron/neuron.h LIBNEURON_VERSION_*");

namespace neuron {
Version version() noexcept {
  return {NEURON_LIB_VERSION_MAJOR, NEURON_LIB_VERSION_MINOR, NEURON_LIB_VERSION_PATCH};
}
}  // namespace neuron

extern "C" struct libneuron_version_info libneuron_version(void) {
  struct libneuron_version_info v{};
  v.major = NEURON_LIB_VERSION_MAJOR;
  v.minor = NEURON_LIB_VERSION_MINOR;
  v.patch = NEURON_LIB_VERSION_PATCH;
  return v;
}
