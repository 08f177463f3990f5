// SPDX-License-Identifier: MIT
//
// neuron-nq list and metrics (docs/metrics.md): the sysfs parsers
// (tools/devices.hpp) on literal lines, a sample of the fake tree
// tests/data/cli/root against the values written in its files, the error
// and execution summaries worked out by hand, Prometheus label escaping and
// the atomic file write.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "devices.hpp"
#include "report.hpp"

using namespace neuron;
using namespace neuron::cli;

namespace {

Sources fake_root() {
  const std::string root = NEURON_TEST_DATA_DIR "/cli/root";
  Sources s;
  s.sysfs_class = root + "/sys/class/nnq";
  s.dev_dir = root + "/dev";
  s.proc = root + "/proc";
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Metrics, CounterLinesParseCoreAndNamedLines) {
  auto l = parse_counter_lines("core0 1 2 3\ncore12 0x004 5 6\nthrottle 7\n\n", "intr_counts", 1);
  ASSERT_TRUE(l) << l.error().message();
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0].core, 0u);
  EXPECT_EQ((*l)[0].values, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ((*l)[1].core, 12u);
  EXPECT_EQ((*l)[1].values, (std::vector<std::uint64_t>{4, 5, 6}));
  EXPECT_FALSE((*l)[2].core);
  EXPECT_EQ((*l)[2].name, "throttle");
  EXPECT_EQ((*l)[2].values, (std::vector<std::uint64_t>{7}));
}

TEST(Metrics, CounterLinesNameTheBadLine) {
  auto l = parse_counter_lines("core0 1\ncore1 zero\n", "nnq0/intr_counts", 1);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().what, "nnq0/intr_counts line 2: 'core1 zero': value 1 is not a number");
  auto few = parse_counter_lines("core0 1\n", "intr_storms", 2);
  ASSERT_FALSE(few);
  EXPECT_EQ(few.error().what, "intr_storms line 1: 'core0 1': fewer than 2 values");
  auto notcore = parse_counter_lines("corex 1\n", "f", 1);
  ASSERT_FALSE(notcore);
  EXPECT_EQ(notcore.error().what, "f line 1: 'corex 1': not core<N>");
}

TEST(Metrics, StatusUidIsTheRealUid) {
  EXPECT_EQ(parse_status_uid("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\n"), 1000u);
  EXPECT_FALSE(parse_status_uid("Name:\tx\nGid:\t5\n"));
  EXPECT_FALSE(parse_status_uid("Uid:\tabc\n"));
}

// The values are those written in tests/data/cli/root's files.
TEST(Metrics, FakeTreeSample) {
  const auto src = fake_root();
  EXPECT_EQ(device_indices(src.sysfs_class), (std::vector<unsigned>{0, 1}));
  const auto d = sample_device(0, src);
  EXPECT_EQ(d.name, "nnq0");
  EXPECT_EQ(d.pci_address, "0000:01:00.0");
  EXPECT_EQ(d.numa_node, 0);
  EXPECT_EQ(d.local_cpulist, "0-3");
  EXPECT_FALSE(d.info);  // no node under the fake dev/
  EXPECT_NE(d.info_error.find("dev/nnq0"), std::string::npos) << d.info_error;
  EXPECT_TRUE(d.owners_error.empty()) << d.owners_error;
  EXPECT_TRUE(d.counter_errors.empty());
  ASSERT_EQ(d.cores.size(), 2u);
  ASSERT_TRUE(d.cores[0].owner);
  EXPECT_TRUE(d.cores[0].owner->is_free());
  ASSERT_TRUE(d.cores[1].owner);
  EXPECT_EQ(d.cores[1].owner->pid, 4242);
  EXPECT_EQ(d.cores[1].owner->comm, "python3 -u");
  EXPECT_EQ(d.cores[1].uid, 1000u);
  EXPECT_EQ(d.cores[1].intr, (std::array<std::uint64_t, 9>{12, 1, 3, 0, 0, 2, 1, 0, 0}));
  EXPECT_EQ(d.cores[0].threshold[2], 7u);
  EXPECT_EQ(d.cores[1].threshold[0], 10u);
  EXPECT_EQ(d.cores[1].notific_edges, 15u);
  EXPECT_EQ(d.cores[1].storms, 1u);
  EXPECT_EQ(d.cores[1].storm_masked, 0x4u);
  EXPECT_EQ(d.throttle_edges, 4u);
  EXPECT_EQ(d.fault_edges, 1u);
  ASSERT_TRUE(d.faults && d.resets);
  EXPECT_EQ(d.faults->at("dma_error"), 1u);
  EXPECT_EQ(d.resets->at("flr"), 2u);
  EXPECT_EQ(d.records_lost, 17u);
  EXPECT_EQ(d.fanout_edges, 26u);
  EXPECT_EQ(d.fanout_copies, 52u);
  EXPECT_EQ(core_owner_text(d.cores[1]), "uid 1000 PID 4242 (python3 -u)");

  const auto e = sample_device(1, src);
  EXPECT_EQ(e.numa_node, -1);
  ASSERT_EQ(e.counter_errors.size(), 1u);
  EXPECT_NE(e.counter_errors[0].find("intr_counts line 2: 'core1 zero'"), std::string::npos) << e.counter_errors[0];
  ASSERT_EQ(e.cores.size(), 2u);
  EXPECT_EQ(core_owner_text(e.cores[1]), "PID not visible here (worker)");
  EXPECT_EQ(e.errors(), 3u);  // the node, intr_counts, the engines
  // what intr_counts holds is unknown, never 0; the other files still count
  EXPECT_FALSE(e.intr_known);
  EXPECT_FALSE(e.throttle_edges);
  EXPECT_FALSE(e.spurious);
  EXPECT_TRUE(e.edges_known);
  EXPECT_EQ(e.fault_edges, 0u);
}

// A counter file that does not parse: its counters are null in JSON, absent
// in the Prometheus text and "unknown" in the text report, never 0; the
// files that did parse still give theirs.
TEST(Metrics, UnreadableCountersAreNullNeverZero) {
  const auto e = sample_device(1, fake_root());
  const auto j = metrics_json({0, 0, 1.0}, {e});
  const auto& c = j["devices"][0]["counters"];
  EXPECT_TRUE(c["throttle_edges"].is_null()) << c.dump();
  EXPECT_TRUE(c["spurious_interrupts"].is_null()) << c.dump();
  EXPECT_EQ(c["fault_edges"], 0) << c.dump();
  EXPECT_TRUE(j["devices"][0]["cores"][0]["edges_by_cause"].is_null());
  EXPECT_TRUE(j["devices"][0]["error_summary"]["SW_OVERFLOW"].is_null());
  EXPECT_TRUE(j["error_summary"]["SW_OVERFLOW"].is_null()) << "a total over an unknown is unknown";
  EXPECT_EQ(j["error_summary"]["DMA_ERROR"], 0);
  const std::string prom = prometheus_text({e});
  EXPECT_EQ(prom.find("neuron_throttle_edges_total{"), std::string::npos) << prom;
  EXPECT_EQ(prom.find("neuron_notific_cause_edges_total{"), std::string::npos) << prom;
  EXPECT_NE(prom.find("neuron_fault_edges_total{device=\"1\"} 0"), std::string::npos) << prom;
  const std::string text = metrics_text({0, 0, 1.0}, {e});
  EXPECT_NE(text.find("throttle unknown, fault 0, spurious unknown"), std::string::npos) << text;
}

// nnq0 core 1's intr_counts "12 1 3 0 0 2 1 0 0" by hand: DISABLED_QUEUE is
// bit 1, SW_OVERFLOW 2, ENGINE_FATAL 6; THRESHOLD (bit 0, 12 + 7) and
// BACKPRESSURE (bit 5, 2) are not errors.
TEST(Metrics, ErrorSummaryByHand) {
  const auto d = sample_device(0, fake_root());
  const auto j = error_summary(d);
  const nlohmann::json want = {{"DISABLED_QUEUE", 1}, {"SW_OVERFLOW", 3},     {"HW_OVERFLOW", 0},
                               {"AXI_WRITE_ERROR", 0}, {"ENGINE_FATAL", 1},   {"BAD_HEAD", 0},
                               {"DMA_ERROR", 1},      {"INTR_STORM", 0},     {"RECORDS_LOST_TO_RESET", 17}};
  EXPECT_EQ(j, want) << j.dump();
}

TEST(Metrics, ExecutionSummaryByHand) {
  DeviceSample d;
  // core 0: PE running, ACT halted on FP_UNDERFLOW (0x00), POOL halted on
  // SEQUENCER_FATAL (0x0a); core 1: PE idle
  d.engines = {{0, 0, NEURON_ENGINE_RUNNING, 5, 2, 0xff, 100},
               {0, 1, NEURON_ENGINE_HALTED, 9, 1, 0x00, 10},
               {0, 2, NEURON_ENGINE_HALTED, 3, 1, 0x0a, 1},
               {1, 0, NEURON_ENGINE_IDLE, 0, 0, 0xff, 0}};
  const nlohmann::json want = {
      {"engines_by_state", {{"IDLE", 1}, {"RUNNING", 1}, {"WAITING", 0}, {"HALTED", 2}}},
      {"halted_by_error", {{"FP_UNDERFLOW", 1}, {"SEQUENCER_FATAL", 1}}},
      {"programs_started", 4},
      {"instructions_retired", 111}};
  EXPECT_EQ(execution_summary(d), want) << execution_summary(d).dump();
}

TEST(Metrics, PrometheusLabelEscaping) {
  EXPECT_EQ(prom_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(prom_label("python3 -u"), "python3 -u");
}

TEST(Metrics, AtomicWriteReplacesTheFile) {
  const std::string dir = ::testing::TempDir() + "metrics-atomic-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/x.prom";
  ASSERT_TRUE(write_file_atomic(path, "old\n"));
  ASSERT_TRUE(write_file_atomic(path, "new\n"));
  EXPECT_EQ(slurp(path), "new\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  auto bad = write_file_atomic(dir + "/no-such-dir/x.prom", "x");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("no-such-dir/x.prom.tmp"), std::string::npos) << bad.error().message();
  std::filesystem::remove_all(dir);
}

// A whole report of the fake tree with a fixed header, against the golden
// document (checked by hand against the tree's files when it was written).
TEST(Metrics, FakeTreeReportJson) {
  const auto devs = sample_devices(fake_root());
  auto j = metrics_json({3, 1700000000000000000, 5.0}, devs);
  // the node's error names the fake tree's absolute path: make it relative
  const std::string root = NEURON_TEST_DATA_DIR "/cli/root/";
  std::string text = j.dump(2);
  for (std::size_t at; (at = text.find(root)) != std::string::npos;) text.replace(at, root.size(), "ROOT/");
  EXPECT_EQ(text + "\n", slurp(NEURON_TEST_DATA_DIR "/cli/metrics-fake.json"));
}

// Engines and a halted one (the fake tree has no node, so no engines): the
// Prometheus text against a golden file, which cli.promtool.metrics_fake
// also gives to promtool.
TEST(Metrics, EnginesPrometheusGolden) {
  DeviceSample d;
  d.index = 2;
  d.name = "nnq2";
  d.path = "/dev/nnq2";
  d.pci_address = "0000:03:00.0";
  d.numa_node = 1;
  d.local_cpulist = "4-7";
  d.engines = {{0, 0, NEURON_ENGINE_RUNNING, 5, 2, 0xff, 100}, {0, 1, NEURON_ENGINE_HALTED, 9, 1, 0x00, 10}};
  d.counter_errors = {"left out"};  // only the engine families and the device's
  EXPECT_EQ(prometheus_text({d}), slurp(NEURON_TEST_DATA_DIR "/cli/metrics-engines.prom"));
}
