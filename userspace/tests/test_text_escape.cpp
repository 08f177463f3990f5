// SPDX-License-Identifier: MIT
//
// Strings a tenant chooses (src/text_escape.hpp): a process name of hostile
// bytes through each sink (text, Prometheus label, JSON) and through the
// driver's escaping of sysfs core_owners and back; `top`'s rate of a
// counter that went down (tools/output.hpp counter_rate) and its engine
// utilisation (busy_percent). Every expected
// value is written out by hand, byte by byte.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "devices.hpp"
#include "libneuron/tenancy.hpp"
#include "output.hpp"
#include "report.hpp"
#include "text_escape.hpp"

using namespace std::string_literals;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// The name of issue 41: ff fe (not UTF-8), a double quote, a newline, and
// what would be the next owner line "0 1 9". Bytes: ff fe 22 78 0a 30 20 31 20 39.
const std::string kHostile = "\xff\xfe\"x\n0 1 9";

// The same name as the driver writes it in core_owners (kernel/neuron_sysfs.c):
// ff fe as \xff\xfe, '"' and 'x' as they are, newline \x0a, blanks \x20.
constexpr std::string_view kHostileSysfs = R"(\xff\xfe"x\x0a0\x201\x209)";

TEST(TextEscape, HostileNameInEachSink) {
  // text: the two bytes in hex, the newline as \n; one line
  EXPECT_EQ(neuron::detail::text_escape(kHostile), R"(\xff\xfe"x\n0 1 9)");
  // Prometheus: U+FFFD (ef bf bd) for each bad byte, \" and \n
  EXPECT_EQ(neuron::detail::prom_label_value(kHostile), "\xef\xbf\xbd\xef\xbf\xbd\\\"x\\n0 1 9");
  // JSON: U+FFFD for each bad byte, \" and \n as JSON writes them
  const nlohmann::json j = {{"comm", kHostile}};
  EXPECT_EQ(neuron::detail::json_text(j), "{\"comm\":\"\xef\xbf\xbd\xef\xbf\xbd\\\"x\\n0 1 9\"}");
  EXPECT_EQ(neuron::detail::json_text(j, 2), "{\n  \"comm\": \"\xef\xbf\xbd\xef\xbf\xbd\\\"x\\n0 1 9\"\n}");
  // what info --json and top --json did: nlohmann's dump() throws (exit 134)
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
}

// Found by the fuzz target userspace/fuzz (escape, corpus crash-json-truncated-utf8):
// a truncated sequence (e5 89, the start of a 3-byte character, then 'x')
// is two bad bytes, so two U+FFFD in JSON as in the Prometheus label; nlohmann's
// own replacement wrote one for both, and the sinks disagreed.
TEST(TextEscape, JsonReplacesEachBadByteOfATruncatedSequence) {
  const std::string name = "\xe5\x89x";
  const std::string two = "\xef\xbf\xbd\xef\xbf\xbdx";
  EXPECT_EQ(neuron::detail::utf8_valid(name), two);
  EXPECT_EQ(neuron::detail::prom_label_value(name), two);
  EXPECT_EQ(neuron::detail::json_text(nlohmann::json{{"comm", name}}), "{\"comm\":\"" + two + "\"}");
  // keys too, and valid strings beside them stay as they are
  EXPECT_EQ(neuron::detail::json_text(nlohmann::json{{name, "\xc3\xa9"}}), "{\"" + two + "\":\"\xc3\xa9\"}");
}

TEST(TextEscape, TextKeepsPrintableAndUtf8EscapesTheRest) {
  using neuron::detail::text_escape;
  EXPECT_EQ(text_escape("python3 -u"), "python3 -u");
  EXPECT_EQ(text_escape(""), "");
  EXPECT_EQ(text_escape("a\\b"), R"(a\\b)");  // a backslash is doubled: "\n" stays two characters
  EXPECT_EQ(text_escape("a\\nb"), R"(a\\nb)");
  EXPECT_EQ(text_escape("t\tr\r"), R"(t\tr\r)");
  EXPECT_EQ(text_escape("\x1b[2J"), R"(\x1b[2J)");  // a terminal's escape sequence
  EXPECT_EQ(text_escape("\x01\x7f"), R"(\x01\x7f)");
  EXPECT_EQ(text_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(text_escape("\xc2\x85"), R"(\xc2\x85)");          // U+0085 NEL, a C1 control
  EXPECT_EQ(text_escape("\xc2\xa0"), "\xc2\xa0");             // U+00A0, printable
  EXPECT_EQ(text_escape("\xc0\xaf"), R"(\xc0\xaf)");          // overlong '/'
  EXPECT_EQ(text_escape("\xed\xa0\x80"), R"(\xed\xa0\x80)");  // a surrogate
  EXPECT_EQ(text_escape("\xf4\x90\x80\x80"), R"(\xf4\x90\x80\x80)");  // past U+10FFFF
  EXPECT_EQ(text_escape("\xe2\x82x"), R"(\xe2\x82x)");        // a truncated sequence
  EXPECT_EQ(text_escape("\xe2\x82"), R"(\xe2\x82)");          // ... at the end
  EXPECT_EQ(text_escape("\0z"s), R"(\x00z)");
}

TEST(TextEscape, Utf8ValidAndPrometheus) {
  using neuron::detail::prom_label_value;
  using neuron::detail::utf8_valid;
  EXPECT_EQ(utf8_valid("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(utf8_valid("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(utf8_valid("caf\xc3\xa9\n"), "caf\xc3\xa9\n");
  EXPECT_EQ(prom_label_value("a\"b\\c\nd"), R"(a\"b\\c\nd)");
  EXPECT_EQ(prom_label_value("caf\xc3\xa9\t"), "caf\xc3\xa9\t");  // the format escapes only \ " and newline
  EXPECT_EQ(neuron::cli::prom_label(kHostile), "\xef\xbf\xbd\xef\xbf\xbd\\\"x\\n0 1 9");
}

TEST(TextEscape, KernelUnescape) {
  using neuron::detail::kernel_unescape;
  EXPECT_EQ(kernel_unescape(kHostileSysfs), kHostile);
  EXPECT_EQ(kernel_unescape(R"(my\x20job\x5c)"), "my job\\");
  EXPECT_EQ(kernel_unescape(R"(\x5C\x5c)"), "\\\\");  // either case
  // an older driver's raw name: what is not \xHH is taken as it is
  EXPECT_EQ(kernel_unescape("my job"), "my job");
  EXPECT_EQ(kernel_unescape(R"(a\b)"), R"(a\b)");
  EXPECT_EQ(kernel_unescape(R"(\x4)"), R"(\x4)");
  EXPECT_EQ(kernel_unescape(R"(\xzz\)"), R"(\xzz\)");
}

// core_owners as the driver writes it when core 0's owner (PID 1234) named
// itself "\xff\xfe\"x\n0 1 9": still one line per core, core 1 free.
TEST(TextEscape, ForgedNameMakesNoOwnerLine) {
  const std::string sysfs = "0 1234 " + std::string(kHostileSysfs) + "\n1 - -\n";
  const auto o = neuron::parse_core_owners(sysfs);
  ASSERT_TRUE(o) << o.error().message();
  ASSERT_EQ(o->size(), 2u);
  EXPECT_EQ((*o)[0].core, 0u);
  EXPECT_EQ((*o)[0].pid, 1234);
  EXPECT_EQ((*o)[0].comm, kHostile);  // the process's own bytes
  EXPECT_EQ((*o)[1].core, 1u);
  EXPECT_TRUE((*o)[1].is_free());
  EXPECT_EQ(neuron::owner_text((*o)[0]), R"(PID 1234 (\xff\xfe"x\n0 1 9))");
  // a line that does not parse is quoted escaped in the error
  const auto bad = neuron::parse_core_owners("0 1234 a\n\xff\x1b[2J\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().what, HasSubstr(R"(line 2: '\xff\x1b[2J')"));
}

// list, metrics and Prometheus of a device whose core 0 that process owns
TEST(TextEscape, ReportsOfAHostileOwner) {
  using namespace neuron::cli;
  DeviceSample d;
  d.index = 0;
  d.name = "nnq0";
  d.path = "/dev/nnq0";
  CoreSample c;
  c.core = 0;
  c.owner = neuron::CoreOwner{0, 1234, kHostile};
  c.uid = 1000;
  d.cores.push_back(c);
  const std::vector<DeviceSample> devs{d};

  const std::string text = list_text(devs);
  EXPECT_THAT(text, HasSubstr("  core 0  uid 1000 PID 1234 (\\xff\\xfe\"x\\n0 1 9)\n"));
  EXPECT_THAT(text, Not(HasSubstr("\n0 1 9")));

  const std::string prom = prometheus_text(devs);
  EXPECT_THAT(prom, HasSubstr("neuron_core_owner_info{device=\"0\",core=\"0\",pid=\"1234\",uid=\"1000\","
                              "comm=\"\xef\xbf\xbd\xef\xbf\xbd\\\"x\\n0 1 9\"} 1\n"));

  const std::string json = neuron::detail::json_text(list_json(devs));
  EXPECT_THAT(json, HasSubstr("\"comm\":\"\xef\xbf\xbd\xef\xbf\xbd\\\"x\\n0 1 9\""));
  // valid JSON, and nlohmann's parser refuses strings that are not UTF-8
  EXPECT_TRUE(nlohmann::json::accept(json));
  EXPECT_TRUE(nlohmann::json::accept(neuron::detail::json_text(metrics_json({}, devs))));
  EXPECT_THAT(metrics_text({}, devs), HasSubstr("  core 0 uid 1000 PID 1234 (\\xff\\xfe\"x\\n0 1 9): edges"));
}

TEST(CounterRate, NeverNegativeNeverHuge) {
  using neuron::cli::counter_rate;
  EXPECT_EQ(counter_rate(100, 300, 2.0), 100.0);
  EXPECT_EQ(counter_rate(5, 5, 1.0), 0.0);
  EXPECT_EQ(counter_rate(300, 100, 1.0), std::nullopt);  // went down: unknown, not 1.8e19
  EXPECT_EQ(counter_rate(4294967290u, 6, 1.0), std::nullopt);  // a 32-bit counter wrapped
  EXPECT_EQ(counter_rate(1, 2, 0.0), std::nullopt);
  EXPECT_EQ(counter_rate(1, 2, -1.0), std::nullopt);
}

// top's BUSY%: an engine's busy ns over the interval as a share of it
TEST(BusyPercent, ShareOfTheIntervalNeverNegative) {
  using neuron::cli::busy_percent;
  // 250 ms busy in a 1 s interval: 25 %; 1.5 s busy in 2 s: 75 %
  EXPECT_EQ(busy_percent(1'000'000'000, 1'250'000'000, 1.0), 25.0);
  EXPECT_EQ(busy_percent(0, 1'500'000'000, 2.0), 75.0);
  EXPECT_EQ(busy_percent(7, 7, 0.5), 0.0);  // idle
  // 1.02 s busy in 1 s (an interval ended at a late sample): at most 100
  EXPECT_EQ(busy_percent(0, 1'020'000'000, 1.0), 100.0);
  // the counter went down (the core changed hands): unknown, not negative
  EXPECT_EQ(busy_percent(2'000'000'000, 5, 1.0), std::nullopt);
  EXPECT_EQ(busy_percent(0, 1, 0.0), std::nullopt);
}

}  // namespace
