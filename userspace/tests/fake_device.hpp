// SPDX-License-Identifier: MIT
// A fake notification queue and event stream for Reaper / execute() tests,
// behaving as docs/device-model.md says the device does:
//   * push() writes the body, then the header byte (with the pass's phase)
//     with a release store, then moves TAIL: records appear in order;
//   * backpressure: push() waits while the ring is full (unread == entries)
//     until the consumer's HEAD (published by the doorbell) moves;
//   * THRESHOLD: when unread reaches it, the eventfd is signalled once and
//     the threshold is re-armed only by a HEAD write (the drain's doorbell),
//     never by looking again — the same edge rule the Reaper must live with.
// Producer and consumer may be different threads (ThreadSanitizer-clean).
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "libneuron/reaper.hpp"

namespace neuron::test {

class FakeQueue final : public ReapQueue {
 public:
  FakeQueue(unsigned core, unsigned queue, std::uint32_t entries, std::uint32_t threshold, bool with_eventfd = true)
      : core_(core), queue_(queue), mem_(entries), entries_(entries), threshold_(threshold) {
    if (with_eventfd) efd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    view_ = RingView(std::span<const Record>(mem_.data(), mem_.size()), Doorbell::callback(&FakeQueue::on_head, this));
  }

  unsigned core() const noexcept override { return core_; }
  unsigned queue() const noexcept override { return queue_; }
  int wake_fd() const noexcept override { return efd_.get(); }
  DrainResult drain(std::span<Record> out) noexcept override {
    drains_.fetch_add(1, std::memory_order_relaxed);
    return view_.drain(out);
  }
  std::optional<std::uint64_t> overflow_count() noexcept override {
    return overflow_.load(std::memory_order_relaxed);
  }
  std::optional<std::uint64_t> drop_count() noexcept override { return drop_.load(std::memory_order_relaxed); }

  /// Producer side (any one thread): write `r` as the next record.
  void push(Record r, std::uint8_t extra_flags = 0) {
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    unsigned spins = 0;
    while (t - head_.load(std::memory_order_acquire) >= entries_) {  // full: backpressure
      if (++spins > 64) std::this_thread::yield();
    }
    Record& slot = mem_[t & (entries_ - 1)];
    std::memcpy(slot.bytes.data(), r.bytes.data(), 3);
    std::memcpy(slot.bytes.data() + 4, r.bytes.data() + 4, 12);
    const std::uint8_t h = static_cast<std::uint8_t>((r.bytes[3] & 0x7f) | extra_flags | (phase_of(t) ? 0x80 : 0));
    std::atomic_ref<std::uint8_t>(slot.bytes[3]).store(h, std::memory_order_release);
    tail_.store(t + 1, std::memory_order_release);
    check_threshold();
  }

  void set_overflow_count(std::uint64_t n) { overflow_.store(n, std::memory_order_relaxed); }
  void set_drop_count(std::uint64_t n) { drop_.store(n, std::memory_order_relaxed); }
  std::uint32_t tail() const { return tail_.load(std::memory_order_acquire); }
  std::uint64_t drains() const { return drains_.load(std::memory_order_relaxed); }
  std::uint64_t edges() const { return edges_.load(std::memory_order_relaxed); }

 private:
  bool phase_of(std::uint32_t count) const {
    unsigned shift = 0;
    while ((1u << shift) < entries_) ++shift;
    return RingView::phase_of(count, shift);
  }
  // The threshold interrupt: once, when unread reaches it; a HEAD write re-arms.
  void check_threshold() {
    if (threshold_ == 0) return;
    std::lock_guard lk(mu_);
    if (!fired_ && tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed) >= threshold_) {
      fired_ = true;
      edges_.fetch_add(1, std::memory_order_relaxed);
      if (efd_) {
        const std::uint64_t one = 1;
        (void)!::write(efd_.get(), &one, sizeof one);
      }
    }
  }
  static void on_head(void* ctx, std::uint32_t head) noexcept {
    auto* q = static_cast<FakeQueue*>(ctx);
    std::lock_guard lk(q->mu_);
    q->head_.store(head, std::memory_order_release);
    q->fired_ = false;  // re-armed; no check here, like the device
  }

  unsigned core_, queue_;
  std::vector<Record> mem_;
  std::uint32_t entries_;
  std::uint32_t threshold_;
  UniqueFd efd_;
  RingView view_;
  std::atomic<std::uint32_t> tail_{0}, head_{0};
  std::atomic<std::uint64_t> overflow_{0}, drop_{0}, drains_{0}, edges_{0};
  std::mutex mu_;
  bool fired_ = false;
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
        efd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

  /// The consumer: a lossy NotificationQueue over this fake.
  NotificationQueue queue() {
    auto wake = efd_.dup();
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
    {
      std::lock_guard lk(mu_);
      write_record(r);
    }
    check_threshold();
  }

  NqInfo info() {
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
                                                     (phase_of(t) ? NEURON_ISA_HEADER_PHASE : 0));
    w0 = (w0 & 0x00ffffffu) | (static_cast<std::uint32_t>(h) << 24);
    __atomic_store_n(reinterpret_cast<std::uint32_t*>(slot.bytes.data()), w0, __ATOMIC_RELEASE);
    tail_.store(t + 1, std::memory_order_release);
  }

  bool phase_of(std::uint32_t count) const {
    unsigned shift = 0;
    while ((1u << shift) < entries_) ++shift;
    return RingView::phase_of(count, shift);
  }
  void check_threshold() {
    if (threshold_ == 0) return;
    std::lock_guard lk(mu_);
    if (!fired_ && tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed) >= threshold_) {
      fired_ = true;
      const std::uint64_t one = 1;
      (void)!::write(efd_.get(), &one, sizeof one);
    }
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
    f->fired_ = false;
  }

  unsigned core_, queue_;
  std::vector<Record> mem_;
  std::uint32_t entries_;
  std::uint32_t threshold_;
  UniqueFd efd_;
  std::atomic<std::uint32_t> tail_{0}, head_{0};
  std::atomic<std::uint64_t> overflow_{0}, bad_head_{0};
  std::mutex mu_;
  bool fired_ = false;
};

/// Events pushed by a test, read by the Reaper (an eventfd says "look").
class FakeEvents final : public EventSource {
 public:
  FakeEvents() : efd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  int fd() const noexcept override { return efd_.get(); }
  Result<std::size_t> read(std::span<Event> out) noexcept override {
    std::uint64_t v;
    (void)!::read(efd_.get(), &v, sizeof v);
    std::lock_guard lk(mu_);
    std::size_t n = 0;
    while (n < out.size() && !q_.empty()) {
      out[n++] = q_.front();
      q_.pop_front();
    }
    if (!q_.empty()) {
      const std::uint64_t one = 1;
      (void)!::write(efd_.get(), &one, sizeof one);
    }
    return n;
  }
  void push(const Event& e) {
    {
      std::lock_guard lk(mu_);
      q_.push_back(e);
    }
    const std::uint64_t one = 1;
    (void)!::write(efd_.get(), &one, sizeof one);
  }

 private:
  UniqueFd efd_;
  std::mutex mu_;
  std::deque<Event> q_;
};

}  // namespace neuron::test
