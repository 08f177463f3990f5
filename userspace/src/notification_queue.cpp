// SPDX-License-Identifier: MIT
//
// NotificationQueue: NQ_INIT and the ring and doorbell mappings (RAII),
// queues over memory for tests, NQ_INFO, NQ_COALESCE, the drain, and device
// loss read from the file's status page (device.hpp). What a drain does when
// records were lost is queue_loss.cpp; sleeping on queues, queue_wait.cpp.
#include "libneuron/device.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "ioctl.hpp"

namespace neuron {

using detail::nq_coalesce_ioctl;
using detail::nq_eventfd_ioctl;
using detail::nq_eventfd_what;
using detail::xioctl;

Result<NotificationQueue> NotificationQueue::create(const Device& dev, unsigned core, unsigned queue, Options opt) {
  if (!RingView::is_power_of_two(opt.size) || opt.size < NEURON_ISA_NOTIFICATION_NBYTES)
    return unexpected(errc::bad_ring, fmt::format("queue size {} bytes (core {} queue {})", opt.size, core, queue));
  // NEURON_NQ_F_ADAPTIVE: the driver sets THRESHOLD, coalesce_ns is the budget (0: 1 ms)
  if (opt.eventfd && opt.threshold == 0 && opt.coalesce_ns == 0 && !(opt.flags & NEURON_NQ_F_ADAPTIVE))
    return unexpected(errc::invalid_argument,
                      fmt::format("queue core {} queue {}: an eventfd needs a threshold > 0 or coalesce_ns > 0 "
                                  "(nothing would signal it)",
                                  core, queue));
  if (opt.coalesce_ns > NEURON_NQ_COALESCE_NS_MAX)
    return unexpected(errc::invalid_argument,
                      fmt::format("queue core {} queue {}: coalesce_ns {} is above NEURON_NQ_COALESCE_NS_MAX ({})", core,
                                  queue, opt.coalesce_ns, NEURON_NQ_COALESCE_NS_MAX));
  auto fd = dev.dup_fd();
  if (!fd) return unexpected(std::move(fd).error());
  auto init = dev.nq_init(core, queue, opt.size, opt.flags, opt.threshold, opt.coalesce_ns);
  if (!init) return unexpected(std::move(init).error());

  NotificationQueue q;
  q.fd_ = std::move(fd).value();
  q.core_ = core;
  q.queue_ = queue;
  q.size_ = opt.size;
  q.live_ = true;  // from here on the destructor destroys the queue
  q.coalescing_ = Coalescing{opt.threshold, opt.coalesce_ns};
  q.coalesce_cap_ = (dev.capabilities() & NEURON_CAP_COALESCE) != 0;
  q.device_index_ = dev.index();
  q.status_ = dev.status_page();  // q.fd_ is a dup() of the same open file
  if (dev.capabilities() & NEURON_CAP_ROUTE) {
    // the route the queue's records are routed with: fixed while it lives
    neuron_nq_info ni{};
    ni.core = core;
    ni.queue = queue;
    if (xioctl(q.fd_.get(), NEURON_IOC_NQ_INFO, &ni) < 0)
      return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core, queue)));
    q.route_ = ni.route;
  }

  // Mapping lengths come from the kernel, never from 4 KiB
  // (docs/decisions/0011-reset-and-recovery.md#page-size): the ring rounded up to its page size,
  // the doorbell DEVICE_INFO's doorbell_size; 0 there means doorbells cannot
  // be mapped (pages above the 4 KiB doorbell stride) and HEAD goes by
  // NEURON_IOC_NQ_HEAD. A driver without NEURON_CAP_PAGE_SIZE has 4 KiB.
  DeviceInfo di{};
  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t bell_len = page;
  if ((dev.capabilities() & NEURON_CAP_PAGE_SIZE) && xioctl(q.fd_.get(), NEURON_IOC_DEVICE_INFO, &di) == 0) {
    page = di.page_size;
    bell_len = di.doorbell_size;
  }
  const std::size_t ring_len = (opt.size + page - 1) / page * page;
  auto ring = Mapping::map(q.fd_.get(), ring_len, PROT_READ, init->ring_offset,
                           fmt::format("ring core={} queue={}", core, queue));
  if (!ring) return unexpected(std::move(ring).error());
  q.ring_ = std::move(ring).value();
  Doorbell bell_view;
  if (bell_len != 0) {
    auto bell = Mapping::map(q.fd_.get(), bell_len, PROT_READ | PROT_WRITE, init->doorbell_offset,
                             fmt::format("doorbell core={} queue={}", core, queue));
    if (!bell) return unexpected(std::move(bell).error());
    q.doorbell_ = std::move(bell).value();
    bell_view = Doorbell::mmio(static_cast<volatile std::uint32_t*>(q.doorbell_.data()));
  } else {
    // fd, core and queue packed into the context, which must survive moves
    // of the queue: the fd above bit 16, core and queue < 256 below
    const auto ctx = (static_cast<std::uintptr_t>(q.fd_.get()) << 16) | (core << 8) | queue;
    bell_view = Doorbell::callback(
        [](void* c, std::uint32_t head) noexcept {
          const auto v = reinterpret_cast<std::uintptr_t>(c);
          neuron_nq_head h{};
          h.core = static_cast<std::uint32_t>((v >> 8) & 0xff);
          h.queue = static_cast<std::uint32_t>(v & 0xff);
          h.head = head;
          (void)::ioctl(static_cast<int>(v >> 16), NEURON_IOC_NQ_HEAD, &h);
        },
        reinterpret_cast<void*>(ctx));
  }

  // The queue starts enabled with HEAD = TAIL = 0 (docs/device-model.md);
  // NQ_INFO tells the truth if the driver ever hands over a used queue.
  std::uint32_t head = 0;
  if (auto info = q.info()) head = info->head;
  const auto* recs = static_cast<const Record*>(q.ring_.data());
  q.view_ = RingView(std::span<const Record>(recs, opt.size / sizeof(Record)), bell_view, head);
  q.view_.set_lossy((opt.flags & NEURON_NQ_F_IGNORE_FULL) != 0);

  // after the view: bind_eventfd() refuses a queue that holds no ring
  if (opt.eventfd) {
    const int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd < 0)
      return unexpected(Error::from_errno(errno, fmt::format("eventfd for core={} queue={}", core, queue)));
    q.efd_.reset(efd);
    if (auto s = q.bind_eventfd(efd); !s) return unexpected(std::move(s).error());
  }
  return q;
}

Result<NotificationQueue> NotificationQueue::over(std::span<const Record> ring, Doorbell doorbell, InfoFn info,
                                                  unsigned core, unsigned queue, std::uint32_t flags,
                                                  UniqueFd wake) {
  return over(ring, doorbell, std::move(info), core, queue, flags, std::move(wake), nullptr);
}

Result<NotificationQueue> NotificationQueue::over(std::span<const Record> ring, Doorbell doorbell, InfoFn info,
                                                  unsigned core, unsigned queue, std::uint32_t flags,
                                                  UniqueFd wake, std::shared_ptr<const StatusPage> status) {
  auto v = RingView::make(ring, doorbell);
  if (!v) return unexpected(std::move(v).error());
  if (!info) return unexpected(errc::invalid_argument, fmt::format("queue core {} queue {}: no NQ_INFO", core, queue));
  NotificationQueue q;
  q.efd_ = std::move(wake);
  q.core_ = core;
  q.queue_ = queue;
  q.size_ = static_cast<std::uint32_t>(ring.size() * sizeof(Record));
  q.info_fn_ = std::move(info);
  q.status_ = std::move(status);
  std::uint32_t head = 0;
  if (auto i = q.info()) head = i->head;
  q.view_ = std::move(v).value();
  q.view_.resync(head);
  q.view_.set_lossy((flags & NEURON_NQ_F_IGNORE_FULL) != 0);
  return q;
}

NotificationQueue::NotificationQueue(NotificationQueue&& o) noexcept
    : efd_(std::move(o.efd_)),
      fd_(std::move(o.fd_)),
      ring_(std::move(o.ring_)),
      doorbell_(std::move(o.doorbell_)),
      view_(o.view_),
      core_(o.core_),
      queue_(o.queue_),
      size_(o.size_),
      lost_(o.lost_),
      checked_head_(o.checked_head_),
      checked_(o.checked_),
      live_(std::exchange(o.live_, false)),
      gone_(o.gone_),
      info_fn_(std::exchange(o.info_fn_, nullptr)),
      checked_lo_(o.checked_lo_),
      checked_hi_(o.checked_hi_),
      coalescing_(o.coalescing_),
      coalesce_cap_(std::exchange(o.coalesce_cap_, false)),
      device_index_(o.device_index_),
      status_(std::move(o.status_)),
      route_(o.route_) {
  o.view_ = RingView();  // inert: the ring and doorbell now belong to *this
  o.checked_ = false;
}

NotificationQueue& NotificationQueue::operator=(NotificationQueue&& o) noexcept {
  if (this != &o) {
    destroy();
    efd_ = std::move(o.efd_);
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
    gone_ = o.gone_;
    info_fn_ = std::exchange(o.info_fn_, nullptr);
    checked_lo_ = o.checked_lo_;
    checked_hi_ = o.checked_hi_;
    coalescing_ = o.coalescing_;
    coalesce_cap_ = std::exchange(o.coalesce_cap_, false);
    device_index_ = o.device_index_;
    status_ = std::move(o.status_);
    route_ = o.route_;
    o.view_ = RingView();  // inert: the ring and doorbell now belong to *this
    o.checked_ = false;
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
  efd_.reset();  // NQ_DESTROY unbound it
}

Status NotificationQueue::bind_eventfd(int efd) const {
  if (!fd_ && !info_fn_ && !valid())  // moved from (create() and over() call it early)
    return unexpected(errc::moved_from, nq_eventfd_what(core_, queue_, efd));
  if (nq_eventfd_ioctl(fd_.get(), core_, queue_, efd) < 0)
    return unexpected(Error::from_errno(errno, nq_eventfd_what(core_, queue_, efd)));
  return {};
}

Result<NqInfo> NotificationQueue::info() const {
  if (!fd_ && !info_fn_ && !valid())  // moved from (create() and over() call it early)
    return unexpected(errc::moved_from, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core_, queue_));
  if (info_fn_) return info_fn_();
  NqInfo a{};
  a.core = core_;
  a.queue = queue_;
  if (xioctl(fd_.get(), NEURON_IOC_NQ_INFO, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core_, queue_)));
  return a;
}

Status NotificationQueue::set_coalescing(std::uint32_t threshold, std::uint32_t coalesce_ns) {
  const auto what = fmt::format("NEURON_IOC_NQ_COALESCE core={} queue={} threshold={} coalesce_ns={}", core_, queue_,
                                threshold, coalesce_ns);
  if (gone_) return unexpected(errc::device_gone, what);
  if (!valid()) return unexpected(errc::moved_from, what);
  const std::uint32_t entries = view_.entries();
  if (threshold > entries)
    return unexpected(errc::invalid_argument,
                      fmt::format("{}: threshold is above the ring's {} entries", what, entries));
  if (coalesce_ns > NEURON_NQ_COALESCE_NS_MAX)
    return unexpected(errc::invalid_argument, fmt::format("{}: coalesce_ns is above NEURON_NQ_COALESCE_NS_MAX ({})",
                                                          what, NEURON_NQ_COALESCE_NS_MAX));
  if (threshold == 0 && coalesce_ns == 0 && efd_)
    return unexpected(errc::invalid_argument,
                      what + ": threshold and coalesce_ns both 0 on a queue with an eventfd (nothing would signal it)");
  if (!fd_ || !coalesce_cap_)
    return unexpected(errc::not_supported,
                      what + (fd_ ? ": the driver has no interrupt coalescing (NEURON_CAP_COALESCE; an older nnq.ko)"
                                  : ": a queue made with over() has no device to program"));
  if (nq_coalesce_ioctl(fd_.get(), core_, queue_, threshold, coalesce_ns) < 0) {
    const int err = errno;
    if (err == ENODEV || err == EIO) mark_device_gone();  // userspace/README.md#device-loss
    return unexpected(Error::from_errno(err, what));
  }
  coalescing_ = Coalescing{threshold, coalesce_ns};
  return {};
}

DrainResult NotificationQueue::drain(std::span<Record> out) noexcept {
  if (gone_ || status_gone()) return gone_now();  // userspace/README.md#device-loss
  if (!valid()) return moved_from_result();
  if (view_.lossy()) return drain_lossy(out);
  DrainResult r = view_.drain(out);
  if (r.count == 0 && r.lap_suspected) recover(r);
  if (gone_) r.device_gone = true;
  return r;
}

// userspace/README.md#device-loss: from here on nothing reads the ring or
// writes the doorbell; the mappings stay until the destructor unmaps them.
void NotificationQueue::mark_device_gone() noexcept {
  gone_ = true;
  const bool lossy = view_.lossy();
  view_ = RingView();  // an empty view: even view().drain() touches nothing
  view_.set_lossy(lossy);
}

bool NotificationQueue::check_device() noexcept {
  if (gone_) return true;
  if (status_) {  // no syscall: the driver's status page
    if (!status_->live()) mark_device_gone();
    return gone_;
  }
  if (!fd_) return false;
  pollfd p{fd_.get(), 0, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, 0);
  } while (rc < 0 && errno == EINTR);
  if (rc > 0 && (p.revents & (POLLHUP | POLLERR))) mark_device_gone();
  return gone_;
}

}  // namespace neuron
