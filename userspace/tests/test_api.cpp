// SPDX-License-Identifier: MIT
// The API contract (userspace/README.md#api-contract): NotificationQueue::
// wait() and wait_any() (the drain-then-sleep rule), moved-from objects,
// Result misuse in release builds, the C API without a device.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "device_access.hpp"
#include "libneuron/device.hpp"
#include "libneuron/neuron.h"
#include "libneuron/result.hpp"
#include "libneuron/version.hpp"

using namespace neuron;
using namespace std::chrono_literals;

namespace {

// A backpressured queue as docs/device-model.md says the device runs one,
// behind NotificationQueue::over(): records appear in order (body, then the
// header with the pass's phase, then TAIL); THRESHOLD raises the eventfd
// once when unread reaches it, and only a HEAD write (the doorbell) re-arms
// it, without looking again.
class ThresholdFake {
 public:
  explicit ThresholdFake(std::uint32_t entries, std::uint32_t threshold = 1, bool with_eventfd = true)
      : mem_(entries), entries_(entries), threshold_(threshold) {
    if (with_eventfd) efd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  }

  NotificationQueue queue(unsigned core = 0, unsigned queue = 1) {
    UniqueFd wake;
    if (efd_) wake = std::move(efd_.dup()).value();
    auto q = NotificationQueue::over(
        std::span<const Record>(mem_.data(), mem_.size()), Doorbell::callback(&ThresholdFake::on_head, this),
        [this]() -> Result<NqInfo> {
          NqInfo a{};
          a.head = head_.load();
          a.tail = tail_.load();
          return a;
        },
        core, queue, 0, std::move(wake));
    return std::move(q).value();
  }

  // An EXPLICIT record of PE (notific_type 0x06) with debug_hint_extended `ext`.
  void push(std::uint16_t ext) {
    const std::uint32_t t = tail_.load();
    ASSERT_LT(t - head_.load(), entries_) << "the test overfilled its fake queue";
    Record& slot = mem_[t & (entries_ - 1)];
    slot.bytes[0] = static_cast<std::uint8_t>(ext);
    slot.bytes[1] = static_cast<std::uint8_t>(ext >> 8);
    const bool phase = RingView::phase_of(t, shift());
    std::atomic_ref<std::uint8_t>(slot.bytes[3]).store(static_cast<std::uint8_t>(0x06 | (phase ? 0x80 : 0)),
                                                       std::memory_order_release);
    tail_.store(t + 1);
    std::lock_guard lk(mu_);
    if (!fired_ && tail_.load() - head_.load() >= threshold_) {
      fired_ = true;
      ++edges_;
      const std::uint64_t one = 1;
      if (efd_) (void)!::write(efd_.get(), &one, sizeof one);
    }
  }

  std::uint32_t head() const { return head_.load(); }
  int head_writes() const { return head_writes_.load(); }
  int efd() const { return efd_.get(); }

 private:
  unsigned shift() const {
    unsigned s = 0;
    while ((1u << s) < entries_) ++s;
    return s;
  }
  static void on_head(void* ctx, std::uint32_t head) noexcept {
    auto* f = static_cast<ThresholdFake*>(ctx);
    std::lock_guard lk(f->mu_);
    f->head_.store(head);
    f->head_writes_.fetch_add(1);
    f->fired_ = false;  // re-armed; no new edge for records already unread
  }

  std::vector<Record> mem_;
  std::uint32_t entries_, threshold_;
  UniqueFd efd_;
  std::atomic<std::uint32_t> head_{0}, tail_{0};
  std::atomic<int> head_writes_{0};
  std::mutex mu_;
  bool fired_ = false;
  int edges_ = 0;
};

std::uint16_t ext_of(const Record& r) { return static_cast<std::uint16_t>(r.bytes[0] | r.bytes[1] << 8); }

}  // namespace

// ------------------------------------------------------------------ wait()
TEST(Wait, ReturnsWaitingRecordsAtOnce) {
  ThresholdFake f(16);
  auto q = f.queue();
  f.push(0x101);
  f.push(0x102);
  f.push(0x103);
  std::vector<Record> out(8);
  auto w = q.wait(out, 10s);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->status, WaitResult::Status::Records);
  ASSERT_EQ(w->drain.count, 3u);
  EXPECT_EQ(ext_of(out[0]), 0x101);
  EXPECT_EQ(ext_of(out[2]), 0x103);
  EXPECT_EQ(f.head(), 3u);
}

TEST(Wait, TimesOutOnAnEmptyQueue) {
  ThresholdFake f(16);
  auto q = f.queue();
  std::vector<Record> out(8);
  auto w = q.wait(out, 20ms);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->status, WaitResult::Status::TimedOut);
  EXPECT_EQ(w->drain.count, 0u);
  EXPECT_STREQ(wait_result_name(w->status), "timed out");
}

// The rule itself: records left unread after a HEAD write raise no new
// edge (the threshold re-arms without looking), so wait() must drain before
// it sleeps. Two records, room for one per call: the second wait() finds the
// second record with the eventfd silent.
TEST(Wait, DrainsBeforeSleepingWhenRecordsRaiseNoEdge) {
  ThresholdFake f(16);
  auto q = f.queue();
  f.push(0x201);
  f.push(0x202);
  // Not a speed figure: a wait() that sleeps first returns only when its
  // 20 s timeout ends (its last drain then finds the record), one that
  // drains first within milliseconds; 10 s tells the two apart on any load.
  std::vector<Record> one(1);
  const auto t0 = std::chrono::steady_clock::now();
  auto w1 = q.wait(one, 20s);
  ASSERT_TRUE(w1);
  ASSERT_EQ(w1->drain.count, 1u);
  EXPECT_EQ(ext_of(one[0]), 0x201);
  auto w2 = q.wait(one, 20s);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  ASSERT_TRUE(w2);
  ASSERT_EQ(w2->status, WaitResult::Status::Records);
  EXPECT_EQ(ext_of(one[0]), 0x202);
  EXPECT_LT(ms.count(), 10000) << "wait() slept on the eventfd with a record waiting (" << ms.count() << " ms)";
}

TEST(Wait, SleepsUntilTheProducerWrites) {
  ThresholdFake f(16);
  auto q = f.queue();
  std::vector<Record> out(8);
  std::thread producer([&] {
    std::this_thread::sleep_for(30ms);
    f.push(0x301);
  });
  auto w = q.wait(out, 30s);
  producer.join();
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->status, WaitResult::Status::Records);
  ASSERT_EQ(w->drain.count, 1u);
  EXPECT_EQ(ext_of(out[0]), 0x301);
}

// Issue 25 item 5: now + timeout saturates. A timeout at the end of the
// range (LLONG_MAX ns, what libneuron_queue_wait passes for LLONG_MAX) used
// to overflow into the past and return TimedOut after one empty drain; it
// must sleep until the record comes (30 ms later, from another thread).
TEST(Wait, TimeoutsAtTheEndOfTheRangeSleepUntilARecord) {
  for (const std::chrono::nanoseconds t :
       {std::chrono::nanoseconds(LLONG_MAX), std::chrono::nanoseconds(LLONG_MAX - 1),
        std::chrono::nanoseconds(LLONG_MAX / 2), std::chrono::nanoseconds(std::chrono::hours(24 * 365 * 300))}) {
    ThresholdFake f(16);
    auto q = f.queue();
    std::vector<Record> out(8);
    std::thread producer([&] {
      std::this_thread::sleep_for(30ms);
      f.push(0x305);
    });
    auto w = q.wait(out, t);
    producer.join();
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(w->status, WaitResult::Status::Records) << "timeout " << t.count() << " ns";
    ASSERT_EQ(w->drain.count, 1u);
    EXPECT_EQ(ext_of(out[0]), 0x305);
  }
}

TEST(Wait, ZeroTimeoutDrainsOnceWithoutAnEventfd) {
  ThresholdFake f(16, 1, /*with_eventfd=*/false);
  auto q = f.queue();
  std::vector<Record> out(8);
  auto w = q.wait(out, 0ns);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->status, WaitResult::Status::TimedOut);
  f.push(0x401);
  w = q.wait(out, 0ns);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->drain.count, 1u);
}

TEST(Wait, NoEventfdToSleepOnIsInvalidArgument) {
  ThresholdFake f(16, 1, /*with_eventfd=*/false);
  auto q = f.queue(2, 3);
  std::vector<Record> out(8);
  auto w = q.wait(out, 10ms);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, make_error_code(errc::invalid_argument));
  EXPECT_NE(w.error().message().find("core 2 queue 3: no eventfd"), std::string::npos) << w.error().message();
  std::vector<Record> none;
  auto e = q.wait(none, 10ms);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("out is empty"), std::string::npos) << e.error().message();
}

// ------------------------------------------------------------------ wait_any()
TEST(WaitAny, ReturnsTheQueueThatHasRecords) {
  ThresholdFake a(16), b(16);
  auto qa = a.queue(0, 1);
  auto qb = b.queue(1, 1);
  b.push(0x501);
  NotificationQueue* set[] = {&qa, &qb};
  std::vector<Record> out(8);
  auto w = NotificationQueue::wait_any(set, out, 10s);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->status, WaitResult::Status::Records);
  EXPECT_EQ(w->index, 1u);
  ASSERT_EQ(w->drain.count, 1u);
  EXPECT_EQ(ext_of(out[0]), 0x501);
}

TEST(WaitAny, StartServesRoundRobin) {
  ThresholdFake a(16), b(16);
  auto qa = a.queue(0, 1);
  auto qb = b.queue(1, 1);
  a.push(0x601);
  b.push(0x602);
  NotificationQueue* set[] = {&qa, &qb};
  std::vector<Record> out(8);
  auto w = NotificationQueue::wait_any(set, out, 10s, 1);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->index, 1u);
  EXPECT_EQ(ext_of(out[0]), 0x602);
  w = NotificationQueue::wait_any(set, out, 10s, w->index + 1);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->index, 0u);
  EXPECT_EQ(ext_of(out[0]), 0x601);
}

TEST(WaitAny, SleepsOnEveryQueue) {
  ThresholdFake a(16), b(16);
  auto qa = a.queue(0, 1);
  auto qb = b.queue(1, 1);
  NotificationQueue* set[] = {&qa, &qb};
  std::vector<Record> out(8);
  std::thread producer([&] {
    std::this_thread::sleep_for(30ms);
    b.push(0x701);
  });
  auto w = NotificationQueue::wait_any(set, out, 30s);
  producer.join();
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->status, WaitResult::Status::Records);
  EXPECT_EQ(w->index, 1u);
  auto t = NotificationQueue::wait_any(set, out, 10ms);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->status, WaitResult::Status::TimedOut);
}

TEST(WaitAny, BadSetsAreInvalidArgument) {
  std::vector<Record> out(8);
  auto e = NotificationQueue::wait_any({}, out, 10ms);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, make_error_code(errc::invalid_argument));
  EXPECT_NE(e.error().message().find("empty set"), std::string::npos);
  ThresholdFake a(16);
  auto qa = a.queue();
  NotificationQueue* set[] = {&qa, nullptr};
  auto n = NotificationQueue::wait_any(set, out, 10ms);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message().find("queue pointer 1 is null"), std::string::npos) << n.error().message();
}

// ------------------------------------------------------------------ moved-from objects
TEST(MovedFrom, QueueIsInertAndLeavesTheOtherMappingAlone) {
  ThresholdFake f(16);
  auto q1 = f.queue(0, 1);
  f.push(0x801);
  f.push(0x802);
  NotificationQueue q2 = std::move(q1);
  std::vector<Record> out(8);
  // NOLINTBEGIN(bugprone-use-after-move): that is the test
  EXPECT_FALSE(q1.valid());
  const DrainResult r = q1.drain(out);
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(r.error, make_error_code(errc::moved_from));
  int calls = 0;
  const DrainResult fe = q1.for_each([&](const Record&) { ++calls; });
  EXPECT_EQ(fe.error, make_error_code(errc::moved_from));
  EXPECT_EQ(calls, 0);
  auto w = q1.wait(out, 10ms);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, make_error_code(errc::moved_from));
  auto i = q1.info();
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error().code, make_error_code(errc::moved_from));
  EXPECT_FALSE(q1.bind_eventfd(-1));
  EXPECT_EQ(q1.wake_fd(), -1);
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(f.head_writes(), 0) << "the moved-from queue wrote the other queue's doorbell";
  EXPECT_EQ(f.head(), 0u);
  // the records are still there for the queue that owns the ring now
  const DrainResult r2 = q2.drain(out);
  EXPECT_FALSE(r2.error);
  ASSERT_EQ(r2.count, 2u);
  EXPECT_EQ(ext_of(out[0]), 0x801);
}

TEST(MovedFrom, MoveAssignmentToo) {
  ThresholdFake f(16), g(16);
  auto q1 = f.queue(0, 1);
  auto q2 = g.queue(1, 1);
  f.push(0x901);
  q2 = std::move(q1);
  std::vector<Record> out(8);
  EXPECT_EQ(q1.drain(out).error, make_error_code(errc::moved_from));  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(f.head_writes(), 0);
  ASSERT_EQ(q2.drain(out).count, 1u);
  EXPECT_EQ(ext_of(out[0]), 0x901);
}

TEST(MovedFrom, DeviceHoldsNoDescriptor) {
  auto d1 = neuron::test::DeviceAccess::open_any("/dev/null");  // its ioctls fail with ENOTTY
  ASSERT_TRUE(d1) << d1.error().message();
  Device d2 = std::move(d1).value();
  Device d3 = std::move(d2);
  EXPECT_EQ(d2.fd(), -1);  // NOLINT(bugprone-use-after-move)
  auto i2 = d2.info();    // NOLINT(bugprone-use-after-move)
  ASSERT_FALSE(i2);
  EXPECT_EQ(i2.error().code, std::errc::bad_file_descriptor) << i2.error().message();
  EXPECT_NE(i2.error().message().find("NEURON_IOC_DEVICE_INFO"), std::string::npos);
  auto i3 = d3.info();  // the live one reached its file
  ASSERT_FALSE(i3);
  EXPECT_EQ(i3.error().code, std::errc::inappropriate_io_control_operation) << i3.error().message();
}

TEST(MovedFrom, MappingAndFd) {
  const int fd = ::memfd_create("nnq-api-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  UniqueFd f1(fd);
  ASSERT_EQ(::ftruncate(f1.get(), 4096), 0);
  auto m = Mapping::map(f1.get(), 4096, PROT_READ | PROT_WRITE, 0, "memfd");
  ASSERT_TRUE(m) << m.error().message();
  Mapping m1 = std::move(m).value();
  static_cast<char*>(m1.data())[0] = 'x';
  Mapping m2 = std::move(m1);
  EXPECT_EQ(m1.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(m1.size(), 0u);       // NOLINT(bugprone-use-after-move)
  m1.reset();                     // NOLINT(bugprone-use-after-move): unmaps nothing
  EXPECT_EQ(static_cast<char*>(m2.data())[0], 'x');
  UniqueFd f2 = std::move(f1);
  EXPECT_EQ(f1.get(), -1);  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(f1.dup());   // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(f2.dup());
}

// ------------------------------------------------------------------ Result misuse
// Misuse throws whether or not NDEBUG is defined (RelWithDebInfo defines it,
// the package flags of `make userspace` do not): no assert() catches these.
TEST(ResultMisuse, ValueOnAnErrorThrows) {
  Result<int> bad = unexpected(Error::from_errno(EBUSY, "NEURON_IOC_NQ_INIT core=0 queue=3"));
  try {
    (void)bad.value();
    FAIL() << "value() on an error returned";
  } catch (const BadResultAccess& e) {
    EXPECT_EQ(std::string(e.what()),
              "neuron::Result::value() on an error: NEURON_IOC_NQ_INIT core=0 queue=3: Device or resource busy");
    EXPECT_EQ(e.error().code, std::errc::device_or_resource_busy);
  }
  EXPECT_THROW((void)*bad, BadResultAccess);
  EXPECT_THROW((void)std::move(bad).value(), BadResultAccess);
  const Result<std::string> cbad = unexpected(errc::parse_error, "x.nq:1");
  EXPECT_THROW((void)cbad->size(), BadResultAccess);
  EXPECT_THROW((void)cbad.value(), std::logic_error);  // BadResultAccess is a std::logic_error
}

TEST(ResultMisuse, ErrorOnAValueThrows) {
  Result<int> ok = 7;
  EXPECT_THROW((void)ok.error(), BadResultAccess);
  EXPECT_THROW((void)std::move(ok).error(), BadResultAccess);
  Status s;
  EXPECT_THROW((void)s.error(), BadResultAccess);
  EXPECT_NO_THROW(s.value());
  Status f = unexpected(errc::not_supported, "FEATURE_FLAGS");
  EXPECT_THROW(f.value(), BadResultAccess);
}

// ------------------------------------------------------------------ the C API, no device
// SEQUENCER_NONFATAL, metadata_lo 0x0835, header 0x9f, metadata_hi 0x005c1a42
// (the record userspace/tests/install/main.cpp decodes): "DGE OOB on POOL at pc 0x1a4".
TEST(CApi, DecodesARecord) {
  libneuron_record r{{0x09, 0x35, 0x08, 0x9f, 0x42, 0x1a, 0x5c, 0, 0x10, 0, 0, 0, 0, 0, 0, 0}};
  libneuron_decoded d{};
  ASSERT_EQ(libneuron_record_decode(&r, -1, &d), 0);
  EXPECT_EQ(d.kind, static_cast<std::uint32_t>(LIBNEURON_KIND_TPB_ERROR));
  EXPECT_EQ(d.notific_type, 0x1f);
  EXPECT_EQ(d.phase, 1);
  EXPECT_EQ(d.error_id, 0x09u);
  EXPECT_EQ(d.program_counter, 0x1a4u);
  EXPECT_EQ(d.timestamp_ps, 0x10u);
  EXPECT_NE(std::strstr(d.text, "DGE OOB on POOL at pc 0x1a4"), nullptr) << d.text;
  // an EXPLICIT record of ACT (0x0a): debug_hint_extended 0x1234 at bytes 0..1
  libneuron_record e{{0x34, 0x12, 0x00, 0x8a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  ASSERT_EQ(libneuron_record_decode(&e, 1, &d), 0);
  EXPECT_EQ(d.kind, static_cast<std::uint32_t>(LIBNEURON_KIND_EXPLICIT));
  EXPECT_EQ(d.engine, 1);
}

TEST(CApi, BadArgumentsNameTheArgument) {
  libneuron_decoded d{};
  EXPECT_EQ(libneuron_record_decode(nullptr, -1, &d), -EINVAL);
  EXPECT_STREQ(libneuron_last_error(), "libneuron_record_decode: rec is NULL");
  libneuron_device* dev = reinterpret_cast<libneuron_device*>(&d);
  EXPECT_EQ(libneuron_device_open("/dev/nnq-none", &dev), -ENOENT);
  EXPECT_EQ(dev, nullptr);
  EXPECT_NE(std::string(libneuron_last_error()).find("open /dev/nnq-none"), std::string::npos)
      << libneuron_last_error();
  // not a node of the driver: refused (a libneuron_device over /dev/null,
  // for the calls' own errors: test_c_api_internal.cpp)
  EXPECT_EQ(libneuron_device_open("/dev/null", &dev), -ENOTTY);
  EXPECT_EQ(dev, nullptr);
  libneuron_record out[4];
  EXPECT_EQ(libneuron_queue_drain(nullptr, out, 4, nullptr), -EINVAL);
  EXPECT_EQ(libneuron_queue_wait(nullptr, out, 4, 0, nullptr), -EINVAL);
  EXPECT_EQ(libneuron_queue_fd(nullptr), -EINVAL);
  libneuron_device_close(dev);
  libneuron_device_close(nullptr);
  libneuron_queue_destroy(nullptr);
}

// The run-time version (userspace/README.md#versions): the C and C++ calls
// agree with each other and with the headers of this build tree.
TEST(Api, VersionOfTheLoadedLibrary) {
  const neuron::Version v = neuron::version();
  EXPECT_EQ(v, neuron::kHeaderVersion);
  const libneuron_version_info c = libneuron_version();
  const neuron::Version from_c{c.major, c.minor, c.patch}, older{0, 0, 9};
  EXPECT_EQ(from_c, v);
  EXPECT_LT(older, v);
}

// A read-only open of something that is not there fails like open() does,
// naming the mode (userspace/README.md#api-contract "Read-only opens").
TEST(Api, OpenReadOnlyErrors) {
  auto d = neuron::Device::open_read_only("/dev/nnq-no-such-node");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, std::errc::no_such_file_or_directory);
  EXPECT_EQ(d.error().message(), "open (read-only) /dev/nnq-no-such-node: No such file or directory");
}
