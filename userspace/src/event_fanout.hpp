// SPDX-License-Identifier: MIT
//
// One open file's events for every execute() running on it at once
// (issue 41). The driver keeps one event queue per open file of /dev/nnqN
// and a core's edges go only to the file that owns the core
// (docs/decisions/0005-tenancy.md), so concurrent execute() calls on one
// Device cannot each open a file of their own: they read the same queue,
// and one call's read() took the other's overflow edge. Each now
// subscribes to a fan-out of the file: whichever subscriber reads the file
// hands every event to all of them. Private (not exported).
#pragma once

#include <memory>

#include "libneuron/device.hpp"
#include "libneuron/reaper.hpp"

namespace neuron::detail {

/// An EventSource that sees every event of `dev`'s open file from now on,
/// whoever else subscribes to the same file (through the same Device or
/// another descriptor of its open file). Its fd() is readable while the
/// file or its own share holds events. Errors: dup()'s, epoll's, eventfd's
/// errno; adopt()'s.
Result<std::unique_ptr<EventSource>> subscribe_events(const Device& dev);

}  // namespace neuron::detail
