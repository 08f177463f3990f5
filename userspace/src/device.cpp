// SPDX-License-Identifier: MIT
#include "libneuron/device.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace neuron {

namespace {

int xioctl(int fd, unsigned long req, void* arg) noexcept {
  int rc;
  do {
    rc = ::ioctl(fd, req, arg);
  } while (rc < 0 && errno == EINTR);
  return rc;
}

}  // namespace

// ------------------------------------------------------------------ RAII
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

std::string engine_state_name(std::uint32_t state) {
  switch (state) {
    case NEURON_ENGINE_IDLE: return "IDLE";
    case NEURON_ENGINE_RUNNING: return "RUNNING";
    case NEURON_ENGINE_WAITING: return "WAITING";
    case NEURON_ENGINE_HALTED: return "HALTED";
    default: return fmt::format("STATE_{}", state);
  }
}

// ------------------------------------------------------------------ Device
Result<Device> Device::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return unexpected(Error::from_errno(errno, "open " + path));
  return Device(UniqueFd(fd), path);
}

std::vector<std::string> Device::list(const std::string& dir) {
  std::vector<std::pair<unsigned long, std::string>> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const char* n = e->d_name;
      if (std::strncmp(n, "neuron", 6) != 0 || n[6] == '\0') continue;
      char* end = nullptr;
      const unsigned long idx = std::strtoul(n + 6, &end, 10);
      if (*end != '\0') continue;
      found.emplace_back(idx, dir + "/" + n);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

Result<DeviceInfo> Device::info() const {
  DeviceInfo di{};
  if (xioctl(fd(), NEURON_IOC_DEVICE_INFO, &di) < 0)
    return unexpected(Error::from_errno(errno, "NEURON_IOC_DEVICE_INFO " + path_));
  return di;
}

Result<neuron_nq_init> Device::nq_init(unsigned core, unsigned queue, std::uint32_t size, std::uint32_t flags,
                                       std::uint32_t threshold) const {
  neuron_nq_init a{};
  a.core = core;
  a.queue = queue;
  a.size = size;
  a.flags = flags;
  a.threshold = threshold;
  if (xioctl(fd(), NEURON_IOC_NQ_INIT, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("NEURON_IOC_NQ_INIT core={} queue={} size={} flags=0x{:x} threshold={}", core, queue,
                           size, flags, threshold)));
  return a;
}

Status Device::nq_destroy(unsigned core, unsigned queue) const {
  neuron_nq_id a{};
  a.core = core;
  a.queue = queue;
  if (xioctl(fd(), NEURON_IOC_NQ_DESTROY, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_DESTROY core={} queue={}", core, queue)));
  return {};
}

Result<NqInfo> Device::nq_info(unsigned core, unsigned queue) const {
  NqInfo a{};
  a.core = core;
  a.queue = queue;
  if (xioctl(fd(), NEURON_IOC_NQ_INFO, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core, queue)));
  return a;
}

Status Device::submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) const {
  neuron_submit a{};
  a.core = core;
  a.engine = engine;
  a.count = static_cast<std::uint32_t>(insns.size());
  a.flags = flags;
  a.insns = reinterpret_cast<std::uintptr_t>(insns.data());
  if (xioctl(fd(), NEURON_IOC_SUBMIT, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_SUBMIT core={} engine={} ({}) count={} flags=0x{:x}",
                                                           core, engine, engine_name(engine), insns.size(), flags)));
  return {};
}

Result<EngineStatus> Device::engine_status(unsigned core, unsigned engine) const {
  EngineStatus a{};
  a.core = core;
  a.engine = engine;
  if (xioctl(fd(), NEURON_IOC_ENGINE_STATUS, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("NEURON_IOC_ENGINE_STATUS core={} engine={} ({})", core, engine, engine_name(engine))));
  return a;
}

Status Device::engine_reset(unsigned core, unsigned engine) const {
  neuron_engine_id a{};
  a.core = core;
  a.engine = engine;
  if (xioctl(fd(), NEURON_IOC_ENGINE_RESET, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("NEURON_IOC_ENGINE_RESET core={} engine={} ({})", core, engine, engine_name(engine))));
  return {};
}

// ------------------------------------------------------------------ NotificationQueue
Result<NotificationQueue> NotificationQueue::create(const Device& dev, unsigned core, unsigned queue, Options opt) {
  if (!RingView::is_power_of_two(opt.size) || opt.size < NEURON_ISA_NOTIFICATION_NBYTES)
    return unexpected(errc::bad_ring, fmt::format("queue size {} bytes (core {} queue {})", opt.size, core, queue));
  auto fd = dev.dup_fd();
  if (!fd) return unexpected(std::move(fd).error());
  auto init = dev.nq_init(core, queue, opt.size, opt.flags, opt.threshold);
  if (!init) return unexpected(std::move(init).error());

  NotificationQueue q;
  q.fd_ = std::move(fd).value();
  q.core_ = core;
  q.queue_ = queue;
  q.size_ = opt.size;
  q.live_ = true;  // from here on the destructor destroys the queue

  auto ring = Mapping::map(q.fd_.get(), opt.size, PROT_READ, init->ring_offset,
                           fmt::format("ring core={} queue={}", core, queue));
  if (!ring) return unexpected(std::move(ring).error());
  auto bell = Mapping::map(q.fd_.get(), NEURON_DOORBELL_SIZE, PROT_READ | PROT_WRITE, init->doorbell_offset,
                           fmt::format("doorbell core={} queue={}", core, queue));
  if (!bell) return unexpected(std::move(bell).error());
  q.ring_ = std::move(ring).value();
  q.doorbell_ = std::move(bell).value();

  // The queue starts enabled with HEAD = TAIL = 0 (docs/device-model.md);
  // NQ_INFO tells the truth if the driver ever hands over a used queue.
  std::uint32_t head = 0;
  if (auto info = q.info()) head = info->head;
  const auto* recs = static_cast<const Record*>(q.ring_.data());
  q.view_ = RingView(std::span<const Record>(recs, opt.size / sizeof(Record)),
                     Doorbell::mmio(static_cast<volatile std::uint32_t*>(q.doorbell_.data())), head);
  return q;
}

NotificationQueue::NotificationQueue(NotificationQueue&& o) noexcept
    : fd_(std::move(o.fd_)),
      ring_(std::move(o.ring_)),
      doorbell_(std::move(o.doorbell_)),
      view_(o.view_),
      core_(o.core_),
      queue_(o.queue_),
      size_(o.size_),
      lost_(o.lost_),
      checked_head_(o.checked_head_),
      checked_(o.checked_),
      live_(std::exchange(o.live_, false)) {}

NotificationQueue& NotificationQueue::operator=(NotificationQueue&& o) noexcept {
  if (this != &o) {
    destroy();
    fd_ = std::move(o.fd_);
    ring_ = std::move(o.ring_);
    doorbell_ = std::move(o.doorbell_);
    view_ = o.view_;
    core_ = o.core_;
    queue_ = o.queue_;
    size_ = o.size_;
    lost_ = o.lost_;
    checked_head_ = o.checked_head_;
    checked_ = o.checked_;
    live_ = std::exchange(o.live_, false);
  }
  return *this;
}

NotificationQueue::~NotificationQueue() { destroy(); }

void NotificationQueue::destroy() noexcept {
  // munmap first: the driver refuses NQ_DESTROY (-EBUSY) while the ring is mapped.
  ring_.reset();
  doorbell_.reset();
  view_ = RingView();
  if (live_ && fd_) {
    neuron_nq_id a{};
    a.core = core_;
    a.queue = queue_;
    (void)xioctl(fd_.get(), NEURON_IOC_NQ_DESTROY, &a);
  }
  live_ = false;
  fd_.reset();
}

Result<NqInfo> NotificationQueue::info() const {
  NqInfo a{};
  a.core = core_;
  a.queue = queue_;
  if (xioctl(fd_.get(), NEURON_IOC_NQ_INFO, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core_, queue_)));
  return a;
}

DrainResult NotificationQueue::drain(std::span<Record> out) noexcept {
  DrainResult r = view_.drain(out);
  if (r.count == 0 && r.lap_suspected) recover(r);
  return r;
}

void NotificationQueue::recover(DrainResult& r) noexcept {
  // Only when the slot at HEAD is stale but marked overflow; one syscall per
  // HEAD value at most, so an idle queue whose last record was an overwrite
  // does not cost a syscall per poll.
  if (checked_ && checked_head_ == view_.head()) return;
  NqInfo a{};
  a.core = core_;
  a.queue = queue_;
  if (xioctl(fd_.get(), NEURON_IOC_NQ_INFO, &a) < 0) return;
  checked_ = true;
  checked_head_ = view_.head();
  const std::uint32_t entries = view_.entries();
  if (a.tail - view_.head() > entries) {
    const std::uint32_t oldest = a.tail - entries;
    const std::uint32_t skipped = oldest - view_.head();
    lost_ += skipped;
    r.lost += skipped;
    r.sw_overflow = true;
    view_.resync(oldest);
    checked_ = false;
  }
}

}  // namespace neuron
