// SPDX-License-Identifier: MIT
// A fake notification queue and event stream for Reaper / execute() tests,
// behaving as docs/device-model.md says the device does:
//   * push() writes the body, then the header byte (with the pass's phase)
//     with a release store, then moves TAIL: records appear in order;
//   * backpressure: push() waits while the ring is full (unread == entries)
//     until the consumer's HEAD (published by the doorbell) moves;
//   * the threshold interrupt with coalescing (FakeInterrupt,
//     docs/device-model.md#coalescing): when unread reaches THRESHOLD or
//     coalesce_ns after the first unread record, the eventfd is signalled
//     once and re-armed only by a HEAD write (the drain's doorbell), never
//     by looking again — the same edge rule the Reaper must live with;
//     set_coalescing() changes a live queue as NEURON_IOC_NQ_COALESCE does.
// Producer and consumer may be different threads (ThreadSanitizer-clean).
// Device loss (userspace/README.md#device-loss): a FakeQueue's ring is an
// anonymous mapping that vanish() makes PROT_NONE, as the driver revokes a
// removed device's mappings (a consumer that still reads it faults and the
// test dies), VanishingFd is a descriptor that reports EPOLLHUP or
// EPOLLERR once it vanishes, as a removed device's file does, and
// FakeStatus is a file's status page that end() turns Stale or Gone, as
// the driver's first step of a reset or removal does.
#pragma once

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "libneuron/reaper.hpp"
#include "ring_helpers.hpp"

namespace neuron {
// GoogleTest prints these by name in a failure message (found by ADL).
inline void PrintTo(WaitStatus s, std::ostream* os) { *os << wait_status_name(s); }
inline void PrintTo(const Coalescing& c, std::ostream* os) {
  *os << "{threshold " << c.threshold << ", coalesce_ns " << c.coalesce_ns << "}";
}
}  // namespace neuron

namespace neuron::test {

/// The threshold interrupt of a fake queue, with interrupt coalescing as
/// docs/device-model.md#coalescing says the device raises it:
///   * the count limit: unread records reach `threshold` (> 0);
///   * the time limit: `coalesce_ns` (> 0) after the first unread record;
///   * whichever comes first fires, once, until the next accepted HEAD write;
///   * an accepted HEAD write re-arms it without a count check (only a
///     record or a change makes the count "reach" the threshold), and if it
///     leaves records unread it starts the time limit again;
///   * set() (NEURON_IOC_NQ_COALESCE) re-evaluates at once: records already
///     unread count toward the new limits.
/// It fires only while records are unread (the time limit runs only from an
/// unread record until the HEAD write that leaves none), so every firing is
/// followed by a drain that takes records and re-arms it with its HEAD write.
/// A firing signals the eventfd (if any) and is counted by kind. The owner
/// calls on_record / on_head / set with its own lock held and the unread
/// count taken under it (so a HEAD write cannot fall between the two); the
/// time limit runs on a thread of its own, started with the first time
/// limit (and joined by the destructor).
class FakeInterrupt {
 public:
  explicit FakeInterrupt(Coalescing c, bool with_eventfd = true) : c_(c) {
    if (with_eventfd) efd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (c_.coalesce_ns) start_timer();
  }
  FakeInterrupt(const FakeInterrupt&) = delete;
  FakeInterrupt& operator=(const FakeInterrupt&) = delete;
  ~FakeInterrupt() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (timer_.joinable()) timer_.join();
  }

  [[nodiscard]] int fd() const noexcept { return efd_.get(); }
  [[nodiscard]] Result<UniqueFd> dup_fd() const { return efd_.dup(); }

  /// A record was written; `unread` records now.
  void on_record(std::uint32_t unread) {
    std::lock_guard lk(mu_);
    if (!armed_ || unread == 0) return;
    if (!since_) since_ = clock::now();
    if (c_.threshold && unread >= c_.threshold) fire(false);
    else if (c_.coalesce_ns) cv_.notify_all();
  }
  /// An accepted HEAD write left `unread` records.
  void on_head(std::uint32_t unread) {
    std::lock_guard lk(mu_);
    armed_ = true;
    since_.reset();
    if (unread) since_ = clock::now();
    if (c_.coalesce_ns) cv_.notify_all();
  }
  /// A live change with `unread` records unread.
  void set(Coalescing c, std::uint32_t unread) {
    std::lock_guard lk(mu_);
    c_ = c;
    if (c_.coalesce_ns) start_timer();
    if (armed_ && unread) {
      if (!since_) since_ = clock::now();
      if (c_.threshold && unread >= c_.threshold) fire(false);
    }
    cv_.notify_all();
  }
  [[nodiscard]] Coalescing coalescing() const {
    std::lock_guard lk(mu_);
    return c_;
  }
  /// Signal the eventfd as a firing would, changing nothing else.
  void poke() {
    if (!efd_) return;
    const std::uint64_t one = 1;
    (void)!::write(efd_.get(), &one, sizeof one);
  }
  [[nodiscard]] std::uint64_t count_edges() const { return count_edges_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t time_edges() const { return time_edges_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t edges() const { return count_edges() + time_edges(); }
  /// Whether the next record may fire (no edge since the last HEAD write).
  [[nodiscard]] bool armed() const {
    std::lock_guard lk(mu_);
    return armed_;
  }

 private:
  using clock = std::chrono::steady_clock;
  void fire(bool by_time) {  // mu_ held
    armed_ = false;
    since_.reset();
    (by_time ? time_edges_ : count_edges_).fetch_add(1, std::memory_order_relaxed);
    poke();
  }
  void start_timer() {  // mu_ held or in the constructor
    if (!timer_.joinable()) timer_ = std::thread([this] { run_timer(); });
  }
  void run_timer() {
    std::unique_lock lk(mu_);
    while (!stop_) {
      if (armed_ && since_ && c_.coalesce_ns) {
        const auto due = *since_ + std::chrono::nanoseconds(c_.coalesce_ns);
        if (clock::now() >= due) {
          fire(true);
          continue;
        }
        cv_.wait_until(lk, due);
      } else {
        cv_.wait(lk);
      }
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Coalescing c_;
  bool armed_ = true;
  std::optional<clock::time_point> since_;  // when the time limit started
  bool stop_ = false;
  UniqueFd efd_;
  std::atomic<std::uint64_t> count_edges_{0}, time_edges_{0};
  std::thread timer_;  // last: started after everything it reads
};

/// Ring memory for fakes: an anonymous shared mapping (zeroed, page aligned);
/// revoke() makes it PROT_NONE: any later load faults (SIGSEGV), which
/// catches a drain after the loss (the driver's old mappings no longer
/// fault, docs/decisions/0011-reset-and-recovery.md#mapping-after-reset).
class FakeRing {
 public:
  explicit FakeRing(std::uint32_t entries) {
    const std::size_t len = std::max<std::size_t>(entries * sizeof(Record), 4096);
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap of a fake ring failed");
    map_ = Mapping(p, len);
    recs_ = std::span<Record>(static_cast<Record*>(p), entries);
  }
  [[nodiscard]] std::span<Record> records() const noexcept { return recs_; }
  Record& operator[](std::size_t i) const noexcept { return recs_[i]; }
  /// The device went: the mapping is revoked (PROT_NONE).
  void revoke() { (void)::mprotect(map_.data(), map_.size(), PROT_NONE); }

 private:
  Mapping map_;
  std::span<Record> recs_;
};

/// A descriptor that "vanishes" like a removed device's file of /dev/nnqN.
///   Hup: one end of a socket pair; wake() makes it readable (EPOLLIN),
///        vanish() closes the other end: EPOLLHUP (the device's file
///        reports EPOLLHUP|EPOLLERR);
///   Err: the write end of a pipe (never readable); vanish() closes the
///        read end: EPOLLERR alone.
class VanishingFd {
 public:
  enum class Kind { Hup, Err };
  explicit VanishingFd(Kind kind) : kind_(kind) {
    int fds[2];
    if (kind == Kind::Hup) {
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
        throw std::runtime_error("socketpair");
      mine_.reset(fds[0]);
      other_.reset(fds[1]);
    } else {
      if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
      other_.reset(fds[0]);
      mine_.reset(fds[1]);
    }
  }
  [[nodiscard]] int fd() const noexcept { return mine_.get(); }
  /// Another descriptor of the same file (as each NotificationQueue dup()s
  /// the device's): it hangs up with it.
  [[nodiscard]] UniqueFd dup() const { return mine_.dup().value(); }
  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// Hup: make fd() readable (a byte), as a queued event does.
  void wake() {
    std::lock_guard lk(mu_);
    if (kind_ != Kind::Hup || !other_) return;
    const char c = 1;
    (void)!::write(other_.get(), &c, 1);
  }
  /// Hup: consume what wake() wrote.
  void consume() {
    if (kind_ != Kind::Hup) return;
    char buf[64];
    while (::read(mine_.get(), buf, sizeof buf) > 0) {
    }
  }
  void vanish() {
    std::lock_guard lk(mu_);
    other_.reset();
  }
  [[nodiscard]] bool vanished() {
    std::lock_guard lk(mu_);
    return !other_;
  }

 private:
  Kind kind_;
  UniqueFd mine_, other_;
  std::mutex mu_;
};

/// A file's status page (struct neuron_status_page) as the driver keeps it:
/// Live from the start; end() writes @cause and @generation, then @state
/// with a release store, as neuron_status_end() does. page() is what a
/// NotificationQueue or a FakeQueue holds (StatusPage::over).
class FakeStatus {
 public:
  FakeStatus() {
    page_.state = NEURON_STATUS_LIVE;
    page_.generation = 7;
  }
  FakeStatus(const FakeStatus&) = delete;
  FakeStatus& operator=(const FakeStatus&) = delete;
  [[nodiscard]] const std::shared_ptr<const StatusPage>& page() const noexcept { return view_; }
  /// The reset (NEURON_STATUS_STALE) or removal (NEURON_STATUS_GONE) begins.
  void end(std::uint32_t state, std::uint32_t cause) {
    std::atomic_ref<std::uint32_t>(page_.cause).store(cause, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(page_.generation).store(8, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(page_.state).store(state, std::memory_order_release);
  }

 private:
  alignas(64) neuron_status_page page_{};
  std::shared_ptr<const StatusPage> view_ = StatusPage::over(&page_);
};

class FakeQueue final : public ReapQueue {
 public:
  FakeQueue(unsigned core, unsigned queue, std::uint32_t entries, std::uint32_t threshold, bool with_eventfd = true)
      : FakeQueue(core, queue, entries, Coalescing{threshold, 0}, with_eventfd) {}
  FakeQueue(unsigned core, unsigned queue, std::uint32_t entries, Coalescing c, bool with_eventfd = true)
      : core_(core), queue_(queue), mem_(entries), entries_(entries), irq_(c, with_eventfd) {
    view_ = RingView(std::span<const Record>(mem_.records().data(), entries),
                     Doorbell::callback(&FakeQueue::on_head, this));
  }

  /// Give the queue a "file of /dev/nnqN" (device_fd()) that vanish() ends.
  void attach_device(VanishingFd::Kind kind) { share_device(std::make_shared<VanishingFd>(kind)); }
  /// The same device file as other queues (each holds its own descriptor of
  /// it, as NotificationQueues do).
  void share_device(std::shared_ptr<VanishingFd> dev) {
    dev_fd_ = dev->dup();
    dev_ = std::move(dev);
  }
  /// Any other open file as the queue's "file of /dev/nnqN" (e.g. a real
  /// device node such as /dev/null, whose files share an st_rdev).
  void adopt_device_file(UniqueFd fd) {
    dev_.reset();
    dev_fd_ = std::move(fd);
  }
  int device_fd() const noexcept override { return dev_fd_.get(); }
  /// Give the queue its file's status page (ReapQueue::status_page()); set
  /// before the Reaper starts.
  void share_status(std::shared_ptr<const StatusPage> page) { status_ = std::move(page); }
  const StatusPage* status_page() const noexcept override { return status_.get(); }
  /// Called on the consumer's thread at the end of every drain() with its
  /// result (after the HEAD write, if it took records); set before the
  /// Reaper starts. A test makes records arrive, or the device go, in the
  /// middle of a pass with it.
  void on_drain(std::function<void(const DrainResult&)> fn) { on_drain_ = std::move(fn); }
  /// The eventfd's counter now, read (and so reset) by the test: with the
  /// Reaper, who never reads it, the number of firings so far.
  std::uint64_t take_eventfd_count() {
    std::uint64_t v = 0;
    return ::read(irq_.fd(), &v, sizeof v) == static_cast<ssize_t>(sizeof v) ? v : 0;
  }
  /// N of /dev/nnqN this queue reports (ReapQueue::device()).
  void set_device(std::uint32_t n) { device_ = n; }
  std::uint32_t device() const noexcept override { return device_; }
  void mark_device_gone() noexcept override { marked_gone_.store(true, std::memory_order_release); }
  /// The Reaper called mark_device_gone().
  bool marked_gone() const { return marked_gone_.load(std::memory_order_acquire); }
  /// The device goes, in the driver's order: the file reports the hang-up
  /// to poll() (the driver's first step marks the device dead), then the
  /// ring is revoked (PROT_NONE: a drain that still reads it kills the test).
  void vanish() {
    hang_up();
    revoke_ring();
  }
  /// Only the file hangs up (EPOLLHUP), the ring stays readable.
  void hang_up() {
    if (dev_) dev_->vanish();
  }
  /// Only the ring is revoked (PROT_NONE), as the driver's zap does after
  /// it turned the status page: a reset leaves the file without a hang-up.
  void revoke_ring() { mem_.revoke(); }
  /// Signal the eventfd as a threshold edge would (after vanish(): a wake
  /// that races with the removal).
  void poke() { irq_.poke(); }

  unsigned core() const noexcept override { return core_; }
  unsigned queue() const noexcept override { return queue_; }
  int wake_fd() const noexcept override { return irq_.fd(); }
  std::uint32_t entries() const noexcept override { return entries_; }
  DrainResult drain(std::span<Record> out) noexcept override {
    DrainResult r = view_.drain(out);
    // counted once the drain has looked: drains() > 0 means the first look is over
    drains_.fetch_add(1, std::memory_order_release);
    if (on_drain_) on_drain_(r);
    return r;
  }
  std::optional<std::uint64_t> overflow_count() noexcept override {
    return overflow_.load(std::memory_order_relaxed);
  }
  std::optional<std::uint64_t> drop_count() noexcept override { return drop_.load(std::memory_order_relaxed); }

  /// Interrupt coalescing, as a driver with NEURON_CAP_COALESCE has it
  /// (unless set_adjustable(false): an older driver, nullopt and
  /// errc::not_supported).
  std::optional<Coalescing> coalescing() const noexcept override {
    if (!adjustable_) return std::nullopt;
    return irq_.coalescing();
  }
  /// NEURON_IOC_NQ_COALESCE: the driver's checks (EINVAL), then the live
  /// change; every call is recorded (calls()).
  Status set_coalescing(Coalescing c) noexcept override {
    {
      std::lock_guard lk(mu_);
      calls_.push_back(c);
    }
    if (!adjustable_) return unexpected(errc::not_supported, "NEURON_IOC_NQ_COALESCE (fake): no NEURON_CAP_COALESCE");
    if (c.threshold > entries_ || c.coalesce_ns > NEURON_NQ_COALESCE_NS_MAX)
      return unexpected(Error::from_errno(EINVAL, "NEURON_IOC_NQ_COALESCE (fake)"));
    std::lock_guard lk(mu_);
    irq_.set(c, tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed));
    return {};
  }
  void set_adjustable(bool on) { adjustable_ = on; }
  /// Every set_coalescing() call so far, in order.
  std::vector<Coalescing> calls() const {
    std::lock_guard lk(mu_);
    return calls_;
  }

  /// Producer side (any one thread): write `r` as the next record. The
  /// record, its TAIL move and the interrupt's count are one step for HEAD
  /// writes, as in the device model (all under QEMU's BQL): a consumer that
  /// sees the record before TAIL moves and writes HEAD past it waits, so its
  /// HEAD write is never judged against the old TAIL.
  void push(Record r, std::uint8_t extra_flags = 0) {
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    unsigned spins = 0;
    while (t - head_.load(std::memory_order_acquire) >= entries_) {  // full: backpressure
      if (++spins > 64) std::this_thread::yield();
    }
    std::lock_guard lk(mu_);
    Record& slot = mem_[t & (entries_ - 1)];
    std::memcpy(slot.bytes.data(), r.bytes.data(), 3);
    std::memcpy(slot.bytes.data() + 4, r.bytes.data() + 4, 12);
    const std::uint8_t h =
        static_cast<std::uint8_t>((r.bytes[3] & 0x7f) | extra_flags | (pass_phase(t, entries_) ? 0x80 : 0));
    std::atomic_ref<std::uint8_t>(slot.bytes[3]).store(h, std::memory_order_release);
    tail_.store(t + 1, std::memory_order_release);
    irq_.on_record(t + 1 - head_.load(std::memory_order_relaxed));
  }

  void set_overflow_count(std::uint64_t n) { overflow_.store(n, std::memory_order_relaxed); }
  void set_drop_count(std::uint64_t n) { drop_.store(n, std::memory_order_relaxed); }
  std::uint32_t tail() const { return tail_.load(std::memory_order_acquire); }
  std::uint32_t head() const { return head_.load(std::memory_order_acquire); }
  std::uint64_t drains() const { return drains_.load(std::memory_order_acquire); }
  std::uint64_t edges() const { return irq_.edges(); }
  std::uint64_t count_edges() const { return irq_.count_edges(); }
  std::uint64_t time_edges() const { return irq_.time_edges(); }

 private:
  static void on_head(void* ctx, std::uint32_t head) noexcept {
    auto* q = static_cast<FakeQueue*>(ctx);
    std::lock_guard lk(q->mu_);
    q->head_.store(head, std::memory_order_release);
    q->irq_.on_head(q->tail_.load(std::memory_order_relaxed) - head);  // re-armed; no count check, like the device
  }

  unsigned core_, queue_;
  FakeRing mem_;
  std::uint32_t entries_;
  std::uint32_t device_ = 0;
  std::shared_ptr<VanishingFd> dev_;
  UniqueFd dev_fd_;
  std::shared_ptr<const StatusPage> status_;
  std::function<void(const DrainResult&)> on_drain_;
  std::atomic<bool> marked_gone_{false};
  std::atomic<bool> adjustable_{true};
  RingView view_;
  std::atomic<std::uint32_t> tail_{0}, head_{0};
  std::atomic<std::uint64_t> overflow_{0}, drop_{0}, drains_{0};
  mutable std::mutex mu_;  // HEAD writes vs the interrupt's unread count; calls_
  std::vector<Coalescing> calls_;
  FakeInterrupt irq_;  // last: its timer thread ends before the rest goes
};

/// A lossy (ignore-full) queue as docs/device-model.md says the device runs
/// one, behind a NotificationQueue (NotificationQueue::over):
///   * push() never waits: a record written while TAIL - HEAD >= entries
///     overwrites the oldest slot and carries software_queue_overflow
///     (OVERFLOW_COUNT++); the body (bytes 4..15) is stored first, then the
///     header word with a release store, then TAIL moves;
///   * HEAD is the consumer's: only its doorbell writes move it, accepted iff
///     the new value lies in [HEAD, TAIL], else counted as a BAD_HEAD edge
///     and ignored; an accepted write re-arms the threshold;
///   * info() is NQ_INFO: HEAD, TAIL, OVERFLOW_COUNT.
/// Bodies are stored with relaxed atomics so a consumer's copy of a slot
/// being rewritten is no data race for ThreadSanitizer (the consumer
/// discards such copies; that is what the tests check).
class LossyFake {
 public:
  LossyFake(unsigned core, unsigned queue, std::uint32_t entries, std::uint32_t threshold)
      : core_(core), queue_(queue), mem_(entries), entries_(entries), threshold_(threshold),
        irq_(Coalescing{threshold, 0}) {}

  /// The consumer: a lossy NotificationQueue over this fake.
  NotificationQueue queue() {
    auto wake = irq_.dup_fd();
    auto q = NotificationQueue::over(
        std::span<const Record>(mem_.data(), mem_.size()), Doorbell::callback(&LossyFake::on_head, this),
        [this]() -> Result<NqInfo> { return info(); }, core_, queue_, NEURON_NQ_F_IGNORE_FULL,
        wake ? std::move(wake).value() : UniqueFd());
    return std::move(q).value();
  }

  /// Producer side (one thread): write `r` as the next record.
  /// The record's bytes and its TAIL move are one step for the HEAD check,
  /// as in the device model, where both happen under QEMU's BQL and a HEAD
  /// doorbell write (MMIO, also under the BQL) cannot fall between them: a
  /// consumer may see the record before TAIL moves, and its HEAD write past
  /// it must not be judged against the old TAIL.
  void push(const Record& r) {
    std::lock_guard lk(mu_);
    write_record(r);
    const std::uint64_t before = irq_.edges();
    irq_.on_record(tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed));
    if (irq_.edges() != before) last_edge_tail_ = tail_.load(std::memory_order_relaxed);
  }

  /// NQ_INFO: TAIL as a register read sees it, never inside a record write
  /// (the device model's record write and TAIL move are one step under
  /// QEMU's BQL, as the MMIO read is: docs/device-model.md#lossy-tail).
  NqInfo info() {
    std::lock_guard lk(mu_);
    NqInfo a{};
    a.core = core_;
    a.queue = queue_;
    a.head = head_.load(std::memory_order_acquire);
    a.tail = tail_.load(std::memory_order_acquire);
    a.size = entries_ * static_cast<std::uint32_t>(sizeof(Record));
    a.flags = NEURON_NQ_F_IGNORE_FULL;
    a.threshold = threshold_;
    a.overflow_count = overflow_.load(std::memory_order_relaxed);
    return a;
  }
  std::uint64_t bad_heads() const { return bad_head_.load(std::memory_order_relaxed); }
  std::uint32_t head() const { return head_.load(std::memory_order_acquire); }
  std::uint32_t tail() const { return tail_.load(std::memory_order_acquire); }
  /// The ring as written and its HEAD doorbell, for a consumer written by
  /// hand (test_lossy.cpp's modulo drain); the device's HEAD rule applies.
  std::span<const Record> ring() const { return {mem_.data(), mem_.size()}; }
  Doorbell doorbell() { return Doorbell::callback(&LossyFake::on_head, this); }
  /// For a failure message: HEAD, TAIL, the interrupt's state and the last
  /// HEAD write and edge, each with the TAIL it saw.
  std::string describe() {
    std::lock_guard lk(mu_);
    return "HEAD " + std::to_string(head_.load()) + ", TAIL " + std::to_string(tail_.load()) + ", interrupt " +
           (irq_.armed() ? "armed" : "disarmed") + ", " + std::to_string(irq_.edges()) + " edges, " +
           std::to_string(heads_) + " HEAD writes (last " + std::to_string(last_head_) + " at TAIL " +
           std::to_string(last_head_tail_) + "), last edge at TAIL " + std::to_string(last_edge_tail_);
  }

 private:
  void write_record(const Record& r) {
    std::atomic_thread_fence(std::memory_order_release);  // TAIL so far before this record's bytes
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    std::uint8_t flags = 0;
    if (t - head_.load(std::memory_order_acquire) >= entries_) {
      flags = NEURON_ISA_HEADER_SW_OVF;
      overflow_.fetch_add(1, std::memory_order_relaxed);
    }
    Record& slot = mem_[t & (entries_ - 1)];
    std::uint32_t w1;
    std::uint64_t hi;
    std::memcpy(&w1, r.bytes.data() + 4, 4);
    std::memcpy(&hi, r.bytes.data() + 8, 8);
    __atomic_store_n(reinterpret_cast<std::uint32_t*>(slot.bytes.data() + 4), w1, __ATOMIC_RELAXED);
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(slot.bytes.data() + 8), hi, __ATOMIC_RELAXED);
    std::uint32_t w0;
    std::memcpy(&w0, r.bytes.data(), 4);
    const std::uint8_t h = static_cast<std::uint8_t>((r.bytes[3] & NEURON_ISA_HEADER_TYPE_MASK) | flags |
                                                     (pass_phase(t, entries_) ? NEURON_ISA_HEADER_PHASE : 0));
    w0 = (w0 & 0x00ffffffu) | (static_cast<std::uint32_t>(h) << 24);
    __atomic_store_n(reinterpret_cast<std::uint32_t*>(slot.bytes.data()), w0, __ATOMIC_RELEASE);
    tail_.store(t + 1, std::memory_order_release);
  }

  static void on_head(void* ctx, std::uint32_t v) noexcept {
    auto* f = static_cast<LossyFake*>(ctx);
    std::lock_guard lk(f->mu_);
    const std::uint32_t h = f->head_.load(std::memory_order_relaxed);
    const std::uint32_t t = f->tail_.load(std::memory_order_acquire);
    if (v - h > t - h) {  // the device's HEAD rule: [HEAD, TAIL]
      f->bad_head_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    f->head_.store(v, std::memory_order_release);
    ++f->heads_;
    f->last_head_ = v;
    f->last_head_tail_ = t;
    f->irq_.on_head(t - v);
  }

  unsigned core_, queue_;
  std::vector<Record> mem_;
  std::uint32_t entries_;
  std::uint32_t threshold_;
  std::atomic<std::uint32_t> tail_{0}, head_{0};
  std::atomic<std::uint64_t> overflow_{0}, bad_head_{0};
  std::uint64_t heads_ = 0;  // these three: mu_
  std::uint32_t last_head_ = 0, last_head_tail_ = 0, last_edge_tail_ = 0;
  std::mutex mu_;      // a record and its TAIL move vs HEAD writes (and the interrupt's unread count)
  FakeInterrupt irq_;  // last: its timer thread ends before the rest goes
};

/// Events pushed by a test, read by the Reaper (an eventfd says "look").
/// Made with a VanishingFd kind it can vanish like a removed device's file:
/// its fd reports EPOLLHUP (or EPOLLERR), and read() returns the edges still
/// queued, then ENODEV, as read() of /dev/nnqN does after removal.
class FakeEvents final : public EventSource {
 public:
  FakeEvents() : efd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  explicit FakeEvents(VanishingFd::Kind kind) : dev_(std::in_place, kind) {}
  int fd() const noexcept override { return dev_ ? dev_->fd() : efd_.get(); }
  Result<std::size_t> read(std::span<Event> out) noexcept override {
    if (dev_) {
      dev_->consume();
    } else {
      std::uint64_t v;
      (void)!::read(efd_.get(), &v, sizeof v);
    }
    std::lock_guard lk(mu_);
    std::size_t n = 0;
    while (n < out.size() && !q_.empty()) {
      out[n++] = q_.front();
      q_.pop_front();
    }
    if (n == 0 && gone_) return unexpected(Error::from_errno(ENODEV, "read events (fake)"));
    if (!q_.empty()) look();
    return n;
  }
  void push(const Event& e) {
    {
      std::lock_guard lk(mu_);
      q_.push_back(e);
    }
    look();
  }
  /// The device goes: the fd reports the hang-up (Hup or Err kind only).
  void vanish() {
    {
      std::lock_guard lk(mu_);
      gone_ = true;
    }
    if (dev_) dev_->vanish();
  }

 private:
  void look() {
    if (dev_) {
      dev_->wake();
      return;
    }
    const std::uint64_t one = 1;
    (void)!::write(efd_.get(), &one, sizeof one);
  }
  UniqueFd efd_;
  std::optional<VanishingFd> dev_;
  std::mutex mu_;
  std::deque<Event> q_;
  bool gone_ = false;
};

}  // namespace neuron::test
