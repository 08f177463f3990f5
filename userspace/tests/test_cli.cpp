// SPDX-License-Identifier: MIT
//
// neuron-nq's output contract (docs/cli-json.md): the exit status of each
// runtime status, the error groups and bounded display of a storm
// (tools/storm.hpp), and the JSON Lines objects against golden files in
// tests/data/ (literal text, written by hand-checking the first output; a
// change in the output must change the golden file in the same commit).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "libneuron/neuron.hpp"
#include "merge.hpp"
#include "output.hpp"
#include "storm.hpp"

using namespace neuron;
using namespace neuron::cli;

namespace {

/// A TPB_ERROR record as the device writes it (docs/hardware.md#rec-tpb-error):
/// byte 0 error_id, bytes 1..2 metadata_lo (info_kind FP = 5 in bits 3:0),
/// byte 3 header (type 0x1f, phase 1), bytes 4..7 metadata_hi
/// {block:4, pc:12, info:8}, bytes 8..15 the timestamp in ps.
Record tpb(std::uint8_t error_id, unsigned block, unsigned pc, std::uint64_t ps) {
  Record r;
  r.bytes[0] = error_id;
  r.bytes[1] = 0x05;
  r.bytes[3] = 0x9f;
  const std::uint32_t hi = block | pc << 4;
  for (int i = 0; i < 4; ++i) r.bytes[4 + i] = static_cast<std::uint8_t>(hi >> (8 * i));
  for (int i = 0; i < 8; ++i) r.bytes[8 + i] = static_cast<std::uint8_t>(ps >> (8 * i));
  return r;
}

/// ACT_INST_START at pc 0x42, crc 0xbeef (as in test_format.cpp), at `ps`.
Record act_start(std::uint64_t ps) {
  Record r;
  const std::uint8_t b[8] = {0x42, 0x00, 0xa0, 0x88, 0x02, 0x01, 0xef, 0xbe};
  for (int i = 0; i < 8; ++i) r.bytes[i] = b[i];
  for (int i = 0; i < 8; ++i) r.bytes[8 + i] = static_cast<std::uint8_t>(ps >> (8 * i));
  return r;
}

void add(Storm& s, unsigned queue, const Record& r) { s.add(0, queue, r, decode(r, queue_class(queue)), 0); }

/// Whatever `f` prints on a FILE*, as a string.
template <class F>
std::string capture(F&& f) {
  std::FILE* t = std::tmpfile();
  f(t);
  std::fflush(t);
  std::rewind(t);
  std::string s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, t)) > 0) s.append(buf, n);
  std::fclose(t);
  return s;
}

/// The golden file `name`. With NEURON_WRITE_GOLDEN=1 in the environment it
/// is first (re)written with `actual` instead: review the diff before
/// committing it.
std::string golden(const std::string& name, const std::string& actual) {
  if (const char* w = std::getenv("NEURON_WRITE_GOLDEN"); w && std::string(w) == "1")
    std::ofstream(std::string(NEURON_TEST_DATA_DIR) + "/" + name) << actual;
  std::ifstream in(std::string(NEURON_TEST_DATA_DIR) + "/" + name);
  EXPECT_TRUE(in) << "no golden file tests/data/" << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The storm of the golden files: interval 0 has 1000 FP_UNDERFLOW from PE
/// pc 5 (at 1, 2, ... 1000 us), 500 FP_NAN from ACT pc 7 (every 3 us) and 45
/// ACT_INST_START; interval 1 has FP_INF from POOL at pcs 0..11, i + 1 of
/// them at pc i (12 groups, 78 records), at 2 ms + pc ps.
struct StormRun {
  Program prog;
  Storm storm{{false, 40, false, 10, 1 << 16}, prog};
  Storm::Interval first, second;
  StormRun() {
    for (unsigned i = 0; i < 1000; ++i) add(storm, 3, tpb(NEURON_ISA_TPB_ERROR_FP_UNDERFLOW, 0, 5, 1000000ull * (i + 1)));
    for (unsigned i = 0; i < 500; ++i) add(storm, 3, tpb(NEURON_ISA_TPB_ERROR_FP_NAN, 1, 7, 3000000ull * (i + 1)));
    for (unsigned i = 0; i < 45; ++i) add(storm, 0, act_start(500ull * (i + 1)));
    first = storm.take_interval();
    for (unsigned pc = 0; pc < 12; ++pc)
      for (unsigned k = 0; k <= pc; ++k) add(storm, 3, tpb(NEURON_ISA_TPB_ERROR_FP_INF, 2, pc, 2'000'000'000ull + pc));
    second = storm.take_interval();
  }
};

}  // namespace

TEST(Cli, ExitCodeOfEachStatus) {
  EXPECT_EQ(exit_code(ExecStatus::Ok), 0);
  EXPECT_EQ(exit_code(ExecStatus::Failure), 2);
  EXPECT_EQ(exit_code(ExecStatus::Timeout), 3);
  EXPECT_EQ(exit_code(ExecStatus::CompletedWithError), 4);
  EXPECT_EQ(exit_code(ExecStatus::SwNqOverflow), 5);
  EXPECT_EQ(exit_code(static_cast<ExecStatus>(4242)), 6);
  // appended (issue 28): throttle is its own outcome, not 4
  EXPECT_EQ(static_cast<int>(ExecStatus::CompletedThrottled), 2001);
  EXPECT_EQ(exit_code(ExecStatus::CompletedThrottled), 7);
}

TEST(Cli, UsageErrorsAreOneDeviceErrorsTwo) {
  EXPECT_EQ(fail(Error::make(make_error_code(errc::invalid_argument), "--core 9 is not visible")), 1);
  EXPECT_EQ(fail(Error::from_errno(EINVAL, "NEURON_IOC_SUBMIT")), 1);
  EXPECT_EQ(fail(Error::from_errno(ENOENT, "open /dev/nnq9")), 2);
  EXPECT_EQ(fail(Error::from_errno(EBUSY, "NEURON_IOC_CORE_ACQUIRE")), 2);
}

TEST(Cli, StormCountsEveryRecordByType) {
  StormRun r;
  const auto t = r.storm.totals();
  EXPECT_EQ(t.records, 1623u);  // 1000 + 500 + 45 + (1 + ... + 12 = 78)
  EXPECT_EQ(t.errors, 1578u);
  EXPECT_EQ(t.per_type.at("TPB_ERROR"), 1578u);
  EXPECT_EQ(t.per_type.at("ACT_INST_START"), 45u);
  EXPECT_EQ(t.per_error.at("FP_UNDERFLOW"), 1000u);
  EXPECT_EQ(t.per_error.at("FP_NAN"), 500u);
  EXPECT_EQ(t.per_error.at("FP_INF"), 78u);
  ASSERT_EQ(t.groups.size(), 14u);
  EXPECT_EQ(t.groups[0].first.error, "FP_UNDERFLOW");
  EXPECT_EQ(t.groups[0].first.engine, "PE");
  EXPECT_EQ(*t.groups[0].first.pc, 5u);
  EXPECT_EQ(t.groups[0].second.count, 1000u);
  EXPECT_EQ(t.groups[0].second.first_ps, 1000000u);     // 1 us
  EXPECT_EQ(t.groups[0].second.last_ps, 1000000000u);   // 1000 us
  EXPECT_EQ(t.hidden_records, 5u);  // 45 trace records, 40 shown in the interval
  EXPECT_EQ(r.first.hidden_records, 5u);
  EXPECT_EQ(r.first.groups.size(), 2u);
  EXPECT_EQ(r.second.groups.size(), 12u);
  EXPECT_EQ(r.storm.take_shown().size(), 40u);  // errors are grouped, not shown
}

TEST(Cli, StormDropsDisplayLinesNotRecords) {
  Program prog;
  Storm s({true, 40, false, 10, 10}, prog);  // --verbose, a 10-line buffer the printer never empties
  for (unsigned i = 0; i < 25; ++i) add(s, 3, tpb(NEURON_ISA_TPB_ERROR_FP_NAN, 1, 7, i));
  const auto t = s.totals();
  EXPECT_EQ(t.records, 25u);
  EXPECT_EQ(t.per_error.at("FP_NAN"), 25u);
  EXPECT_EQ(t.dropped_lines, 15u);
  EXPECT_EQ(s.take_shown().size(), 10u);
}

TEST(Cli, StormJsonLinesMatchGolden) {
  StormRun r;
  const std::string out = capture([&](std::FILE* f) {
    print_interval(f, r.first, 10, true, "", 0);
    print_interval(f, r.second, 10, true, "", 1);
    auto j = totals_json(r.storm.totals(), 3);
    j["schema"] = kJsonSchemaVersion;
    j["object"] = "summary";
    std::fprintf(f, "%s\n", j.dump().c_str());
  });
  EXPECT_EQ(out, golden("storm.jsonl", out));
  // one object per line, each with the schema version
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_EQ(nlohmann::json::parse(line)["schema"], kJsonSchemaVersion) << line;
}

TEST(Cli, StormTextMatchesGolden) {
  StormRun r;
  const std::string out = capture([&](std::FILE* f) {
    print_interval(f, r.first, 10, false, "[+1.0s]", 0);
    print_interval(f, r.second, 10, false, "[+2.0s]", 1);
    print_totals_text(f, r.storm.totals(), 3);
  });
  EXPECT_EQ(out, golden("storm.txt", out));
}

TEST(Cli, RecordAndEdgeJsonMatchGolden) {
  const Record t = act_start(5000);
  const Decoded d = decode(t);
  const std::string out = capture([&](std::FILE* f) {
    std::fprintf(f, "%s\n", record_json(0, 0, d, to_text(d)).dump().c_str());
    std::fprintf(f, "%s\n",
                 edge_json({0, 0, NEURON_EDGE_NOTIFIC, 1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW, 0x2, 7, 123456789})
                     .dump()
                     .c_str());
    // the owner's release stopped programs on PE and ACT of core 1 (the 3rd and 4th there)
    std::fprintf(f, "%s\n",
                 edge_json({0, 1, NEURON_EDGE_ENGINE_STOPPED, NEURON_STOP_RELEASE,
                            (1u << NEURON_ENGINE_PE) | (1u << NEURON_ENGINE_ACT), 4, 987654321})
                     .dump()
                     .c_str());
    // core 1's 11th THROTTLE edge, after 6 the rate limit kept back
    std::fprintf(f, "%s\n",
                 edge_json({0, 1, NEURON_EDGE_THROTTLE, 0x2, 0, 11, 5, 6, 0}).dump().c_str());
    // core 2's PE hung WAITING at instruction 17 (its first hang)
    std::fprintf(f, "%s\n",
                 edge_json({std::nullopt, 2, NEURON_EDGE_HANG, NEURON_ENGINE_WAITING, 1u << NEURON_ENGINE_PE, 1, 6, 0,
                            17})
                     .dump()
                     .c_str());
  });
  EXPECT_EQ(out, golden("record-edge.jsonl", out));
}

// monitor's text lines for edges (merge.hpp print_item): a NOTIFIC edge and
// the ENGINE_STOPPED edge of a program its owner's release stopped
TEST(Cli, EdgeTextLines) {
  Item notific;
  notific.t_ns = 1'500'000'000;
  notific.ev.core = 0;
  notific.ev.edge = NEURON_EDGE_NOTIFIC;
  notific.ev.cause = 1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW;
  notific.ev.queues = 0x2;
  notific.ev.count = 7;
  Item stopped;
  stopped.t_ns = 2'000'000'001;
  stopped.ev.core = 1;
  stopped.ev.edge = NEURON_EDGE_ENGINE_STOPPED;
  stopped.ev.cause = NEURON_STOP_RELEASE;
  stopped.ev.queues = (1u << NEURON_ENGINE_PE) | (1u << NEURON_ENGINE_SP);
  stopped.ev.count = 4;
  Item hang;
  hang.t_ns = 3'000'000'000;
  hang.ev.core = 2;
  hang.ev.edge = NEURON_EDGE_HANG;
  hang.ev.cause = NEURON_ENGINE_WAITING;
  hang.ev.queues = 1u << NEURON_ENGINE_PE;
  hang.ev.count = 1;
  hang.ev.pc = 17;
  Item throttle;
  throttle.t_ns = 4'000'000'000;
  throttle.ev.core = 1;
  throttle.ev.edge = NEURON_EDGE_THROTTLE;
  throttle.ev.cause = 0x2;
  throttle.ev.count = 11;
  throttle.ev.suppressed = 6;
  const Program none;
  const std::string out = capture([&](std::FILE* f) {
    print_item(notific, none, std::nullopt, false, f);
    print_item(stopped, none, std::nullopt, false, f);
    print_item(hang, none, std::nullopt, false, f);
    print_item(throttle, none, std::nullopt, false, f);
  });
  EXPECT_EQ(out,
            "       1.500000000  edge  c0     NOTIFIC SW_OVERFLOW queues 0x2 (edge #7 of this core and vector)\n"
            "       2.000000001  edge  c1     ENGINE_STOPPED RELEASE engines PE,SP (program #4 stopped on this core)\n"
            "       3.000000000  edge  c2     HANG engines PE WAITING at pc 17 (hang #1 on this core)\n"
            "       4.000000000  edge  c1     THROTTLE cause 0x2 (6 before it suppressed) (edge #11 of this core and vector)\n");
}
