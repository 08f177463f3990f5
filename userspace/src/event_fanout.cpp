// SPDX-License-Identifier: MIT
//
// The fan-out of one open file's events (event_fanout.hpp).
#include "event_fanout.hpp"

#include <linux/kcmp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <deque>
#include <mutex>
#include <vector>

namespace neuron::detail {

namespace {

class Subscriber;

/// The file's one reader: the stream (a descriptor of the open file) and
/// the subscribers its events go to. Alive while a subscriber is.
struct Hub {
  EventStream stream;
  struct stat st {};
  std::mutex mu;
  std::vector<Subscriber*> subs;  // under mu
  Hub(EventStream s, const struct stat& s_st) : stream(std::move(s)), st(s_st) {}
};

/// The hubs alive now (few: one per open file with an execute() running).
std::mutex g_mu;
std::vector<std::weak_ptr<Hub>> g_hubs;

/// Whether `fd` is a descriptor of the hub's open file: the same file
/// (fstat), and, where the kernel answers kcmp(KCMP_FILE), the same open
/// file description (two opens of one node are two event queues).
bool same_open_file(Hub& h, int fd, const struct stat& st) noexcept {
  if (st.st_dev != h.st.st_dev || st.st_ino != h.st.st_ino || st.st_rdev != h.st.st_rdev) return false;
  const pid_t pid = ::getpid();
  const long r = ::syscall(SYS_kcmp, pid, pid, KCMP_FILE, h.stream.fd(), fd);
  return r == 0 || r < 0;  // r < 0: no kcmp here (seccomp, CONFIG_KCMP off): trust fstat
}

class Subscriber final : public EventSource {
 public:
  Subscriber(std::shared_ptr<Hub> hub, UniqueFd efd, UniqueFd ep)
      : hub_(std::move(hub)), efd_(std::move(efd)), ep_(std::move(ep)) {}
  ~Subscriber() override {
    std::lock_guard lk(hub_->mu);
    auto& v = hub_->subs;
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
  }
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  int fd() const noexcept override { return ep_.get(); }

  Result<std::size_t> read(std::span<Event> out) noexcept override {
    std::lock_guard lk(hub_->mu);
    // what the file holds, to every subscriber (this one included)
    std::array<Event, 64> buf;
    for (;;) {
      auto n = hub_->stream.read(buf);
      if (!n) {
        if (!pending_.empty()) break;  // the error comes once what was handed out is taken
        return unexpected(std::move(n).error());
      }
      for (Subscriber* s : hub_->subs) {
        s->pending_.insert(s->pending_.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(*n));
        if (s != this && *n > 0) s->signal();
      }
      if (*n < buf.size()) break;
    }
    std::uint64_t v;
    while (::read(efd_.get(), &v, sizeof v) < 0 && errno == EINTR) {
    }
    const std::size_t k = std::min(out.size(), pending_.size());
    std::copy_n(pending_.begin(), k, out.begin());
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(k));
    if (!pending_.empty()) signal();  // more than `out` held: readable again
    return k;
  }

  void signal() noexcept {
    const std::uint64_t one = 1;
    while (::write(efd_.get(), &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

 private:
  std::shared_ptr<Hub> hub_;
  UniqueFd efd_;              // signalled when another subscriber handed us events
  UniqueFd ep_;               // epoll of the file and efd_: fd()
  std::deque<Event> pending_;  // under hub_->mu
};

}  // namespace

Result<std::unique_ptr<EventSource>> subscribe_events(const Device& dev) {
  struct stat st {};
  if (::fstat(dev.fd(), &st) != 0) return unexpected(Error::from_errno(errno, "fstat " + dev.path() + " (events)"));
  std::shared_ptr<Hub> hub;
  {
    std::lock_guard lk(g_mu);
    std::erase_if(g_hubs, [](const std::weak_ptr<Hub>& w) { return w.expired(); });
    for (const auto& w : g_hubs)
      if (auto h = w.lock(); h && same_open_file(*h, dev.fd(), st)) hub = std::move(h);
    if (!hub) {
      auto s = dev.open_event_stream();
      if (!s) return unexpected(std::move(s).error());
      hub = std::make_shared<Hub>(std::move(s).value(), st);
      g_hubs.push_back(hub);
    }
  }
  UniqueFd efd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!efd) return unexpected(Error::from_errno(errno, "eventfd (events of " + dev.path() + ")"));
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep) return unexpected(Error::from_errno(errno, "epoll_create1 (events of " + dev.path() + ")"));
  for (const int fd : {hub->stream.fd(), efd.get()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
      return unexpected(Error::from_errno(errno, "epoll_ctl ADD (events of " + dev.path() + ")"));
  }
  auto sub = std::make_unique<Subscriber>(hub, std::move(efd), std::move(ep));
  {
    std::lock_guard lk(hub->mu);
    hub->subs.push_back(sub.get());
  }
  return std::unique_ptr<EventSource>(std::move(sub));
}

}  // namespace neuron::detail
