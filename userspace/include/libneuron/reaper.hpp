// SPDX-License-Identifier: MIT
//
// Reaper: the host reap loop of docs/hardware.md#completion, without the
// spinning, for one queue or hundreds (userspace/README.md#reaper-at-scale).
//
// One thread drains the queues it is given (typically the exec queues of
// every engine of the cores in use, on one device or several) and completes
// waiters. It sleeps in epoll on
//   * each queue's eventfd, bound with NEURON_IOC_NQ_EVENTFD and signalled by
//     the driver on the queue's threshold interrupt (THRESHOLD records
//     unread, or coalesce_ns after the first: docs/device-model.md#coalescing);
//   * optionally the device's event stream (read() of /dev/nnqN: one
//     struct neuron_event per interrupt edge), for the error/overflow edge
//     (docs/hardware.md#intr-edge);
//   * its own stop eventfd (RAII shutdown).
//
// What a wake costs. On a wake it drains only the queues whose eventfd
// fired (and queues without an eventfd, which it cannot tell apart), each
// until a drain of that queue comes back empty after its last HEAD write
// or until it has given its budget for the pass (below); queues without
// records cost nothing. That per-queue rule is what keeps
// the wake-up sound: the device raises the threshold interrupt once and
// re-arms it only on an accepted HEAD write (docs/hardware.md#threshold),
// and a drain that took records writes HEAD. A record that lands between
// the drain's scan and that HEAD write raises nothing, but the next drain
// of the same queue sees it. So a queue is left only after an empty drain
// that followed its last HEAD write: at that moment it holds no unread
// record and its interrupt is armed, so the next record (with a count limit
// above 1, the THRESHOLD-th, or the time limit after the first) signals its
// eventfd and wakes us again. A queue that did not fire needs no look: its
// interrupt is still armed from our last empty drain of it (or its edge is
// queued in epoll). This needs the device to fire only while records are
// unread (docs/device-model.md#coalescing: the time limit runs from an
// unread record until a HEAD write leaves none), so that the drain after
// every firing takes records and re-arms it with its HEAD write. The
// queues of one pass are drained round-robin, one batch each in turn, so a
// flooding queue does not starve the others.
//
// The budget (NAPI's weight): in one pass a queue gives at most
// Options::budget records (default 256, one default batch: one drain call
// and one HEAD write per busy queue per pass, so the per-record cost is
// unchanged). A queue whose producer keeps pace would otherwise never come
// back empty and the pass would never end. A queue that gave its whole
// budget has not been seen empty, so its interrupt may not be armed: it is
// left "behind" (Stats::budget_hits counts it) and the next pass drains it
// again without waiting for an edge. Between two passes the thread calls
// epoll_wait() without sleeping, so the other queues that fired, the event
// stream, stop() and the moderation all get their turn after at most one
// budget of every busy queue. Only when no queue is behind does it sleep.
// Passes that settle (the ordering promise below) and the final look at
// stop() give each queue a ring's worth instead (its entries(), or the
// largest ring, 65536 records, when it does not say), which is everything
// it can hold unread when the pass begins: they deliver every record
// written before they began and still end. Besides the drains (one HEAD
// doorbell store per batch taken) a wake makes one syscall, epoll_wait():
// the eventfds are not read and the device is not polled (below).
//
// Why no wake-up is lost with the eventfds edge-triggered and never read.
// The queues' eventfds are registered with EPOLLIN | EPOLLET. Every signal
// of an eventfd (the driver's eventfd_signal(), or a write()) adds to its
// counter, which saturates at 2^64 - 1 and never makes the signal fail,
// and wakes the eventfd's wait queue whatever the counter was; for an
// edge-triggered epoll item that wake-up queues the item on the epoll's
// ready list unless it is queued already, and epoll_wait() takes an item
// off that list when it reports it (one still readable is not queued
// again: edge-triggered). So a signal that comes after the epoll_wait()
// that reported the queue queues it again and a later epoll_wait()
// reports it; a signal that comes before that report is merged into it,
// and the drain that follows the report begins after the signal, so it
// sees the records the signal was for. Either way the signal of the
// interrupt the empty drain above left armed ends a later epoll_wait(),
// which is all the per-queue rule needs; the counter's value was never
// used. What this costs: a signal that arrives while its queue is being
// drained (its records taken by that pass) reports the queue once more, and
// that wake drains it and finds it empty (a spurious wake, not a lost one).
// The stop eventfd is never read either (it is level-triggered and ends the
// thread). Waiters' eventfds are not in this epoll: each is signalled once,
// by this thread, and read by wait() on the waiter's thread.
// A lossy (ignore-full) queue that was lapped recovers inside its drain call
// and goes on draining (userspace/README.md#lossy-queues), so a lap never
// looks like "empty" here and never leaves the threshold unarmed: the
// recovery writes HEAD.
// (On the emulated device an MMIO HEAD write takes effect before the next
// instruction; on a real PCIe device it is posted, so Options::rescan keeps
// a slow periodic look as a guard: every Options::rescan it drains each
// queue no pass has drained in that period, also while other queues keep
// the thread busy. Stats::late_records counts what such a rescan found:
// nonzero means an edge was lost.)
//
// Waiters are the comp_efd chain of docs/hardware.md#completion: a thread
// registers "complete me with the first arrival (record or edge) my predicate
// accepts" and blocks on its own eventfd; the reaper evaluates the predicates
// on its thread and writes 1 to the eventfd of each waiter it completes —
// after a pass over EVERY queue that began after the match, so records
// written before the matching one (on any queue, signalled or not) have been
// delivered first. A pass that completed a waiter (a wake's partial pass, or
// a full one) is therefore followed by full passes until one completes
// nobody; completions are rare next to records, so this costs little. The
// first look, each rescan of an idle Reaper and the final look at stop() are
// full passes too.
// A settling pass gives each queue a ring's worth of budget (above), so a
// record written before the match is in its ring, at most `entries` deep,
// when the pass begins, and that pass delivers it.
//
// Interrupt moderation (userspace/README.md#coalescing): by default
// (Moderation::Adaptive) the reaper sets each queue's threshold from the
// rate it drains it at, with the time limit at Options::latency_budget
// (InterruptModerator, libneuron/moderation.hpp): few wakes at a high rate,
// one per record at a low one, no record waiting longer than the budget for
// its interrupt. A change is one NEURON_IOC_NQ_COALESCE, at most once per
// queue per 10 ms, made after that queue's drain, never per record.
// Moderation::Fixed leaves the queues alone; Moderation::Preset applies
// Options::preset once at start(). Queues that cannot be changed (an older
// driver without NEURON_CAP_COALESCE, ReapQueue::coalescing() nullopt) are
// left alone, which is not an error.
//
// Several devices: each queue says which /dev/nnqN it belongs to
// (ReapQueue::device()); arrivals, completions, filters and on_batch carry
// it.
//
// Device loss (userspace/README.md#device-loss,
// docs/decisions/0027-device-loss.md): the device's event stream and each
// queue's file of /dev/nnqN report EPOLLHUP/EPOLLERR once the device is
// removed (the Reaper watches ONE file per device, told apart by st_rdev, for
// those two only), a RESET edge on the stream says every queue was torn down,
// and each queue's status page (ReapQueue::status_page(): its open file's,
// NEURON_CAP_STATUS_PAGE) turns Stale or Gone at the first step of a reset or
// removal, before the driver revokes any mapping. On the first two the Reaper
// reads the edges still queued (on_event and the waiters see the RESET edge);
// on any of them it marks every queue gone (ReapQueue::mark_device_gone:
// no ring is read again), completes every remaining waiter with
// WaitStatus::DeviceGone and its thread exits: no rescan, no spinning. With
// several devices the loss of any one ends the Reaper (use one Reaper per
// device if they should outlive each other). So that a rescan or a queue wake
// that races with a reset or removal does not read a revoked ring, it looks at
// every status page (one load each) before every pass and at the queue's page
// before each drain call; what no page covers (a driver without the
// capability, a queue without a file) it asks the kernel once per pass
// instead (poll() with no wait on those files, which reports a removal,
// not a reset, from its first step).
//
// Nothing on the drain path throws: callbacks and predicates must not throw
// (the thread function is noexcept).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "libneuron/device.hpp"
#include "libneuron/moderation.hpp"
#include "libneuron/record.hpp"
#include "libneuron/result.hpp"
#include "libneuron/ring.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// A queue the Reaper drains. The Reaper calls every method on its own
/// thread, except the identity (core, queue, device, entries, wake_fd,
/// device_fd, coalescing) and set_coalescing() in Reaper::start().
class ReapQueue {
 public:
  virtual ~ReapQueue() = default;
  [[nodiscard]] virtual unsigned core() const noexcept = 0;
  [[nodiscard]] virtual unsigned queue() const noexcept = 0;
  /// N of the /dev/nnqN the queue belongs to (NotificationQueue::device_index());
  /// 0, the first device, for a queue that does not say.
  [[nodiscard]] virtual std::uint32_t device() const noexcept { return 0; }
  /// The ring's size in records, 0 if unknown (then the queue is not moderated).
  [[nodiscard]] virtual std::uint32_t entries() const noexcept { return 0; }
  /// The queue's interrupt coalescing now, if it can be changed with
  /// set_coalescing(); nullopt (the default): leave it alone.
  [[nodiscard]] virtual std::optional<Coalescing> coalescing() const noexcept { return std::nullopt; }
  /// Change the queue's interrupt coalescing (NotificationQueue::set_coalescing,
  /// NEURON_IOC_NQ_COALESCE: one syscall). The default: errc::not_supported.
  virtual Status set_coalescing(Coalescing c) noexcept;
  /// An eventfd signalled when records wait (the threshold interrupt), -1 for none.
  [[nodiscard]] virtual int wake_fd() const noexcept = 0;
  virtual DrainResult drain(std::span<Record> out) noexcept = 0;
  /// Records overwritten unread since the queue was made (NQ_INFO), if known.
  virtual std::optional<std::uint64_t> overflow_count() noexcept { return std::nullopt; }
  /// Records dropped since the queue was made (NQ_INFO drop_count: the
  /// input buffer's drop policy, a full queue with no policy, a failed ring
  /// write; docs/device-model.md#wrbuf), if known.
  virtual std::optional<std::uint64_t> drop_count() noexcept { return std::nullopt; }
  /// A descriptor that reports EPOLLHUP/EPOLLERR once the device is gone
  /// (a NotificationQueue's open file of /dev/nnqN), -1 for none. The
  /// Reaper watches it for those two conditions only (in epoll; polled before
  /// each pass only when status_page() is null).
  [[nodiscard]] virtual int device_fd() const noexcept { return -1; }
  /// The status page of the queue's open file (NotificationQueue::status_page()),
  /// read before every pass and every drain call instead of a poll() of
  /// device_fd(); null (the default): none, poll device_fd(). Owned by the
  /// queue, alive as long as it.
  [[nodiscard]] virtual const StatusPage* status_page() const noexcept { return nullptr; }
  /// The Reaper has seen the device go (on its thread): drain() must not
  /// touch the ring from now on (NotificationQueue::mark_device_gone).
  virtual void mark_device_gone() noexcept {}
};

/// Interrupt edges, e.g. read() of /dev/nnqN.
class EventSource {
 public:
  virtual ~EventSource() = default;
  [[nodiscard]] virtual int fd() const noexcept = 0;
  /// Non-blocking: the events queued now, up to out.size().
  virtual Result<std::size_t> read(std::span<Event> out) noexcept = 0;
};

/// The device-backed ones: a NotificationQueue made with Options::eventfd,
/// and an EventStream.
std::unique_ptr<ReapQueue> make_reap_queue(NotificationQueue q);
std::unique_ptr<EventSource> make_event_source(EventStream s);

/// Where a batch of records came from: the device (N of /dev/nnqN,
/// ReapQueue::device()), the core and the software queue.
struct QueueId {
  std::uint32_t device = 0;
  unsigned core = 0;
  unsigned queue = 0;
  friend bool operator==(const QueueId&, const QueueId&) = default;
};

/// What reached the reaper: a record (with its device, core and queue) or an
/// edge (with its device and core, Event::device and Event::core).
/// `record` and `event` point into the Reaper's buffers: valid only during
/// the predicate call that receives them (copy what must outlive it; the
/// Completion of a Waiter is such a copy).
struct Arrival {
  unsigned core = 0;
  unsigned queue = 0;
  const Record* record = nullptr;  ///< a record, or
  const Event* event = nullptr;    ///< an interrupt edge
  std::uint32_t device = 0;        ///< N of /dev/nnqN
};

/// A copy of the arrival that completed a waiter.
struct Completion {
  unsigned core = 0;
  unsigned queue = 0;
  std::optional<Record> record;
  std::optional<Event> event;
  std::uint32_t device = 0;  ///< N of /dev/nnqN
};

enum class WaitStatus {
  Completed,  ///< the predicate accepted an arrival: completion() has it
  TimedOut,   ///< not yet; wait() may be called again
  Stopped,    ///< the reaper stopped before a match
  /// DEVICE_GONE (errc::device_gone): the device was removed (EPOLLHUP/
  /// EPOLLERR, a status page Gone) or reset (a RESET edge, a status page
  /// Stale) before a match; the reaper's thread has exited
  /// (userspace/README.md#device-loss)
  DeviceGone,
};
const char* wait_status_name(WaitStatus s) noexcept;

namespace detail {
struct ReaperHub;
struct WaiterState;
}  // namespace detail

/// One registration with a Reaper (RAII: the destructor deregisters it).
/// Movable; the reaper may be destroyed first (the waiter then reports
/// Stopped, or DeviceGone if the device went first).
class Waiter {
 public:
  Waiter(Waiter&&) noexcept;
  Waiter& operator=(Waiter&&) noexcept;
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  ~Waiter();

  /// Its eventfd (the comp_efd): readable once completed or stopped, for a
  /// caller's own poll/epoll. wait() consumes it.
  [[nodiscard]] int fd() const noexcept;
  /// Block until completed, stopped, device gone or `timeout` (negative: no limit).
  WaitStatus wait(std::chrono::milliseconds timeout);
  /// The state now, without blocking.
  [[nodiscard]] WaitStatus status() const noexcept;
  /// The arrival that completed it (valid when status() is Completed).
  [[nodiscard]] const Completion& completion() const noexcept;

 private:
  friend class Reaper;
  Waiter(std::shared_ptr<detail::ReaperHub> hub, std::shared_ptr<detail::WaiterState> st)
      : hub_(std::move(hub)), st_(std::move(st)) {}
  void release() noexcept;
  std::shared_ptr<detail::ReaperHub> hub_;
  std::shared_ptr<detail::WaiterState> st_;
};

/// Thread safety: expect(), stop(), stats(), cpu_time(), failure() and
/// queue_count() may be called from any thread; callbacks and predicates run
/// on the reaper thread (userspace/README.md#api-contract).
class Reaper {
 public:
  using Match = std::function<bool(const Arrival&)>;

  /// Cheap tests made before a waiter's predicate is called (the predicate
  /// is a std::function; with many waiters and a flood of records, skipping
  /// it for records that cannot match is most of the matching cost).
  struct Filter {
    std::optional<unsigned> core;           ///< records and edges of this core only
    std::optional<unsigned> queue;          ///< records of this queue only
    std::optional<std::uint8_t> notific_type;  ///< records of this type only
    bool records = true;                    ///< offer records
    bool events = true;                     ///< offer edges
    std::optional<std::uint32_t> device;    ///< records and edges of this device (N of /dev/nnqN) only
  };

  /// How the Reaper sets its queues' interrupt coalescing (see the top of
  /// this file, userspace/README.md#coalescing).
  enum class Moderation {
    /// Per queue, from its record rate (InterruptModerator): threshold =
    /// clamp(rate x latency_budget, 1, entries / 4), time limit =
    /// latency_budget. Queues that cannot be changed are left alone.
    Adaptive,
    /// Leave every queue's settings as they were made.
    Fixed,
    /// Apply `preset` to every queue once, in start() (which fails if a
    /// queue refuses it), then leave them.
    Preset,
  };

  struct Options {
    /// Every batch of records drained from one queue, in ring order, on the
    /// reaper thread, before the waiters see them. Must not throw. The span
    /// is the Reaper's buffer, valid only during the call.
    std::function<void(unsigned core, unsigned queue, std::span<const Record>)> on_records;
    /// The same batches with the queue's device (a Reaper over several
    /// devices): called first, then on_records; set either or both.
    std::function<void(const QueueId&, std::span<const Record>)> on_batch;
    /// Every edge read from the event source, on the reaper thread.
    std::function<void(const Event&)> on_event;
    /// Records per drain call.
    std::size_t batch = 256;
    /// Records one queue may give in one pass before the Reaper turns to the
    /// other queues, the edges, stop() and moderation (NAPI's weight; the top
    /// of this file): a queue left with its budget spent is drained again in
    /// the next pass, which follows without sleeping. 0 counts as 1. The
    /// default, one default batch, keeps one drain call per busy queue per
    /// pass; a cold queue's record then waits at most for one budget of every
    /// busy queue (userspace/README.md#reaper-budget).
    std::size_t budget = 256;
    /// The period of the guard against a lost edge (see the top of this
    /// file): every `rescan` the Reaper drains each queue that no pass
    /// drained in that period, busy or idle (idle: all of them, a full
    /// pass); 0: never.
    std::chrono::milliseconds rescan{100};
    /// Interrupt moderation; Adaptive unless the caller fixes the settings.
    Moderation moderation = Moderation::Adaptive;
    /// Adaptive: the time limit programmed on every moderated queue, so no
    /// record waits longer for its interrupt; 1 us .. 10 ms
    /// (NEURON_NQ_COALESCE_NS_MAX), else start() fails with
    /// errc::invalid_argument.
    std::chrono::microseconds latency_budget{500};
    /// Preset: what every queue gets in start().
    Coalescing preset;
  };

  struct Stats {
    std::uint64_t wakes = 0;         ///< epoll returns with something ready
    std::uint64_t queue_wakes = 0;   ///< queue eventfds found signalled
    std::uint64_t rescans = 0;       ///< lost-edge guards run (Options::rescan), idle or under load
    std::uint64_t drains = 0;        ///< drain calls
    std::uint64_t records = 0;
    std::uint64_t late_records = 0;  ///< found by a rescan: an edge was lost
    std::uint64_t events = 0;        ///< edges read from the event source
    std::uint64_t overflow_records = 0;  ///< drained records with software_queue_overflow
    std::uint64_t lost = 0;          ///< records skipped on lossy queues (DrainResult::lost, exact)
    std::uint64_t overwritten = 0;   ///< of those, overwritten before the drain looked (DrainResult::overwritten)
    std::uint64_t resyncs = 0;       ///< lap recoveries (DrainResult::resyncs); the drain went on in the same call
    std::uint64_t completed = 0;     ///< waiters completed
    std::uint64_t full_passes = 0;   ///< passes over every queue: first look, rescans, after a completion, final look
    std::uint64_t coalesce_changes = 0;  ///< queues re-programmed (set_coalescing calls that succeeded)
    std::uint64_t coalesce_errors = 0;   ///< set_coalescing calls that failed (the queue is then left alone)
    std::uint64_t moderated_queues = 0;  ///< queues the Reaper adapts now (Adaptive; 0 on an older driver)
    /// poll() calls made to look for device loss (once per pass when some
    /// queue or the event stream has no status page; 0 when pages cover all)
    std::uint64_t device_polls = 0;
    /// times a queue gave its whole budget in a pass and was left for the
    /// next one (Options::budget; a producer that keeps pace)
    std::uint64_t budget_hits = 0;
  };

  /// Start the thread. Queues with wake_fd() < 0 are drained on every wake.
  /// Errors: errc::invalid_argument (latency_budget out of range), a
  /// queue's set_coalescing() error (Preset), and epoll, eventfd, fstat or
  /// thread creation failing (the error names the queue or call). The
  /// queues and the event source are the call's from the start: on an error
  /// they are destroyed; try_start() gives them back instead.
  static Result<std::unique_ptr<Reaper>> start(std::vector<std::unique_ptr<ReapQueue>> queues,
                                               std::unique_ptr<EventSource> events, Options opt);
  static Result<std::unique_ptr<Reaper>> start(std::vector<std::unique_ptr<ReapQueue>> queues) {
    return start(std::move(queues), nullptr, Options{});
  }
  /// As start(), but `queues` and `events` stay the caller's until it
  /// succeeds: then both are left empty (the thread owns them); on an error
  /// both are left as they were given (a Preset applied to the queues
  /// before the one that refused it stays). Errors: as start(). Issue 41;
  /// an addition of the 1.x line (userspace/README.md#versions).
  static Result<std::unique_ptr<Reaper>> try_start(std::vector<std::unique_ptr<ReapQueue>>& queues,
                                                   std::unique_ptr<EventSource>& events, Options opt);

  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;
  /// stop(), then the queues and the event source are destroyed.
  ~Reaper();

  /// Register a waiter completed by the first arrival `match` accepts from
  /// now on. `match` runs on the reaper thread (under its lock): it may keep
  /// state, must be quick, must not throw and must not call into the Reaper.
  Result<Waiter> expect(Match match) { return expect(std::move(match), Filter{}); }
  Result<Waiter> expect(Match match, Filter filter);

  /// Signal the thread to stop: it drains every queue once more (a ring's
  /// worth of each at most, so a queue that never runs empty does not hold
  /// it; what was unread when that look began is delivered), completes what
  /// matches, then reports Stopped to the remaining waiters. Joins: returns
  /// after the pass under way (at most one budget of each busy queue) and
  /// that final look. Idempotent; after the device went (the thread has
  /// exited) it only joins.
  void stop() noexcept;

  /// Whether the reaper has seen the device go (see the top of this file):
  /// every waiter got DeviceGone, later expect() calls return a waiter that
  /// reports DeviceGone, and the thread has exited or is exiting.
  [[nodiscard]] bool device_gone() const noexcept;
  /// Whether the reaper's thread still runs (false once it exited: after
  /// stop() or on its own, device gone or failure).
  [[nodiscard]] bool running() const noexcept;

  [[nodiscard]] Stats stats() const noexcept;
  /// CPU time of the reaper thread so far (its thread CPU clock).
  [[nodiscard]] std::chrono::nanoseconds cpu_time() const noexcept;
  /// Why the thread stopped on its own (epoll failure, event read failure), if
  /// it did. Device loss is not a failure (device_gone()).
  [[nodiscard]] std::optional<Error> failure() const;
  [[nodiscard]] std::size_t queue_count() const noexcept;
  /// The descriptors polled for device loss before each pass: the event
  /// stream, then one queue file per device not already covered (files of
  /// one device are told apart from others by st_rdev, other descriptors by
  /// inode), leaving out every device a status page covers. 320 queues on 4
  /// devices: 0 with status pages, 4 from a driver without them.
  [[nodiscard]] std::size_t device_files() const noexcept;
  /// The distinct status pages read before each pass (one per open file the
  /// queues hold; ReapQueue::status_page()). 320 queues on 4 devices, one
  /// Device each: 4.
  [[nodiscard]] std::size_t status_pages() const noexcept;

 private:
  struct Impl;
  struct Key {
    explicit Key() = default;
  };

 public:
  /// Use start().
  Reaper(Key, std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuron
NEURON_API_END
