// SPDX-License-Identifier: MIT
//
// Reaper: the host reap loop of docs/hardware.md#completion, without the
// spinning.
//
// One thread drains the queues it is given (typically the exec queues of
// every engine of the cores in use) and completes waiters. It sleeps in
// epoll on
//   * each queue's eventfd, bound with NEURON_IOC_NQ_EVENTFD and signalled by
//     the driver on the queue's threshold interrupt (the queue's THRESHOLD,
//     set at NQ_INIT, e.g. 1: "a record is waiting");
//   * optionally the device's event stream (read() of /dev/nnqN: one
//     struct neuron_event per interrupt edge), for the error/overflow edge
//     (docs/hardware.md#intr-edge);
//   * its own stop eventfd (RAII shutdown).
// On a wake it drains EVERY queue until a full pass finds nothing. That is
// what keeps the wake-up sound: the device raises the threshold interrupt
// once and re-arms it on the next HEAD write (docs/device-model.md), and a
// drain that took records writes HEAD; a record that arrives between the
// scan and that HEAD write raises nothing, but the next scan of the same
// pass sees it. So the reaper sleeps only after an empty scan that followed
// the last HEAD write, and any later record finds the threshold armed.
// A lossy (ignore-full) queue that was lapped recovers inside its drain call
// and goes on draining (userspace/README.md#lossy-queues), so a lap never
// looks like "empty" here and never leaves the threshold unarmed: the
// recovery writes HEAD.
// (On the emulated device an MMIO HEAD write takes effect before the next
// instruction; on a real PCIe device it is posted, so Options::rescan keeps
// a slow periodic look as a guard. Stats::late_records counts what such a
// rescan found: nonzero means an edge was lost.)
//
// Waiters are the comp_efd chain of docs/hardware.md#completion: a thread
// registers "complete me with the first arrival (record or edge) my predicate
// accepts" and blocks on its own eventfd; the reaper evaluates the predicates
// on its thread and writes 1 to the eventfd of each waiter it completes — after
// the pass that found the match has drained every queue, so records written
// before the matching one (on any queue) have been delivered first.
//
// Device loss (userspace/README.md#device-loss, docs/decisions.md#device-loss):
// the device's event stream and each queue's file of /dev/nnqN report
// EPOLLHUP/EPOLLERR once the device is removed (the Reaper watches the
// queues' files for those two only), and a RESET edge on the stream says
// every queue was torn down. On either the Reaper reads the edges still
// queued (on_event and the waiters see the RESET edge), marks every queue
// gone (ReapQueue::mark_device_gone: no ring is read again), completes every
// remaining waiter with WaitStatus::DeviceGone and its thread exits: no
// rescan, no spinning. Before every pass it also asks the kernel once
// (poll() with no wait on those files, which reports the removal from its
// first step, before the driver revokes the mappings), so a rescan or a
// queue wake that races with the removal does not read a revoked ring.
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
#include "libneuron/record.hpp"
#include "libneuron/result.hpp"
#include "libneuron/ring.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// A queue the Reaper drains.
class ReapQueue {
 public:
  virtual ~ReapQueue() = default;
  [[nodiscard]] virtual unsigned core() const noexcept = 0;
  [[nodiscard]] virtual unsigned queue() const noexcept = 0;
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
  /// Reaper watches it for those two conditions only.
  [[nodiscard]] virtual int device_fd() const noexcept { return -1; }
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

/// What reached the reaper: a record (with its core and queue) or an edge.
/// `record` and `event` point into the Reaper's buffers: valid only during
/// the predicate call that receives them (copy what must outlive it; the
/// Completion of a Waiter is such a copy).
struct Arrival {
  unsigned core = 0;
  unsigned queue = 0;
  const Record* record = nullptr;  ///< a record, or
  const Event* event = nullptr;    ///< an interrupt edge
};

/// A copy of the arrival that completed a waiter.
struct Completion {
  unsigned core = 0;
  unsigned queue = 0;
  std::optional<Record> record;
  std::optional<Event> event;
};

enum class WaitStatus {
  Completed,  ///< the predicate accepted an arrival: completion() has it
  TimedOut,   ///< not yet; wait() may be called again
  Stopped,    ///< the reaper stopped before a match
  /// DEVICE_GONE (errc::device_gone): the device was removed (EPOLLHUP/
  /// EPOLLERR) or reset (a RESET edge) before a match; the reaper's thread
  /// has exited (userspace/README.md#device-loss)
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
  };

  struct Options {
    /// Every batch of records drained from one queue, in ring order, on the
    /// reaper thread, before the waiters see them. Must not throw. The span
    /// is the Reaper's buffer, valid only during the call.
    std::function<void(unsigned core, unsigned queue, std::span<const Record>)> on_records;
    /// Every edge read from the event source, on the reaper thread.
    std::function<void(const Event&)> on_event;
    /// Records per drain call.
    std::size_t batch = 256;
    /// Longest sleep before looking at the rings without a wake (a guard
    /// against a lost edge, see the top of this file); 0: never.
    std::chrono::milliseconds rescan{100};
  };

  struct Stats {
    std::uint64_t wakes = 0;         ///< epoll returns with something ready
    std::uint64_t queue_wakes = 0;   ///< queue eventfds found signalled
    std::uint64_t rescans = 0;       ///< looks without a wake (Options::rescan)
    std::uint64_t drains = 0;        ///< drain calls
    std::uint64_t records = 0;
    std::uint64_t late_records = 0;  ///< found by a rescan: an edge was lost
    std::uint64_t events = 0;        ///< edges read from the event source
    std::uint64_t overflow_records = 0;  ///< drained records with software_queue_overflow
    std::uint64_t lost = 0;          ///< records skipped on lossy queues (DrainResult::lost, exact)
    std::uint64_t overwritten = 0;   ///< of those, overwritten before the drain looked (DrainResult::overwritten)
    std::uint64_t resyncs = 0;       ///< lap recoveries (DrainResult::resyncs); the drain went on in the same call
    std::uint64_t completed = 0;     ///< waiters completed
  };

  /// Start the thread. Queues with wake_fd() < 0 are drained on every wake.
  static Result<std::unique_ptr<Reaper>> start(std::vector<std::unique_ptr<ReapQueue>> queues,
                                               std::unique_ptr<EventSource> events, Options opt);
  static Result<std::unique_ptr<Reaper>> start(std::vector<std::unique_ptr<ReapQueue>> queues) {
    return start(std::move(queues), nullptr, Options{});
  }

  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;
  /// stop(), then the queues and the event source are destroyed.
  ~Reaper();

  /// Register a waiter completed by the first arrival `match` accepts from
  /// now on. `match` runs on the reaper thread (under its lock): it may keep
  /// state, must be quick, must not throw and must not call into the Reaper.
  Result<Waiter> expect(Match match) { return expect(std::move(match), Filter{}); }
  Result<Waiter> expect(Match match, Filter filter);

  /// Signal the thread to stop: it drains every queue once more, completes
  /// what matches, then reports Stopped to the remaining waiters. Joins.
  /// Idempotent; after the device went (the thread has exited) it only joins.
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
