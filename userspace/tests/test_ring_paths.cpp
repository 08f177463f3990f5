// SPDX-License-Identifier: MIT
//
// Every drain path (DrainPath: scalar, SSE2, AVX2, AVX-512; ring.hpp's top,
// userspace/README.md#drain-paths) on rings with every wrap, phase and
// partial-run case. The rings are written slot by slot from literal phase
// strings ('1': the slot's header has the phase bit, '0': it does not), and
// every expected count, span list and flag is a literal worked out by hand
// from that string -- never computed by RingView::phase_of or any helper
// the library uses. A path this CPU (or this build) lacks is skipped with a
// message.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "libneuron/ring.hpp"

using namespace neuron;

namespace {

constexpr std::uint8_t kType = NEURON_ISA_NOTIFICATION_TYPE_PE_EXPLICIT;

/// A ring whose slot s holds a record with body bytes (s, s*3, ... ) and a
/// header of kType, the phase bit iff phases[s] == '1', plus `flags[s]`.
struct LiteralRing {
  std::vector<Record> mem;
  LiteralRing(const std::string& phases, const std::vector<std::uint8_t>& flags = {}) : mem(phases.size()) {
    for (std::size_t s = 0; s < phases.size(); ++s) {
      for (int b = 0; b < 16; ++b) mem[s].bytes[b] = static_cast<std::uint8_t>(s * 3 + b * 17 + 1);
      std::uint8_t h = kType;
      if (phases[s] == '1') h |= NEURON_ISA_HEADER_PHASE;
      if (s < flags.size()) h |= flags[s];
      mem[s].bytes[NEURON_ISA_HEADER_OFFSET] = h;
    }
  }
  std::span<const Record> span() const { return {mem.data(), mem.size()}; }
};

std::string rep(char c, std::size_t n) { return std::string(n, c); }

class RingPath : public ::testing::TestWithParam<DrainPath> {
 protected:
  void SetUp() override {
    if (!drain_path_supported(GetParam()))
      GTEST_SKIP() << "drain path " << drain_path_name(GetParam()) << " is not available on this CPU or build";
  }
  RingView view(const LiteralRing& r, std::uint32_t head) const {
    RingView v(r.span(), Doorbell{}, head);
    EXPECT_TRUE(v.set_drain_path(GetParam()));
    EXPECT_EQ(v.drain_path(), GetParam());
    return v;
  }
};

std::string path_name(const ::testing::TestParamInfo<DrainPath>& info) { return drain_path_name(info.param); }

/// One literal case: a ring (its phase string), the consumer's HEAD, and how
/// many records are fresh from HEAD, worked out by hand.
struct Case {
  const char* what;
  std::string phases;
  std::uint32_t head;
  std::size_t fresh;
};

std::vector<Case> cases() {
  return {
      // first pass (HEAD 0..7 of 8 expects phase 1)
      {"empty ring, first pass", "00000000", 0, 0},
      {"full ring, first pass", "11111111", 0, 8},
      {"three of eight", "11100000", 0, 3},
      {"gap at slot 1 ends the run", "10111111", 0, 1},
      {"one record", "10000000", 0, 1},
      {"last slot only is stale", "11111110", 0, 7},
      // second pass (HEAD 8..15 expects phase 0)
      {"second pass, three fresh", "00011111", 8, 3},
      {"second pass, nothing fresh", "11111111", 8, 0},
      {"second pass, full", "00000000", 8, 8},
      // wrap inside the batch: HEAD 5 on pass 0 (slots 5..7 expect 1), then
      // pass 1 (slots 0.. expect 0)
      {"wrap with phase flip", "00011111", 5, 6},
      {"wrap, nothing after the end", "11111111", 5, 3},
      {"wrap, whole ring", "00000111", 5, 8},
      // HEAD 13 on pass 1 (slots 5..7 expect 0), then pass 2 (expect 1)
      {"second wrap, phase back to 1", "11100000", 13, 6},
      // the free-running count wraps at 2^32: HEAD 0xfffffff8 in 16 slots is
      // pass 0x0fffffff (odd: slots 8..15 expect 0); then count 0, pass 0
      // (slots 0.. expect 1)
      {"HEAD wraps at 2^32", "1111000000000000", 0xfffffff8u, 12},
      {"HEAD wraps at 2^32, stop before the end", "1111000001111111", 0xfffffff8u, 1},
      // runs across every vector width's tail: 64 slots from HEAD 0
      {"run of 2", rep('1', 2) + rep('0', 62), 0, 2},
      {"run of 3", rep('1', 3) + rep('0', 61), 0, 3},
      {"run of 4", rep('1', 4) + rep('0', 60), 0, 4},
      {"run of 5", rep('1', 5) + rep('0', 59), 0, 5},
      {"run of 7", rep('1', 7) + rep('0', 57), 0, 7},
      {"run of 8", rep('1', 8) + rep('0', 56), 0, 8},
      {"run of 9", rep('1', 9) + rep('0', 55), 0, 9},
      {"run of 15", rep('1', 15) + rep('0', 49), 0, 15},
      {"run of 16", rep('1', 16) + rep('0', 48), 0, 16},
      {"run of 17", rep('1', 17) + rep('0', 47), 0, 17},
      {"run of 31", rep('1', 31) + rep('0', 33), 0, 31},
      {"run of 32", rep('1', 32) + rep('0', 32), 0, 32},
      {"run of 33", rep('1', 33) + rep('0', 31), 0, 33},
      {"run of 47", rep('1', 47) + rep('0', 17), 0, 47},
      {"run of 63", rep('1', 63) + rep('0', 1), 0, 63},
      {"run of 64 (whole ring)", rep('1', 64), 0, 64},
      // a stale slot in the middle of a vector, fresh ones after it
      {"hole at 10, fresh after", rep('1', 10) + "0" + rep('1', 53), 0, 10},
      {"hole at 61, fresh after", rep('1', 61) + "0" + rep('1', 2), 0, 61},
      // HEAD not on a vector boundary: 64 slots, HEAD 3 / 13 / 50, pass 0
      {"HEAD 3, run of 9", "000" + rep('1', 9) + rep('0', 52), 3, 9},
      {"HEAD 13, run of 16", rep('0', 13) + rep('1', 16) + rep('0', 35), 13, 16},
      {"HEAD 50, run to the end and 5 more", rep('0', 5) + rep('1', 59), 50, 19},
      // 256 slots: past the first window (64), the gallop's probes (191,
      // 255) and the window the binary search leaves
      {"run of 65", rep('1', 65) + rep('0', 191), 0, 65},
      {"run of 100", rep('1', 100) + rep('0', 156), 0, 100},
      {"run of 127", rep('1', 127) + rep('0', 129), 0, 127},
      {"run of 128", rep('1', 128) + rep('0', 128), 0, 128},
      {"run of 191", rep('1', 191) + rep('0', 65), 0, 191},
      {"run of 192", rep('1', 192) + rep('0', 64), 0, 192},
      {"run of 200", rep('1', 200) + rep('0', 56), 0, 200},
      {"run of 255", rep('1', 255) + rep('0', 1), 0, 255},
      {"run of 256", rep('1', 256), 0, 256},
      // 256 slots, HEAD 250: slots 250..255 (pass 0, expect 1), then 14 of
      // pass 1 (expect 0); slots 14..249 still hold pass 0
      {"HEAD 250, wrap after 6, 20 in all", rep('0', 14) + rep('1', 236) + rep('1', 6), 250, 20},
      // 256 slots, HEAD 300 (pass 1, slot 44, expect 0): 150 fresh to slot
      // 193, slot 194 is pass 0's
      {"HEAD 300, run of 150 on pass 1", rep('1', 44) + rep('0', 150) + rep('1', 62), 300, 150},
      // runs longer than 64 slots that are fresh to the ring's end, settled
      // by one load of their last slot: 128 slots, HEAD 63 (pass 0): 65 to
      // the end, then slots 0..62 still pass 0's (pass 1 expects 0)
      {"HEAD 63, run of 65 fresh to the end", rep('1', 128), 63, 65},
      // 256 slots, HEAD 100: 156 to the end (pass 0), then 100 of pass 1
      {"HEAD 100, both runs fresh to their ends", rep('0', 100) + rep('1', 156), 100, 256},
  };
}

TEST_P(RingPath, DrainForEachAndAvailableMatchHandWorkedCounts) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.what);
    const LiteralRing ring(c.phases);
    const std::uint32_t entries = static_cast<std::uint32_t>(c.phases.size());
    const std::uint32_t mask = entries - 1;
    {
      RingView v = view(ring, c.head);
      EXPECT_EQ(v.available(), c.fresh);
      std::vector<Record> out(entries + 4);
      const auto r = v.drain(out);
      ASSERT_EQ(r.count, c.fresh);
      EXPECT_FALSE(r.lap_suspected);
      EXPECT_FALSE(r.sw_overflow || r.hw_overflow);
      for (std::size_t i = 0; i < c.fresh; ++i)
        ASSERT_EQ(std::memcmp(&out[i], &ring.mem[(c.head + i) & mask], 16), 0) << "record " << i;
      EXPECT_EQ(v.head(), c.head + static_cast<std::uint32_t>(c.fresh));
    }
    {
      RingView v = view(ring, c.head);
      std::vector<const Record*> seen;
      const auto r = v.for_each([&](const Record& rec) { seen.push_back(&rec); });
      ASSERT_EQ(r.count, c.fresh);
      for (std::size_t i = 0; i < c.fresh; ++i) ASSERT_EQ(seen[i], &ring.mem[(c.head + i) & mask]);
    }
    {
      RingView v = view(ring, c.head);
      std::vector<const Record*> seen;
      const auto r = v.for_each_span([&](std::span<const Record> s) {
        for (const Record& rec : s) seen.push_back(&rec);
      });
      ASSERT_EQ(r.count, c.fresh);
      ASSERT_EQ(seen.size(), c.fresh);
      for (std::size_t i = 0; i < c.fresh; ++i) ASSERT_EQ(seen[i], &ring.mem[(c.head + i) & mask]);
    }
  }
}

TEST_P(RingPath, PartialBatchesStopExactlyAtTheLimit) {
  // 64 slots, all fresh (pass 0). Batches of 1, 3, 4, 5, 7, 8, 9, 15, 12:
  // HEAD after each is the running sum; the last batch takes the 12 left.
  const LiteralRing ring(rep('1', 64));
  RingView v = view(ring, 0);
  std::vector<Record> out(64);
  const std::size_t sizes[] = {1, 3, 4, 5, 7, 8, 9, 15, 20};
  const std::uint32_t heads[] = {1, 4, 8, 13, 20, 28, 37, 52, 64};
  const std::size_t counts[] = {1, 3, 4, 5, 7, 8, 9, 15, 12};
  for (std::size_t b = 0; b < std::size(sizes); ++b) {
    const std::uint32_t before = v.head();
    const auto r = v.drain(std::span<Record>(out.data(), sizes[b]));
    ASSERT_EQ(r.count, counts[b]) << "batch " << b;
    ASSERT_EQ(v.head(), heads[b]) << "batch " << b;
    for (std::size_t i = 0; i < r.count; ++i) ASSERT_EQ(std::memcmp(&out[i], &ring.mem[before + i], 16), 0);
  }
  EXPECT_EQ(v.drain(out).count, 0u);
}

TEST_P(RingPath, OverflowFlagsAtEveryVectorPosition) {
  // 64 slots, 40 fresh; one record carries a flag at slot `at`. A drain of
  // `take` records reports it iff at < take (hand-worked: at 0, 1, 3, 4, 7,
  // 8, 15, 16, 17, 31, 39 against batches of 4, 8, 17 and all 40).
  struct Row {
    std::size_t at, take;
    bool seen;
  };
  const Row rows[] = {{0, 4, true},   {3, 4, true},   {4, 4, false},  {7, 8, true},   {8, 8, false},
                      {15, 17, true}, {16, 17, true}, {17, 17, false}, {31, 40, true}, {39, 40, true},
                      {1, 40, true},  {39, 17, false}};
  for (const std::uint8_t flag : {std::uint8_t{NEURON_ISA_HEADER_SW_OVF}, std::uint8_t{NEURON_ISA_HEADER_HW_OVF}}) {
    for (const Row& row : rows) {
      std::vector<std::uint8_t> flags(64, 0);
      flags[row.at] = flag;
      const LiteralRing ring(rep('1', 40) + rep('0', 24), flags);
      const bool sw = flag == NEURON_ISA_HEADER_SW_OVF;
      SCOPED_TRACE(::testing::Message() << (sw ? "sw" : "hw") << " flag at " << row.at << " take " << row.take);
      {
        RingView v = view(ring, 0);
        std::vector<Record> out(row.take);
        const auto r = v.drain(out);
        ASSERT_EQ(r.count, row.take);
        EXPECT_EQ(sw ? r.sw_overflow : r.hw_overflow, row.seen);
        EXPECT_FALSE(sw ? r.hw_overflow : r.sw_overflow);
        EXPECT_FALSE(r.lap_suspected);
      }
      {
        RingView v = view(ring, 0);
        const auto r = v.for_each_span([](std::span<const Record>) {}, row.take);
        ASSERT_EQ(r.count, row.take);
        EXPECT_EQ(sw ? r.sw_overflow : r.hw_overflow, row.seen);
      }
      {
        RingView v = view(ring, 0);
        const auto r = v.for_each([](const Record&) {}, row.take);
        ASSERT_EQ(r.count, row.take);
        EXPECT_EQ(sw ? r.sw_overflow : r.hw_overflow, row.seen);
      }
    }
  }
}

TEST_P(RingPath, StaleSlotWithSwOverflowAtTheEndOfTheRunIsSuspected) {
  // 32 slots, HEAD 32 (pass 1, expects 0): slots 0..20 rewritten (phase 0),
  // slot 21 still pass 0's with software_queue_overflow: 21 records and a
  // suspected lap.
  std::vector<std::uint8_t> flags(32, 0);
  flags[21] = NEURON_ISA_HEADER_SW_OVF;
  const LiteralRing ring(rep('0', 21) + rep('1', 11), flags);
  RingView v = view(ring, 32);
  std::vector<Record> out(32);
  const auto r = v.drain(out);
  EXPECT_EQ(r.count, 21u);
  EXPECT_TRUE(r.lap_suspected);
  EXPECT_FALSE(r.sw_overflow);
}

TEST_P(RingPath, LapInsideTheCopiedRunIsCaughtFromTheCopiedBytes) {
  // 256 slots, HEAD 0, lossy. The run's last slot (255) looks fresh, so the
  // scan takes all 256 without looking at the others; slot 100 has the
  // other phase (a lossy producer's later pass). The copy's AND of the
  // headers catches it: 100 records, lap suspected.
  const LiteralRing ring(rep('1', 100) + "0" + rep('1', 155));
  RingView v = view(ring, 0);
  v.set_lossy(true);
  std::vector<Record> out(256);
  const auto r = v.drain(out);
  EXPECT_EQ(r.count, 100u);
  EXPECT_TRUE(r.lap_suspected);
  EXPECT_EQ(v.head(), 100u);
}

TEST_P(RingPath, ForEachSpanHandsOutRunsOfAtMost256NeverAcrossTheEnd) {
  // 1024 slots. HEAD 0, 600 fresh: spans 256, 256, 88. HEAD 1000 (pass 0),
  // slots 1000..1023 fresh and slots 0..75 of pass 1 (phase 0): spans 24, 76.
  {
    const LiteralRing ring(rep('1', 600) + rep('0', 424));
    RingView v = view(ring, 0);
    std::vector<std::size_t> spans;
    const auto r = v.for_each_span([&](std::span<const Record> s) { spans.push_back(s.size()); });
    EXPECT_EQ(r.count, 600u);
    EXPECT_EQ(spans, (std::vector<std::size_t>{256, 256, 88}));
  }
  {
    const LiteralRing ring(rep('0', 76) + rep('1', 948));
    RingView v = view(ring, 1000);
    std::vector<std::size_t> spans;
    const auto r = v.for_each_span([&](std::span<const Record> s) { spans.push_back(s.size()); });
    EXPECT_EQ(r.count, 100u);
    EXPECT_EQ(spans, (std::vector<std::size_t>{24, 76}));
    EXPECT_EQ(v.head(), 1100u);
  }
  {
    // a stop after the first span, and max
    const LiteralRing ring(rep('1', 600) + rep('0', 424));
    RingView v = view(ring, 0);
    std::vector<std::size_t> spans;
    auto r = v.for_each_span([&](std::span<const Record> s) {
      spans.push_back(s.size());
      return false;
    });
    EXPECT_EQ(r.count, 256u);
    r = v.for_each_span([&](std::span<const Record> s) { spans.push_back(s.size()); }, 300);
    EXPECT_EQ(r.count, 300u);
    EXPECT_EQ(spans, (std::vector<std::size_t>{256, 256, 44}));
    EXPECT_EQ(v.head(), 556u);
  }
}

TEST_P(RingPath, ForEachSpanRefusesALossyView) {
  const LiteralRing ring(rep('1', 8));
  RingView v = view(ring, 0);
  v.set_lossy(true);
  const auto r = v.for_each_span([](std::span<const Record>) {});
  EXPECT_TRUE(r.refused);
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(v.head(), 0u);
}

// The kernels themselves, on windows of every length from 0 to 64: the scan
// finds the first stale slot, the copy copies every byte and ANDs/ORs the
// headers. Expected values are literals per row.
TEST_P(RingPath, ScanKernelFindsTheFirstStaleSlotInEveryWindow) {
  const DrainKernels& k = drain_kernels(GetParam());
  ASSERT_EQ(k.path, GetParam());
  // (window length n, phase string of the 64 slots, phase expected, answer)
  struct Row {
    std::size_t n;
    std::string phases;
    bool phase;
    std::size_t first_stale;
  };
  const std::vector<Row> rows = {
      {0, rep('1', 64), true, 0},
      {1, rep('1', 64), true, 1},
      {1, "0" + rep('1', 63), true, 0},
      {3, rep('1', 64), true, 3},
      {4, rep('1', 64), true, 4},
      {5, rep('1', 64), true, 5},
      {5, "1111" + rep('0', 60), true, 4},
      {7, rep('1', 6) + rep('0', 58), true, 6},
      {8, rep('1', 7) + rep('0', 57), true, 7},
      {9, rep('1', 8) + rep('0', 56), true, 8},
      {9, rep('1', 64), true, 9},
      {15, rep('1', 64), true, 15},
      {16, rep('1', 15) + "0" + rep('1', 48), true, 15},
      {17, rep('1', 16) + "0" + rep('1', 47), true, 16},
      {17, rep('1', 64), true, 17},
      {31, rep('1', 30) + rep('0', 34), true, 30},
      {33, rep('1', 32) + rep('0', 32), true, 32},
      {63, rep('1', 64), true, 63},
      {64, rep('1', 64), true, 64},
      {64, rep('1', 63) + "0", true, 63},
      {64, rep('0', 64), true, 0},
      {64, rep('0', 64), false, 64},
      {64, rep('0', 40) + "1" + rep('0', 23), false, 40},
      {20, rep('0', 19) + "1" + rep('0', 44), false, 19},
      {19, rep('0', 19) + "1" + rep('0', 44), false, 19},
      {2, "01" + rep('0', 62), false, 1},
      {48, "0101" + rep('1', 60), true, 0},
  };
  for (const Row& row : rows) {
    const LiteralRing ring(row.phases);
    EXPECT_EQ(k.scan(ring.mem.data(), row.n, row.phase ? NEURON_ISA_HEADER_PHASE : 0), row.first_stale)
        << "n " << row.n << " phases " << row.phases << " expect " << row.phase;
  }
}

TEST_P(RingPath, CopyKernelCopiesEveryByteAndFoldsTheHeaders) {
  const DrainKernels& k = drain_kernels(GetParam());
  // 70 slots, all phase 1; slot 2 also has software_queue_overflow, slot 66
  // hardware_queue_overflow. (n, offset into the ring, AND, OR) by hand:
  // AND keeps type|phase, OR adds the flags of the slots copied.
  std::vector<std::uint8_t> flags(70, 0);
  flags[2] = NEURON_ISA_HEADER_SW_OVF;
  flags[66] = NEURON_ISA_HEADER_HW_OVF;
  const LiteralRing ring(rep('1', 70), flags);
  const std::uint8_t base = kType | NEURON_ISA_HEADER_PHASE;
  struct Row {
    std::size_t off, n;
    std::uint8_t all, any;
  };
  const std::uint8_t sw = NEURON_ISA_HEADER_SW_OVF, hw = NEURON_ISA_HEADER_HW_OVF;
  const Row rows[] = {
      {0, 1, base, base},
      {0, 2, base, base},
      {0, 3, base, static_cast<std::uint8_t>(base | sw)},
      {3, 63, base, base},
      {3, 64, base, static_cast<std::uint8_t>(base | hw)},
      {1, 17, base, static_cast<std::uint8_t>(base | sw)},
      {0, 70, base, static_cast<std::uint8_t>(base | sw | hw)},
      {5, 33, base, base},
      {67, 3, base, base},
  };
  for (const Row& row : rows) {
    std::vector<Record> out(row.n + 2);
    Record canary;
    canary.bytes.fill(0xa5);
    out[row.n] = canary;
    std::uint8_t all = 0, any = 0;
    k.copy(out.data(), ring.mem.data() + row.off, row.n, all, any);
    EXPECT_EQ(all, row.all) << "off " << row.off << " n " << row.n;
    EXPECT_EQ(any, row.any) << "off " << row.off << " n " << row.n;
    for (std::size_t i = 0; i < row.n; ++i)
      ASSERT_EQ(std::memcmp(&out[i], &ring.mem[row.off + i], 16), 0) << "off " << row.off << " n " << row.n << " i " << i;
    EXPECT_EQ(out[row.n], canary) << "wrote past n: off " << row.off << " n " << row.n;
    EXPECT_EQ(k.or_headers(ring.mem.data() + row.off, row.n), row.any) << "off " << row.off << " n " << row.n;
  }
}

TEST_P(RingPath, KernelsNeverReadPastTheirWindow) {
  // Windows of every length 0..64 that end exactly at a page followed by an
  // inaccessible page: a kernel that reads one record too many (an
  // off-by-one in a vector loop's bound the result mask would hide) faults.
  const DrainKernels& k = drain_kernels(GetParam());
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* mem = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* base = static_cast<std::uint8_t*>(mem);
  ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
  auto* end = reinterpret_cast<Record*>(base + page);
  for (std::size_t i = 1; i <= 64; ++i) {  // every slot phase 1, type kType
    end[-static_cast<std::ptrdiff_t>(i)] = Record{};
    end[-static_cast<std::ptrdiff_t>(i)].bytes[NEURON_ISA_HEADER_OFFSET] = kType | NEURON_ISA_HEADER_PHASE;
  }
  std::vector<Record> out(64);
  for (std::size_t n = 0; n <= 64; ++n) {
    const Record* p = end - n;
    EXPECT_EQ(k.scan(p, n, NEURON_ISA_HEADER_PHASE), n) << "n " << n;
    std::uint8_t all = 0, any = 0;
    k.copy(out.data(), p, n, all, any);
    EXPECT_EQ(k.or_headers(p, n), n ? kType | NEURON_ISA_HEADER_PHASE : 0) << "n " << n;
  }
  munmap(mem, 2 * page);
}

INSTANTIATE_TEST_SUITE_P(Paths, RingPath, ::testing::ValuesIn(kDrainPaths), path_name);

TEST(RingPaths, NamesParseAndTheDefaultIsSupported) {
  EXPECT_STREQ(drain_path_name(DrainPath::Scalar), "scalar");
  EXPECT_STREQ(drain_path_name(DrainPath::Sse2), "sse2");
  EXPECT_STREQ(drain_path_name(DrainPath::Avx2), "avx2");
  EXPECT_STREQ(drain_path_name(DrainPath::Avx512), "avx512");
  EXPECT_EQ(parse_drain_path("avx2"), DrainPath::Avx2);
  EXPECT_EQ(parse_drain_path("AVX2"), std::nullopt);
  EXPECT_EQ(parse_drain_path(""), std::nullopt);
  EXPECT_TRUE(drain_path_supported(DrainPath::Scalar));
  EXPECT_TRUE(drain_path_supported(default_drain_path()));
  // A view starts on the default path and refuses nothing it supports.
  std::vector<Record> mem(4);
  RingView v({mem.data(), mem.size()}, Doorbell{});
  EXPECT_EQ(v.drain_path(), default_drain_path());
  for (const DrainPath p : kDrainPaths) EXPECT_EQ(v.set_drain_path(p), drain_path_supported(p));
}

}  // namespace
