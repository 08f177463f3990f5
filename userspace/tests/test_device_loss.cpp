// SPDX-License-Identifier: MIT
//
// Device loss (userspace/README.md#device-loss,
// docs/decisions/0027-device-loss.md) on fakes that vanish the way a removed
// device does: the rings are revoked first (PROT_NONE: a drain that still reads
// one kills this test with SIGSEGV; the driver's old mappings no longer fault,
// so this is stricter than the device), then the file reports
// EPOLLHUP or EPOLLERR and read() gives ENODEV after the queued edges.
// Checked: every waiter completes with DeviceGone within 1 s, the Reaper's
// thread exits and uses no CPU afterwards, no ring is read after the loss,
// NotificationQueue's drain/for_each return device_gone without touching the
// mapping, and NQ_INFO failing with ENODEV/EIO marks a queue gone.
#include <dirent.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <array>
#include <string>
#include <thread>
#include <vector>

#include "fake_device.hpp"
#include "libneuron/device.hpp"
#include "libneuron/reaper.hpp"

using namespace neuron;
using neuron::test::FakeEvents;
using neuron::test::FakeQueue;
using neuron::test::FakeRing;
using neuron::test::FakeStatus;
using neuron::test::VanishingFd;
using neuron::test::seq_of;
using neuron::test::seq_record;
using neuron::test::wait_until;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

/// Record number `seq` (bytes 8..15) of SP's EXPLICIT type.
Record sp_rec(std::uint64_t seq) {
  return seq_record(seq, NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_SP, NEURON_ENGINE_RECORD_EXPLICIT));
}

/// Threads of this process now (/proc/self/task entries).
int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

/// CPU time of the whole process (user + system).
std::chrono::microseconds process_cpu() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return std::chrono::seconds(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         std::chrono::microseconds(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/// `n` threads blocked in Waiter::wait on a predicate nothing satisfies; each
/// notes its status and when wait() returned.
struct Waiters {
  struct One {
    WaitStatus status = WaitStatus::TimedOut;
    steady::time_point done{};
  };
  std::vector<One> out;
  std::vector<std::thread> threads;
  std::atomic<int> waiting{0};

  Waiters(Reaper& r, int n) : out(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i) {
      auto w = r.expect([](const Arrival&) { return false; });
      EXPECT_TRUE(w);
      threads.emplace_back([this, i, w = std::move(w).value()]() mutable {
        waiting.fetch_add(1);
        out[static_cast<std::size_t>(i)].status = w.wait(10s);
        out[static_cast<std::size_t>(i)].done = steady::now();
      });
    }
    EXPECT_TRUE(wait_until([&] { return waiting.load() == n; }, 5s));
  }
  void join() {
    for (auto& t : threads) t.join();
    threads.clear();
  }
};

struct Rig {
  std::vector<FakeQueue*> q;
  FakeEvents* ev = nullptr;
  std::unique_ptr<Reaper> reaper;
};

/// Three fake queues (threshold 1, eventfd) and an event source of `kind`
/// (nullopt: none), started as a Reaper; one record per queue delivered
/// first, so the rig is known to work before the device goes.
Rig start_rig(std::optional<VanishingFd::Kind> kind, Reaper::Options opt, bool queue_files = false) {
  Rig rig;
  std::vector<std::unique_ptr<ReapQueue>> qs;
  for (unsigned i = 0; i < 3; ++i) {
    auto p = std::make_unique<FakeQueue>(0, i, 16, 1);
    if (queue_files) p->attach_device(VanishingFd::Kind::Hup);
    rig.q.push_back(p.get());
    qs.push_back(std::move(p));
  }
  std::unique_ptr<EventSource> events;
  if (kind) {
    auto e = std::make_unique<FakeEvents>(*kind);
    rig.ev = e.get();
    events = std::move(e);
  }
  auto r = Reaper::start(std::move(qs), std::move(events), std::move(opt));
  EXPECT_TRUE(r) << r.error().message();
  rig.reaper = std::move(r).value();
  auto w = rig.reaper->expect([](const Arrival& a) { return a.record && a.record->u64(8) == 102; });
  EXPECT_TRUE(w);
  for (unsigned i = 0; i < 3; ++i) rig.q[i]->push(sp_rec(100 + i));
  EXPECT_EQ(WaitStatus::Completed, w->wait(5s));
  return rig;
}

}  // namespace

TEST(DeviceLoss, HangupCompletesEveryWaiterWithDeviceGoneAndTheThreadExits) {
  // ThreadSanitizer starts a helper thread with the process's first thread:
  // start and join one first, so it is already in the count; join()
  // returns before the kernel drops the joined thread from /proc/self/task,
  // so wait for its entry to go (it was counted once in 20 TSan runs)
  long helper = 0;
  std::thread([&] { helper = ::syscall(SYS_gettid); }).join();
  const std::string helper_task = "/proc/self/task/" + std::to_string(helper);
  EXPECT_TRUE(wait_until([&] { return ::access(helper_task.c_str(), F_OK) != 0; }, 5s));
  const int threads_before = thread_count();
  Reaper::Options opt;
  opt.rescan = 100ms;  // the default: a rescan after the loss would read a revoked ring
  Rig rig = start_rig(VanishingFd::Kind::Hup, opt);
  EXPECT_EQ(threads_before + 1, thread_count()) << "the reaper's thread";
  EXPECT_TRUE(rig.reaper->running());
  Waiters ws(*rig.reaper, 4);
  const auto drains_before = rig.reaper->stats().drains;

  const auto t0 = steady::now();
  rig.ev->vanish();  // the file hangs up (the driver's first step)
  ws.join();
  // the rings go PROT_NONE once the loss is declared: a read after it
  // faults (before it, the pass that completed start_rig's waiter may still
  // be reading, as the driver allows:
  // docs/decisions/0011-reset-and-recovery.md#mapping-after-reset)
  for (auto* q : rig.q) q->vanish();
  for (const auto& o : ws.out) {
    EXPECT_EQ(WaitStatus::DeviceGone, o.status) << wait_status_name(o.status);
    EXPECT_LT(o.done - t0, 1s);
  }
  EXPECT_TRUE(wait_until([&] { return !rig.reaper->running(); }, 1s)) << "the reaper thread did not exit";
  EXPECT_TRUE(rig.reaper->device_gone());
  EXPECT_TRUE(wait_until([&] { return thread_count() == threads_before; }, 1s))
      << thread_count() << " threads, " << threads_before << " before the reaper";
  for (auto* q : rig.q) EXPECT_TRUE(q->marked_gone());
  EXPECT_EQ(drains_before, rig.reaper->stats().drains) << "a ring was drained after the loss";
  EXPECT_FALSE(rig.reaper->failure()) << rig.reaper->failure()->message();

  // Nothing runs any more: the reaper's CPU clock is frozen and the process,
  // asleep here, uses none (a spinning reaper would use all of the 300 ms).
  const auto cpu0 = rig.reaper->cpu_time();
  const auto p0 = process_cpu();
  std::this_thread::sleep_for(300ms);
  const auto used = process_cpu() - p0;
  EXPECT_EQ(cpu0, rig.reaper->cpu_time());
  EXPECT_LT(used, 20ms) << used.count() << " us of CPU in 300 ms after the loss";
  std::printf("device loss: waiters done in <= %lld us, process CPU %lld us over 300 ms afterwards\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                         std::max_element(ws.out.begin(), ws.out.end(),
                                                          [](auto& a, auto& b) { return a.done < b.done; })
                                             ->done -
                                         t0)
                                         .count()),
              static_cast<long long>(used.count()));

  // A waiter registered after the loss reports it at once.
  auto late = rig.reaper->expect([](const Arrival&) { return true; });
  ASSERT_TRUE(late);
  EXPECT_EQ(WaitStatus::DeviceGone, late->wait(0ms));
  rig.reaper->stop();  // joins a thread that already returned
  rig.reaper->stop();
  EXPECT_EQ(WaitStatus::DeviceGone, late->status());
}

// The race the driver leaves open: it revokes the mappings before it wakes
// epoll. Here the rings are revoked, every queue's eventfd signalled and the
// file hung up while the reaper is busy in on_event; the wake-up that follows
// carries no hang-up, only the queues and the edge, and the reaper must still
// not drain (it asks the kernel before every pass).
TEST(DeviceLoss, QueueWakesRacingTheRemovalDoNotReadARevokedRing) {
  std::mutex mu;
  std::condition_variable cv;
  bool in_callback = false, release = false;
  Reaper::Options opt;
  opt.rescan = 0ms;
  opt.on_event = [&](const Event&) {
    std::unique_lock lk(mu);
    in_callback = true;
    cv.notify_all();
    cv.wait(lk, [&] { return release; });
  };
  Rig rig = start_rig(VanishingFd::Kind::Hup, opt);
  Waiters ws(*rig.reaper, 2);
  const auto drains_before = rig.reaper->stats().drains;

  Event e{};
  e.edge = NEURON_EDGE_NOTIFIC;
  rig.ev->push(e);
  {
    std::unique_lock lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, 5s, [&] { return in_callback; }));
  }
  for (auto* q : rig.q) {
    q->vanish();
    q->poke();  // a threshold edge racing with the removal
  }
  rig.ev->vanish();
  {
    std::lock_guard lk(mu);
    release = true;
  }
  cv.notify_all();
  ws.join();
  for (const auto& o : ws.out) EXPECT_EQ(WaitStatus::DeviceGone, o.status) << wait_status_name(o.status);
  EXPECT_TRUE(wait_until([&] { return !rig.reaper->running(); }, 1s));
  EXPECT_EQ(drains_before, rig.reaper->stats().drains);
}

TEST(DeviceLoss, ErrorConditionAloneAlsoStopsIt) {
  Reaper::Options opt;
  opt.rescan = 1ms;  // rescans all the time: none may run after the loss
  Rig rig = start_rig(VanishingFd::Kind::Err, opt);
  Waiters ws(*rig.reaper, 3);
  const auto t0 = steady::now();
  rig.ev->vanish();
  ws.join();
  for (auto* q : rig.q) q->vanish();  // after the loss is declared (see above)
  for (const auto& o : ws.out) {
    EXPECT_EQ(WaitStatus::DeviceGone, o.status) << wait_status_name(o.status);
    EXPECT_LT(o.done - t0, 1s);
  }
  EXPECT_TRUE(wait_until([&] { return !rig.reaper->running(); }, 1s));
  EXPECT_TRUE(rig.reaper->device_gone());
}

// A Reaper without an event stream (neuron-nq monitor, e2e_bench) watches
// its queues' own files of /dev/nnqN.
TEST(DeviceLoss, QueueFilesAreWatchedWithoutAnEventSource) {
  Reaper::Options opt;
  opt.rescan = 5ms;
  Rig rig = start_rig(std::nullopt, opt, /*queue_files=*/true);
  Waiters ws(*rig.reaper, 2);
  const auto drains_before = rig.reaper->stats().drains;
  for (auto* q : rig.q) q->hang_up();
  ws.join();
  for (auto* q : rig.q) q->revoke_ring();  // after the loss is declared (see above)
  for (const auto& o : ws.out) EXPECT_EQ(WaitStatus::DeviceGone, o.status) << wait_status_name(o.status);
  EXPECT_TRUE(wait_until([&] { return !rig.reaper->running(); }, 1s));
  // rescans may have drained between start_rig and vanish(), none after
  const auto drains_after = rig.reaper->stats().drains;
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(drains_after, rig.reaper->stats().drains);
  EXPECT_GE(drains_after, drains_before);
}

// A RESET edge (FLR, suspend, PCI error recovery: every queue torn down
// before the edge is sent) ends the reaper as well; a waiter that asked for
// that edge gets it.
TEST(DeviceLoss, ResetEdgeCompletesItsWaiterThenEveryOtherWithDeviceGone) {
  Reaper::Options opt;
  opt.rescan = 0ms;  // only the edge wakes it
  Rig rig = start_rig(VanishingFd::Kind::Hup, opt);
  auto on_reset = rig.reaper->expect([](const Arrival& a) { return a.event && a.event->edge == NEURON_EDGE_RESET; });
  ASSERT_TRUE(on_reset);
  Waiters ws(*rig.reaper, 2);
  Event e{};
  e.edge = NEURON_EDGE_RESET;
  e.cause = NEURON_RESET_FLR;
  e.queues = 3;
  rig.ev->push(e);
  EXPECT_EQ(WaitStatus::Completed, on_reset->wait(5s));
  for (auto* q : rig.q) q->vanish();  // after the loss is declared (see above)
  ASSERT_TRUE(on_reset->completion().event);
  EXPECT_EQ(static_cast<std::uint32_t>(NEURON_RESET_FLR), on_reset->completion().event->cause);
  ws.join();
  for (const auto& o : ws.out) EXPECT_EQ(WaitStatus::DeviceGone, o.status) << wait_status_name(o.status);
  EXPECT_TRUE(wait_until([&] { return !rig.reaper->running(); }, 1s));
}

// NotificationQueue over a fake ring: once gone, drain/for_each/view() never
// load from the ring (revoked here: a load would kill the test).
TEST(DeviceLoss, DrainAfterLossDoesNotTouchTheMapping) {
  FakeRing ring(16);
  std::atomic<int> bells{0};
  auto q = NotificationQueue::over(
      std::span<const Record>(ring.records().data(), 16),
      Doorbell::callback([](void* c, std::uint32_t) noexcept { static_cast<std::atomic<int>*>(c)->fetch_add(1); },
                         &bells),
      []() -> Result<NqInfo> { return NqInfo{}; }, 0, 1, 0);
  ASSERT_TRUE(q) << q.error().message();
  ring[0] = sp_rec(7);
  ring[0].bytes[3] |= NEURON_ISA_HEADER_PHASE;  // record 0, first pass
  std::array<Record, 4> out{};
  DrainResult r = q->drain(out);
  EXPECT_EQ(1u, r.count);
  EXPECT_FALSE(r.device_gone);
  EXPECT_EQ(7u, out[0].u64(8));
  EXPECT_EQ(1, bells.load());
  EXPECT_FALSE(q->device_gone());
  EXPECT_FALSE(q->check_device());  // over(): no file to ask
  EXPECT_EQ(-1, q->device_fd());

  q->mark_device_gone();
  ring.revoke();
  EXPECT_TRUE(q->device_gone());
  r = q->drain(out);
  EXPECT_TRUE(r.device_gone);
  EXPECT_EQ(0u, r.count);
  int calls = 0;
  r = q->for_each([&](const Record&) { ++calls; });
  EXPECT_TRUE(r.device_gone);
  EXPECT_EQ(0, calls);
  EXPECT_EQ(0u, q->view().drain(out).count);
  EXPECT_EQ(0u, q->view().available());
  EXPECT_EQ(1, bells.load()) << "HEAD written after the loss";
  // moving it keeps the state
  NotificationQueue moved = std::move(q).value();
  EXPECT_TRUE(moved.device_gone());
  EXPECT_TRUE(moved.drain(out).device_gone);
}

// The status page (a driver with NEURON_CAP_STATUS_PAGE): every queue of
// the rig shares one file's page, and each has a file of its own that
// would report the loss to a poll(). The Reaper reads the page instead: it
// polls nothing (device_files() 0, Stats::device_polls 0), and when the
// page turns Stale (a reset, which no poll() would report) and the rings
// are revoked (the driver's order), a wake-up racing with it drains nothing,
// every waiter gets DeviceGone, every queue is marked gone, the thread ends.
TEST(DeviceLoss, StatusPageStopsItWithoutAPoll) {
  FakeStatus status;
  std::vector<std::unique_ptr<ReapQueue>> qs;
  std::vector<FakeQueue*> q;
  for (unsigned i = 0; i < 3; ++i) {
    auto p = std::make_unique<FakeQueue>(0, i, 16, 1);
    p->attach_device(VanishingFd::Kind::Hup);
    p->share_status(status.page());
    q.push_back(p.get());
    qs.push_back(std::move(p));
  }
  Reaper::Options opt;
  opt.rescan = 0ms;  // only the queue edges wake it
  auto r = Reaper::start(std::move(qs), nullptr, opt);
  ASSERT_TRUE(r) << r.error().message();
  Reaper& reaper = **r;
  EXPECT_EQ(1u, reaper.status_pages());
  EXPECT_EQ(0u, reaper.device_files()) << "a file polled although its page covers it";
  auto w = reaper.expect([](const Arrival& a) { return a.record && a.record->u64(8) == 102; });
  ASSERT_TRUE(w);
  for (unsigned i = 0; i < 3; ++i) q[i]->push(sp_rec(100 + i));
  ASSERT_EQ(WaitStatus::Completed, w->wait(5s));
  Waiters ws(reaper, 3);
  const auto drains_before = reaper.stats().drains;

  const auto t0 = steady::now();
  status.end(NEURON_STATUS_STALE, NEURON_RESET_FLR);  // the reset's first step
  for (auto* x : q) x->poke();                         // a threshold edge racing with it
  ws.join();
  for (auto* x : q) x->revoke_ring();  // after the loss is declared (see above)
  for (const auto& o : ws.out) {
    EXPECT_EQ(WaitStatus::DeviceGone, o.status) << wait_status_name(o.status);
    EXPECT_LT(o.done - t0, 1s);
  }
  EXPECT_TRUE(wait_until([&] { return !reaper.running(); }, 1s));
  EXPECT_TRUE(reaper.device_gone());
  for (auto* x : q) EXPECT_TRUE(x->marked_gone());
  EXPECT_EQ(drains_before, reaper.stats().drains) << "a ring was drained after the page turned";
  EXPECT_EQ(0u, reaper.stats().device_polls);
}

// Before each drain call, not only before each pass: the device goes in
// the middle of a pass (queue 1's drain turns the page Gone and revokes
// queue 2's ring), and the pass stops before it reads queue 2 (a load from
// the revoked ring would kill the test). The queues have no eventfd, so a
// rescan's full pass drains 0, 1, 2 in turn.
TEST(DeviceLoss, StatusPageIsReadBeforeEachDrainCall) {
  FakeStatus status;
  std::vector<std::unique_ptr<ReapQueue>> qs;
  std::vector<FakeQueue*> q;
  for (unsigned i = 0; i < 3; ++i) {
    auto p = std::make_unique<FakeQueue>(0, i, 16, 1, /*with_eventfd=*/false);
    p->share_status(status.page());
    q.push_back(p.get());
    qs.push_back(std::move(p));
  }
  std::atomic<bool> armed{false};
  q[1]->on_drain([&](const DrainResult& r) {
    if (r.count > 0 && armed.exchange(false)) {
      status.end(NEURON_STATUS_GONE, NEURON_RESET_REMOVE);
      q[2]->revoke_ring();
    }
  });
  Reaper::Options opt;
  opt.rescan = 5ms;
  auto r = Reaper::start(std::move(qs), nullptr, opt);
  ASSERT_TRUE(r) << r.error().message();
  Reaper& reaper = **r;
  auto gone = reaper.expect([](const Arrival&) { return false; });
  ASSERT_TRUE(gone);
  q[2]->push(sp_rec(3));
  q[0]->push(sp_rec(1));
  armed = true;
  q[1]->push(sp_rec(2));
  EXPECT_EQ(WaitStatus::DeviceGone, gone->wait(5s));
  EXPECT_TRUE(wait_until([&] { return !reaper.running(); }, 1s));
  EXPECT_FALSE(armed.load()) << "queue 1's drain never took its record";
  for (auto* x : q) EXPECT_TRUE(x->marked_gone());
  EXPECT_EQ(0u, reaper.stats().device_polls);
}

// Without a status page the Reaper falls back to poll(): counted per pass.
TEST(DeviceLoss, WithoutAStatusPageItPollsOncePerPass) {
  Reaper::Options opt;
  opt.rescan = 0ms;
  Rig rig = start_rig(std::nullopt, opt, /*queue_files=*/true);
  EXPECT_EQ(0u, rig.reaper->status_pages());
  EXPECT_EQ(3u, rig.reaper->device_files());  // three sockets: three files
  // Counted at rest: a pass counts itself before its poll(), so a snapshot
  // taken while the thread runs (rescan 0: always) may catch one between.
  rig.reaper->stop();
  const auto st = rig.reaper->stats();
  EXPECT_GE(st.device_polls, st.wakes + st.full_passes);
  EXPECT_GT(st.device_polls, 0u);
}

// NotificationQueue reads its status page itself: once the page turns, drain,
// for_each and check_device() report the loss without a mark, a file or a
// load from the (revoked) ring.
TEST(DeviceLoss, NotificationQueueReadsItsStatusPage) {
  FakeStatus status;
  FakeRing ring(16);
  auto q = NotificationQueue::over(std::span<const Record>(ring.records().data(), 16), Doorbell(),
                                   []() -> Result<NqInfo> { return NqInfo{}; }, 0, 1, 0, UniqueFd(), status.page());
  ASSERT_TRUE(q) << q.error().message();
  ring[0] = sp_rec(7);
  ring[0].bytes[3] |= NEURON_ISA_HEADER_PHASE;
  std::array<Record, 4> out{};
  EXPECT_EQ(1u, q->drain(out).count);
  EXPECT_FALSE(q->device_gone());
  EXPECT_FALSE(q->check_device());
  ASSERT_TRUE(q->status_page());
  EXPECT_EQ(DeviceState::Live, q->status_page()->state());
  EXPECT_EQ(7u, q->status_page()->generation());

  status.end(NEURON_STATUS_STALE, NEURON_RESET_SUSPEND);
  ring.revoke();
  EXPECT_TRUE(q->device_gone());  // one load, no mark yet
  EXPECT_EQ(DeviceState::Stale, q->status_page()->state());
  EXPECT_EQ(static_cast<std::uint32_t>(NEURON_RESET_SUSPEND), q->status_page()->cause());
  EXPECT_EQ(8u, q->status_page()->generation());
  DrainResult r = q->drain(out);
  EXPECT_TRUE(r.device_gone);
  EXPECT_EQ(0u, r.count);
  int calls = 0;
  EXPECT_TRUE(q->for_each([&](const Record&) { ++calls; }).device_gone);
  EXPECT_EQ(0, calls);
  EXPECT_TRUE(q->check_device());
  EXPECT_EQ(0u, q->view().available());  // marked: an empty view
}

// A lossy queue asks NQ_INFO when it suspects a lap; ENODEV (removed) and EIO
// (stale after a reset) mean the mappings are revoked: the queue is gone, the
// records already copied are kept. Another errno is not a loss.
TEST(DeviceLoss, NqInfoEnodevOrEioMarksTheQueueGone) {
  for (const int err : {ENODEV, EIO, EAGAIN}) {
    SCOPED_TRACE(err);
    FakeRing ring(16);
    auto q = NotificationQueue::over(
        std::span<const Record>(ring.records().data(), 16), Doorbell(),
        [err]() -> Result<NqInfo> { return unexpected(Error::from_errno(err, "NEURON_IOC_NQ_INFO (fake)")); }, 0, 1,
        NEURON_NQ_F_IGNORE_FULL);
    ASSERT_TRUE(q) << q.error().message();
    ring[0] = sp_rec(9);
    ring[0].bytes[3] |= NEURON_ISA_HEADER_PHASE | NEURON_ISA_HEADER_SW_OVF;  // an overwrite: TAIL is asked
    std::array<Record, 4> out{};
    DrainResult r = q->drain(out);
    EXPECT_EQ(1u, r.count);
    EXPECT_EQ(9u, out[0].u64(8));
    const bool lost = err != EAGAIN;
    EXPECT_EQ(lost, r.device_gone);
    EXPECT_EQ(lost, q->device_gone());
    if (lost) {
      ring.revoke();
      EXPECT_TRUE(q->drain(out).device_gone);
    }
  }
}

TEST(DeviceLoss, StatusNamesAndNumbers) {
  EXPECT_STREQ("device gone", wait_status_name(WaitStatus::DeviceGone));
  EXPECT_EQ(6, static_cast<int>(errc::device_gone));
  EXPECT_EQ("device gone (removed or reset)", make_error_code(errc::device_gone).message());
  // the numbers before it are unchanged
  EXPECT_EQ(5, static_cast<int>(errc::bad_message));
  EXPECT_EQ(4, static_cast<int>(errc::not_supported));
}

// Issue 25 item 4: a drain that returns records together with device_gone
// (a lossy queue whose lap check found NQ_INFO failing with ENODEV) has its
// records delivered to on_records and the waiters first; then the Reaper
// reports the loss. Records 0..2 come with the loss: a waiter on record 2
// completes, one on record 3 gets DeviceGone.
namespace {

class RecordsThenGone final : public ReapQueue {
 public:
  RecordsThenGone() : efd_(::eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  unsigned core() const noexcept override { return 0; }
  unsigned queue() const noexcept override { return 1; }
  int wake_fd() const noexcept override { return efd_.get(); }
  DrainResult drain(std::span<Record> out) noexcept override {
    DrainResult r;
    r.device_gone = true;
    if (!gone_ && armed_.load(std::memory_order_acquire) && out.size() >= 3) {
      for (std::uint64_t i = 0; i < 3; ++i) {
        out[i] = Record{};
        out[i].bytes[3] = NEURON_ISA_NOTIFICATION_TYPE_PE_EXPLICIT;
        for (int b = 0; b < 8; ++b) out[i].bytes[8 + b] = static_cast<std::uint8_t>(i >> (8 * b));
      }
      r.count = 3;
      gone_ = true;
      return r;
    }
    if (gone_) return r;
    r.device_gone = false;  // the first look, before the test is ready: nothing yet
    return r;
  }
  void mark_device_gone() noexcept override { gone_ = true; }
  /// Let the next drain return the records and the loss, and wake the Reaper.
  void arm() {
    armed_.store(true, std::memory_order_release);
    const std::uint64_t one = 1;
    (void)!::write(efd_.get(), &one, sizeof one);
  }

 private:
  UniqueFd efd_;
  bool gone_ = false;  // the reaper thread's
  std::atomic<bool> armed_{false};
};

}  // namespace

TEST(DeviceLoss, RecordsDrainedWithTheLossAreDeliveredFirst) {
  std::vector<std::unique_ptr<ReapQueue>> qs;
  auto p = std::make_unique<RecordsThenGone>();
  RecordsThenGone& q = *p;
  qs.push_back(std::move(p));
  std::atomic<std::uint64_t> delivered{0};
  Reaper::Options o;
  o.rescan = 0ms;
  o.on_records = [&](unsigned, unsigned, std::span<const Record> recs) { delivered += recs.size(); };
  auto reaper = Reaper::start(std::move(qs), nullptr, o);
  ASSERT_TRUE(reaper) << reaper.error().message();
  auto w2 = (*reaper)->expect([](const Arrival& a) { return a.record && a.record->u64(8) == 2; });
  auto w3 = (*reaper)->expect([](const Arrival& a) { return a.record && a.record->u64(8) == 3; });
  ASSERT_TRUE(w2 && w3);
  q.arm();
  EXPECT_EQ(WaitStatus::Completed, w2->wait(10s));
  EXPECT_EQ(WaitStatus::DeviceGone, w3->wait(10s));
  EXPECT_EQ(3u, delivered.load());
  EXPECT_TRUE((*reaper)->device_gone());
  EXPECT_EQ(3u, (*reaper)->stats().records);
}
