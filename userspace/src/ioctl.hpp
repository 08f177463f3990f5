// SPDX-License-Identifier: MIT
//
// The ioctl calls several files of libneuron make on a /dev/nnqN descriptor
// (Device, NotificationQueue, DeviceMemory): EINTR retried, a moved-from
// (-1) descriptor refused with EBADF before the kernel sees it. Private:
// not installed, not exported (inline, hidden).
#pragma once

#include <sys/ioctl.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "uapi/linux/neuron.h"

namespace neuron::detail {

inline int xioctl(int fd, unsigned long req, void* arg) noexcept {
  if (fd < 0) {  // a moved-from object: never hand -1 (or anything) to the kernel
    errno = EBADF;
    return -1;
  }
  int rc;
  do {
    rc = ::ioctl(fd, req, arg);
  } while (rc < 0 && errno == EINTR);
  return rc;
}

// NEURON_IOC_NQ_EVENTFD on any descriptor of the file that made the queue.
inline int nq_eventfd_ioctl(int fd, unsigned core, unsigned queue, int efd) noexcept {
  neuron_nq_eventfd a{};
  a.core = core;
  a.queue = queue;
  a.fd = efd;
  return xioctl(fd, NEURON_IOC_NQ_EVENTFD, &a);
}

// NEURON_IOC_NQ_COALESCE on any descriptor of the file that made the queue.
inline int nq_coalesce_ioctl(int fd, unsigned core, unsigned queue, std::uint32_t threshold,
                      std::uint32_t coalesce_ns) noexcept {
  neuron_nq_coalesce a{};
  a.core = core;
  a.queue = queue;
  a.threshold = threshold;
  a.coalesce_ns = coalesce_ns;
  return xioctl(fd, NEURON_IOC_NQ_COALESCE, &a);
}

inline std::string nq_eventfd_what(unsigned core, unsigned queue, int efd) {
  return fmt::format("NEURON_IOC_NQ_EVENTFD core={} queue={} fd={}", core, queue, efd);
}

inline int mem_free_ioctl(int fd, std::uint64_t offset) noexcept {
  neuron_mem_free a{};
  a.offset = offset;
  return xioctl(fd, NEURON_IOC_MEM_FREE, &a);
}

}  // namespace neuron::detail
