// SPDX-License-Identifier: MIT
//
// The C API's drain on a queue made from memory (NotificationQueue::over),
// which the public C API cannot make: this file compiles src/c_api.cpp
// itself (its own executable, so the copy interposes on no other test) and
// builds a libneuron_queue around such a queue.
//
// Issue 25 item 4: a drain that copies records and then learns the device
// went (a lossy queue's lap check: NQ_INFO fails with ENODEV) returns the
// records first; the next call reports -ENODEV.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "../src/c_api.cpp"  // NOLINT: the unit under test, with its private struct
#include "device_access.hpp"
#include "fake_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <stdexcept>

namespace {

void no_doorbell(void*, std::uint32_t) noexcept {}

}  // namespace

TEST(CApiInternal, RecordsDrainedWithTheDeviceLossComeFirst) {
  // a lossy ring of 8 with records 0..3; record 1 carries
  // software_queue_overflow, which makes the drain read TAIL (NQ_INFO)
  std::vector<neuron::Record> ring(8);
  for (std::uint32_t i = 0; i < 4; ++i) {
    ring[i].bytes[3] = static_cast<std::uint8_t>(0x06 | 0x80 | (i == 1 ? NEURON_ISA_HEADER_SW_OVF : 0));
    ring[i].bytes[8] = static_cast<std::uint8_t>(0x40 + i);
  }
  auto nq = neuron::NotificationQueue::over(
      std::span<const neuron::Record>(ring.data(), ring.size()), neuron::Doorbell::callback(&no_doorbell, nullptr),
      []() -> neuron::Result<neuron::NqInfo> {
        return neuron::unexpected(neuron::Error::from_errno(ENODEV, "NEURON_IOC_NQ_INFO (removed)"));
      },
      0, 1, NEURON_NQ_F_IGNORE_FULL);
  ASSERT_TRUE(nq) << nq.error().message();
  QueueHandle q{std::move(nq).value()};
  q.buf.resize(8);
  libneuron_record out[8]{};
  std::uint64_t lost = 99;
  EXPECT_EQ(libneuron_queue_drain(&q, out, 8, &lost), 4) << libneuron_last_error();
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(out[0].bytes[8], 0x40);
  EXPECT_EQ(out[3].bytes[8], 0x43);
  EXPECT_EQ(libneuron_queue_drain(&q, out, 8, &lost), -ENODEV);
  EXPECT_EQ(std::string(libneuron_last_error()), "libneuron_queue_drain: device gone (removed or reset)");
}

// The calls' own errors on a libneuron_device over a file that is not a node
// of the driver (libneuron_device_open() refuses /dev/null: test_api.cpp):
// the ring size is checked before any ioctl, NQ_INIT reaches the file and
// its ENOTTY comes back naming the call, a count of 0 is refused.
TEST(CApiInternal, CallsOnAFileThatIsNotANodeSayWhatWasAsked) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d) << d.error().message();
  libneuron_device* dev = std::make_unique<DeviceHandle>(std::move(d).value()).release();  // closed below
  libneuron_queue* q = nullptr;
  EXPECT_EQ(libneuron_queue_create(dev, 0, 1, 1000, 0, &q), -EINVAL);
  EXPECT_NE(std::string(libneuron_last_error()).find("size 1000 bytes is not a power of two"), std::string::npos)
      << libneuron_last_error();
  EXPECT_EQ(libneuron_queue_create(dev, 0, 1, 4096, 0, &q), -ENOTTY);  // NQ_INIT reached /dev/null
  EXPECT_NE(std::string(libneuron_last_error()).find("NEURON_IOC_NQ_INIT core=0 queue=1 size=4096"),
            std::string::npos)
      << libneuron_last_error();
  EXPECT_EQ(q, nullptr);
  neuron_emu_insn insn{};
  EXPECT_EQ(libneuron_device_submit(dev, 0, 0, &insn, 0, 0), -EINVAL);
  EXPECT_STREQ(libneuron_last_error(), "libneuron_device_submit: count is 0");
  libneuron_device_close(dev);
}

// ---- Issue 41 item 2: the C API does the whole job (LIBNEURON_1.1) ----
//
// execute() runs on the fake device of test_execute.cpp (fake_target.hpp)
// through neuron::capi::execute_on(), the body of libneuron_execute().

namespace {

// LIBNEURON_SIZED_INIT's C++ spelling (a designated initializer of one
// member warns under -Wmissing-field-initializers in C++)
template <class T>
T sized() {
  T v{};
  v.size = sizeof v;
  return v;
}

libneuron_program* hello() {
  // examples/hello.nq: PE nop, notify hint=3 ext=0x1234, nop, halt; ACT notify hint=1, halt
  static const char text[] = "[pe]\nnop\nnotify hint=3 ext=0x1234\nnop\nhalt\n[act]\nnotify hint=1\nhalt\n";
  libneuron_program* p = nullptr;
  EXPECT_EQ(libneuron_program_assemble(text, sizeof text - 1, "hello.nq", &p), 0) << libneuron_last_error();
  return p;
}

libneuron_exec_options fast_options() {
  libneuron_exec_options o = sized<libneuron_exec_options>();
  o.timeout_ms = 2000;
  return o;
}

libneuron_result* run(neuron::test::FakeTarget& t, const libneuron_program* p, const libneuron_exec_options* o) {
  libneuron_result* r = nullptr;
  EXPECT_EQ(neuron::capi::execute_on("libneuron_execute", t, p, o, &r), 0) << libneuron_last_error();
  return r;
}

int count_calls(void* arg, const libneuron_exec_record*) {
  ++*static_cast<int*>(arg);
  return 0;
}

int stop_at_first(void* arg, const libneuron_exec_record*) {
  ++*static_cast<int*>(arg);
  return 7;
}

int throw_from_callback(void* arg, const libneuron_exec_record*) {
  ++*static_cast<int*>(arg);
  throw std::runtime_error("a C++ caller's callback threw");
}

}  // namespace

TEST(CApiWholeJob, ExecuteHelloGivesEveryRecordDecoded) {
  neuron::test::FakeTarget t;
  libneuron_program* p = hello();
  int calls = 0;
  libneuron_exec_options o = fast_options();
  o.on_record = &count_calls;
  o.arg = &calls;
  libneuron_result* r = run(t, p, &o);
  ASSERT_NE(r, nullptr);
  libneuron_exec_summary s = sized<libneuron_exec_summary>();
  ASSERT_EQ(libneuron_result_summary(r, &s), 0) << libneuron_last_error();
  EXPECT_EQ(s.status, 0);
  EXPECT_STREQ(libneuron_exec_status_name(s.status), "OK");
  EXPECT_EQ(s.completed, 1u);
  EXPECT_EQ(s.records, 14u);  // PE: 4 x (start, end) + 1 explicit; ACT: 2 x 2 + 1
  EXPECT_EQ(calls, 14);
  EXPECT_EQ(s.callback_error, 0);
  std::vector<libneuron_exec_record> recs(20);
  ASSERT_EQ(libneuron_result_records(r, 0, recs.data(), recs.size()), 14);
  int explicit_pe = 0;
  for (std::size_t i = 0; i < 14; ++i) {
    libneuron_decoded d;
    ASSERT_EQ(libneuron_result_decode(r, i, &d), 0);
    if (d.kind == LIBNEURON_KIND_EXPLICIT && d.engine == 0) {
      ++explicit_pe;
      EXPECT_EQ(recs[i].queue, 1u);
      EXPECT_EQ(d.debug_hint, 3u);
      EXPECT_EQ(d.debug_hint_extended, 0x1234u);
    }
  }
  EXPECT_EQ(explicit_pe, 1);
  EXPECT_EQ(libneuron_result_records(r, 14, recs.data(), recs.size()), 0);  // the end
  EXPECT_STREQ(libneuron_result_error(r), "");
  libneuron_result_free(r);
  libneuron_program_free(p);
}

TEST(CApiWholeJob, EncodedProgramRunsLikeTheAssembledOne) {
  libneuron_program* a = hello();
  libneuron_program* p = nullptr;
  ASSERT_EQ(libneuron_program_create(&p), 0);
  for (const auto& e : a->p.engines)
    ASSERT_EQ(libneuron_program_add(p, e.core, e.engine, e.insns.data(), e.insns.size()), 0) << libneuron_last_error();
  const auto& first = a->p.engines[0];
  EXPECT_EQ(libneuron_program_add(p, first.core, first.engine, first.insns.data(), 1), -EEXIST);
  EXPECT_STREQ(libneuron_last_error(), "libneuron_program_add: core 0 engine 0 has a program already");
  neuron::test::FakeTarget t;
  libneuron_exec_options o = fast_options();
  libneuron_result* r = run(t, p, &o);
  libneuron_exec_summary s = sized<libneuron_exec_summary>();
  ASSERT_EQ(libneuron_result_summary(r, &s), 0);
  EXPECT_EQ(s.status, 0);
  EXPECT_EQ(s.records, 14u);
  libneuron_result_free(r);
  libneuron_program_free(p);
  libneuron_program_free(a);
}

TEST(CApiWholeJob, CallbackThatStopsOrThrowsEndsItsCallsNotTheRun) {
  for (auto* cb : {&stop_at_first, &throw_from_callback}) {
    neuron::test::FakeTarget t;
    libneuron_program* p = hello();
    int calls = 0;
    libneuron_exec_options o = fast_options();
    o.on_record = cb;
    o.arg = &calls;
    libneuron_result* r = run(t, p, &o);
    ASSERT_NE(r, nullptr);
    libneuron_exec_summary s = sized<libneuron_exec_summary>();
    ASSERT_EQ(libneuron_result_summary(r, &s), 0);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(s.callback_error, cb == &stop_at_first ? 7 : -ECANCELED);
    EXPECT_EQ(s.status, 0);
    EXPECT_EQ(s.records, 14u);  // the run went on
    libneuron_result_free(r);
    libneuron_program_free(p);
  }
}

TEST(CApiWholeJob, SizedStructsReadAndWriteOnlyWhatTheirSizeCovers) {
  neuron::test::FakeTarget t;
  libneuron_program* p = hello();
  // an options struct of an older caller: size and timeout_ms only
  libneuron_exec_options o = fast_options();
  o.size = offsetof(libneuron_exec_options, flags);
  o.flags = LIBNEURON_EXEC_NO_TRACE;  // past its size: not read (trace stays on)
  libneuron_result* r = run(t, p, &o);
  libneuron_exec_summary s = sized<libneuron_exec_summary>();
  ASSERT_EQ(libneuron_result_summary(r, &s), 0);
  EXPECT_EQ(s.records, 14u);
  // a summary of an older caller: the bytes past its size are not written
  struct {
    libneuron_exec_summary s;
    unsigned char guard[8];
  } small{};
  std::memset(&small, 0xa5, sizeof small);
  small.s.size = offsetof(libneuron_exec_summary, completed);
  ASSERT_EQ(libneuron_result_summary(r, &small.s), 0);
  EXPECT_EQ(small.s.size, offsetof(libneuron_exec_summary, completed));
  EXPECT_EQ(small.s.status, 0);
  EXPECT_EQ(small.s.completed, 0xa5a5a5a5u);
  libneuron_result_free(r);
  // a newer caller's struct: a set byte past ours is E2BIG, a zero one is fine
  struct {
    libneuron_exec_options o;
    std::uint64_t newer;
  } big{};
  big.o = fast_options();
  big.o.size = sizeof big;
  big.newer = 1;
  libneuron_result* none = reinterpret_cast<libneuron_result*>(0x1);
  EXPECT_EQ(neuron::capi::execute_on("libneuron_execute", t, p, &big.o, &none), -E2BIG);
  EXPECT_NE(std::string(libneuron_last_error()).find("past the"), std::string::npos) << libneuron_last_error();
  // size below size_t
  o.size = 2;
  EXPECT_EQ(neuron::capi::execute_on("libneuron_execute", t, p, &o, &none), -EINVAL);
  EXPECT_NE(std::string(libneuron_last_error()).find("libneuron_exec_options->size 2"), std::string::npos)
      << libneuron_last_error();
  o = fast_options();
  o.flags = 0x80;
  EXPECT_EQ(neuron::capi::execute_on("libneuron_execute", t, p, &o, &none), -EINVAL);
  EXPECT_STREQ(libneuron_last_error(), "libneuron_execute: libneuron_exec_options.flags 0x80 has unknown bits 0x80");
  libneuron_program_free(p);
}

// Every entry point with NULL or out-of-range arguments, and with a handle
// whose file is not the driver's (/dev/null): a negative errno and a message
// naming the call and the argument, never an exception or a crash.
TEST(CApiWholeJob, EveryEntryPointRefusesBadInput) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d) << d.error().message();
  libneuron_device* dev = std::make_unique<DeviceHandle>(std::move(d).value()).release();  // closed below
  libneuron_record rec{};
  libneuron_decoded dec{};
  libneuron_event ev{};
  libneuron_exec_record xr{};
  libneuron_device_info info{};
  libneuron_engine_status es{};
  libneuron_queue_info qi{};
  libneuron_device* dout = nullptr;
  libneuron_queue* qout = nullptr;
  libneuron_program* pout = nullptr;
  libneuron_result* rout = nullptr;
  std::uint64_t u64 = 0;
  std::uint32_t u32 = 0;
  std::size_t idx = 0;
  neuron_emu_insn insn{};
  const auto expect = [](long rc, long want, const char* call) {
    EXPECT_EQ(rc, want) << call;
    EXPECT_NE(std::string(libneuron_last_error()).find(call), std::string::npos) << libneuron_last_error();
  };
  expect(libneuron_device_open(nullptr, nullptr), -EINVAL, "libneuron_device_open");
  expect(libneuron_device_open("/dev/null", &dout), -ENOTTY, "libneuron_device_open");
  expect(libneuron_device_open_read_only("/nonexistent/nnq9", &dout), -ENOENT, "libneuron_device_open_read_only");
  expect(libneuron_device_submit(nullptr, 0, 0, &insn, 1, 0), -EINVAL, "libneuron_device_submit");
  expect(libneuron_device_submit(dev, 0, 0, nullptr, 1, 0), -EINVAL, "libneuron_device_submit");
  expect(libneuron_device_submit(dev, 0, 0, &insn, 1, 0), -ENOTTY, "libneuron_device_submit");
  expect(libneuron_queue_create(nullptr, 0, 0, 4096, 0, &qout), -EINVAL, "libneuron_queue_create");
  expect(libneuron_queue_create(dev, 0, 0, 4096, 0, nullptr), -EINVAL, "libneuron_queue_create");
  expect(libneuron_queue_drain(nullptr, &rec, 1, nullptr), -EINVAL, "libneuron_queue_drain");
  expect(libneuron_queue_wait(nullptr, &rec, 1, 0, nullptr), -EINVAL, "libneuron_queue_wait");
  expect(libneuron_queue_set_coalescing(nullptr, 1, 0), -EINVAL, "libneuron_queue_set_coalescing");
  expect(libneuron_queue_fd(nullptr), -EINVAL, "libneuron_queue_fd");
  expect(libneuron_queue_get_info(nullptr, &qi), -EINVAL, "libneuron_queue_get_info");
  expect(libneuron_queue_decode(nullptr, &rec, &dec), -EINVAL, "libneuron_queue_decode");
  expect(libneuron_record_decode(nullptr, 0, &dec), -EINVAL, "libneuron_record_decode");
  expect(libneuron_record_decode(&rec, 0, nullptr), -EINVAL, "libneuron_record_decode");
  expect(libneuron_record_decode_route(&rec, 99, 0, &dec), -EINVAL, "libneuron_record_decode_route");
  expect(libneuron_device_get_info(nullptr, &info), -EINVAL, "libneuron_device_get_info");
  expect(libneuron_device_get_info(dev, nullptr), -EINVAL, "libneuron_device_get_info");
  expect(libneuron_device_get_info(dev, &info), -ENOTTY, "libneuron_device_get_info");
  expect(libneuron_device_state(nullptr), -EINVAL, "libneuron_device_state");
  expect(libneuron_device_state(dev), -EOPNOTSUPP, "libneuron_device_state");
  expect(libneuron_core_acquire(nullptr, 1, &u64), -EINVAL, "libneuron_core_acquire");
  expect(libneuron_core_acquire(dev, 1, &u64), -ENOTTY, "libneuron_core_acquire");
  expect(libneuron_core_release(nullptr, 1, &u64), -EINVAL, "libneuron_core_release");
  expect(libneuron_device_read_events(nullptr, &ev, 1, 0), -EINVAL, "libneuron_device_read_events");
  expect(libneuron_device_read_events(dev, &ev, 0, 0), -EINVAL, "libneuron_device_read_events");
  expect(libneuron_device_event_fd(nullptr), -EINVAL, "libneuron_device_event_fd");
  expect(libneuron_engine_get_status(nullptr, 0, 0, &es), -EINVAL, "libneuron_engine_get_status");
  expect(libneuron_engine_reset(nullptr, 0, 0), -EINVAL, "libneuron_engine_reset");
  expect(libneuron_engine_reset(dev, 0, 0), -ENOTTY, "libneuron_engine_reset");
  expect(libneuron_core_get_route(nullptr, 0, &u32), -EINVAL, "libneuron_core_get_route");
  expect(libneuron_core_get_route(dev, 0, nullptr), -EINVAL, "libneuron_core_get_route");
  expect(libneuron_core_set_route(nullptr, 0, 0, &u32), -EINVAL, "libneuron_core_set_route");
  // 1.1
  expect(libneuron_mem_alloc(nullptr, 4096, 0, 0, &u64), -EINVAL, "libneuron_mem_alloc");
  expect(libneuron_mem_alloc(dev, 4096, 0, 0, nullptr), -EINVAL, "libneuron_mem_alloc");
  expect(libneuron_mem_alloc(dev, 0, 0, 0, &u64), -EINVAL, "libneuron_mem_alloc: size is 0");
  expect(libneuron_mem_alloc(dev, 4096, 0, 0x2, &u64), -EINVAL, "libneuron_mem_alloc: flags 0x2");
  expect(libneuron_mem_alloc(dev, 4096, 0, 0, &u64), -ENOTTY, "libneuron_mem_alloc");
  expect(libneuron_mem_free(nullptr, 0), -EINVAL, "libneuron_mem_free");
  expect(libneuron_mem_free(dev, 0), -ENOTTY, "libneuron_mem_free");
  expect(libneuron_program_assemble(nullptr, 0, "x", &pout), -EINVAL, "libneuron_program_assemble: text is NULL");
  expect(libneuron_program_assemble("x", 1, "x", nullptr), -EINVAL, "libneuron_program_assemble: out is NULL");
  expect(libneuron_program_assemble("[pe]\nnopp\n", 10, "bad.nq", &pout), -EINVAL, "bad.nq:2: unknown opcode 'nopp'");
  EXPECT_EQ(pout, nullptr);
  expect(libneuron_program_assemble_file(nullptr, &pout), -EINVAL, "libneuron_program_assemble_file");
  expect(libneuron_program_assemble_file("/nonexistent.nq", &pout), -ENOENT, "open /nonexistent.nq");
  expect(libneuron_program_create(nullptr), -EINVAL, "libneuron_program_create");
  expect(libneuron_program_add(nullptr, 0, 0, &insn, 1), -EINVAL, "libneuron_program_add: prog is NULL");
  ASSERT_EQ(libneuron_program_create(&pout), 0);
  expect(libneuron_program_add(pout, 0, 0, nullptr, 1), -EINVAL, "libneuron_program_add: insns is NULL");
  expect(libneuron_program_add(pout, 0, 0, &insn, 0), -EINVAL, "libneuron_program_add: count is 0");
  expect(libneuron_program_add(pout, 0, 0, &insn, NEURON_MAX_PROGRAM_INSNS + 1), -EINVAL,
         "above NEURON_MAX_PROGRAM_INSNS");
  expect(libneuron_execute(nullptr, pout, nullptr, &rout), -EINVAL, "libneuron_execute: dev is NULL");
  expect(libneuron_execute(dev, nullptr, nullptr, &rout), -EINVAL, "libneuron_execute: prog is NULL");
  expect(libneuron_execute(dev, pout, nullptr, nullptr), -EINVAL, "libneuron_execute: out is NULL");
  expect(libneuron_result_summary(nullptr, nullptr), -EINVAL, "libneuron_result_summary: res is NULL");
  expect(libneuron_result_records(nullptr, 0, &xr, 1), -EINVAL, "libneuron_result_records: res is NULL");
  expect(libneuron_result_decode(nullptr, 0, &dec), -EINVAL, "libneuron_result_decode: res is NULL");
  expect(libneuron_result_events(nullptr, 0, &ev, 1), -EINVAL, "libneuron_result_events: res is NULL");
  EXPECT_STREQ(libneuron_result_error(nullptr), "");
  EXPECT_STREQ(libneuron_exec_status_name(12345), "UNKNOWN");
  expect(libneuron_queue_for_each(nullptr, nullptr, nullptr, 1), -EINVAL, "libneuron_queue_for_each: q is NULL");
  libneuron_queue* none[1] = {nullptr};
  expect(libneuron_queue_wait_any(nullptr, 1, 0, &rec, 1, 0, &idx, &u64), -EINVAL, "libneuron_queue_wait_any");
  expect(libneuron_queue_wait_any(none, 0, 0, &rec, 1, 0, &idx, &u64), -EINVAL, "libneuron_queue_wait_any: n is 0");
  expect(libneuron_queue_wait_any(none, 1, 0, &rec, 1, 0, &idx, &u64), -EINVAL, "queues[0] is NULL");
  // a result over a run that failed on the file: execute() reports FAILURE, not an error of the call
  neuron::test::FakeTarget t;
  libneuron_program* p = hello();
  t.fail_open = true;
  libneuron_exec_options o = fast_options();
  libneuron_result* r = run(t, p, &o);
  libneuron_exec_summary s = sized<libneuron_exec_summary>();
  ASSERT_EQ(libneuron_result_summary(r, &s), 0);
  EXPECT_EQ(s.status, 1);
  EXPECT_EQ(s.error, EBUSY);
  EXPECT_NE(std::string(libneuron_result_error(r)).find("NEURON_IOC_NQ_INIT"), std::string::npos);
  expect(libneuron_result_records(r, 99, &xr, 1), -EINVAL, "first 99 is past");
  expect(libneuron_result_decode(r, 99, &dec), -EINVAL, "index 99 is not below");
  s.size = 0;
  expect(libneuron_result_summary(r, &s), -EINVAL, "libneuron_exec_summary->size 0");
  libneuron_result_free(r);
  libneuron_program_free(p);
  libneuron_program_free(pout);
  libneuron_device_close(dev);
  libneuron_device_close(nullptr);
  libneuron_queue_destroy(nullptr);
  libneuron_program_free(nullptr);
  libneuron_result_free(nullptr);
}

namespace {

// a backpressured ring of 8 with records 0..n-1 (EXPLICIT, phase 1), byte 8 = 0x40 + i
struct MemQueue {
  std::vector<neuron::Record> ring = std::vector<neuron::Record>(8);
  libneuron_queue* q = nullptr;
  explicit MemQueue(int n) {
    for (int i = 0; i < n; ++i) {
      ring[i].bytes[3] = static_cast<std::uint8_t>(0x06 | 0x80);
      ring[i].bytes[8] = static_cast<std::uint8_t>(0x40 + i);
    }
    auto nq = neuron::NotificationQueue::over(std::span<const neuron::Record>(ring.data(), ring.size()),
                                              neuron::Doorbell::callback(&no_doorbell, nullptr),
                                              []() -> neuron::Result<neuron::NqInfo> { return neuron::NqInfo{}; },
                                              0, 1, 0);
    EXPECT_TRUE(nq) << nq.error().message();
    q = std::make_unique<QueueHandle>(std::move(nq).value()).release();  // destroyed below
    q->buf.resize(8);
  }
  ~MemQueue() { libneuron_queue_destroy(q); }
};

int take_two(void* arg, const libneuron_record* r) {
  auto* seen = static_cast<std::vector<int>*>(arg);
  seen->push_back(r->bytes[8]);
  return seen->size() == 2 ? 1 : 0;
}

int throw_at_first(void*, const libneuron_record*) { throw std::runtime_error("fn threw"); }

}  // namespace

TEST(CApiWholeJob, ForEachHandsRecordsInPlaceAndStopsOrCatches) {
  MemQueue m(4);
  std::vector<int> seen;
  EXPECT_EQ(libneuron_queue_for_each(m.q, &take_two, &seen, 8), 2) << libneuron_last_error();
  EXPECT_EQ(seen, (std::vector<int>{0x40, 0x41}));
  EXPECT_EQ(libneuron_queue_for_each(m.q, &throw_at_first, nullptr, 8), -ECANCELED);
  EXPECT_NE(std::string(libneuron_last_error()).find("fn threw at record 1"), std::string::npos)
      << libneuron_last_error();
  libneuron_record out[8];
  EXPECT_EQ(libneuron_queue_drain(m.q, out, 8, nullptr), 1);  // 0x42 was handed to the throwing fn
  EXPECT_EQ(out[0].bytes[8], 0x43);
  EXPECT_EQ(libneuron_queue_for_each(m.q, &take_two, &seen, 0), -EINVAL);
  EXPECT_EQ(libneuron_queue_for_each(m.q, nullptr, &seen, 8), -EINVAL);
}

TEST(CApiWholeJob, WaitAnyTakesTheQueueWithRecords) {
  MemQueue a(0), b(3);
  libneuron_queue* qs[2] = {a.q, b.q};
  libneuron_record out[8];
  std::size_t index = 9;
  std::uint64_t lost = 9;
  EXPECT_EQ(libneuron_queue_wait_any(qs, 2, 0, out, 8, 0, &index, &lost), 3) << libneuron_last_error();
  EXPECT_EQ(index, 1u);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(out[2].bytes[8], 0x42);
  EXPECT_EQ(libneuron_queue_wait_any(qs, 2, 0, out, 8, 0, &index, &lost), 0);  // empty, timeout 0
}

// ---- Issue 41 item 4: fork (docs/decisions/0041-fork-in-libneuron.md) ----

TEST(CApiFork, ChildRefusesInheritedHandlesAndHoldsNoDeviceDescriptor) {
  // /dev/zero stands for a device node the C API opened (note_device)
  const int node = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(node, 0);
  neuron::capi::note_device(node);
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d) << d.error().message();
  libneuron_device* dev = std::make_unique<DeviceHandle>(std::move(d).value()).release();  // closed below
  MemQueue m(2);
  libneuron_program* p = hello();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // exit code: a bit per check that failed
    int bad = 0;
    if (libneuron_core_acquire(dev, 1, nullptr) != -ECHILD) bad |= 1;
    if (std::string(libneuron_last_error()).find("made by the parent process before fork()") == std::string::npos)
      bad |= 2;
    libneuron_record out[8];
    if (libneuron_queue_drain(m.q, out, 8, nullptr) != -ECHILD) bad |= 4;
    libneuron_result* r = nullptr;
    if (libneuron_execute(dev, p, nullptr, &r) != -ECHILD) bad |= 8;
    if (libneuron_device_state(dev) != -ECHILD) bad |= 16;
    struct stat st {}, null_st {};
    ::stat("/dev/null", &null_st);
    if (::fstat(node, &st) != 0 || st.st_rdev != null_st.st_rdev) bad |= 32;  // the node is cut
    libneuron_device_close(dev);  // frees nothing of the parent's
    ::_exit(bad);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // the parent's handles and descriptor are untouched
  libneuron_record out[8];
  EXPECT_EQ(libneuron_queue_drain(m.q, out, 8, nullptr), 2) << libneuron_last_error();
  struct stat st {};
  ASSERT_EQ(::fstat(node, &st), 0);
  EXPECT_EQ(major(st.st_rdev), 1u);
  EXPECT_EQ(minor(st.st_rdev), 5u);  // /dev/zero is 1:5
  ::close(node);
  libneuron_program_free(p);
  libneuron_device_close(dev);
}
