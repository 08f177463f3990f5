// SPDX-License-Identifier: MIT
//
// execute() against a fake device that "runs" programs into memory rings the
// way docs/device-model.md says (trace -> queue 0, EXPLICIT -> 1, errors -> 3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "libneuron/execute.hpp"
#include "libneuron/perfetto.hpp"
#include "ring_helpers.hpp"

using namespace neuron;
using neuron::test::MemRing;

namespace {

class FakeTarget : public ExecTarget {
 public:
  bool fail_open = false;
  bool stuck = false;  // engines never finish
  std::uint64_t now_ps = 1000;
  std::map<std::pair<unsigned, unsigned>, std::uint32_t> state;
  std::vector<std::pair<unsigned, unsigned>> opened;
  int closed = 0;

  Status open_queue(unsigned core, unsigned queue, std::uint32_t size, std::uint32_t) override {
    if (fail_open && queue == 2) return unexpected(Error::from_errno(EBUSY, "NEURON_IOC_NQ_INIT core=0 queue=2"));
    auto& q = queues_[{core, queue}];
    q.ring = std::make_unique<MemRing>(size / 16);
    q.view = RingView(q.ring->span(), Doorbell{});
    opened.emplace_back(core, queue);
    return {};
  }
  DrainResult drain(unsigned core, unsigned queue, std::span<Record> out) override {
    return queues_.at({core, queue}).view.drain(out);
  }
  Status submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) override {
    const bool trace = flags & NEURON_SUBMIT_F_TRACE;
    std::uint32_t st = stuck ? NEURON_ENGINE_RUNNING : NEURON_ENGINE_IDLE;
    for (std::uint32_t pc = 0; pc < insns.size(); ++pc) {
      const auto& in = insns[pc];
      if (trace) push(core, 0, word0(pc, in.debug_hint, 0x04 + 4 * engine), 1, 0);
      if (in.opcode == NEURON_OP_NOTIFY) push(core, 1, word0(pc, in.debug_hint, 0x06 + 4 * engine), 1, in.operand.arg.debug_hint_extended);
      bool halt = false;
      if (in.opcode == NEURON_OP_FP_ERROR) {
        // TPB_ERROR: error_id @0, metadata_lo @1, header @3, metadata_hi {block, pc} @4
        Record r;
        r.bytes[0] = static_cast<std::uint8_t>(in.operand.arg.value);
        r.bytes[3] = 0x1f;
        const std::uint32_t hi = engine | (pc << 4);
        for (int b = 0; b < 4; ++b) r.bytes[4 + b] = static_cast<std::uint8_t>(hi >> (8 * b));
        put(core, 3, r, in.operand.arg.value == 0xee ? NEURON_ISA_HEADER_SW_OVF : 0);
        if (in.operand.arg.value == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL) halt = true;
      }
      if (halt) {
        st = NEURON_ENGINE_HALTED;
        break;
      }
      if (trace) push(core, 0, word0(pc, in.debug_hint, 0x05 + 4 * engine), 1, 0);
      if (in.opcode == NEURON_OP_HALT) break;
    }
    state[{core, engine}] = st;
    return {};
  }
  Result<EngineStatus> engine_status(unsigned core, unsigned engine) override {
    EngineStatus s{};
    s.core = core;
    s.engine = engine;
    s.state = state.at({core, engine});
    return s;
  }
  void close_queues() override {
    ++closed;
    queues_.clear();
  }

 private:
  struct Q {
    std::unique_ptr<MemRing> ring;
    RingView view;
  };
  static std::uint32_t word0(std::uint32_t pc, std::uint32_t hint, std::uint32_t type) {
    return pc | ((hint & 0xf) << 20) | (type << 24);
  }
  void push(unsigned core, unsigned q, std::uint32_t w0, std::uint16_t run, std::uint16_t ext) {
    Record r;
    for (int b = 0; b < 4; ++b) r.bytes[b] = static_cast<std::uint8_t>(w0 >> (8 * b));
    r.bytes[4] = static_cast<std::uint8_t>(run);
    r.bytes[6] = static_cast<std::uint8_t>(ext);
    r.bytes[7] = static_cast<std::uint8_t>(ext >> 8);
    put(core, q, r, 0);
  }
  void put(unsigned core, unsigned q, Record r, std::uint8_t flags) {
    now_ps += 1000;
    for (int b = 0; b < 8; ++b) r.bytes[8 + b] = static_cast<std::uint8_t>(now_ps >> (8 * b));
    queues_.at({core, q}).ring->push(r, flags);
  }
  std::map<std::pair<unsigned, unsigned>, Q> queues_;
};

Program prog(const char* text) {
  auto p = assemble(text, "t.nq");
  EXPECT_TRUE(p) << p.error().message();
  return std::move(p).value();
}

ExecOptions fast() {
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(50);
  o.poll_interval = std::chrono::microseconds(100);
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
  EXPECT_EQ(t.closed, 1);
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
  auto r = execute(t, prog("[pe]\nnop\nfp_error SEQUENCER_FATAL\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Timeout);
  EXPECT_EQ(static_cast<int>(r.status), 5);
  ASSERT_TRUE(r.first_error);
  const auto& e = std::get<TpbError>(r.first_error->decoded);
  EXPECT_TRUE(e.is_fatal());
  EXPECT_EQ(e.sequencer.program_counter, 1);
  EXPECT_EQ(r.first_error->queue, 3u);
  EXPECT_GE(r.elapsed, std::chrono::milliseconds(50));
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

TEST(Execute, OverflowSeenIsSwNqOverflow) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nfp_error 0xee\nhalt\n"), fast());  // the fake marks this record sw-overflow
  EXPECT_EQ(r.status, ExecStatus::SwNqOverflow);
  EXPECT_EQ(static_cast<int>(r.status), 1204);
  EXPECT_TRUE(r.overflow_seen);
}

TEST(Execute, StuckEngineTimesOut) {
  FakeTarget t;
  t.stuck = true;
  auto r = execute(t, prog("[sp]\nnop\n"), fast());
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
  EXPECT_EQ(t.closed, 1);  // queues opened so far were closed
}

TEST(Execute, MultiCoreProgramsOpenQueuesOnEachCore) {
  FakeTarget t;
  auto r = execute(t, prog("[pe]\nnop\n[core1.pe]\nnop\n"), fast());
  EXPECT_EQ(r.status, ExecStatus::Ok);
  EXPECT_EQ(t.opened.size(), 12u);
  EXPECT_EQ(r.records.size(), 4u);
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
