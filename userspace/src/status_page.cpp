// SPDX-License-Identifier: MIT
//
// StatusPage: the read-only page the driver keeps for each open file of
// /dev/nnqN, mapped once at Device::open() (docs/decisions/0027-device-loss.md).
#include "libneuron/device.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

namespace neuron {

Result<std::shared_ptr<const StatusPage>> StatusPage::map(int fd) {
  // One page of the kernel's (DEVICE_INFO page_size is this kernel's
  // PAGE_SIZE; NEURON_STATUS_PAGE_SIZE is the 4 KiB case only:
  // docs/decisions/0011-reset-and-recovery.md#page-size).
  const auto page_len = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto m = Mapping::map(fd, page_len, PROT_READ, NEURON_STATUS_PAGE_OFFSET,
                        fmt::format("status page of fd {}", fd));
  if (!m) return unexpected(std::move(m).error());
  const auto* page = static_cast<const neuron_status_page*>(m->data());
  return std::make_shared<const StatusPage>(Key{}, std::move(m).value(), page);
}

std::shared_ptr<const StatusPage> StatusPage::over(const neuron_status_page* page) {
  return std::make_shared<const StatusPage>(Key{}, Mapping(), page);
}

}  // namespace neuron
