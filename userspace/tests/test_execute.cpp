// SPDX-License-Identifier: MIT
//
// execute() against a fake device that "runs" programs into fake queues
// (tests/fake_device.hpp: threshold edges, eventfds, backpressure) the way
// docs/device-model.md says (trace -> queue 0, EXPLICIT -> 1, EVT_SEM -> 2,
// errors -> 3), drained by the real Reaper.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <map>

#include <unistd.h>

#include <fmt/format.h>

#include "fake_device.hpp"
#include "fake_target.hpp"
#include "libneuron/assembler.hpp"
#include "libneuron/execute.hpp"
#include "libneuron/perfetto.hpp"
#include "scoped_env.hpp"

using namespace neuron;
using neuron::test::FakeEvents;
using neuron::test::FakeQueue;
using neuron::test::FakeTarget;

namespace {

Program prog(const char* text) {
  auto p = assemble(text, "t.nq");
  EXPECT_TRUE(p) << p.error().message();
  return std::move(p).value();
}

// For a program that completes: execute() returns as soon as it does, so
// the budget only has to be out of reach of a loaded machine (300 ms was
// not: two tests saw Timeout once each with a load of 9 on 2 cores).
ExecOptions fast() {
  ExecOptions o;
  o.timeout = std::chrono::seconds(30);
  return o;
}

// For a program that never completes (a stuck or never-halting engine):
// the whole budget is spent, so keep it short.
ExecOptions times_out() {
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(300);
  return o;
}

}  // namespace

TEST(Execute, HelloIsOkWithEveryRecord) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nnop\nnotify hint=3 ext=0x1234\nnop\nhalt\n[act]\nnotify hint=1\nhalt\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(static_cast<int>(r.status), 0);
  EXPECT_FALSE(r.first_error);
  EXPECT_EQ(t.opened.size(), 6u);  // queues 0..5 on core 0
  for (const auto& o : t.opts) {
    EXPECT_TRUE(o.eventfd);
    EXPECT_EQ(o.threshold, 1u);
  }
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.reaper.records, 14u);
  EXPECT_EQ(r.reaper.late_records, 0u);  // every record came with an edge
  EXPECT_LT(r.elapsed, std::chrono::milliseconds(300));  // no waiting for the deadline
  // PE: 4 x (start, end) + 1 explicit; ACT: 2 x 2 + 1
  EXPECT_EQ(r.records.size(), 14u);
  sort_by_timestamp(r.records);
  for (std::size_t i = 1; i < r.records.size(); ++i)
    EXPECT_LE(r.records[i - 1].raw.timestamp_ps(), r.records[i].raw.timestamp_ps());
  int explicit_count = 0;
  for (const auto& c : r.records)
    if (const auto* e = std::get_if<Explicit>(&c.decoded)) {
      ++explicit_count;
      EXPECT_EQ(c.queue, 1u);
      if (e->engine == Engine::PE) {
        EXPECT_EQ(e->debug_hint_extended, 0x1234);
      }
    }
  EXPECT_EQ(explicit_count, 2);
}

TEST(Execute, FatallyHaltedEngineIsATimeoutWithTheFatalRecord) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nnop\nfp_error SEQUENCER_FATAL\nnop\n"), times_out());
  EXPECT_EQ(r.status, ExecStatus::Timeout);
  EXPECT_EQ(static_cast<int>(r.status), 5);
  ASSERT_TRUE(r.first_error);
  const auto& e = std::get<TpbError>(r.first_error->decoded);
  EXPECT_TRUE(e.is_fatal());
  EXPECT_EQ(e.sequencer.program_counter, 1);
  EXPECT_EQ(r.first_error->queue, 3u);
  EXPECT_FALSE(r.completed);
  EXPECT_GE(r.elapsed, std::chrono::milliseconds(300));
}

TEST(Execute, HaltEndsWaitGivesCompletedWithError) {
  FakeTarget t;
  auto o = fast();
  o.halt_ends_wait = true;
  o.timeout = std::chrono::seconds(10);
  auto r = execute(t, prog("[pe]\nfp_error SEQUENCER_FATAL\n"), o);
  EXPECT_EQ(r.status, ExecStatus::CompletedWithError);
  EXPECT_LT(r.elapsed, std::chrono::seconds(5));
}

TEST(Execute, NonfatalErrorRecordIsReported) {
  FakeTarget t;
  auto r = execute(t, prog("[dve]\nfp_error FP_NAN\nhalt\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::CompletedWithError);
  EXPECT_EQ(static_cast<int>(r.status), 1004);
  ASSERT_TRUE(r.first_error);
  EXPECT_EQ(std::get<TpbError>(r.first_error->decoded).error_id, NEURON_ISA_TPB_ERROR_FP_NAN);
}

// Throttle is a condition, not an error (issue 28 item 4): a throttle-armed
// run whose only non-OK records are throttle records ends COMPLETED_THROTTLED
// (2001), not COMPLETED_WITH_ERR (1004).
TEST(Execute, ThrottleArmedRunIsCompletedThrottledNotCompletedWithError) {
  FakeTarget t;
  t.throttle_armed = true;
  auto r = execute(t, prog("[pool]\nthrottle 5\nthrottle 6\nhalt\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::CompletedThrottled);
  EXPECT_EQ(static_cast<int>(r.status), 2001);
  EXPECT_STREQ(status_name(r.status), "COMPLETED_THROTTLED");
  EXPECT_TRUE(r.completed);
  EXPECT_FALSE(r.first_error);
  EXPECT_EQ(r.throttle_records, 2u);
  ASSERT_TRUE(r.first_throttle);
  EXPECT_EQ(r.first_throttle->core, 0u);
  EXPECT_EQ(r.first_throttle->queue, 4u);
  // POOL (2), level 5: word0 = 1 | 2 << 3 = 0x0011 -> 11 00, header 0x83
  // (phase 1 | ERROR 0x03), cause_bits 5 -> 05 00 00 00
  const std::uint8_t want[8] = {0x11, 0x00, 0x00, 0x83, 0x05, 0x00, 0x00, 0x00};
  EXPECT_EQ(0, std::memcmp(r.first_throttle->raw.bytes.data(), want, sizeof want));
  const auto& i = std::get<Interrupt>(r.first_throttle->decoded);
  EXPECT_EQ(i.group, 1);
  EXPECT_EQ(i.block_id, 2);
  EXPECT_EQ(i.cause_bits, 5u);
}

TEST(Execute, ThrottleWithAnErrorIsCompletedWithErrorAndTheErrorIsFirst) {
  FakeTarget t;
  t.throttle_armed = true;
  // the throttle record comes first, the error record second
  auto r = execute(t, prog("[pool]\nthrottle 5\nfp_error FP_NAN\nhalt\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::CompletedWithError);
  EXPECT_EQ(static_cast<int>(r.status), 1004);
  ASSERT_TRUE(r.first_error);
  EXPECT_EQ(std::get<TpbError>(r.first_error->decoded).error_id, NEURON_ISA_TPB_ERROR_FP_NAN);
  EXPECT_EQ(r.throttle_records, 1u);
}

TEST(Execute, ThrottleNotArmedWritesNoRecordAndIsOk) {
  FakeTarget t;
  auto r = execute(t, prog("[pool]\nthrottle 5\nhalt\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(r.throttle_records, 0u);
  EXPECT_FALSE(r.first_throttle);
}

TEST(Execute, OverflowSeenIsSwNqOverflow) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nfp_error 0xee\nhalt\n"), fast());  // the fake marks this record sw-overflow
  EXPECT_EQ(r.status, ExecStatus::SwNqOverflow);
  EXPECT_EQ(static_cast<int>(r.status), 1204);
  EXPECT_TRUE(r.overflow_seen);
  EXPECT_LT(r.elapsed, std::chrono::milliseconds(300));  // the overflow ends the wait
}

// docs/hardware.md#intr-edge: the overflow CAUSE (tpb_notific_intr_2 on a core
// in use), read from the device's event stream, confirmed by our queue's
// overflow count.
TEST(Execute, OverflowEdgeIsSwNqOverflow) {
  FakeTarget t;
  t.stuck = true;  // no completion would ever come
  t.after_submit = [](FakeTarget& f) {
    f.queue(0, 1).set_overflow_count(3);
    Event e{};
    e.edge = NEURON_EDGE_NOTIFIC;
    e.core = 0;
    e.cause = 1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW;
    f.events->push(e);
  };
  auto o = fast();
  o.timeout = std::chrono::seconds(10);
  auto r = execute(t, prog("[pe]\nnop\n"), o);
  EXPECT_EQ(r.status, ExecStatus::SwNqOverflow);
  ASSERT_TRUE(r.overflow_event);
  EXPECT_EQ(r.overflow_event->cause, 1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW);
  EXPECT_EQ(r.events.size(), 1u);
  EXPECT_LT(r.elapsed, std::chrono::seconds(5));
}

// Status 1204 whenever records were lost, whatever the cause
// (docs/device-model.md#intr-cause-table, #wrbuf).
TEST(Execute, HardwareOverflowRecordIsSwNqOverflow) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nfp_error 0xef\nhalt\n"), fast());  // marked hardware_queue_overflow
  EXPECT_EQ(static_cast<int>(r.status), 1204);
  EXPECT_TRUE(r.overflow_seen);
  EXPECT_LT(r.elapsed, std::chrono::milliseconds(300));  // the loss ends the wait
}

TEST(Execute, InputBufferDropEdgeIsSwNqOverflow) {
  FakeTarget t;
  t.stuck = true;
  t.after_submit = [](FakeTarget& f) {
    f.queue(0, 1).set_drop_count(7);  // the input buffer dropped 7 of our records
    Event e{};
    e.edge = NEURON_EDGE_NOTIFIC;
    e.core = 0;
    e.cause = 1u << NEURON_NOTIFIC_INTR_HW_OVERFLOW;
    e.wrbuf_drop = 1u << 1;
    f.events->push(e);
  };
  auto o = fast();
  o.timeout = std::chrono::seconds(10);
  auto r = execute(t, prog("[pe]\nnop\n"), o);
  EXPECT_EQ(static_cast<int>(r.status), 1204);
  ASSERT_TRUE(r.overflow_event);
  EXPECT_EQ(r.overflow_event->cause, 1u << NEURON_NOTIFIC_INTR_HW_OVERFLOW);
  EXPECT_EQ(r.device_lost, 7u);
  EXPECT_LT(r.elapsed, std::chrono::seconds(5));
}

TEST(Execute, FullQueueWithoutPolicyDropEdgeIsSwNqOverflow) {
  FakeTarget t;
  t.stuck = true;
  t.after_submit = [](FakeTarget& f) {
    f.queue(0, 1).set_drop_count(1);  // dropped, not overwritten: overflow count stays 0
    Event e{};
    e.edge = NEURON_EDGE_NOTIFIC;
    e.core = 0;
    e.cause = 1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW;
    f.events->push(e);
  };
  auto o = fast();
  o.timeout = std::chrono::seconds(10);
  auto r = execute(t, prog("[pe]\nnop\n"), o);
  EXPECT_EQ(static_cast<int>(r.status), 1204);
  ASSERT_TRUE(r.overflow_event);
  EXPECT_EQ(r.device_lost, 1u);
}

TEST(Execute, DropsSeenOnlyInTheCountsAreSwNqOverflow) {
  FakeTarget t;
  t.after_submit = [](FakeTarget& f) { f.queue(0, 1).set_drop_count(2); };  // no flag, no edge
  auto r = execute(t, prog("[pe]\nnop\n"), fast());
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(static_cast<int>(r.status), 1204);
  EXPECT_FALSE(r.overflow_event);
  EXPECT_EQ(r.device_lost, 2u);
}

TEST(Execute, OverflowEdgeOfSomeoneElsesQueueOrCoreIsNotOurs) {
  FakeTarget t;
  t.after_submit = [](FakeTarget& f) {
    Event e{};
    e.edge = NEURON_EDGE_NOTIFIC;
    e.cause = 1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW;
    e.core = 0;  // our core, but none of our queues overflowed
    f.events->push(e);
    e.core = 1;  // not our core
    f.events->push(e);
  };
  auto r = execute(t, prog("[pe]\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok);
  EXPECT_FALSE(r.overflow_event);
  EXPECT_EQ(r.events.size(), 2u);
}

// Without tracing the stopping instructions carry an event.set update (an
// EVT_SEM record) that marks completion; program counters are unchanged.
TEST(Execute, WithoutTraceCompletionIsMarkedByAnEventUpdate) {
  FakeTarget t;
  auto o = fast();
  o.trace = false;
  auto r = execute(t, prog("[pe]\nnotify hint=1\nhalt\nnop\n[act]\nnotify\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Ok);
  ASSERT_EQ(t.submitted.size(), 2u);
  ASSERT_EQ(t.submitted[0].size(), 3u);
  EXPECT_EQ(t.submitted[0][0].events.update_mode, 0);
  EXPECT_EQ(t.submitted[0][1].events.update_mode, NEURON_EVT_SEM_UPDATE_EVENT_SET);  // halt
  EXPECT_EQ(t.submitted[0][1].events.update_idx, 255);
  EXPECT_EQ(t.submitted[0][2].events.update_mode, NEURON_EVT_SEM_UPDATE_EVENT_SET);  // last
  EXPECT_EQ(t.submitted[1][0].events.update_mode, NEURON_EVT_SEM_UPDATE_EVENT_SET);
  EXPECT_LT(r.elapsed, std::chrono::milliseconds(300));
}

TEST(Execute, WithoutTraceATakenUpdateSlotIsRefusedWithTheLine) {
  FakeTarget t;
  auto o = fast();
  o.trace = false;
  auto r = execute(t, prog("[pe]\nnop\nhalt @update=sem.inc:3 @value=1\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Failure);
  ASSERT_TRUE(r.error);
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("t.nq:3"));
  EXPECT_TRUE(t.opened.empty());
  r = execute(t, prog("[pe]\nevent.set 255\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Failure);
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("event 255"));
}

TEST(Execute, FeaturesFromTheProgramOrTheOptions) {
  FakeTarget t;
  auto r = execute(t, prog("features 0x2\n[pe]\nnop\n[core1.act]\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(t.features.at(0), 2u);
  EXPECT_EQ(t.features.at(1), 2u);
  ASSERT_TRUE(r.features);
  EXPECT_EQ(*r.features, 2u);
  auto o = fast();
  o.features = 0;
  r = execute(t, prog("features 0x2\n[pe]\nnop\n"), o);
  EXPECT_EQ(t.features.at(0), 0u);
  FakeTarget u;
  u.fail_features = true;
  r = execute(u, prog("features 0x2\n[pe]\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Failure);
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("NEURON_IOC_FEATURE_FLAGS SET core=0"));
}

TEST(Execute, StuckEngineTimesOut) {
  FakeTarget t;
  t.stuck = true;
  auto r = execute(t, prog("[sp]\nnop\n"), times_out());
  EXPECT_EQ(r.status, ExecStatus::Timeout);
  EXPECT_FALSE(r.first_error);
}

TEST(Execute, IoctlFailureIsFailureWithWhatWasAsked) {
  FakeTarget t;
  t.fail_open = true;
  auto r = execute(t, prog("[pe]\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Failure);
  ASSERT_TRUE(r.error);
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("NEURON_IOC_NQ_INIT core=0 queue=2"));
  EXPECT_EQ(t.opened.size(), 2u);  // queues 0 and 1 were made (and destroyed with their owner)
}

TEST(Execute, MultiCoreProgramsOpenQueuesOnEachCore) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nnop\n[core1.pe]\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(t.opened.size(), 12u);
  EXPECT_EQ(r.records.size(), 4u);
}

// ------------------------------------------------------------------ tenancy

TEST(ExecuteTenancy, AcquiresTheProgramsCoresBeforeAnyQueueAndReleasesThem) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nnop\n[core2.act]\nnop\n"), fast());
  ASSERT_EQ(r.status, ExecStatus::Ok) << (r.error ? r.error->message() : "");
  ASSERT_FALSE(t.log.empty());
  EXPECT_EQ(t.log.front(), "acquire 0x5");
  EXPECT_LT(t.first("acquire"), t.first("nq_init"));
  EXPECT_EQ(t.log.back(), "release 0x5");
  EXPECT_EQ(r.cores_acquired, 0x5u);
  EXPECT_EQ(t.owned, 0u);
}

TEST(ExecuteTenancy, CoresOwnedBeforeStayOwned) {
  FakeTarget t;
  t.owned = 0x1;
  auto r = execute(t, prog("[pe]\nnop\n[core1.pe]\nnop\n"), fast());
  ASSERT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(t.log.front(), "acquire 0x3");  // all or nothing: core 0 is ours already
  EXPECT_EQ(t.log.back(), "release 0x2");   // only what execute() took
  EXPECT_EQ(t.owned, 0x1u);
  FakeTarget u;
  u.owned = 0x1;
  r = execute(u, prog("[pe]\nnop\n"), fast());
  ASSERT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(u.first("acquire"), u.log.size());
  EXPECT_EQ(u.first("release"), u.log.size());
  EXPECT_EQ(u.owned, 0x1u);
}

TEST(ExecuteTenancy, ACoreAnotherProcessOwnsIsNamedWithItsPidAndCommand) {
  FakeTarget t;
  t.others = 0x2;
  t.owners_text = "0 - -\n1 4242 train.py\n2 - -\n3 - -\n";
  auto r = execute(t, prog("[pe]\nnop\n[core1.pe]\nnop\n"), fast());
  ASSERT_EQ(r.status, ExecStatus::Failure);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, std::errc::device_or_resource_busy);
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("core 1 is owned by another process: PID 4242 (train.py)"));
  EXPECT_TRUE(t.opened.empty());
  EXPECT_EQ(t.owned, 0u);
  // the owner may be another open file of this very process
  t.owners_text = fmt::format("0 - -\n1 {} me\n", ::getpid());
  r = execute(t, prog("[core1.pe]\nnop\n"), fast());
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("core 1 is owned by another open file of this process"));
}

TEST(ExecuteTenancy, VisibleCoresRefuseAProgramOnAnotherCore) {
  FakeTarget t;
  auto o = fast();
  o.cores = CoreList{"1-3", "--cores"};
  auto r = execute(t, prog("[pe]\nnop\n"), o);
  ASSERT_EQ(r.status, ExecStatus::Failure);
  EXPECT_THAT(r.error->message(),
              ::testing::HasSubstr("t.nq:2: [core0.pe] uses core 0, which is not among the visible cores 1-3 "
                                   "(--cores 1-3)"));
  EXPECT_TRUE(t.log.empty());  // nothing acquired, no queue
  o.cores = CoreList{"0-4", "--cores"};
  r = execute(t, prog("[pe]\nnop\n"), o);
  ASSERT_EQ(r.status, ExecStatus::Failure);
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("--cores '0-4': '0-4': core 4 does not exist"));
  o.cores = CoreList{"1", "--cores"};
  r = execute(t, prog("[core1.pe]\nnop\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Ok);
}

TEST(ExecuteTenancy, TheEnvironmentVariableLimitsTheCoresUnlessOverridden) {
  const char* old = std::getenv(kVisibleCoresEnv);
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv(kVisibleCoresEnv, "0", 1);
  FakeTarget t;
  auto r = execute(t, prog("[core1.pe]\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Failure);
  EXPECT_THAT(r.error ? r.error->message() : "", ::testing::HasSubstr("(NEURON_VISIBLE_CORES=0)"));
  auto o = fast();
  o.cores = CoreList{"1", "--cores"};
  r = execute(t, prog("[core1.pe]\nnop\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Ok);
  if (saved) ::setenv(kVisibleCoresEnv, saved->c_str(), 1);
  else ::unsetenv(kVisibleCoresEnv);
}

TEST(ExecuteTenancy, DgeMemoryIsAllocatedFixedBeforeSubmitAndFreedAfter) {
  FakeTarget t;
  auto r = execute(t,
                   prog("[pool]\ndge src=0x100 dst=0x1000 len=0x800\nhalt\n[act]\ndge src=0x8000 dst=0x9ff0 "
                        "len=0x10\n"),
                   fast());
  ASSERT_EQ(r.status, ExecStatus::Ok) << (r.error ? r.error->message() : "");
  EXPECT_EQ(r.memory, (std::vector<MemRange>{{0, 0x2000}, {0x8000, 0x2000}}));
  const auto a0 = t.first("alloc 0x0+0x2000"), a1 = t.first("alloc 0x8000+0x2000");
  ASSERT_LT(a0, t.log.size());
  ASSERT_LT(a1, t.log.size());
  EXPECT_LT(a1, t.first("submit"));
  EXPECT_LT(t.first("acquire"), a0);
  EXPECT_LT(t.first("free 0x0"), t.log.size());
  EXPECT_LT(t.first("free 0x8000"), t.log.size());
  EXPECT_TRUE(t.mem.empty());
  // without the allocation the (fake) driver refuses the program
  auto o = fast();
  o.allocate_memory = false;
  r = execute(t, prog("[pool]\ndge src=0x100 dst=0x1000 len=0x800\n"), o);
  ASSERT_EQ(r.status, ExecStatus::Failure);
  EXPECT_EQ(r.error->code, std::errc::permission_denied);
}

TEST(ExecuteTenancy, MemoryAnotherFileHoldsIsNamedAndEverythingIsGivenBack) {
  FakeTarget t;
  t.foreign_mem = {{0x9000, 0x1000}};
  auto r = execute(t, prog("[pool]\ndge src=0x100 dst=0x200 len=0x10\ndge src=0x8800 dst=0x9800 len=0x10\n"),
                   fast());
  ASSERT_EQ(r.status, ExecStatus::Failure);
  EXPECT_EQ(r.error->code, std::errc::device_or_resource_busy);
  EXPECT_THAT(r.error->message(),
              ::testing::HasSubstr("t.nq:3: DGE_COPY source [0x8800, +0x10) (POOL on core 0, pc 1): device memory "
                                   "[0x8000, 0xa000) is allocated already"));
  EXPECT_TRUE(t.mem.empty());  // the first span was freed again
  EXPECT_EQ(t.owned, 0u);      // and the core released
  EXPECT_TRUE(t.opened.empty());
}

TEST(ExecuteTenancy, MemoryBeyondTheAllocatableLimitIsRefusedBeforeAnyIoctl) {
  FakeTarget t;
  auto r = execute(t, prog("[pool]\ndge src=0x100 dst=0xfff00 len=0x200\n"), fast());
  ASSERT_EQ(r.status, ExecStatus::Failure);
  EXPECT_THAT(r.error->message(),
              ::testing::HasSubstr("t.nq:2: DGE_COPY destination [0xfff00, +0x200) (POOL on core 0, pc 0) reaches "
                                   "past the device memory programs may use, [0, 0x100000)"));
  EXPECT_EQ(t.first("alloc"), t.log.size());
}

TEST(ExecuteTenancy, ATimedOutEngineIsResetBeforeItsMemoryIsFreed) {
  FakeTarget t;
  t.stuck = true;
  t.owned = 0x1;  // not released by execute(): it must reset the engine itself
  auto r = execute(t, prog("[pool]\ndge src=0x100 dst=0x1000 len=0x10\n"), times_out());
  EXPECT_EQ(r.status, ExecStatus::Timeout);
  ASSERT_EQ(r.engines.size(), 1u);
  EXPECT_EQ(r.engines[0].state, static_cast<std::uint32_t>(NEURON_ENGINE_RUNNING));  // as it was at the end
  const auto reset = t.first("reset 0.2");
  ASSERT_LT(reset, t.log.size());
  EXPECT_LT(reset, t.first("free 0x0"));
  EXPECT_EQ(t.owned, 0x1u);
}

// Issue 25 item 3: the core was ours before execute() and the program uses
// no device memory, so neither the claim's memory nor a core release stops
// the engine: execute() must reset it itself, before its queues go.
TEST(ExecuteTenancy, ATimedOutEngineOnAnOwnedCoreWithoutMemoryIsReset) {
  FakeTarget t;
  t.stuck = true;
  t.owned = 0x1;
  auto r = execute(t, prog("[sp]\nnop\n"), times_out());
  EXPECT_EQ(r.status, ExecStatus::Timeout);
  ASSERT_EQ(r.engines.size(), 1u);
  EXPECT_EQ(r.engines[0].state, static_cast<std::uint32_t>(NEURON_ENGINE_RUNNING));  // as it was at the end
  // nq_init 0.0 .. 0.5 (six queues), submit 0.4, then the reset
  EXPECT_EQ(t.first("reset 0.4"), 7u) << fmt::format("{}", fmt::join(t.log, " | "));
  EXPECT_EQ(t.log.size(), 8u);
  EXPECT_EQ((t.state[{0, 4}]), static_cast<std::uint32_t>(NEURON_ENGINE_IDLE));
  EXPECT_EQ(t.owned, 0x1u);
  EXPECT_EQ(t.first("release"), t.log.size());
  // and the same on a driver without core ownership
  FakeTarget u;
  u.stuck = true;
  u.no_tenancy = true;
  r = execute(u, prog("[sp]\nnop\n"), times_out());
  EXPECT_EQ(r.status, ExecStatus::Timeout);
  EXPECT_EQ((u.state[{0, 4}]), static_cast<std::uint32_t>(NEURON_ENGINE_IDLE));
  EXPECT_LT(u.first("reset 0.4"), u.log.size());
}

// An engine that finished is not reset, and neither is one whose submit
// was refused (it may be running the caller's own program).
TEST(ExecuteTenancy, OnlyEnginesStillRunningAreReset) {
  FakeTarget t;
  t.owned = 0x1;
  auto r = execute(t, prog("[sp]\nnop\n"), fast());
  ASSERT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(t.first("reset"), t.log.size());
  FakeTarget u;
  u.owned = 0x1;
  u.state[{0, 2}] = NEURON_ENGINE_RUNNING;  // the caller's own program on POOL
  ExecOptions o = fast();
  o.allocate_memory = false;  // and no memory of ours: SUBMIT refuses the DGE_COPY (EACCES)
  r = execute(u, prog("[pool]\ndge src=0x100 dst=0x1000 len=0x10\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Failure);
  EXPECT_EQ(u.first("reset"), u.log.size());
  EXPECT_EQ((u.state[{0, 2}]), static_cast<std::uint32_t>(NEURON_ENGINE_RUNNING));
}

TEST(ExecuteTenancy, ADriverWithoutOwnershipRunsAsBefore) {
  FakeTarget t;
  t.no_tenancy = true;
  auto r = execute(t, prog("[pool]\ndge src=0x100 dst=0x1000 len=0x10\nhalt\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok) << (r.error ? r.error->message() : "");
  EXPECT_EQ(t.first("alloc"), t.log.size());
  EXPECT_EQ(t.first("acquire"), t.log.size());
}

TEST(ExecuteTenancy, ClaimIsMovableAndGivesBackOnce) {
  FakeTarget t;
  const auto p = prog("[pool]\ndge src=0x100 dst=0x1000 len=0x10\n");
  {
    auto c = ProgramClaim::make(t, p, {});
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->cores(), 0x1u);
    EXPECT_EQ(c->acquired(), 0x1u);
    ProgramClaim moved = std::move(c).value();
    EXPECT_EQ(moved.memory(), (std::vector<MemRange>{{0, 0x2000}}));
    EXPECT_EQ(t.owned, 0x1u);
  }
  EXPECT_EQ(t.owned, 0u);
  EXPECT_TRUE(t.mem.empty());
  EXPECT_EQ(std::count(t.log.begin(), t.log.end(), "release 0x1"), 1);
}

TEST(Perfetto, SlicesFromStartEndPairs) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nnop\nnotify hint=2\nhalt\n[act]\nnop\n"), fast());
  ASSERT_EQ(r.status, ExecStatus::Ok);
  TraceStats st;
  const auto j = chrome_trace(r.records, &st);
  EXPECT_EQ(st.slices, 4u);
  EXPECT_EQ(st.unmatched_starts, 0u);
  EXPECT_EQ(st.unmatched_ends, 0u);
  EXPECT_EQ(st.instants, 1u);
  int x = 0, names = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      ++x;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_EQ(e["pid"], 0);
    }
    if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
  }
  EXPECT_EQ(x, 4);
  EXPECT_EQ(names, 2);  // PE and ACT tracks
}

// Routing (issue 28 items 1 and 2, docs/decisions/0022-route-programmable.md):
// with ExecOptions::route 0x03249867 (trace 7, EXPLICIT 6, EVT_SEM 8, errors
// 9, throttle 4, DGE 2, DMA 3) execute() programs the route before any
// queue, makes queues 0..9, and decodes each record with it: a NOTIFY
// hint=1 on queue 6 is EXPLICIT, the DGE copy's metadata on queue 2 is
// DGE_METADATA. Under the default route the same records sit on queues 1
// and 5 and decode the same. Expected (queue, kind) pairs are hand-written.
TEST(Execute, CompletionNotificationsAreArmedBeforeSubmitAndDisarmedAtTheEnd) {
  FakeTarget t;
  ExecOptions o = fast();
  o.dma_queues = 0x0003;
  o.axi_evt_sem = true;
  o.sem_writes = {{0, 7, NEURON_SEM_SET, 41}};
  auto r = execute(t, prog("[pe]\nnotify hint=1\nhalt\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Ok);
  const std::vector<std::string> want = {"trigger 0 dma 0 on", "trigger 0 dma 1 on", "trigger 0 axi on",
                                         "submit 0.0",         "sem 0.7 op 1 value 41", "trigger 0 dma 0 off",
                                         "trigger 0 dma 1 off", "trigger 0 axi off"};
  std::vector<std::string> got;
  for (const auto& l : t.log)
    if (l.rfind("trigger", 0) == 0 || l.rfind("submit", 0) == 0 || l.rfind("sem", 0) == 0) got.push_back(l);
  EXPECT_EQ(got, want);
  ASSERT_TRUE(r.axi_dropped);
  EXPECT_EQ(*r.axi_dropped, 0u);
  EXPECT_EQ(r.triggers.at(0).dma_armed, 0x0003u);  // what the program ran with
  EXPECT_TRUE(r.triggers.at(0).axi_armed);
  // the host write's record: AXI_EVT_SEM, queue 2, index 7, value 41
  int axi = 0;
  for (const auto& c : r.records)
    if (const auto* e = std::get_if<EvtSem>(&c.decoded); e && e->axi) {
      ++axi;
      EXPECT_EQ(c.queue, 2u);
      EXPECT_EQ(e->id, 7u);
      EXPECT_EQ(e->value, 41u);
    }
  EXPECT_EQ(axi, 1);
}

TEST(Execute, AxiEvtSemRecordsTheDeviceLostAreSwNqOverflow) {
  FakeTarget t;
  t.axi_dropped[0] = 3;
  ExecOptions o = fast();
  o.axi_evt_sem = true;
  auto r = execute(t, prog("[pe]\nnotify hint=1\nhalt\n"), o);
  ASSERT_TRUE(r.axi_dropped);
  EXPECT_EQ(*r.axi_dropped, 3u);
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.status, ExecStatus::SwNqOverflow);
}

TEST(Execute, AHostWriteToACoreNotTheProgramsIsRefusedBeforeAnyIoctl) {
  FakeTarget t;
  ExecOptions o = fast();
  o.sem_writes = {{2, 7, NEURON_SEM_SET, 1}};
  auto r = execute(t, prog("[pe]\nnotify hint=1\nhalt\n"), o);
  EXPECT_EQ(r.status, ExecStatus::Failure);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, errc::invalid_argument);
  EXPECT_THAT(r.error->message(), ::testing::HasSubstr("host EVT_SEM write to core 2 index 7: core 2 is not one of the "
                                            "program's cores (0)"));
  EXPECT_EQ(t.first("submit"), t.log.size());
  EXPECT_EQ(t.first("sem"), t.log.size());
}

TEST(Execute, RecordsDecodedWithTheProgrammedRoute) {
  const char* text = "features 0x2\n[pool]\nnotify hint=1 ext=9\ndge src=0x1000 dst=0x2000 len=64\nhalt\n";
  struct Want {
    unsigned queue;
    const char* kind;
  };
  const auto kinds = [](const ExecResult& r) {
    std::vector<std::pair<unsigned, std::string>> v;
    for (const auto& c : r.records) v.emplace_back(c.queue, kind_name(c.decoded));
    std::sort(v.begin(), v.end());
    return v;
  };
  {
    FakeTarget t;
    ExecOptions o = fast();
    o.route = 0x03249867u;
    auto r = execute(t, prog(text), o);
    ASSERT_EQ(r.status, ExecStatus::Ok) << (r.error ? r.error->message() : "");
    EXPECT_EQ(r.routes.at(0), 0x03249867u);
    EXPECT_NE(std::find(t.log.begin(), t.log.end(), "route 0 0x03249867"), t.log.end());
    EXPECT_EQ(t.opened.size(), 10u);  // queues 0..9: the route names 9
    const std::vector<std::pair<unsigned, std::string>> want = {
        {2, "DGE_METADATA"}, {6, "EXPLICIT"}, {7, "TRACE"}, {7, "TRACE"},
        {7, "TRACE"},        {7, "TRACE"},    {7, "TRACE"}, {7, "TRACE"}};  // 3 x INST_START/END
    EXPECT_EQ(kinds(r), want);
  }
  {
    FakeTarget t;
    auto r = execute(t, prog(text), fast());
    ASSERT_EQ(r.status, ExecStatus::Ok);
    EXPECT_EQ(r.routes.at(0), 0x01543210u);
    EXPECT_EQ(t.opened.size(), 6u);
    const std::vector<std::pair<unsigned, std::string>> want = {
        {0, "TRACE"}, {0, "TRACE"}, {0, "TRACE"},    {0, "TRACE"},
        {0, "TRACE"}, {0, "TRACE"}, {1, "EXPLICIT"}, {5, "DGE_METADATA"}};
    EXPECT_EQ(kinds(r), want);
  }
  {
    // a route the target refuses fails the run before any queue is made
    FakeTarget t;
    t.others = 1;  // another file owns core 0
    ExecOptions o = fast();
    o.route = 0x03249867u;
    auto r = execute(t, prog(text), o);
    EXPECT_EQ(r.status, ExecStatus::Failure);
    EXPECT_TRUE(t.opened.empty());
  }
}

// A program's own data (docs/program-syntax.md#data): nothing is allocated
// for it, and SUBMIT gets the image with each reference resolved to where
// the driver loads that engine's program: core 0 POOL (engine 2) at
// 0x2c0000 + 2 * 0x10000 = 0x2e0000, the block after 2 instructions at
// +0x40. A literal source inside the image is the program's own too.
TEST(Execute, DataIsSubmittedInTheImageWithItsAddressResolved) {
  FakeTarget t;
  auto r = execute(t, prog("[pool]\ndge src=@c dst=0x1000 len=4\nhalt\ndata c u32 0xdeadbeef\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok) << (r.error ? r.error->message() : std::string());
  ASSERT_EQ(t.submitted.size(), 1u);
  ASSERT_EQ(t.submitted[0].size(), 3u);  // 2 instructions, 1 slot of data
  std::array<std::uint8_t, 4> src{};
  std::memcpy(src.data(), &t.submitted[0][0].operand.dge.src, 4);
  EXPECT_EQ(src, (std::array<std::uint8_t, 4>{0x40, 0x00, 0x2e, 0x00}));
  std::array<std::uint8_t, 32> slot{};
  std::memcpy(slot.data(), &t.submitted[0][2], 32);
  EXPECT_EQ(slot, (std::array<std::uint8_t, 32>{0xef, 0xbe, 0xad, 0xde}));
  EXPECT_EQ(std::count_if(t.log.begin(), t.log.end(), [](const std::string& l) { return l.rfind("alloc", 0) == 0; }), 1);
  EXPECT_NE(t.first("alloc 0x1000+0x1000"), t.log.size());

  FakeTarget u;
  r = execute(u, prog("[pool]\ndge src=0x2e0040 dst=0x1000 len=4\nhalt\ndata c u32 7\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok) << (r.error ? r.error->message() : std::string());
  ASSERT_EQ(u.submitted.size(), 1u);
  EXPECT_EQ(u.submitted[0].size(), 3u);
}

// NEURON_RT_EXEC_TIMEOUT (docs/hardware.md#exec-timeout,
// docs/decisions/0037-exec-timeout.md): the budget when the options give none,
// and the runtime's line in the TIMEOUT's error. The lines are written out
// by hand.
namespace {

// A stuck SP on core 0, which never completes, run with the variable set
// to `env` (nullptr: unset).
ExecResult run_stuck_sp(const char* env, const ExecOptions& o) {
  neuron::test::ScopedEnv e(kExecTimeoutEnv, env);
  FakeTarget t;
  t.stuck = true;
  return execute(t, prog("[sp]\nnop\n"), o);
}

// A program that completes at once, on `t`, with the variable set to `env`.
ExecResult run_quick(FakeTarget& t, const char* env) {
  neuron::test::ScopedEnv e(kExecTimeoutEnv, env);
  return execute(t, prog("[pe]\nnotify hint=1\nhalt\n"), ExecOptions{});
}

}  // namespace

TEST(ExecuteTimeout, TheVariableIsTheBudgetWhenTheOptionsGiveNone) {
  auto r = run_stuck_sp("1", ExecOptions{});
  EXPECT_EQ(r.status, ExecStatus::Timeout);
  EXPECT_GE(r.elapsed, std::chrono::milliseconds(1000));
  EXPECT_LT(r.elapsed, std::chrono::milliseconds(4000));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, std::errc::timed_out);
  EXPECT_EQ(r.error->what,
            "(FATAL-RT-UNDEFINED-STATE) t.nq: execution timeout (1000 ms) on core 0 SP: waiting for execution "
            "completion notification");
}

TEST(ExecuteTimeout, UnsetTheBudgetIsFiveSeconds) {
  auto r = run_stuck_sp(nullptr, ExecOptions{});
  EXPECT_GE(r.elapsed, std::chrono::milliseconds(5000));
  EXPECT_EQ(r.error ? r.error->what : "",
            "(FATAL-RT-UNDEFINED-STATE) t.nq: execution timeout (5000 ms) on core 0 SP: waiting for execution "
            "completion notification");
}

TEST(ExecuteTimeout, AGivenBudgetWinsOverTheVariable) {
  auto r = run_stuck_sp("60", times_out());  // 300 ms
  EXPECT_LT(r.elapsed, std::chrono::milliseconds(5000));
  EXPECT_EQ(r.error ? r.error->what : "",
            "(FATAL-RT-UNDEFINED-STATE) t.nq: execution timeout (300 ms) on core 0 SP: waiting for execution "
            "completion notification");
}

TEST(ExecuteTimeout, AnInvalidVariableFailsBeforeAnyIoctl) {
  FakeTarget t;
  auto r = run_quick(t, "1.5");
  EXPECT_EQ(r.status, ExecStatus::Failure);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, errc::invalid_argument);
  EXPECT_EQ(r.error->what,
            "NEURON_RT_EXEC_TIMEOUT='1.5': not a whole number of seconds from 0 to 2147483647 (0: no limit)");
  EXPECT_TRUE(t.log.empty());
}

TEST(ExecuteTimeout, ACompletedRunHasNoTimeoutLine) {
  FakeTarget t;
  auto r = run_quick(t, "5");
  EXPECT_EQ(r.status, ExecStatus::Ok);
  EXPECT_FALSE(r.error);
}
