// SPDX-License-Identifier: MIT
//
// RAII for a descriptor (UniqueFd) and an mmap()ed range (Mapping), the
// owners every fd and mapping of libneuron lives in (device.hpp).
#include "libneuron/device.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace neuron {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Result<UniqueFd> UniqueFd::dup() const {
  const int n = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (n < 0) return unexpected(Error::from_errno(errno, fmt::format("dup fd {}", fd_)));
  return UniqueFd(n);
}

Result<Mapping> Mapping::map(int fd, std::size_t len, int prot, std::uint64_t offset, const std::string& what) {
  void* p = ::mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED)
    return unexpected(Error::from_errno(errno, fmt::format("mmap {} len={} offset=0x{:x}", what, len, offset)));
  return Mapping(p, len);
}

void Mapping::reset() noexcept {
  if (addr_) ::munmap(addr_, len_);
  addr_ = nullptr;
  len_ = 0;
}

}  // namespace neuron
