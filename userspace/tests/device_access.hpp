// SPDX-License-Identifier: MIT
// A Device over any open file, for the host tests of the ioctl wrappers'
// errors and of moved-from objects: Device::open() refuses a file that is
// not a node of the driver (/dev/null), so these tests make one here. Not
// API: Device names this struct a friend for libneuron's own tests.
#pragma once

#include <fcntl.h>

#include <cerrno>

#include <string>

#include "libneuron/device.hpp"

namespace neuron::test {

struct DeviceAccess {
  /// `path` opened read-write and non-blocking as Device::open() opens it,
  /// without its checks; no capability, no status page.
  static Result<Device> open_any(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK));
    if (!fd) return unexpected(Error::from_errno(errno, "open " + path));
    return Device(std::move(fd), path, sizeof(Event), 0, nullptr);
  }
};

}  // namespace neuron::test
