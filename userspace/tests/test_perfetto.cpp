// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "libneuron/perfetto.hpp"

using namespace neuron;

namespace {
// A trace record by hand: word0 = pc | hint << 20 | header << 24; run @4; ts @8.
CollectedRecord trace(unsigned core, std::uint8_t header, std::uint32_t pc, std::uint64_t ts_ps) {
  CollectedRecord c;
  c.core = core;
  const std::uint32_t w0 = pc | (std::uint32_t(header) << 24);
  for (int b = 0; b < 4; ++b) c.raw.bytes[b] = static_cast<std::uint8_t>(w0 >> (8 * b));
  c.raw.bytes[4] = 1;
  for (int b = 0; b < 8; ++b) c.raw.bytes[8 + b] = static_cast<std::uint8_t>(ts_ps >> (8 * b));
  c.decoded = decode(c.raw);
  return c;
}
}  // namespace

TEST(Perfetto, PairsByEngineAndPcAndCountsStrays) {
  std::vector<CollectedRecord> recs = {
      trace(0, 0x84, 0, 1'000'000),  // PE start pc 0 @1us
      trace(0, 0x90, 0, 1'500'000),  // DVE start pc 0
      trace(0, 0x85, 0, 3'000'000),  // PE end pc 0 @3us
      trace(0, 0x91, 0, 4'000'000),  // DVE end
      trace(1, 0x85, 7, 5'000'000),  // core 1 PE end without start
      trace(1, 0x84, 8, 6'000'000),  // core 1 PE start without end
  };
  TraceStats st;
  const auto j = chrome_trace(recs, &st);
  EXPECT_EQ(st.slices, 2u);
  EXPECT_EQ(st.unmatched_ends, 1u);
  EXPECT_EQ(st.unmatched_starts, 1u);
  bool found = false;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == 0) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.0);
      EXPECT_EQ(e["name"], "pc 0");
      found = true;
    }
  EXPECT_TRUE(found);
  int procs = 0;
  for (const auto& e : j["traceEvents"])
    if (e["name"] == "process_name") ++procs;
  EXPECT_EQ(procs, 2);
}
