// SPDX-License-Identifier: MIT
//
// Reading struct neuron_event records from an open file of /dev/nnqN
// (read_events(), the record size agreed by set_event_size()) and the
// EventStream that owns such a file (device.hpp).
#include "libneuron/device.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace neuron {

Result<std::size_t> read_events(int fd, std::span<Event> out, std::chrono::milliseconds timeout,
                                const std::string& what, std::size_t record_bytes) {
  if (out.empty()) return std::size_t{0};
  pollfd p{fd, POLLIN, 0};
  // a signal ends a poll early: the wait goes on for what is left of
  // `timeout`, not for all of it again (a profiler's 100 Hz timer would
  // otherwise keep a 1 s call from ever returning)
  using clock = std::chrono::steady_clock;
  const bool forever = timeout.count() < 0;
  const auto deadline = clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);
  for (;;) {
    int ms = -1;
    if (!forever) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
      ms = static_cast<int>(std::clamp<std::int64_t>(left, 0, INT32_MAX));
    }
    const int rc = ::poll(&p, 1, ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return unexpected(Error::from_errno(errno, "poll " + what));
    if (rc == 0) return std::size_t{0};
    break;
  }
  // records shorter than Event (an older driver) are read apart, then widened
  std::vector<unsigned char> narrow(record_bytes < sizeof(Event) ? out.size() * record_bytes : 0);
  void* buf = narrow.empty() ? static_cast<void*>(out.data()) : narrow.data();
  const std::size_t len = narrow.empty() ? out.size_bytes() : narrow.size();
  for (;;) {
    const ssize_t n = ::read(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return std::size_t{0};  // another reader was first
    if (n < 0) return unexpected(Error::from_errno(errno, what));
    const std::size_t rec = std::min(record_bytes, sizeof(Event));
    if (static_cast<std::size_t>(n) % rec != 0)
      return unexpected(errc::invalid_argument,
                        fmt::format("{}: {} bytes is not whole events of {} bytes", what, n, rec));
    const std::size_t count = static_cast<std::size_t>(n) / rec;
    for (std::size_t i = 0; !narrow.empty() && i < count; i++) {
      out[i] = Event{};
      std::memcpy(&out[i], narrow.data() + i * rec, rec);
    }
    return count;
  }
}

std::size_t set_event_size(int fd) noexcept {
  neuron_event_size es{};
  es.size = sizeof(Event);
  if (::ioctl(fd, NEURON_IOC_EVENT_SIZE, &es) == 0) return sizeof(Event);
  return NEURON_EVENT_SIZE_VER0;
}

Result<EventStream> EventStream::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return unexpected(Error::from_errno(errno, "open " + path + " (event stream)"));
  const std::size_t bytes = set_event_size(fd);
  return EventStream(UniqueFd(fd), path, bytes);
}

Result<EventStream> EventStream::adopt(UniqueFd fd, const std::string& path) {
  // The file status flags belong to the open file, so to every descriptor
  // of it the caller holds: they are looked at, never changed
  // (docs/decisions/0040-event-stream-adopt.md).
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0) return unexpected(Error::from_errno(errno, "fcntl F_GETFL " + path + " (event stream)"));
  if (!(flags & O_NONBLOCK))
    return unexpected(errc::invalid_argument,
                      fmt::format("adopt fd {} of {} as an event stream: the open file is not O_NONBLOCK (open it "
                                  "with O_NONBLOCK or set it with fcntl F_SETFL first; libneuron does not change a "
                                  "caller's file status flags)",
                                  fd.get(), path));
  const std::size_t bytes = set_event_size(fd.get());
  return EventStream(std::move(fd), path, bytes);
}

}  // namespace neuron
