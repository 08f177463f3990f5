// SPDX-License-Identifier: MIT
//
// Assembler: good programs give the instruction bytes of emu_isa.h (expected
// values written by hand below), bad ones give "file:line: what is wrong".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include <cstring>
#include <endian.h>
#include <fstream>
#include <sstream>

#include "libneuron/assembler.hpp"
#include "number.hpp"
#include "program_layout.hpp"
#include "uapi/linux/neuron.h"

using namespace neuron;
using ::testing::HasSubstr;

namespace {
std::array<std::uint8_t, 32> raw(const neuron_emu_insn& in) {
  std::array<std::uint8_t, 32> b{};
  std::memcpy(b.data(), &in, 32);
  return b;
}
std::string err(std::string_view text, std::string_view name = "prog.nq") {
  auto p = assemble(text, name);
  EXPECT_FALSE(p) << "assembled but should not have: " << text;
  return p ? std::string() : p.error().what;
}
}  // namespace

TEST(Assembler, HelloExample) {
  auto p = assemble_file(std::string(NEURON_EXAMPLES_DIR) + "/hello.nq");
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->engines.size(), 2u);
  const auto& pe = p->engines[0];
  EXPECT_EQ(pe.core, 0u);
  EXPECT_EQ(pe.engine, unsigned(NEURON_ENGINE_PE));
  ASSERT_EQ(pe.insns.size(), 4u);
  // notify hint=3 ext=0x1234: opcode 0x01 @0, flags 0 @1, debug_hint 3 @2 (u16),
  // reserved @4, events zero @8, operand.arg {idx 0 @16, value 0 @20, debug_hint_extended 0x1234 @24}
  const std::array<std::uint8_t, 32> want = {0x01, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                             0, 0, 0, 0, 0, 0, 0, 0, 0x34, 0x12, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(raw(pe.insns[1]), want);
  EXPECT_EQ(pe.insns[0].opcode, NEURON_OP_NOP);
  EXPECT_EQ(pe.insns[3].opcode, NEURON_OP_HALT);
  EXPECT_EQ(pe.lines[1], 7u);
  const auto& act = p->engines[1];
  EXPECT_EQ(act.engine, unsigned(NEURON_ENGINE_ACT));
  ASSERT_EQ(act.insns.size(), 2u);
  EXPECT_EQ(act.insns[0].debug_hint, 1);
  EXPECT_EQ(p->cores(), std::set<unsigned>{0});
  EXPECT_EQ(p->instruction_count(), 6u);
}

TEST(Assembler, EveryOpcodeAndSuffix) {
  auto p = assemble(R"(
[core1.pool]
sem.set 3 10
sem.inc 4 0x20
sem.dec 5 1
wait.ge 6 2
wait.ge.dec 7 3
event.set 8
event.clear 9
reg 63 0xdeadbeef
fp_error FP_NAN
fp_error 0x0a
throttle 2
delay 1000
nop @hint=15 @wait=ge:1 @value=4 @update=sem.inc:2
halt
)");
  ASSERT_TRUE(p) << p.error().message();
  const auto* e = p->find(1, NEURON_ENGINE_POOL);
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->insns.size(), 14u);
  const auto& i = e->insns;
  EXPECT_EQ(i[0].opcode, NEURON_OP_SEM_SET);
  EXPECT_EQ(le32toh(i[0].operand.arg.idx), 3u);
  EXPECT_EQ(le32toh(i[0].operand.arg.value), 10u);
  EXPECT_EQ(i[1].opcode, NEURON_OP_SEM_INC);
  EXPECT_EQ(le32toh(i[1].operand.arg.value), 0x20u);
  EXPECT_EQ(i[2].opcode, NEURON_OP_SEM_DEC);
  EXPECT_EQ(i[3].opcode, NEURON_OP_WAIT_GE);
  EXPECT_EQ(i[4].opcode, NEURON_OP_WAIT_GE_AND_DEC);
  EXPECT_EQ(i[5].opcode, NEURON_OP_EVENT_SET);
  EXPECT_EQ(le32toh(i[5].operand.arg.idx), 8u);
  EXPECT_EQ(i[6].opcode, NEURON_OP_EVENT_CLEAR);
  EXPECT_EQ(i[7].opcode, NEURON_OP_REG_WRITE);
  EXPECT_EQ(le32toh(i[7].operand.arg.idx), 63u);
  EXPECT_EQ(le32toh(i[7].operand.arg.value), 0xdeadbeefu);
  EXPECT_EQ(i[8].opcode, NEURON_OP_FP_ERROR);
  EXPECT_EQ(le32toh(i[8].operand.arg.value), 0x01u);
  EXPECT_EQ(le32toh(i[9].operand.arg.value), 0x0au);
  EXPECT_EQ(i[10].opcode, NEURON_OP_THROTTLE);
  EXPECT_EQ(i[11].opcode, NEURON_OP_DELAY);
  EXPECT_EQ(le32toh(i[11].operand.arg.value), 1000u);
  // nop @hint=15 @wait=ge:1 @value=4 @update=sem.inc:2:
  // EVENTS block @8 = {wait_mode 1, wait_idx 1, update_mode 2, update_idx 2, semaphore_value 4}
  const auto b = raw(i[12]);
  EXPECT_EQ(b[0], NEURON_OP_NOP);
  EXPECT_EQ(b[2], 15);
  const std::array<std::uint8_t, 8> ev = {1, 1, 2, 2, 4, 0, 0, 0};
  EXPECT_TRUE(std::equal(ev.begin(), ev.end(), b.begin() + 8));
  EXPECT_EQ(i[13].opcode, NEURON_OP_HALT);
}

TEST(Assembler, DgeDescriptor) {
  auto p = assemble(R"(
[pool]
dge src=0x1000 dst=0x2000 len=256 bc_src=3 bc_dst=4,quiet indirect=1,err backend=rtl
dge src=0 dst=0 len=1 bc_src=off,quiet backend=none
dge src=0 dst=0 len=1 bc_dst=raw:0x41 indirect=raw:0xff
)");
  ASSERT_TRUE(p) << p.error().message();
  const auto& i = p->engines[0].insns;
  // operand.dge @16: src u32, dst u32, length u32, bc_src @28, bc_dst @29, indirect @30, backend @31
  // bc_src=3 -> enabled(0x80) | reg 3 = 0x83; bc_dst=4,quiet -> 0x80 | 0x40 | 4 = 0xc4;
  // indirect=1,err -> mode 1 | idx_bound_is_err (0x04) = 0x05; backend rtl = 2
  const std::array<std::uint8_t, 16> want = {0x00, 0x10, 0, 0, 0x00, 0x20, 0, 0, 0x00, 0x01, 0, 0, 0x83, 0xc4, 0x05, 0x02};
  const auto b = raw(i[0]);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), b.begin() + 16));
  EXPECT_EQ(b[0], NEURON_OP_DGE_COPY);
  const auto b1 = raw(i[1]);
  EXPECT_EQ(b1[28], 0x40);  // suppress bit without enable: structurally invalid on purpose
  EXPECT_EQ(b1[31], NEURON_DGE_BACKEND_NONE);
  const auto b2 = raw(i[2]);
  EXPECT_EQ(b2[29], 0x41);
  EXPECT_EQ(b2[30], 0xff);
  EXPECT_EQ(b2[31], NEURON_DGE_BACKEND_POOL);  // default backend
}

// The index path's fields in the instruction header (include/neuron/emu_isa.h,
// docs/program-syntax.md#dge-index): flags @1 = mode byte {wide:1, elem log2:3},
// reserved0 @4 = the index table offset, little-endian.
TEST(Assembler, DgeIndexFields) {
  auto p = assemble(R"(
[pool]
dge src=0x1000 dst=0x2000 len=64 bc_src=63 indirect=1 elem=4 idx=0x3000
dge src=0 dst=0 len=1 bc_src=62 offsets=wide
dge src=0 dst=0 len=128 indirect=2,err elem=128 idx=0x12345678 offsets=wide
dge src=0 dst=0 len=8 indirect=3 elem=1 idx=0x40 offsets=narrow
)");
  ASSERT_TRUE(p) << p.error().message();
  const auto& i = p->engines[0].insns;
  const auto b0 = raw(i[0]);
  EXPECT_EQ(b0[1], 0x04);  // elem 4 = 1 << 2 -> bits 3..1 = 2 -> 0x04; narrow
  const std::array<std::uint8_t, 4> t0 = {0x00, 0x30, 0x00, 0x00};
  EXPECT_TRUE(std::equal(t0.begin(), t0.end(), b0.begin() + 4));
  EXPECT_EQ(b0[28], 0xbf);  // bc_src=63: 0x80 | 63
  const auto b1 = raw(i[1]);
  EXPECT_EQ(b1[1], 0x01);  // wide offsets, no element size
  EXPECT_EQ(b1[4] | b1[5] | b1[6] | b1[7], 0);
  const auto b2 = raw(i[2]);
  EXPECT_EQ(b2[1], 0x0f);  // wide | elem 128 (log2 7 -> 0x0e)
  const std::array<std::uint8_t, 4> t2 = {0x78, 0x56, 0x34, 0x12};
  EXPECT_TRUE(std::equal(t2.begin(), t2.end(), b2.begin() + 4));
  EXPECT_EQ(b2[30], 0x06);  // scatter (2) | idx_bound_is_err (0x04)
  const auto b3 = raw(i[3]);
  EXPECT_EQ(b3[1], 0x00);  // elem 1 = log2 0, narrow
  EXPECT_EQ(b3[4], 0x40);
  // round trip through the disassembler keeps every byte
  auto q = assemble(disassemble(*p));
  ASSERT_TRUE(q) << q.error().message() << "\n" << disassemble(*p);
  for (std::size_t k = 0; k < i.size(); ++k) EXPECT_EQ(raw(i[k]), raw(q->engines[0].insns[k])) << k;
  EXPECT_THAT(err("[pool]\ndge src=1 dst=2 len=3 elem=3\n"), HasSubstr("dge elem 3 is not a power of two in 1..128"));
  EXPECT_THAT(err("[pool]\ndge src=1 dst=2 len=3 elem=256\n"), HasSubstr("dge elem 256 out of range"));
  EXPECT_THAT(err("[pool]\ndge src=1 dst=2 len=3 offsets=huge\n"), HasSubstr("dge offsets 'huge': use narrow or wide"));
}

TEST(Assembler, CommentsBlankLinesSectionsAndCase) {
  auto p = assemble("# header\n\n  [PE]  # engine\n\tnop   # trailing\n[sp]\nhalt\n[pe]\nhalt\n");
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->engines.size(), 2u);
  EXPECT_EQ(p->engines[0].insns.size(), 2u);  // [pe] appears twice: appended
  EXPECT_EQ(p->engines[1].engine, unsigned(NEURON_ENGINE_SP));
}

TEST(Assembler, DisassembleRoundTrips) {
  const char* src = R"(
[pe]
nop
notify hint=3 ext=0x1234
sem.inc 4 32 @wait=ge.dec:9 @value=7
[core2.dve]
dge src=0x10 dst=0x20 len=4 bc_src=3 bc_dst=4,quiet indirect=raw:0x05 backend=2
event.set 1 @hint=2 @update=event.clear:5
halt
)";
  auto p = assemble(src);
  ASSERT_TRUE(p) << p.error().message();
  const std::string text = disassemble(*p);
  auto q = assemble(text);
  ASSERT_TRUE(q) << q.error().message() << "\n" << text;
  ASSERT_EQ(p->engines.size(), q->engines.size());
  for (std::size_t e = 0; e < p->engines.size(); ++e) {
    ASSERT_EQ(p->engines[e].insns.size(), q->engines[e].insns.size());
    for (std::size_t k = 0; k < p->engines[e].insns.size(); ++k)
      EXPECT_EQ(raw(p->engines[e].insns[k]), raw(q->engines[e].insns[k])) << text;
  }
}

TEST(Assembler, UnknownOpcodeNamesLineAndSuggests) {
  const std::string e = err("[pe]\nnop\nnop\nnop\nnop\nnop\nnopp\n");
  EXPECT_THAT(e, HasSubstr("prog.nq:7: unknown opcode 'nopp'"));
  EXPECT_THAT(e, HasSubstr("did you mean 'nop'"));
}

TEST(Assembler, BadPrograms) {
  EXPECT_THAT(err("nop\n"), HasSubstr("prog.nq:1: 'nop' is outside a section"));
  EXPECT_THAT(err("[gpu]\nnop\n"), HasSubstr("prog.nq:1: unknown engine 'gpu'"));
  EXPECT_THAT(err("[pe\nnop\n"), HasSubstr("prog.nq:1: section header '[pe' lacks its closing ']'"));
  EXPECT_THAT(err("[core99.pe]\nnop\n"), HasSubstr("bad core"));
  EXPECT_THAT(err("[pe]\nsem.inc 256 1\n"), HasSubstr("prog.nq:2: semaphore 256 out of range 0..255"));
  EXPECT_THAT(err("[pe]\nsem.inc 1\n"), HasSubstr("prog.nq:2: 'sem.inc' takes 2 operands, got 1"));
  EXPECT_THAT(err("[pe]\nreg 64 1\n"), HasSubstr("register $S index 64 out of range 0..63"));
  EXPECT_THAT(err("[pe]\nnotify hint=16\n"), HasSubstr("hint 16 out of range 0..15"));
  EXPECT_THAT(err("[pe]\nnotify foo=1\n"), HasSubstr("unknown notify operand 'foo'"));
  EXPECT_THAT(err("[pe]\ndelay ten\n"), HasSubstr("delay 'ten' is not a number"));
  EXPECT_THAT(err("[pe]\nnop @bogus=1\n"), HasSubstr("unknown suffix '@bogus'"));
  EXPECT_THAT(err("[pe]\nnop @wait=gt:1\n"), HasSubstr("unknown wait mode 'gt'"));
  EXPECT_THAT(err("[pe]\nnop @wait=ge\n"), HasSubstr("@wait needs MODE:INDEX"));
  EXPECT_THAT(err("[pe]\ndge src=1 dst=2\n"), HasSubstr("dge needs src=, dst= and len= (missing len)"));
  EXPECT_THAT(err("[pe]\ndge src=1 dst=2 len=3 bc_src=64\n"), HasSubstr("bc_src register 64 out of range 0..63"));
  EXPECT_THAT(err("[pe]\ndge src=1 dst=2 len=3 backend=gpu\n"), HasSubstr("unknown DGE backend 'gpu'"));
  EXPECT_THAT(err("[pe]\nhalt x=1\n"), HasSubstr("takes no key=value operands"));
  EXPECT_THAT(err("# nothing\n"), HasSubstr("no instructions"));
  EXPECT_THAT(err("[pe]\nsem.inc 99999999999999999999 1\n"), HasSubstr("is not a number"));
}

TEST(Assembler, ReportsEveryErrorWithItsLine) {
  const std::string e = err("[pe]\nfoo\nnop\nbar 1\n[xx]\n");
  EXPECT_THAT(e, HasSubstr("prog.nq:2: unknown opcode 'foo'"));
  EXPECT_THAT(e, HasSubstr("prog.nq:4: unknown opcode 'bar'"));
  EXPECT_THAT(e, HasSubstr("prog.nq:5: unknown engine 'xx'"));
}

TEST(Assembler, EmptySectionsSubmitNothing) {
  auto p = assemble("[pe]\n# nop\n[act]\nnop\n[sp]\n");
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->engines.size(), 1u);
  EXPECT_EQ(p->engines[0].engine, unsigned(NEURON_ENGINE_ACT));
  EXPECT_THAT(err("[pe]\n[act]\n"), HasSubstr("no instructions"));
}

TEST(Assembler, TooManyInstructions) {
  std::string s = "[pe]\n";
  for (int k = 0; k < NEURON_MAX_PROGRAM_INSNS + 1; ++k) s += "nop\n";
  EXPECT_THAT(err(s), HasSubstr("at most 2048 fit one submission"));
}

TEST(Assembler, MissingFile) {
  auto p = assemble_file("/nonexistent/x.nq");
  ASSERT_FALSE(p);
  EXPECT_THAT(p.error().message(), HasSubstr("open /nonexistent/x.nq"));
}

// Every program in docs/program-syntax.md (a ``` block with a section header)
// assembles; the documented error messages are the ones the assembler prints.
TEST(Assembler, ExamplesInTheSyntaxDocAssemble) {
  std::ifstream in(std::string(NEURON_DOCS_DIR) + "/program-syntax.md");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  int programs = 0;
  std::size_t pos = 0;
  while ((pos = doc.find("```\n", pos)) != std::string::npos) {
    const std::size_t end = doc.find("```", pos + 4);
    ASSERT_NE(end, std::string::npos);
    const std::string block = doc.substr(pos + 4, end - pos - 4);
    pos = end + 3;
    if (block.find(".nq:") != std::string::npos) {  // the error examples
      EXPECT_THAT(err("[pe]\nnop\nnop\nnop\nnop\nnop\nnopp\n"), HasSubstr("prog.nq:7: unknown opcode 'nopp' (did you mean 'nop'?)"));
      EXPECT_THAT(err("[pe]\nsem.inc 1\n"), HasSubstr("'sem.inc' takes 2 operands, got 1: sem.inc IDX VAL"));
      continue;
    }
    if (block.find('[') == std::string::npos) continue;
    auto p = assemble(block, "doc");
    EXPECT_TRUE(p) << p.error().message() << "\n" << block;
    ++programs;
  }
  EXPECT_GE(programs, 2);
}

TEST(Assembler, FeaturesDirective) {
  auto p = assemble("# flags first\nfeatures 0x2\n[pool]\nnop\n", "f.nq");
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_TRUE(p->features);
  EXPECT_EQ(*p->features, 2u);
  EXPECT_EQ(p->instruction_count(), 1u);
  // round trip through the listing
  auto again = assemble(disassemble(*p), "listing");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->features, p->features);
  // inside a section too; absent means "leave them"
  p = assemble("[pe]\nfeatures 0\nnop\n", "g.nq");
  ASSERT_TRUE(p);
  EXPECT_EQ(*p->features, 0u);
  EXPECT_FALSE(assemble("[pe]\nnop\n")->features);
  // errors name the line
  auto bad = assemble("features 0x2\nfeatures 0x2\n[pe]\nnop\n", "t.nq");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what.find("t.nq:2: 'features' given twice (first on line 1)"), std::string::npos) << bad.error().what;
  bad = assemble("features 0x10\n[pe]\nnop\n", "t.nq");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what.find("t.nq:1: features 0x10 has unknown bits"), std::string::npos) << bad.error().what;
  EXPECT_FALSE(assemble("features\n[pe]\nnop\n"));
  EXPECT_FALSE(assemble("features two\n[pe]\nnop\n"));
  // "featuresx" is not the directive
  EXPECT_FALSE(assemble("[pe]\nfeaturesx 1\n"));
}

// Every example program assembles (the DGE ones are run in the VM).
TEST(Assembler, EveryExampleAssembles) {
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(NEURON_EXAMPLES_DIR)) {
    if (f.path().extension() != ".nq") continue;
    auto p = assemble_file(f.path().string());
    EXPECT_TRUE(p) << f.path() << ": " << (p ? "" : p.error().message());
    if (p && f.path().filename().string().rfind("dge-", 0) == 0) {
      EXPECT_TRUE(p->features) << f.path() << " states its feature flags";
      bool has_dge = false;
      for (const auto& e : p->engines)
        for (const auto& in : e.insns) has_dge = has_dge || in.opcode == NEURON_OP_DGE_COPY;
      EXPECT_TRUE(has_dge) << f.path();
    }
    ++n;
  }
  EXPECT_GE(n, 6);
}

// The one number syntax of programs, flags and sysfs (src/number.hpp):
// each input with its value worked out by hand, or refused.
TEST(Assembler, ParseNumberTable) {
  struct Case {
    const char* text;
    std::uint64_t max;
    std::optional<std::uint64_t> want;
  };
  const Case cases[] = {
      {"0", UINT64_MAX, 0},
      {"42", UINT64_MAX, 42},
      {"010", UINT64_MAX, 10},  // no octal
      {"0x2a", UINT64_MAX, 42},
      {"0X2A", UINT64_MAX, 42},
      {"0b101010", UINT64_MAX, 42},
      {"0B11", UINT64_MAX, 3},
      {"18446744073709551615", UINT64_MAX, UINT64_MAX},
      {"18446744073709551616", UINT64_MAX, std::nullopt},  // 2^64
      {"0xffffffff", 0xffffffff, 0xffffffffu},
      {"0x100000000", 0xffffffff, std::nullopt},
      {"", UINT64_MAX, std::nullopt},
      {"0x", UINT64_MAX, std::nullopt},
      {"-1", UINT64_MAX, std::nullopt},
      {"+1", UINT64_MAX, std::nullopt},
      {" 1", UINT64_MAX, std::nullopt},
      {"1e3", UINT64_MAX, std::nullopt},
      {"0b2", UINT64_MAX, std::nullopt},
      {"12ab", UINT64_MAX, std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(detail::parse_number(c.text, c.max), c.want) << '"' << c.text << '"';
}

// `data` (docs/program-syntax.md#data): the blocks follow the instructions
// in the engine's image, each on a 4-byte boundary; a reference holds the
// block's offset in the image until program_image() adds where SUBMIT loads
// it. 4 instructions = 0x80 bytes: `swap` at 0x80 (8 bytes), `consts` at
// 0x88 (3 bytes, padded to 0x8c): 5 slots of 32 bytes.
TEST(Assembler, DataDirectiveLayoutAndReferences) {
  auto p = assemble(R"(
[pool]
reg 10 1
dge src=0x1000 dst=0x2000 len=8 indirect=1 elem=4 idx=@swap bc_src=10
dge src=@consts dst=0x3000 len=3
halt
data swap u32 1, 0
data consts bytes 0x11 0x22 0x33
)");
  ASSERT_TRUE(p) << p.error().message();
  const auto& e = p->engines[0];
  ASSERT_EQ(e.data.size(), 2u);
  EXPECT_EQ(e.data[0].bytes, (std::vector<std::uint8_t>{1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(e.data[1].bytes, (std::vector<std::uint8_t>{0x11, 0x22, 0x33}));
  EXPECT_EQ(e.data[0].line, 7u);
  EXPECT_EQ(data_offset(e, 0), 0x80u);
  EXPECT_EQ(data_offset(e, 1), 0x88u);
  EXPECT_EQ(data_offset(e, 2), 0x8bu + 1);
  EXPECT_EQ(image_slots(e), 5u);
  ASSERT_EQ(e.refs.size(), 2u);
  EXPECT_EQ(e.refs[0].pc, 1u);
  EXPECT_EQ(e.refs[0].field, DataField::IndexTable);
  EXPECT_EQ(e.refs[0].block, 0u);
  EXPECT_EQ(e.refs[1].pc, 2u);
  EXPECT_EQ(e.refs[1].field, DataField::Source);
  EXPECT_EQ(e.refs[1].block, 1u);
  const auto b1 = raw(e.insns[1]);
  EXPECT_EQ((std::array<std::uint8_t, 4>{b1[4], b1[5], b1[6], b1[7]}), (std::array<std::uint8_t, 4>{0x80, 0, 0, 0}));
  const auto b2 = raw(e.insns[2]);
  EXPECT_EQ((std::array<std::uint8_t, 4>{b2[16], b2[17], b2[18], b2[19]}), (std::array<std::uint8_t, 4>{0x88, 0, 0, 0}));

  // loaded at 0x7fb0000: idx 0x7fb0080, src 0x7fb0088, the data in slot 4
  auto img = program_image(e, 0x7fb0000);
  ASSERT_TRUE(img) << img.error().message();
  ASSERT_EQ(img->size(), 5u);
  const auto i1 = raw((*img)[1]), i2 = raw((*img)[2]), i4 = raw((*img)[4]);
  EXPECT_EQ((std::array<std::uint8_t, 4>{i1[4], i1[5], i1[6], i1[7]}), (std::array<std::uint8_t, 4>{0x80, 0x00, 0xfb, 0x07}));
  EXPECT_EQ((std::array<std::uint8_t, 4>{i2[16], i2[17], i2[18], i2[19]}),
            (std::array<std::uint8_t, 4>{0x88, 0x00, 0xfb, 0x07}));
  EXPECT_EQ(i4, (std::array<std::uint8_t, 32>{1, 0, 0, 0, 0, 0, 0, 0, 0x11, 0x22, 0x33}));
  EXPECT_EQ(raw((*img)[3]), raw(e.insns[3]));  // the halt, unchanged
  // an address past 32 bits cannot be written into the field
  auto far = program_image(e, 0xffffff90);
  ASSERT_FALSE(far);
  EXPECT_THAT(far.error().what, HasSubstr("line 4: data at BAR4 offset 0x100000010"));

  // the listing names the blocks and assembles back to the same bytes
  const std::string text = disassemble(*p);
  EXPECT_THAT(text, HasSubstr("idx=@swap"));
  EXPECT_THAT(text, HasSubstr("dge src=@consts dst=0x3000 len=3"));
  EXPECT_THAT(text, HasSubstr("data swap u32 1, 0\ndata consts bytes 0x11 0x22 0x33\n"));
  auto q = assemble(text);
  ASSERT_TRUE(q) << q.error().message() << "\n" << text;
  const auto& f = q->engines[0];
  ASSERT_EQ(f.insns.size(), e.insns.size());
  for (std::size_t k = 0; k < e.insns.size(); ++k) EXPECT_EQ(raw(e.insns[k]), raw(f.insns[k])) << k;
  ASSERT_EQ(f.data.size(), 2u);
  EXPECT_EQ(f.data[1].bytes, e.data[1].bytes);
  EXPECT_EQ(f.refs.size(), 2u);
}

// Where SUBMIT loads each engine's program (include/uapi/linux/neuron.h):
// 2 cores of 5 engines, 256 MiB: 0x10000000 - 10 * 0x10000 = 0xff60000,
// core 1 POOL = area 7: 0xffd0000.
TEST(Assembler, ProgramAreaOffset) {
  neuron_device_info info{};
  info.mem_size = 0x10000000;
  info.num_cores = 2;
  info.engines_per_core = 5;
  EXPECT_EQ(program_area_offset(info, 0, 0), 0xff60000u);
  EXPECT_EQ(program_area_offset(info, 1, 2), 0xffd0000u);
  EXPECT_EQ(program_area_offset(info, 1, 4), 0xfff0000u);
}

// Issue 41: 4 GiB of data must not wrap an image offset to 32 bits (which
// passed the 64 KiB check and then overflowed the image in program_image()).
// The layout's arithmetic is asked about sizes no test allocates: 1
// instruction (32 bytes), blocks of 0xfffffff0 and 0x30 bytes end at
// 0x20 + 0xfffffff0 + 0x30 = 0x100000040 bytes, 0x8000002 slots (not the
// 0x40 bytes, 2 slots, of a 32-bit sum).
TEST(Assembler, DataLayoutDoesNotWrapAt4GiB) {
  const std::uint64_t sizes[] = {0xfffffff0u, 0x30u};
  const auto size_of = [&](std::size_t i) { return sizes[i]; };
  EXPECT_EQ(neuron::detail::image_offset(1, 2, size_of, 1), 0x100000010u);
  EXPECT_EQ(neuron::detail::image_offset(1, 2, size_of, 2), 0x100000040u);
  EXPECT_EQ(neuron::detail::image_slots_of(0x100000040u), 0x8000002u);
  EXPECT_EQ(neuron::detail::image_slots_of(0x100000041u), 0x8000003u);
  // a block of 3 bytes takes 4
  const std::uint64_t three[] = {3, 1};
  EXPECT_EQ(neuron::detail::image_offset(0, 2, [&](std::size_t i) { return three[i]; }, 2), 8u);
}

// Issue 41: program_image() checks the size itself (a program built by hand
// has not been through the assembler's check): 1 instruction + 65505 bytes
// of data is 2049 slots, one more than the program area; the error names
// the data.
TEST(Assembler, ProgramImageRefusesDataLargerThanTheProgramArea) {
  EngineProgram e;
  e.core = 1;
  e.engine = NEURON_ENGINE_POOL;
  e.insns.resize(1);
  e.insns[0].opcode = NEURON_OP_HALT;
  e.lines = {1};
  e.data.push_back(DataBlock{"big", false, std::vector<std::uint8_t>(65505), 2});
  EXPECT_EQ(image_slots(e), 2049u);
  auto img = program_image(e, 0x1000);
  ASSERT_FALSE(img) << "an image of " << img->size() << " slots";
  EXPECT_EQ(img.error().code, make_error_code(errc::invalid_argument));
  EXPECT_THAT(img.error().message(),
              HasSubstr("data too big: core 1 engine 2 needs 65568 bytes (1 instructions and 65508 bytes of data), "
                        "its program area holds 65536 (2048 slots of 32 bytes)"));
  e.data[0].bytes.resize(65504);  // exactly full: 2048 slots
  auto full = program_image(e, 0x1000);
  ASSERT_TRUE(full) << full.error().message();
  EXPECT_EQ(full->size(), 2048u);
}

TEST(Assembler, DataDirectiveErrorsNameTheLine) {
  EXPECT_THAT(err("[pool]\ndge src=@nope dst=0 len=4\nhalt\n"),
              HasSubstr("prog.nq:2: unknown data 'nope' in [pool] (it has no data directive)"));
  EXPECT_THAT(err("[pe]\nhalt\ndata t u32 1\n[pool]\ndge src=0 dst=0 len=4 idx=@t indirect=1\nhalt\n"),
              HasSubstr("prog.nq:5: unknown data 't' in [pool]"));
  EXPECT_THAT(err("[pool]\nhalt\ndata t u32 1, 0x100000000\n"),
              HasSubstr("prog.nq:3: data t value 0x100000000 out of range for u32 (0..0xffffffff)"));
  EXPECT_THAT(err("[pool]\nhalt\ndata t bytes 1 256\n"), HasSubstr("prog.nq:3: data t value 256 out of range for a byte"));
  EXPECT_THAT(err("[pool]\nhalt\ndata t u32 one\n"), HasSubstr("prog.nq:3: data t value 'one' is not a number"));
  EXPECT_THAT(err("[pool]\nhalt\ndata t f32 1\n"), HasSubstr("prog.nq:3: data kind 'f32': use u32 or bytes"));
  EXPECT_THAT(err("[pool]\nhalt\ndata 9t u32 1\n"), HasSubstr("prog.nq:3: data name '9t' is not a name"));
  EXPECT_THAT(err("[pool]\nhalt\ndata t u32\n"), HasSubstr("prog.nq:3: 'data' needs a name, a kind and at least one value"));
  EXPECT_THAT(err("[pool]\nhalt\ndata t u32 1\ndata t u32 2\n"), HasSubstr("prog.nq:4: data 't' given twice in [pool] (first on line 3)"));
  EXPECT_THAT(err("data t u32 1\n[pool]\nhalt\n"), HasSubstr("prog.nq:1: 'data' is outside a section"));
  EXPECT_THAT(err("[pool]\ndge src=0 dst=@t len=4\nhalt\ndata t u32 1\n"),
              HasSubstr("prog.nq:2: dge dst=@t: a destination cannot be a program's data"));
  EXPECT_THAT(err("[pool]\nnop\ndata t u32 1\n"),
              HasSubstr("prog.nq:2: [pool] brings data: its last instruction must be halt"));
  // 1 instruction (32 bytes) + 65505 bytes > 64 KiB
  std::string big = "[pool]\nhalt\ndata big bytes";
  for (int k = 0; k < 65505; ++k) big += " 0";
  EXPECT_THAT(err(big + "\n"), HasSubstr("prog.nq:3: data too big: [pool] needs 65568 bytes (1 instructions and 65508 "
                                         "bytes of data), its program area holds 65536 (2048 slots of 32 bytes)"));
  // exactly full: 32 + 65504 bytes
  std::string full = "[pool]\nhalt\ndata big bytes";
  for (int k = 0; k < 65504; ++k) full += " 0";
  auto p = assemble(full + "\n");
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(image_slots(p->engines[0]), 2048u);
}
