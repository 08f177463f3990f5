// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "libneuron/assembler.hpp"
#include "libneuron/json.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/format.hpp"

using namespace neuron;

namespace {
Record record_bytes(std::initializer_list<int> b) {
  Record r;
  std::size_t i = 0;
  for (int v : b) r.bytes[i++] = static_cast<std::uint8_t>(v);
  return r;
}
}  // namespace

TEST(Format, JsonOfTpbErrorCarriesBothArms) {
  // SEQUENCER_NONFATAL, metadata_lo 0x0835, header 0x9f, metadata_hi 0x005c1a42, ts 7
  const Record r = record_bytes({0x09, 0x35, 0x08, 0x9f, 0x42, 0x1a, 0x5c, 0x00, 7, 0, 0, 0, 0, 0, 0, 0});
  const auto j = to_json(decode(r));
  EXPECT_EQ(j["type"], "TPB_ERROR");
  EXPECT_EQ(j["kind"], "TPB_ERROR");
  EXPECT_EQ(j["error"], "SEQUENCER_NONFATAL");
  EXPECT_EQ(j["error_id"], 9);
  EXPECT_EQ(j["fatal"], false);
  EXPECT_EQ(j["metadata"], 0x005c1a420835ull);
  EXPECT_EQ(j["sequencer"]["engine"], "POOL");
  EXPECT_EQ(j["sequencer"]["program_counter"], 0x1a4);
  EXPECT_EQ(j["sequencer"]["info_kind"], "DGE_BOUNDS");
  EXPECT_EQ(j["device_time_ps"], 7);
  EXPECT_EQ(j["phase"], 1);
  EXPECT_TRUE(j["text"].get<std::string>().find("DGE OOB") != std::string::npos);
  // round-trips through text
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST(Format, JsonOfTraceAndExplicit) {
  const Record t = record_bytes({0x42, 0x00, 0xa0, 0x88, 0x02, 0x01, 0xef, 0xbe, 0, 0, 0, 0, 0, 0, 0, 0});
  auto j = to_json(decode(t));
  EXPECT_EQ(j["type"], "ACT_INST_START");
  EXPECT_EQ(j["engine"], "ACT");
  EXPECT_EQ(j["trace"], "INST_START");
  EXPECT_EQ(j["program_counter"], 0x42);
  EXPECT_EQ(j["data_crc"], 0xbeef);
  const Record e = record_bytes({0x02, 0x00, 0x30, 0x86, 0x01, 0x00, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0, 0});
  j = to_json(decode(e));
  EXPECT_EQ(j["debug_hint_extended"], 0x1234);
  EXPECT_EQ(j["debug_hint"], 3);
}

TEST(Format, TimeFormatting) {
  EXPECT_EQ(format_time(Timestamp{0}), "0.000000000");
  EXPECT_EQ(format_time(Timestamp{1234567890123ull}), "1.234567890");
  EXPECT_DOUBLE_EQ(Timestamp{2000000}.microseconds(), 2.0);
}

TEST(Format, DgeInvalidAndFpErrorsReadAsActions) {
  // SEQUENCER_FATAL, metadata_lo {info_kind 6 DGE_INVALID, bc_reg 5} = 6 | 5 << 4 = 0x56,
  // header 0x9f, metadata_hi {block 2, pc 9, info 0x01} = 2 | 9 << 4 | 1 << 16 = 0x00010092.
  const Record r = record_bytes({0x0a, 0x56, 0x00, 0x9f, 0x92, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const std::string s = to_text(decode(r));
  EXPECT_NE(s.find("DGE descriptor structurally invalid on POOL at pc 0x9"), std::string::npos) << s;
  EXPECT_NE(s.find("engine halted; reset it"), std::string::npos) << s;
}

// info bit 0x10 of a DGE structural error: the length (docs/device-model.md
// "DGE copy" step 1, #dma-engines: above 4 MiB no split exists).
// SEQUENCER_FATAL, metadata_lo {DGE_INVALID 6, bc_reg 0, direction 0} = 0x0006 -> 06 00,
// header 0x9f, metadata_hi {POOL 2, pc 1, info 0x10} = 2 | 1 << 4 | 0x10 << 16 = 0x00100012.
TEST(Format, DgeInvalidLengthBitIsNamed) {
  const Record r = record_bytes({0x0a, 0x06, 0x00, 0x9f, 0x12, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const auto e = std::get<TpbError>(decode(r));
  EXPECT_EQ(e.sequencer.info, 0x10);
  std::string s = to_text(decode(r));
  EXPECT_NE(s.find("structurally invalid on POOL at pc 0x1: length above 4 MiB"), std::string::npos) << s;
  EXPECT_EQ(s.find("info 0x10"), std::string::npos) << s;
  // info 0x18: index encoding and length, in bit order; 0x12 -> 12 00 18 00
  Record r2 = r;
  r2.bytes[6] = 0x18;
  s = to_text(decode(r2));
  EXPECT_NE(s.find("bad index encoding, length above 4 MiB"), std::string::npos) << s;
  // a bit beyond 0x10 is shown, not dropped: info 0x30 -> 12 00 30 00
  r2.bytes[6] = 0x30;
  s = to_text(decode(r2));
  EXPECT_NE(s.find("length above 4 MiB"), std::string::npos) << s;
  EXPECT_NE(s.find("unknown bits 0x20"), std::string::npos) << s;
}

TEST(Format, DgeInvalidLengthExplainedAgainstTheProgram) {
  // 0x400001 bytes = 65537 packets of 64 bytes > 16 x 4096
  auto p = assemble("[pool]\ndge src=0x0 dst=0x800000 len=0x400001\nhalt\n", "long.nq");
  ASSERT_TRUE(p) << p.error().message();
  // SEQUENCER_FATAL DGE_INVALID: 06 00; POOL pc 0 info 0x10: 02 00 10 00
  const Record r = record_bytes({0x0a, 0x06, 0x00, 0x9f, 0x02, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const std::string s = explain(std::get<TpbError>(decode(r)), *p, 0);
  EXPECT_NE(s.find("structurally invalid on POOL at pc 0x0 (long.nq:2): len 4194305 (0x400001) is above 4 MiB"),
            std::string::npos)
      << s;
}

TEST(Format, NotificCauseNames) {
  EXPECT_EQ(notific_cause_names(0), "none");
  EXPECT_EQ(notific_cause_names(0x1), "THRESHOLD");
  EXPECT_EQ(notific_cause_names(0x82), "DISABLED_QUEUE|BAD_HEAD");
  // docs/device-model.md#intr-cause-table: intr_3 the input buffer's drop, intr_8 its full edge
  EXPECT_EQ(notific_cause_names(0x108), "HW_OVERFLOW|WRBUF_FULL");
}

// explain() with the program: the record names engine, pc, bc_reg and the
// direction; the program gives the descriptor and the limit register's value.
TEST(Format, DgeOobExplainedAgainstTheProgram) {
  auto p = assemble("features 0x2\n[pool]\nreg 3 0x1000\nreg 4 0\ndge src=0x100 dst=0x1000 len=0x800 bc_dst=3\nhalt\n",
                    "oob.nq");
  ASSERT_TRUE(p) << p.error().message();
  // SEQUENCER_NONFATAL, metadata_lo {DGE_BOUNDS 5, bc_reg 3, dst 2} = 5 | 3 << 4 | 2 << 10 = 0x0835,
  // metadata_hi {POOL 2, pc 2, info 2} = 2 | 2 << 4 | 2 << 16 = 0x00020022.
  const Record r = record_bytes({0x09, 0x35, 0x08, 0x9f, 0x22, 0x00, 0x02, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const auto e = std::get<TpbError>(decode(r));
  const std::string s = explain(e, *p, 0);
  EXPECT_NE(s.find("DGE OOB on POOL at pc 0x2 (oob.nq:5): dst $S[3]+0x7ff > limit"), std::string::npos) << s;
  EXPECT_NE(s.find("bytes 0x1000..0x17ff, limit $S[3] = 0x1000 (line 3)"), std::string::npos) << s;
  EXPECT_NE(s.find("engine continued"), std::string::npos) << s;
  // a record from another core, or a pc outside the program: the record's own words
  EXPECT_EQ(explain(e, *p, 1), explain(e));
}

TEST(Format, DgeStructuralErrorExplainedAgainstTheProgram) {
  auto p = assemble("[pool]\ndge src=0x100 dst=0x800 len=16 bc_src=raw:0x40\n[act]\nnop\n", "bad.nq");
  ASSERT_TRUE(p);
  // SEQUENCER_FATAL DGE_INVALID, direction src: 06 04; POOL pc 0 info 1: 02 00 01 00
  const Record r = record_bytes({0x0a, 0x06, 0x04, 0x9f, 0x02, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const std::string s = explain(std::get<TpbError>(decode(r)), *p, 0);
  EXPECT_NE(s.find("structurally invalid on POOL at pc 0x0 (bad.nq:2)"), std::string::npos) << s;
  EXPECT_NE(s.find("bc_src=0x40 has the check off but other bits set"), std::string::npos) << s;
  EXPECT_NE(s.find("engine halted"), std::string::npos) << s;
  EXPECT_NE(s.find("TIMEOUT"), std::string::npos) << s;
}
