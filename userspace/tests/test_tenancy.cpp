// SPDX-License-Identifier: MIT
//
// The pure parts of tenancy (tenancy.hpp): core lists, the device memory a
// program's DGE_COPY instructions name, sysfs core_owners. Expected masks and
// spans are written out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "libneuron/assembler.hpp"
#include "libneuron/tenancy.hpp"

using namespace neuron;
using ::testing::HasSubstr;

namespace neuron {
void PrintTo(const MemRange& r, std::ostream* os) { *os << std::hex << "[0x" << r.offset << ", +0x" << r.size << ")"; }
}  // namespace neuron

namespace {

std::uint64_t mask_of(std::string_view list, unsigned num_cores = 8) {
  auto m = parse_core_list(list, num_cores);
  EXPECT_TRUE(m) << list << ": " << m.error().message();
  return m ? *m : ~std::uint64_t{0};
}

std::string error_of(std::string_view list, unsigned num_cores = 8) {
  auto m = parse_core_list(list, num_cores);
  EXPECT_FALSE(m) << list << " parsed as 0x" << std::hex << (m ? *m : 0);
  if (m) return "";
  EXPECT_EQ(m.error().code, make_error_code(errc::invalid_argument));
  return m.error().what;
}

Program prog(const char* text) {
  auto p = assemble(text, "t.nq");
  EXPECT_TRUE(p) << p.error().message();
  return std::move(p).value();
}

// Sets or unsets NEURON_VISIBLE_CORES for one test.
class EnvVar {
 public:
  explicit EnvVar(const char* value) {
    if (const char* old = std::getenv(kVisibleCoresEnv)) old_ = old;
    if (value) ::setenv(kVisibleCoresEnv, value, 1);
    else ::unsetenv(kVisibleCoresEnv);
  }
  ~EnvVar() {
    if (old_) ::setenv(kVisibleCoresEnv, old_->c_str(), 1);
    else ::unsetenv(kVisibleCoresEnv);
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace

TEST(CoreList, NumbersAndRanges) {
  EXPECT_EQ(mask_of("0"), 0x1u);
  EXPECT_EQ(mask_of("3"), 0x8u);
  EXPECT_EQ(mask_of("0-1,3"), 0xbu);
  EXPECT_EQ(mask_of("0-7"), 0xffu);
  EXPECT_EQ(mask_of("2-2"), 0x4u);
  EXPECT_EQ(mask_of("5,1"), 0x22u);
  EXPECT_EQ(mask_of("1,1,0-1"), 0x3u);      // repeats are fine
}

TEST(CoreList, BlanksAroundEntries) {
  EXPECT_EQ(mask_of(" 0, 2 "), 0x5u);
  EXPECT_EQ(mask_of("1-3 ,6"), 0x4eu);
}

TEST(CoreList, SixtyFourCores) {
  EXPECT_EQ(mask_of("0-63", 64), 0xffffffffffffffffu);
  EXPECT_EQ(mask_of("63", 64), 0x8000000000000000u);
  EXPECT_EQ(mask_of("62-63", 100), 0xc000000000000000u);  // a mask has 64 bits
  EXPECT_THAT(error_of("64", 100), HasSubstr("core 64 does not exist (the device has cores 0-63)"));
}

TEST(CoreList, GarbageNamesTheBadEntry) {
  EXPECT_THAT(error_of(""), HasSubstr("empty"));
  EXPECT_THAT(error_of("  "), HasSubstr("empty"));
  EXPECT_THAT(error_of("0,,1"), HasSubstr("empty entry at character 3"));
  EXPECT_THAT(error_of("0,"), HasSubstr("empty entry at character 3"));
  EXPECT_THAT(error_of("x"), HasSubstr("'x' is not a core number N or a range A-B"));
  EXPECT_THAT(error_of("0,1a"), HasSubstr("'1a' is not"));
  EXPECT_THAT(error_of("-1"), HasSubstr("'-1' is not"));
  EXPECT_THAT(error_of("1-"), HasSubstr("'1-' is not"));
  EXPECT_THAT(error_of("1-2-3"), HasSubstr("'1-2-3' is not"));
  EXPECT_THAT(error_of("0x1"), HasSubstr("'0x1' is not"));
  EXPECT_THAT(error_of("+1"), HasSubstr("'+1' is not"));
  EXPECT_THAT(error_of("0 1"), HasSubstr("'0 1' is not"));
  EXPECT_THAT(error_of("0 - 1"), HasSubstr("'0 - 1' is not"));
  EXPECT_THAT(error_of("99999999999"), HasSubstr("'99999999999' is not"));
  EXPECT_THAT(error_of("3-1"), HasSubstr("range '3-1' runs backwards (write 1-3)"));
}

TEST(CoreList, CoresBeyondTheDeviceAreAnError) {
  EXPECT_THAT(error_of("0-4", 4), HasSubstr("'0-4': core 4 does not exist (the device has cores 0-3)"));
  EXPECT_THAT(error_of("1", 1), HasSubstr("core 1 does not exist (the device has core 0)"));
  EXPECT_THAT(error_of("0", 0), HasSubstr("(the device has no cores)"));
}

TEST(CoreList, MaskBackToText) {
  EXPECT_EQ(core_list_text(0), "");
  EXPECT_EQ(core_list_text(0x1), "0");
  EXPECT_EQ(core_list_text(0xb), "0-1,3");
  EXPECT_EQ(core_list_text(0x55), "0,2,4,6");
  EXPECT_EQ(core_list_text(0xf0), "4-7");
  EXPECT_EQ(core_list_text(0x8000000000000001u), "0,63");
  EXPECT_EQ(core_list_text(0xffffffffffffffffu), "0-63");
}

TEST(VisibleCores, GivenOverridesTheVariableWhichOverridesAll) {
  {
    EnvVar env(nullptr);
    auto v = visible_cores(std::nullopt, 4);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->mask, 0xfu);
    EXPECT_EQ(v->source, "");
  }
  {
    EnvVar env("1-2");
    auto v = visible_cores(std::nullopt, 4);
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(v->mask, 0x6u);
    EXPECT_EQ(v->source, "NEURON_VISIBLE_CORES=1-2");
    v = visible_cores(CoreList{"0,3", "--cores"}, 4);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->mask, 0x9u);
    EXPECT_EQ(v->source, "--cores 0,3");
  }
  {
    EnvVar env("0-9");
    auto v = visible_cores(std::nullopt, 4);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().what, "NEURON_VISIBLE_CORES='0-9': '0-9': core 9 does not exist (the device has cores 0-3)");
    v = visible_cores(CoreList{"a", "--cores"}, 4);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().what, "--cores 'a': 'a' is not a core number N or a range A-B");
  }
  {
    EnvVar env("");
    auto v = visible_cores(std::nullopt, 4);
    ASSERT_FALSE(v);
    EXPECT_THAT(v.error().what, HasSubstr("NEURON_VISIBLE_CORES='': the list is empty"));
  }
}

// docs/decisions/0017-core-nodes.md: on a core node the visible set is the
// node's core; NEURON_VISIBLE_CORES is narrowed to it and must include it.
TEST(VisibleCores, ACoreNodeSeesItsCoreOnly) {
  {
    EnvVar env(nullptr);
    auto v = visible_cores(std::nullopt, 4, 0x2);  // /dev/nnqN-core1
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(v->mask, 0x2u);
    EXPECT_EQ(v->source, "the core node");
    v = visible_cores(std::nullopt, 4, 0xf);  // /dev/nnqN: every core
    ASSERT_TRUE(v);
    EXPECT_EQ(v->mask, 0xfu);
    EXPECT_EQ(v->source, "");
    v = visible_cores(std::nullopt, 4, 0);  // a driver without core nodes
    ASSERT_TRUE(v);
    EXPECT_EQ(v->mask, 0xfu);
    v = visible_cores(CoreList{"0", "--cores"}, 4, 0x2);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().what, "--cores '0': names none of this core node's cores (1)");
  }
  {
    EnvVar env("1-2");  // a container given the nodes of cores 1 and 2
    auto v = visible_cores(std::nullopt, 4, 0x2);
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(v->mask, 0x2u);
    EXPECT_EQ(v->source, "NEURON_VISIBLE_CORES=1-2");
    v = visible_cores(std::nullopt, 4, 0x1);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().what, "NEURON_VISIBLE_CORES='1-2': names none of this core node's cores (0)");
    v = visible_cores(std::nullopt, 4, 0xf);  // the whole device: the variable as ever
    ASSERT_TRUE(v);
    EXPECT_EQ(v->mask, 0x6u);
  }
}

TEST(VisibleCores, ProgramOutsideTheVisibleCoresIsRefused) {
  const auto p = prog("[pe]\nnop\n[core2.act]\nnop\nhalt\n");
  EXPECT_TRUE(check_program_cores(p, {0x5, "--cores 0,2"}));
  auto s = check_program_cores(p, {0x3, "NEURON_VISIBLE_CORES=0-1"});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().what,
            "t.nq:4: [core2.act] uses core 2, which is not among the visible cores 0-1 (NEURON_VISIBLE_CORES=0-1); "
            "give it cores that include 2");
  s = check_program_cores(p, {0x3, ""});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().what, "t.nq:4: [core2.act] names core 2, which does not exist (the device has cores 0-1)");
}

TEST(DgeMemory, RangesAsTheDriverChecksThem) {
  const auto p = prog("[pool]\nnop\ndge src=0x100 dst=0x1000 len=0x800\n[core1.pe]\ndge src=0x5000 dst=0x7fff len=0\n");
  const auto r = dge_ranges(p);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].range, (MemRange{0x100, 0x800}));
  EXPECT_FALSE(r[0].dst);
  EXPECT_EQ(r[0].pc, 1u);
  EXPECT_EQ(r[0].line, 3u);
  EXPECT_EQ(r[0].engine, static_cast<unsigned>(NEURON_ENGINE_POOL));
  EXPECT_EQ(r[1].range, (MemRange{0x1000, 0x800}));
  EXPECT_TRUE(r[1].dst);
  EXPECT_EQ(r[2].range, (MemRange{0x5000, 1}));  // length 0 is one byte
  EXPECT_EQ(r[3].range, (MemRange{0x7fff, 1}));
  EXPECT_EQ(r[3].core, 1u);
  EXPECT_EQ(describe(r[1], p), "t.nq:3: DGE_COPY destination [0x1000, +0x800) (POOL on core 0, pc 1)");
}

TEST(DgeMemory, MergeAlignsAndJoinsOverlappingAndTouchingSpans) {
  const std::uint64_t A = 4096;
  // one byte -> one page
  EXPECT_EQ(merge_ranges({{0x100, 1}}, A), (std::vector<MemRange>{{0, 0x1000}}));
  // a range crossing a page boundary covers both pages
  EXPECT_EQ(merge_ranges({{0xfff, 2}}, A), (std::vector<MemRange>{{0, 0x2000}}));
  // exactly one page
  EXPECT_EQ(merge_ranges({{0x3000, 0x1000}}, A), (std::vector<MemRange>{{0x3000, 0x1000}}));
  // two ranges in one page -> one span
  EXPECT_EQ(merge_ranges({{0x100, 0x10}, {0x800, 0x10}}, A), (std::vector<MemRange>{{0, 0x1000}}));
  // adjacent pages join
  EXPECT_EQ(merge_ranges({{0x1000, 0x800}, {0x100, 0x800}}, A), (std::vector<MemRange>{{0, 0x2000}}));
  // a gap of a page keeps them apart; output sorted
  EXPECT_EQ(merge_ranges({{0x5000, 0x10}, {0x100, 0x10}, {0x3000, 0x1}}, A),
            (std::vector<MemRange>{{0, 0x1000}, {0x3000, 0x1000}, {0x5000, 0x1000}}));
  // overlapping and nested
  EXPECT_EQ(merge_ranges({{0x0, 0x4000}, {0x1000, 0x100}, {0x3800, 0x1000}, {0x9000, 0x10}}, A),
            (std::vector<MemRange>{{0, 0x5000}, {0x9000, 0x1000}}));
  // a chain that joins only through its middle member
  EXPECT_EQ(merge_ranges({{0x0, 0x10}, {0x2000, 0x10}, {0xf00, 0x1200}}, A), (std::vector<MemRange>{{0, 0x3000}}));
  // empty input, empty ranges dropped
  EXPECT_EQ(merge_ranges({}, A), (std::vector<MemRange>{}));
  EXPECT_EQ(merge_ranges({{0x1000, 0}}, A), (std::vector<MemRange>{}));
  // the top of a 32-bit address plus a 32-bit length does not wrap: the end
  // 0x1fffffeff rounds up to 0x200000000
  EXPECT_EQ(merge_ranges({{0xffffff00, 0xffffffff}}, A), (std::vector<MemRange>{{0xfffff000, 0x100001000}}));
}

TEST(DgeMemory, ProgramMemoryOfTheExamples) {
  // examples/dge-success.nq style: src 0x100+0x800, dst 0x1000+0x800
  EXPECT_EQ(program_memory(prog("[pool]\ndge src=0x100 dst=0x1000 len=0x800\nhalt\n")),
            (std::vector<MemRange>{{0, 0x2000}}));
  EXPECT_EQ(program_memory(prog("[pool]\ndge src=0x0 dst=0x10000 len=0x1000\n[act]\ndge src=0x20000 dst=0x10800 "
                                "len=0x900\n")),
            (std::vector<MemRange>{{0, 0x1000}, {0x10000, 0x2000}, {0x20000, 0x1000}}));
  EXPECT_TRUE(program_memory(prog("[pe]\nnop\nhalt\n")).empty());
}

TEST(CoreOwners, ParsesTheSysfsText) {
  const auto o = parse_core_owners("0 1234 python3\n1 - -\n2 0 init\n3 77 my job\n");
  ASSERT_TRUE(o) << o.error().message();
  ASSERT_EQ(o->size(), 4u);
  EXPECT_EQ((*o)[0].core, 0u);
  EXPECT_EQ((*o)[0].pid, 1234);
  EXPECT_EQ((*o)[0].comm, "python3");
  EXPECT_TRUE((*o)[1].is_free());
  EXPECT_EQ((*o)[1].comm, "");
  EXPECT_EQ((*o)[2].pid, 0);
  EXPECT_EQ((*o)[3].comm, "my job");  // a command may hold blanks
  EXPECT_EQ(owner_text((*o)[0]), "PID 1234 (python3)");
  EXPECT_EQ(owner_text((*o)[1]), "free");
  EXPECT_EQ(owner_text((*o)[2]), "PID not visible here (init)");
  EXPECT_TRUE(parse_core_owners("")->empty());
}

TEST(CoreOwners, BadLinesAreNamed) {
  for (const char* bad : {"0\n", "0 12\n", "x 12 sh\n", "0 - sh\n", "0 1x sh\n", "1 - -\n0 -1 sh\n"}) {
    auto o = parse_core_owners(bad);
    ASSERT_FALSE(o) << bad;
    EXPECT_EQ(o.error().code, make_error_code(errc::bad_message));
    EXPECT_THAT(o.error().what, HasSubstr("core_owners line"));
  }
  EXPECT_THAT(parse_core_owners("1 - -\n0 -1 sh\n").error().what, HasSubstr("line 2: '0 -1 sh'"));
}

TEST(CoreOwners, ReadsAFile) {
  const auto path = std::filesystem::temp_directory_path() / ("core_owners-" + std::to_string(::getpid()));
  std::ofstream(path) << "0 - -\n1 42 neuron-nq\n";
  auto o = read_core_owners(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(o) << o.error().message();
  ASSERT_EQ(o->size(), 2u);
  EXPECT_EQ((*o)[1].pid, 42);
  auto missing = read_core_owners("/nonexistent/core_owners");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("read /nonexistent/core_owners"));
}
