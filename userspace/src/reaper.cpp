// SPDX-License-Identifier: MIT
#include "libneuron/reaper.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace neuron {

// ------------------------------------------------------------------ adapters
namespace {

class DeviceReapQueue final : public ReapQueue {
 public:
  explicit DeviceReapQueue(NotificationQueue q) : q_(std::move(q)) {}
  unsigned core() const noexcept override { return q_.core(); }
  unsigned queue() const noexcept override { return q_.queue(); }
  std::uint32_t device() const noexcept override { return q_.device_index().value_or(0); }
  std::uint32_t entries() const noexcept override { return q_.size() / static_cast<std::uint32_t>(sizeof(Record)); }
  std::optional<Coalescing> coalescing() const noexcept override {
    if (!q_.coalescing_supported()) return std::nullopt;
    // the driver moderates this queue (NEURON_NQ_F_ADAPTIVE): an NQ_COALESCE
    // would end that (docs/decisions/0048-reaper-moderation-fallback.md)
    if (const auto i = q_.info(); i && (i->flags & NEURON_NQ_F_ADAPTIVE)) return std::nullopt;
    return q_.coalescing();
  }
  Status set_coalescing(Coalescing c) noexcept override { return q_.set_coalescing(c.threshold, c.coalesce_ns); }
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
  const StatusPage* status_page() const noexcept override { return q_.status_page().get(); }
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
  // now + timeout saturates: a timeout past the clock's range (milliseconds::max())
  // is no limit, not an overflow into the past; compared in milliseconds, where
  // the clock's remaining range cannot overflow
  const auto now0 = clock::now();
  const bool forever =
      timeout.count() < 0 ||
      timeout > std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - now0);
  const auto deadline = forever ? clock::time_point::max() : now0 + timeout;
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
  /// One queue, as the reaper thread sees it.
  struct Slot {
    ReapQueue* q = nullptr;
    QueueId id;
    const StatusPage* page = nullptr;       // its file's status page, if the driver has one
    std::uint64_t taken = 0;                // records of the current pass
    std::uint64_t spent = 0;                // budget used in the current pass (records, at least 1 per call)
    std::uint64_t settle_cap = 0;           // budget of a settling pass: a ring's worth (or more)
    bool behind = false;                    // budget spent before an empty drain: drain it next pass
    bool queued = false;                    // in the set being built (no queue twice in a pass)
    bool looked = false;                    // drained since the last rescan (rescan_unlooked())
    std::optional<InterruptModerator> mod;  // Adaptive, while the queue may be changed
  };

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
  std::atomic<bool> gone{false};    // the device went (docs/decisions/0027-device-loss.md)

  // statistics: written by the reaper thread, read by anyone
  std::atomic<std::uint64_t> wakes{0}, queue_wakes{0}, rescans{0}, drains{0}, records{0}, late_records{0},
      events_n{0}, overflow_records{0}, lost{0}, overwritten{0}, resyncs{0}, completed{0}, full_passes{0},
      coalesce_changes{0}, coalesce_errors{0}, moderated{0}, device_polls{0}, budget_hits{0};
  mutable std::mutex fail_mu;
  std::optional<Error> fail;

  // reaper thread only (set up by start())
  std::vector<Slot> slots;
  std::vector<std::size_t> all;       // every slot: a full pass
  std::vector<std::size_t> no_wake;   // slots without an eventfd: in every pass
  std::vector<std::size_t> work;      // the current pass's queues
  std::vector<std::size_t> late_set;  // a rescan's queues (rescan_unlooked())
  std::size_t behind_n = 0;           // slots with `behind` set: the next epoll_wait does not sleep
  std::vector<Record> buf;
  std::vector<Event> evbuf;
  std::vector<std::shared_ptr<WaiterState>> to_signal;
  // device_alive(): the status pages of the queues' files (one load each),
  // then, for what no page covers, poll() of the event stream and of one
  // queue file per device
  std::vector<const StatusPage*> pages;
  std::vector<pollfd> pollv;

  static constexpr std::uint64_t kStopTag = ~std::uint64_t{0};
  static constexpr std::uint64_t kEventsTag = ~std::uint64_t{0} - 1;
  static constexpr std::uint64_t kDeviceTag = ~std::uint64_t{0} - 2;  // a queue's file: HUP/ERR

  // reaper thread only: set when the event stream ended (ENODEV), a RESET
  // edge said every queue was torn down, or a pass found the device gone
  bool saw_loss = false;
  // reaper thread only: when the lost-edge guard is due (Options::rescan)
  std::chrono::steady_clock::time_point next_rescan;

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
    if (f.device && *f.device != a.device) return false;
    return !f.core || *f.core == a.core;
  }

  /// Offer one arrival to the pending waiters (reaper thread, hub locked).
  void offer(const Arrival& a) {
    auto& pend = hub->pending;
    for (std::size_t i = 0; i < pend.size();) {
      auto& w = pend[i];
      if (passes(w->filter, a) && w->match && w->match(a)) {
        w->completion.device = a.device;
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

  void deliver_records(const QueueId& id, std::span<const Record> recs) {
    if (opt.on_batch) opt.on_batch(id, recs);
    if (opt.on_records) opt.on_records(id.core, id.queue, recs);
    std::lock_guard lk(hub->mu);
    if (hub->pending.empty()) return;
    for (const Record& r : recs) {
      Arrival a;
      a.device = id.device;
      a.core = id.core;
      a.queue = id.queue;
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
        a.device = e.device;
        a.core = e.core;
        a.event = &e;
        offer(a);
      }
      if (*n < evbuf.size()) return;
    }
  }

  /// Drain the queues of `set` round-robin, one batch each in turn, each
  /// until a drain of it comes back empty after its last HEAD write (the
  /// wake-up rule at the top of reaper.hpp) or until it has given its
  /// budget for this pass (Options::budget records, a ring's worth in a
  /// settling pass: `settle`); a queue left with its budget spent is
  /// `behind` and is drained again in the next pass, which follows without
  /// sleeping, after the edges and the stop request have been looked at.
  /// Then the moderators see what each took. Returns the records taken;
  /// false in `alive` if the device went (before the pass, or before one of
  /// its drain calls, by its status page, or said by a drain: what was taken
  /// until then, that drain's records included, has been delivered).
  std::uint64_t drain_set(std::vector<std::size_t>& set, bool& alive, bool settle = false) {
    for (const std::size_t i : set) slots[i].queued = false;
    alive = device_alive();
    if (!alive) return 0;
    std::uint64_t total = 0;
    for (const std::size_t i : set) slots[i].taken = slots[i].spent = 0;
    std::size_t active = set.size();  // set[0, active) still to be emptied; the order of the rest is free
    while (active > 0) {
      std::size_t keep = 0;
      for (std::size_t k = 0; k < active; ++k) {
        const std::size_t i = set[k];
        Slot& s = slots[i];
        // before every drain call: a reset or removal that began during
        // the pass stops it before the next ring is read (one load)
        if (s.page && !s.page->live()) {
          alive = false;
          break;
        }
        const std::uint64_t cap = settle ? s.settle_cap : opt.budget;
        s.looked = true;
        const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), cap - s.spent));
        const DrainResult r = s.q->drain(std::span<Record>(buf.data(), room));
        drains.fetch_add(1, std::memory_order_relaxed);
        if (r.lost) lost.fetch_add(r.lost, std::memory_order_relaxed);
        if (r.overwritten) overwritten.fetch_add(r.overwritten, std::memory_order_relaxed);
        if (r.resyncs) resyncs.fetch_add(r.resyncs, std::memory_order_relaxed);
        if (r.count > 0) {  // delivered even when the same call saw the device go (records first, then the loss)
          std::uint64_t ovf = 0;
          for (std::size_t j = 0; j < r.count; ++j) ovf += buf[j].sw_overflow() ? 1 : 0;
          if (ovf) overflow_records.fetch_add(ovf, std::memory_order_relaxed);
          deliver_records(s.id, std::span<const Record>(buf.data(), r.count));
          s.taken += r.count;
          total += r.count;
        }
        if (r.device_gone) {  // the queue saw it itself: its ring is not read again
          alive = false;
          break;
        }
        // empty, and no lossy recovery moved HEAD in this call: done with it
        if (r.count == 0 && r.resyncs == 0) {
          set_behind(s, false);
          continue;
        }
        s.spent += std::max<std::uint64_t>(r.count, 1);  // a call that only resynced costs one
        if (s.spent >= cap) {  // its budget for this pass is spent: the next pass comes back to it
          set_behind(s, true);
          budget_hits.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        set[k] = set[keep];
        set[keep++] = i;
      }
      if (!alive) break;
      active = keep;
    }
    records.fetch_add(total, std::memory_order_relaxed);
    if (alive) moderate(set);
    return total;
  }

  void set_behind(Slot& s, bool on) noexcept {
    if (s.behind == on) return;
    s.behind = on;
    if (on) ++behind_n;
    else --behind_n;
  }

  /// Add slot i to `work` unless it is there already.
  void enqueue(std::size_t i) {
    if (slots[i].queued) return;
    slots[i].queued = true;
    work.push_back(i);
  }

  /// Adaptive moderation of the queues just drained (each is empty with its
  /// interrupt armed, or left behind with its budget spent and drained again
  /// in the next pass, so no record waits on the change; it is a live change
  /// the device applies at once, docs/device-model.md#coalescing; never per
  /// record).
  void moderate(const std::vector<std::size_t>& set) {
    if (opt.moderation != Moderation::Adaptive || moderated.load(std::memory_order_relaxed) == 0) return;
    const auto now = clock_ns(CLOCK_MONOTONIC);
    for (const std::size_t i : set) {
      Slot& s = slots[i];
      if (!s.mod) continue;
      const auto c = s.mod->observe(s.taken, now);
      if (!c) continue;
      if (s.q->set_coalescing(*c)) {
        coalesce_changes.fetch_add(1, std::memory_order_relaxed);
      } else {
        // an older driver, a queue that refuses: leave it as it is now
        coalesce_errors.fetch_add(1, std::memory_order_relaxed);
        s.mod.reset();
        moderated.fetch_sub(1, std::memory_order_relaxed);
      }
    }
  }

  /// A pass over every queue; `settle`: with a ring's worth of budget each
  /// (settle_and_signal, the final look), else Options::budget.
  std::uint64_t full_pass(bool& alive, bool settle = false) {
    full_passes.fetch_add(1, std::memory_order_relaxed);
    work = all;
    return drain_set(work, alive, settle);
  }

  /// The ordering promise: a waiter completed in a pass is signalled only
  /// after a full pass that began after its match, so records written before
  /// the match on any queue were delivered first; a full pass that completes
  /// more waiters is followed by another. Those passes settle: each queue
  /// may give a ring's worth of records (Slot::settle_cap, at least its
  /// entries), not just Options::budget, so a queue that never runs empty
  /// still gives every record it held when the pass began (the ring holds
  /// at most `entries` unread and hands them out oldest first), and the
  /// pass still ends.
  void settle_and_signal(bool& alive) {
    std::size_t seen = 0;
    while (alive && to_signal.size() > seen) {
      seen = to_signal.size();
      full_pass(alive, true);
    }
    if (alive) signal_completed();
  }

  void signal_completed() {
    for (auto& w : to_signal) {
      completed.fetch_add(1, std::memory_order_relaxed);
      w->state.store(detail::kCompleted, std::memory_order_release);
      efd_signal(w->efd.get());
    }
    to_signal.clear();
  }

  /// Whether the device is still there, asked now: each status page (one
  /// load, no syscall: the driver turns it Stale or Gone at the first step
  /// of a reset or removal, before it revokes any mapping), then, only for
  /// what no page covers (a driver without NEURON_CAP_STATUS_PAGE), one
  /// poll() with no wait of the event stream and one queue file per device,
  /// which report EPOLLHUP|EPOLLERR from the first step of a removal
  /// (none: true).
  bool device_alive() {
    if (saw_loss) return false;
    for (const StatusPage* p : pages)
      if (!p->live()) return false;
    if (pollv.empty()) return true;
    for (auto& p : pollv) p.revents = 0;
    device_polls.fetch_add(1, std::memory_order_relaxed);
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
  /// DeviceGone, and the thread ends (docs/decisions/0027-device-loss.md).
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

  // defined below start()'s helpers, out of line: not exported (Reaper's
  // members are, by libneuron/export.hpp)
  [[gnu::visibility("hidden")]] Status set_up();

  void run() noexcept {
    run_loop();
    final_cpu_ns.store(clock_ns(CLOCK_THREAD_CPUTIME_ID).count(), std::memory_order_relaxed);
    exited.store(true, std::memory_order_release);
  }

  /// The lost-edge guard (Options::rescan) when it is due: the queues no
  /// pass has drained since the last rescan and none is about to (not in
  /// `work`: a queue whose edge was just reported is not late), so under
  /// load too (a thread that is never idle for a whole period still looks
  /// at a queue whose edge never came); idle, that is every queue, in a
  /// full pass. What it finds is late_records. Then the next period begins.
  void rescan_unlooked(bool& alive) {
    rescans.fetch_add(1, std::memory_order_relaxed);
    late_set.clear();
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (!slots[i].looked && !slots[i].queued) late_set.push_back(i);
    if (late_set.size() == slots.size()) {
      late_records.fetch_add(full_pass(alive), std::memory_order_relaxed);
      work.clear();
    } else if (!late_set.empty()) {
      late_records.fetch_add(drain_set(late_set, alive), std::memory_order_relaxed);
    }
    for (Slot& s : slots) s.looked = false;
    next_rescan = std::chrono::steady_clock::now() + opt.rescan;
  }

  /// epoll_wait()'s timeout: until the next rescan is due (-1: no rescans).
  int ms_to_rescan() const noexcept {
    if (opt.rescan.count() <= 0) return -1;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_rescan - std::chrono::steady_clock::now());
    return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT32_MAX));
  }

  void run_loop() noexcept {
    std::vector<epoll_event> ready(queues.size() + pollv.size() + 2);
    bool stopping = false, alive = true;
    full_pass(alive);  // whatever was there before the first edge
    settle_and_signal(alive);
    if (!alive) return lose_device();
    for (Slot& s : slots) s.looked = false;
    next_rescan = std::chrono::steady_clock::now() + opt.rescan;
    while (!stopping) {
      // A queue left behind (its budget spent) is drained in the next pass,
      // which does not wait: this epoll_wait only collects what else is
      // ready (other queues, edges, stop), so those get their turn.
      const bool behind = behind_n > 0;
      const int n = ::epoll_wait(epfd.get(), ready.data(), static_cast<int>(ready.size()), behind ? 0 : ms_to_rescan());
      if (n < 0) {
        if (errno == EINTR) continue;
        set_failure(Error::from_errno(errno, "epoll_wait (reaper)"));
        break;
      }
      if (n == 0 && !behind) {  // idle until the rescan was due
        rescan_unlooked(alive);
        settle_and_signal(alive);
        if (!alive) return lose_device();
        continue;
      }
      if (n > 0) wakes.fetch_add(1, std::memory_order_relaxed);
      bool have_events = false, hangup = false;
      work.clear();
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
          // edge-triggered and never read: a signal after this report is
          // reported again (the argument at the top of reaper.hpp)
          queue_wakes.fetch_add(1, std::memory_order_relaxed);
          enqueue(static_cast<std::size_t>(tag));
        }
      }
      // Edges first: an overflow edge is reported before the records after it,
      // and a removed device's RESET edge before it is declared gone.
      if (have_events) read_events();
      if (hangup) return lose_device();
      if (behind)
        for (std::size_t i = 0; i < slots.size(); ++i)
          if (slots[i].behind) enqueue(i);
      for (const std::size_t i : no_wake) enqueue(i);
      // under load the thread never sleeps a whole period: the rescan is
      // due here (one clock read a pass; vDSO, no syscall), right after the
      // epoll_wait that collected the edges, before this pass
      if (opt.rescan.count() > 0 && std::chrono::steady_clock::now() >= next_rescan) rescan_unlooked(alive);
      if (alive) drain_set(work, alive);  // the queues that fired and those left behind
      settle_and_signal(alive);
      if (!alive) return lose_device();
    }
    // Final look: whatever arrived before stop() was called (a ring's worth
    // of each queue at most, so a queue that never runs empty ends it too).
    read_events();
    full_pass(alive, true);
    settle_and_signal(alive);
    if (!alive) return lose_device();
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

Status ReapQueue::set_coalescing(Coalescing c) noexcept {
  return unexpected(errc::not_supported,
                    fmt::format("set the coalescing of core {} queue {} (threshold {}, coalesce_ns {}): this queue "
                                "cannot be changed",
                                core(), queue(), c.threshold, c.coalesce_ns));
}

Reaper::Reaper(Key, std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {

/// What tells one device's files from another's: the device number of a
/// device node (every open file of /dev/nnqN, dup()ed or not), the inode of
/// anything else.
struct FileIdentity {
  bool node = false;
  std::uint64_t a = 0, b = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

Result<FileIdentity> identity_of(int fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return unexpected(Error::from_errno(errno, "fstat " + what));
  if (S_ISCHR(st.st_mode)) return FileIdentity{true, st.st_rdev, 0};
  return FileIdentity{false, st.st_dev, st.st_ino};
}

}  // namespace

/// start()'s work once the Impl holds the queues, the event source and the
/// options: moderation, epoll, the device-loss watch, the thread. On an
/// error start() hands the queues and the event source back.
Status Reaper::Impl::set_up() {
  const Options& o = opt;

  const auto budget_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(o.latency_budget).count();
  if (o.moderation == Moderation::Adaptive && (budget_ns < 1000 || budget_ns > NEURON_NQ_COALESCE_NS_MAX))
    return unexpected(errc::invalid_argument,
                      fmt::format("reaper: latency_budget {} us is outside 1 us .. {} us (NEURON_NQ_COALESCE_NS_MAX)",
                                  o.latency_budget.count(), NEURON_NQ_COALESCE_NS_MAX / 1000));

  // The queues as the thread sees them; moderation set up (Preset applied).
  const auto now = clock_ns(CLOCK_MONOTONIC);
  slots.reserve(queues.size());
  for (std::size_t i = 0; i < queues.size(); ++i) {
    ReapQueue* q = queues[i].get();
    Impl::Slot s;
    s.q = q;
    s.id = QueueId{q->device(), q->core(), q->queue()};
    s.page = q->status_page();
    // a settling pass takes everything a ring can hold unread (the largest
    // ring the driver makes when the queue does not say its size)
    s.settle_cap = std::max<std::uint64_t>(
        {opt.budget, q->entries() > 0 ? q->entries() : std::uint64_t{NEURON_NQ_SIZE_MAX / sizeof(Record)}});
    all.push_back(i);
    if (q->wake_fd() < 0) no_wake.push_back(i);
    if (o.moderation == Moderation::Preset) {
      if (auto st = q->set_coalescing(o.preset); !st) return unexpected(std::move(st).error());
    } else if (o.moderation == Moderation::Adaptive && q->wake_fd() >= 0 && q->entries() > 0) {
      if (const auto cur = q->coalescing()) {
        InterruptModerator::Config mc;
        mc.budget = std::chrono::nanoseconds(budget_ns);
        mc.max_threshold = InterruptModerator::max_threshold_for(q->entries());
        // A count limit above 1 with no time limit (or a longer one) could
        // hold a few records forever: bound it by the budget now.
        bool ok = true;
        if (cur->threshold != 1 && (cur->coalesce_ns == 0 || cur->coalesce_ns > budget_ns)) {
          ok = static_cast<bool>(q->set_coalescing(Coalescing{cur->threshold, static_cast<std::uint32_t>(budget_ns)}));
          (ok ? coalesce_changes : coalesce_errors).fetch_add(1, std::memory_order_relaxed);
        }
        if (ok) {
          s.mod.emplace(mc, cur->threshold, now);
          moderated.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
    slots.push_back(std::move(s));
  }

  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return unexpected(Error::from_errno(errno, "epoll_create1 (reaper)"));
  epfd.reset(ep);
  const int sfd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (sfd < 0) return unexpected(Error::from_errno(errno, "eventfd (reaper stop)"));
  stopfd.reset(sfd);

  const auto add = [&](int fd, std::uint32_t mask, std::uint64_t tag, const std::string& what) -> Status {
    epoll_event ev{};
    ev.events = mask;
    ev.data.u64 = tag;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
      return unexpected(Error::from_errno(errno, "epoll_ctl ADD " + what));
    return {};
  };
  if (auto s = add(sfd, EPOLLIN, Impl::kStopTag, "stop eventfd"); !s) return unexpected(std::move(s).error());
  if (events)
    if (auto s = add(events->fd(), EPOLLIN, Impl::kEventsTag, "device event stream"); !s)
      return unexpected(std::move(s).error());
  // The queues' eventfds: edge-triggered, never read (top of reaper.hpp).
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const auto& q = *queues[i];
    if (q.wake_fd() < 0) continue;
    if (auto s = add(q.wake_fd(), EPOLLIN | EPOLLET, i, fmt::format("eventfd of core {} queue {}", q.core(), q.queue()));
        !s)
      return unexpected(std::move(s).error());
  }
  // Device loss: the status pages of the queues' files, one entry per page
  // (the queues of one open file share it); then, for what they do not
  // cover, the event stream and one queue file per device, for
  // EPOLLHUP/EPOLLERR only (no EPOLLIN: their event queues are someone
  // else's to read), in epoll (a removal wakes the thread) and polled before
  // each pass. 320 queues on 4 devices: 4 pages and no file polled, or,
  // from an older driver, 4 files, not 320. Every queue file is still
  // watched in epoll, page or not, so a removal wakes a sleeping thread.
  std::vector<FileIdentity> seen, covered;  // devices with a file in epoll; devices a page covers
  std::vector<std::pair<FileIdentity, int>> unpaged;  // files to poll unless a page covers their device
  std::optional<FileIdentity> stream;                 // the event stream's (in epoll already)
  if (events) {
    auto id = identity_of(events->fd(), "the device event stream");
    if (!id) return unexpected(std::move(id).error());
    stream = *id;
    seen.push_back(*id);
  }
  for (const auto& q : queues) {
    const int fd = q->device_fd();
    const StatusPage* page = q->status_page();
    if (page && std::find(pages.begin(), pages.end(), page) == pages.end())
      pages.push_back(page);
    if (fd < 0) continue;
    const auto what = fmt::format("the file of core {} queue {}", q->core(), q->queue());
    auto id = identity_of(fd, what);
    if (!id) return unexpected(std::move(id).error());
    if (page) covered.push_back(*id);
    else unpaged.emplace_back(*id, fd);
    if (std::find(seen.begin(), seen.end(), *id) != seen.end()) continue;
    seen.push_back(*id);
    if (auto s = add(fd, 0, Impl::kDeviceTag, what); !s)  // EPOLLHUP and EPOLLERR are always reported
      return unexpected(std::move(s).error());
  }
  const auto is_covered = [&](const FileIdentity& id) {
    return std::find(covered.begin(), covered.end(), id) != covered.end();
  };
  std::vector<FileIdentity> polled;
  if (stream && !is_covered(*stream)) {
    pollv.push_back(pollfd{events->fd(), 0, 0});
    polled.push_back(*stream);
  }
  for (const auto& [id, fd] : unpaged) {
    if (is_covered(id) || std::find(polled.begin(), polled.end(), id) != polled.end()) continue;
    polled.push_back(id);
    pollv.push_back(pollfd{fd, 0, 0});
  }

  Impl* p = this;
  try {
    thread = std::thread([p] { p->run(); });
  } catch (const std::system_error& e) {
    return unexpected(Error::make(e.code(), "start the reaper thread"));
  }
  return {};
}

Result<std::unique_ptr<Reaper>> Reaper::start(std::vector<std::unique_ptr<ReapQueue>> queues,
                                              std::unique_ptr<EventSource> events, Options opt) {
  return try_start(queues, events, std::move(opt));  // on an error ours, destroyed here
}

Result<std::unique_ptr<Reaper>> Reaper::try_start(std::vector<std::unique_ptr<ReapQueue>>& queues,
                                                  std::unique_ptr<EventSource>& events, Options opt) {
  auto impl = std::make_unique<Impl>();
  impl->queues = std::exchange(queues, {});  // the caller's left empty, whatever the move leaves
  impl->events = std::exchange(events, nullptr);
  impl->opt = std::move(opt);
  if (impl->opt.batch == 0) impl->opt.batch = 1;
  if (impl->opt.budget == 0) impl->opt.budget = 1;
  impl->buf.resize(impl->opt.batch);
  impl->evbuf.resize(64);
  if (auto st = impl->set_up(); !st) {
    // the caller's again, as they were given (the epoll that watched them is closed)
    queues = std::move(impl->queues);
    events = std::move(impl->events);
    return unexpected(std::move(st).error());
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
  s.full_passes = i.full_passes.load(std::memory_order_relaxed);
  s.coalesce_changes = i.coalesce_changes.load(std::memory_order_relaxed);
  s.coalesce_errors = i.coalesce_errors.load(std::memory_order_relaxed);
  s.moderated_queues = i.moderated.load(std::memory_order_relaxed);
  s.device_polls = i.device_polls.load(std::memory_order_relaxed);
  s.budget_hits = i.budget_hits.load(std::memory_order_relaxed);
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

std::size_t Reaper::device_files() const noexcept { return impl_->pollv.size(); }

std::size_t Reaper::status_pages() const noexcept { return impl_->pages.size(); }

}  // namespace neuron
