// SPDX-License-Identifier: MIT
// The C API's fork() handler (docs/decisions/0041-fork-in-libneuron.md).
//
// The driver already keeps every mapping out of a child (VM_DONTCOPY,
// docs/decisions/0007-fork.md) and the library opens with O_CLOEXEC, but a
// forked child still inherits the descriptors, which hold the open file and
// so the parent's cores until the child exits too. The child handler runs
// in the child right after fork(), where only async-signal-safe calls are
// allowed: it walks /proc/self/fd with getdents64, and dup3()s /dev/null
// over each descriptor whose character device is one the C API opened (the
// descriptor numbers stay valid, so a later close() in the child closes
// /dev/null and never someone else's file), then bumps the generation that
// makes every inherited handle refuse with ECHILD.
#include "c_api_fork.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace neuron::capi {
namespace {

std::atomic<unsigned> generation{0};

// Device numbers of the nodes opened, a fixed table so that the child
// handler allocates nothing (a process rarely opens more than a few nodes;
// past 64 distinct ones the rest are not cut, which the record says).
constexpr std::size_t kMaxNodes = 64;
std::atomic<dev_t> nodes[kMaxNodes];
std::atomic<std::size_t> node_count{0};

bool is_noted(dev_t rdev) noexcept {
  const std::size_t n = node_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n && i < kMaxNodes; ++i)
    if (nodes[i].load(std::memory_order_relaxed) == rdev) return true;
  return false;
}

// A linux_dirent64 as getdents64(2) fills it.
struct Dirent64 {
  std::uint64_t ino;
  std::int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

int parse_fd(const char* s) noexcept {
  int v = 0;
  if (*s == '\0') return -1;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9' || v > 100000000) return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

void cut_device_fds() noexcept {
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (null_fd < 0 || dir < 0) {
    // without /proc or /dev/null the handles still refuse (generation), but
    // the descriptors stay: the child then holds the file until it exits
    if (null_fd >= 0) ::close(null_fd);
    if (dir >= 0) ::close(dir);
    return;
  }
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const Dirent64*>(buf + off);
      off += d->reclen;
      const int fd = parse_fd(d->name);
      if (fd < 0 || fd == dir || fd == null_fd) continue;
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || !is_noted(st.st_rdev)) continue;
      const int flags = ::fcntl(fd, F_GETFD);
      ::dup3(null_fd, fd, (flags >= 0 && (flags & FD_CLOEXEC)) ? O_CLOEXEC : 0);
    }
  }
  ::close(dir);
  ::close(null_fd);
}

void in_child() noexcept {
  cut_device_fds();
  generation.fetch_add(1, std::memory_order_relaxed);
}

std::once_flag installed;

}  // namespace

unsigned fork_generation() noexcept { return generation.load(std::memory_order_relaxed); }

void note_device(int fd) noexcept {
  std::call_once(installed, [] { ::pthread_atfork(nullptr, nullptr, &in_child); });
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || is_noted(st.st_rdev)) return;
  static std::mutex m;  // writers only; the child handler reads without it
  std::lock_guard<std::mutex> lock(m);
  if (is_noted(st.st_rdev)) return;
  const std::size_t i = node_count.load(std::memory_order_relaxed);
  if (i >= kMaxNodes) return;
  nodes[i].store(st.st_rdev, std::memory_order_relaxed);
  node_count.store(i + 1, std::memory_order_release);
}

}  // namespace neuron::capi
