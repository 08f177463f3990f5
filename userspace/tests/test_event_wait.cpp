// SPDX-License-Identifier: MIT
//
// read_events() waiting while a signal keeps interrupting it: the wait
// keeps its deadline. A second thread sends the signals, so the suite runs
// with the threaded ones (and under ThreadSanitizer, userspace/run-tsan.sh).
#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include "libneuron/device.hpp"

using namespace neuron;

namespace {
void ignore_signal(int) {}
}  // namespace

// A signal every 10 ms (a profiler's timer) ends each poll() early: the
// wait must go on for what is left of its 200 ms, not start over. The
// signals stop after 3 s, so a wait that restarts returns only then; one
// that keeps its deadline returns after about 200 ms (bounded at 2 s here
// only so that a loaded machine cannot fail it).
TEST(Device, ReadEventsKeepsItsDeadlineAcrossSignals) {
  struct sigaction sa {}, old{};
  sa.sa_handler = ignore_signal;  // no SA_RESTART: poll() returns EINTR
  ASSERT_EQ(0, ::sigaction(SIGUSR1, &sa, &old));
  int p[2];
  ASSERT_EQ(0, ::pipe(p));
  const pthread_t self = ::pthread_self();
  std::atomic<bool> done{false};
  std::atomic<int> sent{0};
  std::thread timer([&] {
    for (int i = 0; i < 300 && !done.load(); i++) {
      ::pthread_kill(self, SIGUSR1);
      sent.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::array<Event, 4> ev{};
  const auto t0 = std::chrono::steady_clock::now();
  auto n = read_events(p[0], ev, std::chrono::milliseconds(200), "read events pipe");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  done = true;
  timer.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  ::close(p[0]);
  ::close(p[1]);
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(*n, 0u);
  EXPECT_GE(ms, 200) << "returned before its timeout";
  EXPECT_LT(ms, 2000) << "the wait restarted after each of " << sent.load() << " signals";
}
