// SPDX-License-Identifier: MIT
//
// GuardedBuffer: a copy of the fuzz input that ends right before an
// inaccessible page, so a read past its end faults even in code that is not
// instrumented (libmnl, libc). Its start is 4-byte aligned, as a netlink
// receive buffer is; the up to 3 bytes between its end and the guard page
// are poisoned for AddressSanitizer, so instrumented code that reads them
// is reported too.
#pragma once

#include <sanitizer/asan_interface.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

class GuardedBuffer {
 public:
  /// Copies `bytes` in. Aborts when the mapping fails (the harness cannot run).
  explicit GuardedBuffer(std::span<const std::uint8_t> bytes) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    span_ = (bytes.size() + 3 + page - 1) / page * page;
    void* m = ::mmap(nullptr, span_ + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) std::abort();
    base_ = static_cast<std::uint8_t*>(m);
    if (::mprotect(base_ + span_, page, PROT_NONE) != 0) std::abort();
    guard_ = page;
    auto* start = base_ + ((span_ - bytes.size()) & ~std::size_t{3});
    if (!bytes.empty()) std::memcpy(start, bytes.data(), bytes.size());
    data_ = {start, bytes.size()};
    ASAN_POISON_MEMORY_REGION(start + bytes.size(), static_cast<std::size_t>(base_ + span_ - (start + bytes.size())));
  }
  ~GuardedBuffer() {
    ASAN_UNPOISON_MEMORY_REGION(base_, span_);
    ::munmap(base_, span_ + guard_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  /// The copy: as many bytes as were given, 4-byte aligned.
  [[nodiscard]] std::span<std::uint8_t> bytes() const noexcept { return data_; }

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t span_ = 0, guard_ = 0;
  std::span<std::uint8_t> data_;
};
