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
  std::atomic<std::uint64_t> overflow_{0}, drains_{0}, edges_{0};
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
