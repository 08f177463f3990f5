// SPDX-License-Identifier: MIT
//
// DeviceMemory: a range of device memory from NEURON_IOC_MEM_ALLOC, freed
// with NEURON_IOC_MEM_FREE when the owner goes (RAII; device.hpp).
#include "libneuron/device.hpp"

#include "ioctl.hpp"

namespace neuron {

using detail::mem_free_ioctl;

Result<DeviceMemory> DeviceMemory::allocate(const Device& dev, std::uint64_t size,
                                            std::optional<std::uint64_t> fixed_offset) {
  auto fd = dev.dup_fd();
  if (!fd) return unexpected(std::move(fd).error());
  auto off = dev.mem_alloc(size, fixed_offset);
  if (!off) return unexpected(std::move(off).error());
  DeviceMemory m;
  m.fd_ = std::move(fd).value();
  m.offset_ = *off;
  m.size_ = (size + NEURON_MEM_ALIGN - 1) / NEURON_MEM_ALIGN * NEURON_MEM_ALIGN;
  m.live_ = true;
  return m;
}

void DeviceMemory::reset() noexcept {
  if (live_ && fd_) (void)mem_free_ioctl(fd_.get(), offset_);
  live_ = false;
  fd_.reset();
}

}  // namespace neuron
