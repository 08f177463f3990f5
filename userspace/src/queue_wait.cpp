// SPDX-License-Identifier: MIT
//
// Sleeping on notification queues: NotificationQueue::wait() and
// wait_any(), the drain-then-sleep rule on the queues' eventfds
// (docs/hardware.md#completion; device.hpp).
#include "libneuron/device.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace neuron {

const char* wait_result_name(WaitResult::Status s) noexcept {
  switch (s) {
    case WaitResult::Status::Records: return "records";
    case WaitResult::Status::TimedOut: return "timed out";
  }
  return "?";
}

namespace {

std::string queue_what(const NotificationQueue& q, std::size_t index, bool many) {
  return many ? fmt::format("core {} queue {} (index {})", q.core(), q.queue(), index)
              : fmt::format("core {} queue {}", q.core(), q.queue());
}

// Reset an eventfd (non-blocking); its count only says "look again".
void efd_reset(int fd) noexcept {
  std::uint64_t v;
  ssize_t n;
  do {
    n = ::read(fd, &v, sizeof v);
  } while (n < 0 && errno == EINTR);
}

}  // namespace

Result<WaitResult> NotificationQueue::wait(std::span<Record> out, std::chrono::nanoseconds timeout) {
  NotificationQueue* self = this;
  return wait_any(std::span<NotificationQueue* const>(&self, 1), out, timeout, 0);
}

// The drain-then-sleep rule (docs/hardware.md#completion): the device raises
// the threshold interrupt once and re-arms it on the next HEAD write. Reset
// the eventfds, then drain: a drain that takes records writes HEAD and we
// return them; an empty drain after the last HEAD write means the threshold
// is armed, so any record from then on signals an eventfd we poll.
Result<WaitResult> NotificationQueue::wait_any(std::span<NotificationQueue* const> queues, std::span<Record> out,
                                               std::chrono::nanoseconds timeout, std::size_t start) {
  using clock = std::chrono::steady_clock;
  if (queues.empty()) return unexpected(errc::invalid_argument, "wait on an empty set of queues");
  if (out.empty()) return unexpected(errc::invalid_argument, "wait with no room for records (out is empty)");
  const bool many = queues.size() > 1;
  std::vector<pollfd> fds;
  fds.reserve(queues.size());
  for (std::size_t i = 0; i < queues.size(); ++i) {
    NotificationQueue* q = queues[i];
    if (q == nullptr) return unexpected(errc::invalid_argument, fmt::format("wait: queue pointer {} is null", i));
    if (q->device_gone()) return unexpected(errc::device_gone, "wait on " + queue_what(*q, i, many));
    if (!q->valid())
      return unexpected(errc::moved_from, "wait on " + queue_what(*q, i, many));
    if (q->wake_fd() < 0 && timeout.count() != 0)
      return unexpected(errc::invalid_argument,
                        "wait on " + queue_what(*q, i, many) +
                            ": no eventfd to sleep on (make it with Options::eventfd and a threshold > 0)");
    fds.push_back(pollfd{q->wake_fd(), POLLIN, 0});
  }
  // each queue's file of /dev/nnqN too, for EPOLLHUP/EPOLLERR only: a removal
  // ends the sleep (userspace/README.md#device-loss)
  for (std::size_t i = 0; i < queues.size(); ++i) fds.push_back(pollfd{queues[i]->device_fd(), 0, 0});
  // now + timeout saturates: a timeout that reaches past the clock's range
  // (LLONG_MAX ns from libneuron_queue_wait, nanoseconds::max()) is no limit,
  // not an overflow into the past
  const auto now0 = clock::now();
  const bool forever = timeout.count() < 0 || timeout > clock::time_point::max() - now0;
  const auto deadline = forever ? clock::time_point::max() : now0 + timeout;
  const std::size_t n = queues.size();
  WaitResult res;
  res.index = start % n;
  for (;;) {
    for (std::size_t i = 0; i < n; ++i)
      if (fds[i].fd >= 0) efd_reset(fds[i].fd);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (start + k) % n;
      // the driver revokes the mappings before it wakes anybody: look first
      if (queues[i]->check_device())
        return unexpected(errc::device_gone, "wait on " + queue_what(*queues[i], i, many));
      DrainResult r = queues[i]->drain(out);
      if (r.count > 0) {
        res.status = WaitResult::Status::Records;
        res.drain = r;
        res.index = i;
        return res;
      }
      if (k == 0) res.drain = r;
    }
    // Every queue empty after its last HEAD write: the thresholds are armed.
    timespec ts{};
    timespec* tsp = nullptr;
    if (!forever) {
      const auto left = deadline - clock::now();
      if (left.count() <= 0) {
        res.status = WaitResult::Status::TimedOut;
        return res;
      }
      const auto sec = std::chrono::duration_cast<std::chrono::seconds>(left);
      ts.tv_sec = static_cast<time_t>(sec.count());
      ts.tv_nsec = static_cast<long>((left - sec).count());
      tsp = &ts;
    }
    const int rc = ::ppoll(fds.data(), static_cast<nfds_t>(fds.size()), tsp, nullptr);
    if (rc < 0 && errno != EINTR)
      return unexpected(Error::from_errno(errno, "ppoll eventfd of " + (many ? std::to_string(n) + " queues"
                                                                              : queue_what(*queues[0], 0, false))));
    // woken, interrupted or timed out: drain again (the loop checks the time)
  }
}

}  // namespace neuron
