// SPDX-License-Identifier: MIT
#include "libneuron/reaper.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>

#include <fmt/format.h>

namespace neuron {

// ------------------------------------------------------------------ adapters
namespace {

class DeviceReapQueue final : public ReapQueue {
 public:
  explicit DeviceReapQueue(NotificationQueue q) : q_(std::move(q)) {}
  unsigned core() const noexcept override { return q_.core(); }
  unsigned queue() const noexcept override { return q_.queue(); }
  int wake_fd() const noexcept override { return q_.wake_fd(); }
  DrainResult drain(std::span<Record> out) noexcept override { return q_.drain(out); }
  std::optional<std::uint64_t> overflow_count() noexcept override {
    auto i = q_.info();
    if (!i) return std::nullopt;
    return i->overflow_count;
  }
  std::optional<std::uint64_t> drop_count() noexcept override {
    auto i = q_.info();
    if (!i) return std::nullopt;
    return i->drop_count;
  }
  int device_fd() const noexcept override { return q_.device_fd(); }
  void mark_device_gone() noexcept override { q_.mark_device_gone(); }

 private:
  NotificationQueue q_;
};

class DeviceEventSource final : public EventSource {
 public:
  explicit DeviceEventSource(EventStream s) : s_(std::move(s)) {}
  int fd() const noexcept override { return s_.fd(); }
  Result<std::size_t> read(std::span<Event> out) noexcept override { return s_.read(out); }

 private:
  EventStream s_;
};

std::uint64_t efd_take(int fd) noexcept {
  std::uint64_t v = 0;
  ssize_t n;
  do {
    n = ::read(fd, &v, sizeof v);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof v) ? v : 0;
}

void efd_signal(int fd) noexcept {
  const std::uint64_t one = 1;
  ssize_t n;
  do {
    n = ::write(fd, &one, sizeof one);
  } while (n < 0 && errno == EINTR);
}

std::chrono::nanoseconds clock_ns(clockid_t id) noexcept {
  timespec ts{};
  if (::clock_gettime(id, &ts) != 0) return std::chrono::nanoseconds(0);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

std::unique_ptr<ReapQueue> make_reap_queue(NotificationQueue q) {
  return std::make_unique<DeviceReapQueue>(std::move(q));
}

std::unique_ptr<EventSource> make_event_source(EventStream s) {
  return std::make_unique<DeviceEventSource>(std::move(s));
}

const char* wait_status_name(WaitStatus s) noexcept {
  switch (s) {
    case WaitStatus::Completed: return "completed";
    case WaitStatus::TimedOut: return "timed out";
    case WaitStatus::Stopped: return "stopped";
    case WaitStatus::DeviceGone: return "device gone";
  }
  return "?";
}

// ------------------------------------------------------------------ shared state
namespace detail {

enum : int { kPending = 0, kCompleted = 1, kStopped = 2, kGone = 3 };

struct WaiterState {
  UniqueFd efd;
  Reaper::Match match;
  Reaper::Filter filter;
  Completion completion;            // written under the hub lock before `state`
  std::atomic<int> state{kPending};
};

/// Shared by the Reaper and its Waiters, so either may go first.
struct ReaperHub {
  std::mutex mu;
  std::vector<std::shared_ptr<WaiterState>> pending;
  bool stopped = false;
  bool gone = false;  // stopped because the device went (waiters: kGone)
};

}  // namespace detail

using detail::ReaperHub;
using detail::WaiterState;

// ------------------------------------------------------------------ Waiter
Waiter::Waiter(Waiter&& o) noexcept : hub_(std::move(o.hub_)), st_(std::move(o.st_)) {}

Waiter& Waiter::operator=(Waiter&& o) noexcept {
  if (this != &o) {
    release();
    hub_ = std::move(o.hub_);
    st_ = std::move(o.st_);
  }
  return *this;
}

Waiter::~Waiter() { release(); }

void Waiter::release() noexcept {
  if (hub_ && st_) {
    std::lock_guard lk(hub_->mu);
    std::erase(hub_->pending, st_);
  }
  hub_.reset();
  st_.reset();
}

int Waiter::fd() const noexcept { return st_ ? st_->efd.get() : -1; }

WaitStatus Waiter::status() const noexcept {
  if (!st_) return WaitStatus::Stopped;
  switch (st_->state.load(std::memory_order_acquire)) {
    case detail::kCompleted: return WaitStatus::Completed;
    case detail::kStopped: return WaitStatus::Stopped;
    case detail::kGone: return WaitStatus::DeviceGone;
    default: return WaitStatus::TimedOut;
  }
}

const Completion& Waiter::completion() const noexcept {
  static const Completion none;
  return st_ ? st_->completion : none;
}

WaitStatus Waiter::wait(std::chrono::milliseconds timeout) {
  if (!st_) return WaitStatus::Stopped;
  using clock = std::chrono::steady_clock;
  const bool forever = timeout.count() < 0;
  const auto deadline = clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);
  for (;;) {
    const WaitStatus s = status();
    if (s != WaitStatus::TimedOut) {
      efd_take(st_->efd.get());  // consume the signal (non-blocking)
      return s;
    }
    int ms = -1;
    if (!forever) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
      if (left.count() <= 0) return WaitStatus::TimedOut;
      ms = static_cast<int>(std::min<std::int64_t>(left.count(), INT32_MAX));
    }
    pollfd p{st_->efd.get(), POLLIN, 0};
    if (::poll(&p, 1, ms) < 0 && errno != EINTR) return status();
  }
}

// ------------------------------------------------------------------ Reaper
struct Reaper::Impl {
  std::vector<std::unique_ptr<ReapQueue>> queues;
  std::unique_ptr<EventSource> events;
  Options opt;
  std::shared_ptr<ReaperHub> hub = std::make_shared<ReaperHub>();
  UniqueFd epfd;
  UniqueFd stopfd;
  std::thread thread;
  std::mutex life_mu;  // thread start/join vs cpu_time()
  bool joined = false;
  std::atomic<std::int64_t> final_cpu_ns{0};
  std::atomic<bool> exited{false};  // run() has returned (final_cpu_ns is set)
  std::atomic<bool> gone{false};    // the device went (docs/decisions.md#device-loss)
  std::vector<int> device_fds;      // the queues' files (HUP/ERR only), deduplicated

  // statistics: written by the reaper thread, read by anyone
  std::atomic<std::uint64_t> wakes{0}, queue_wakes{0}, rescans{0}, drains{0}, records{0}, late_records{0},
      events_n{0}, overflow_records{0}, lost{0}, overwritten{0}, resyncs{0}, completed{0};
  mutable std::mutex fail_mu;
  std::optional<Error> fail;

  // reaper thread only
  std::vector<Record> buf;
  std::vector<Event> evbuf;
  std::vector<std::shared_ptr<WaiterState>> to_signal;

  static constexpr std::uint64_t kStopTag = ~std::uint64_t{0};
  static constexpr std::uint64_t kEventsTag = ~std::uint64_t{0} - 1;
  static constexpr std::uint64_t kDeviceTag = ~std::uint64_t{0} - 2;  // a queue's file: HUP/ERR

  // reaper thread only: set when the event stream ended (ENODEV) or a RESET
  // edge said every queue was torn down
  bool saw_loss = false;

  void set_failure(Error e) {
    std::lock_guard lk(fail_mu);
    if (!fail) fail = std::move(e);
  }

  static bool passes(const Reaper::Filter& f, const Arrival& a) noexcept {
    if (a.record) {
      if (!f.records) return false;
      if (f.queue && *f.queue != a.queue) return false;
      if (f.notific_type && *f.notific_type != a.record->notific_type()) return false;
    } else if (!f.events) {
      return false;
    }
    return !f.core || *f.core == a.core;
  }

  /// Offer one arrival to the pending waiters (reaper thread, hub locked).
  void offer(const Arrival& a) {
    auto& pend = hub->pending;
    for (std::size_t i = 0; i < pend.size();) {
      auto& w = pend[i];
      if (passes(w->filter, a) && w->match && w->match(a)) {
        w->completion.core = a.core;
        w->completion.queue = a.queue;
        if (a.record) w->completion.record = *a.record;
        if (a.event) w->completion.event = *a.event;
        to_signal.push_back(std::move(w));
        pend.erase(pend.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  void deliver_records(const ReapQueue& q, std::span<const Record> recs) {
    if (opt.on_records) opt.on_records(q.core(), q.queue(), recs);
    std::lock_guard lk(hub->mu);
    if (hub->pending.empty()) return;
    for (const Record& r : recs) {
      Arrival a;
      a.core = q.core();
      a.queue = q.queue();
      a.record = &r;
      offer(a);
      if (hub->pending.empty()) break;
    }
  }

  void read_events() {
    if (!events) return;
    for (;;) {
      auto n = events->read(evbuf);
      if (!n) {
        // read() of a removed device's file: its queued edges, then ENODEV
        if (n.error().code == std::errc::no_such_device) saw_loss = true;
        else set_failure(std::move(n).error());
        return;
      }
      if (*n == 0) return;
      events_n.fetch_add(*n, std::memory_order_relaxed);
      for (std::size_t i = 0; i < *n; ++i) {
        const Event& e = evbuf[i];
        if (e.edge == NEURON_EDGE_RESET) saw_loss = true;  // every queue was torn down
        if (opt.on_event) opt.on_event(e);
        std::lock_guard lk(hub->mu);
        Arrival a;
        a.core = e.core;
        a.event = &e;
        offer(a);
      }
      if (*n < evbuf.size()) return;
    }
  }

  /// Drain every queue until a whole pass finds nothing. Returns the records taken.
  std::uint64_t pass() {
    std::uint64_t total = 0;
    for (;;) {
      std::uint64_t got = 0;
      bool resynced = false;  // a lossy drain stopped after a HEAD write: look again
      for (auto& q : queues) {
        for (;;) {
          const DrainResult r = q->drain(buf);
          if (r.resyncs) resynced = true;
          drains.fetch_add(1, std::memory_order_relaxed);
          if (r.lost) lost.fetch_add(r.lost, std::memory_order_relaxed);
          if (r.overwritten) overwritten.fetch_add(r.overwritten, std::memory_order_relaxed);
          if (r.resyncs) resyncs.fetch_add(r.resyncs, std::memory_order_relaxed);
          if (r.count == 0) break;
          std::uint64_t ovf = 0;
          for (std::size_t i = 0; i < r.count; ++i) ovf += buf[i].sw_overflow() ? 1 : 0;
          if (ovf) overflow_records.fetch_add(ovf, std::memory_order_relaxed);
          deliver_records(*q, std::span<const Record>(buf.data(), r.count));
          got += r.count;
          if (r.count < buf.size()) break;
        }
      }
      total += got;
      if (got == 0 && !resynced) break;
    }
    records.fetch_add(total, std::memory_order_relaxed);
    return total;
  }

  void signal_completed() {
    for (auto& w : to_signal) {
      completed.fetch_add(1, std::memory_order_relaxed);
      w->state.store(detail::kCompleted, std::memory_order_release);
      efd_signal(w->efd.get());
    }
    to_signal.clear();
  }

  /// Whether the device is still there, asked of the kernel now: one poll()
  /// with no wait of the event stream and the queues' files (none: true).
  /// The driver reports EPOLLHUP|EPOLLERR from the first step of a removal,
  /// before it revokes the mappings, although it wakes epoll only at the end.
  bool device_alive() {
    if (saw_loss) return false;
    if (pollv.empty()) return true;
    for (auto& p : pollv) p.revents = 0;
    int rc;
    do {
      rc = ::poll(pollv.data(), pollv.size(), 0);
    } while (rc < 0 && errno == EINTR);
    if (rc <= 0) return true;
    for (const auto& p : pollv)
      if (p.revents & (POLLHUP | POLLERR)) return false;
    return true;
  }

  /// The device went: no ring is touched again, every waiter left gets
  /// DeviceGone, and the thread ends (docs/decisions.md#device-loss).
  void lose_device() {
    signal_completed();  // waiters a queued edge (the RESET) completed
    for (auto& q : queues) q->mark_device_gone();
    gone.store(true, std::memory_order_release);
    std::lock_guard lk(hub->mu);
    hub->stopped = true;
    hub->gone = true;
    for (auto& w : hub->pending) {
      w->state.store(detail::kGone, std::memory_order_release);
      efd_signal(w->efd.get());
    }
    hub->pending.clear();
  }

  std::vector<pollfd> pollv;  // device_alive(): the event stream and device_fds

  void run() noexcept {
    run_loop();
    final_cpu_ns.store(clock_ns(CLOCK_THREAD_CPUTIME_ID).count(), std::memory_order_relaxed);
    exited.store(true, std::memory_order_release);
  }

  void run_loop() noexcept {
    std::vector<epoll_event> ready(queues.size() + device_fds.size() + 2);
    const int timeout = opt.rescan.count() > 0 ? static_cast<int>(opt.rescan.count()) : -1;
    bool stopping = false;
    if (!device_alive()) return lose_device();
    pass();  // whatever was there before the first edge
    signal_completed();
    while (!stopping) {
      const int n = ::epoll_wait(epfd.get(), ready.data(), static_cast<int>(ready.size()), timeout);
      if (n < 0) {
        if (errno == EINTR) continue;
        set_failure(Error::from_errno(errno, "epoll_wait (reaper)"));
        break;
      }
      if (n == 0) {
        rescans.fetch_add(1, std::memory_order_relaxed);
        if (!device_alive()) return lose_device();
        late_records.fetch_add(pass(), std::memory_order_relaxed);
        signal_completed();
        continue;
      }
      wakes.fetch_add(1, std::memory_order_relaxed);
      bool have_events = false, hangup = false;
      for (int i = 0; i < n; ++i) {
        const epoll_event& ev = ready[static_cast<std::size_t>(i)];
        const std::uint64_t tag = ev.data.u64;
        if (tag == kStopTag) {
          stopping = true;
        } else if (tag == kEventsTag) {
          have_events = true;
          if (ev.events & (EPOLLHUP | EPOLLERR)) hangup = true;
        } else if (tag == kDeviceTag) {
          hangup = true;  // registered for EPOLLHUP/EPOLLERR only
        } else {
          efd_take(queues[tag]->wake_fd());  // reset before draining: a later edge wakes us again
          queue_wakes.fetch_add(1, std::memory_order_relaxed);
        }
      }
      // Edges first: an overflow edge is reported before the records after it,
      // and a removed device's RESET edge before it is declared gone.
      if (have_events) read_events();
      if (hangup || !device_alive()) return lose_device();
      pass();
      signal_completed();
    }
    // Final look: whatever arrived before stop() was called.
    read_events();
    if (!device_alive()) return lose_device();
    pass();
    signal_completed();
    {
      std::lock_guard lk(hub->mu);
      hub->stopped = true;
      for (auto& w : hub->pending) {
        w->state.store(detail::kStopped, std::memory_order_release);
        efd_signal(w->efd.get());
      }
      hub->pending.clear();
    }
  }
};

Reaper::Reaper(Key, std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<Reaper>> Reaper::start(std::vector<std::unique_ptr<ReapQueue>> queues,
                                              std::unique_ptr<EventSource> events, Options opt) {
  auto impl = std::make_unique<Impl>();
  impl->queues = std::move(queues);
  impl->events = std::move(events);
  impl->opt = std::move(opt);
  if (impl->opt.batch == 0) impl->opt.batch = 1;
  impl->buf.resize(impl->opt.batch);
  impl->evbuf.resize(64);

  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return unexpected(Error::from_errno(errno, "epoll_create1 (reaper)"));
  impl->epfd.reset(ep);
  const int sfd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (sfd < 0) return unexpected(Error::from_errno(errno, "eventfd (reaper stop)"));
  impl->stopfd.reset(sfd);

  const auto add = [&](int fd, std::uint64_t tag, const std::string& what) -> Status {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
      return unexpected(Error::from_errno(errno, "epoll_ctl ADD " + what));
    return {};
  };
  if (auto s = add(sfd, Impl::kStopTag, "stop eventfd"); !s) return unexpected(std::move(s).error());
  if (impl->events)
    if (auto s = add(impl->events->fd(), Impl::kEventsTag, "device event stream"); !s)
      return unexpected(std::move(s).error());
  for (std::size_t i = 0; i < impl->queues.size(); ++i) {
    const auto& q = *impl->queues[i];
    if (q.wake_fd() < 0) continue;
    if (auto s = add(q.wake_fd(), i, fmt::format("eventfd of core {} queue {}", q.core(), q.queue())); !s)
      return unexpected(std::move(s).error());
  }
  // The queues' files of /dev/nnqN, for EPOLLHUP/EPOLLERR only (no EPOLLIN:
  // their event queues are someone else's to read).
  if (impl->events) impl->pollv.push_back(pollfd{impl->events->fd(), 0, 0});
  for (const auto& q : impl->queues) {
    const int fd = q->device_fd();
    if (fd < 0 || std::find(impl->device_fds.begin(), impl->device_fds.end(), fd) != impl->device_fds.end())
      continue;
    epoll_event ev{};
    ev.events = 0;  // EPOLLHUP and EPOLLERR are always reported
    ev.data.u64 = Impl::kDeviceTag;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
      return unexpected(Error::from_errno(errno, fmt::format("epoll_ctl ADD the file of core {} queue {}",
                                                             q->core(), q->queue())));
    impl->device_fds.push_back(fd);
    impl->pollv.push_back(pollfd{fd, 0, 0});
  }

  Impl* p = impl.get();
  try {
    impl->thread = std::thread([p] { p->run(); });
  } catch (const std::system_error& e) {
    return unexpected(Error::make(e.code(), "start the reaper thread"));
  }
  return std::make_unique<Reaper>(Key{}, std::move(impl));
}

Reaper::~Reaper() { stop(); }

void Reaper::stop() noexcept {
  std::lock_guard lk(impl_->life_mu);
  if (impl_->joined) return;
  // After the device went the thread has returned: the signal is unread.
  efd_signal(impl_->stopfd.get());
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->joined = true;
}

Result<Waiter> Reaper::expect(Match match, Filter filter) {
  auto st = std::make_shared<WaiterState>();
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return unexpected(Error::from_errno(errno, "eventfd (waiter)"));
  st->efd.reset(fd);
  st->match = std::move(match);
  st->filter = filter;
  {
    std::lock_guard lk(impl_->hub->mu);
    if (impl_->hub->stopped) {
      st->state.store(impl_->hub->gone ? detail::kGone : detail::kStopped, std::memory_order_release);
      efd_signal(fd);
    } else {
      impl_->hub->pending.push_back(st);
    }
  }
  return Waiter(impl_->hub, std::move(st));
}

Reaper::Stats Reaper::stats() const noexcept {
  const Impl& i = *impl_;
  Stats s;
  s.wakes = i.wakes.load(std::memory_order_relaxed);
  s.queue_wakes = i.queue_wakes.load(std::memory_order_relaxed);
  s.rescans = i.rescans.load(std::memory_order_relaxed);
  s.drains = i.drains.load(std::memory_order_relaxed);
  s.records = i.records.load(std::memory_order_relaxed);
  s.late_records = i.late_records.load(std::memory_order_relaxed);
  s.events = i.events_n.load(std::memory_order_relaxed);
  s.overflow_records = i.overflow_records.load(std::memory_order_relaxed);
  s.lost = i.lost.load(std::memory_order_relaxed);
  s.overwritten = i.overwritten.load(std::memory_order_relaxed);
  s.resyncs = i.resyncs.load(std::memory_order_relaxed);
  s.completed = i.completed.load(std::memory_order_relaxed);
  return s;
}

bool Reaper::device_gone() const noexcept { return impl_->gone.load(std::memory_order_acquire); }

bool Reaper::running() const noexcept { return !impl_->exited.load(std::memory_order_acquire); }

std::chrono::nanoseconds Reaper::cpu_time() const noexcept {
  std::lock_guard lk(impl_->life_mu);
  if (impl_->joined || impl_->exited.load(std::memory_order_acquire))
    return std::chrono::nanoseconds(impl_->final_cpu_ns.load(std::memory_order_relaxed));
  clockid_t cid;
  if (::pthread_getcpuclockid(impl_->thread.native_handle(), &cid) != 0) return std::chrono::nanoseconds(0);
  return clock_ns(cid);
}

std::optional<Error> Reaper::failure() const {
  std::lock_guard lk(impl_->fail_mu);
  return impl_->fail;
}

std::size_t Reaper::queue_count() const noexcept { return impl_->queues.size(); }

}  // namespace neuron
