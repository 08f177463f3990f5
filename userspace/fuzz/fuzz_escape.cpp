// SPDX-License-Identifier: MIT
//
// Fuzz target: strings a tenant controls on their way out of neuron-nq
// (src/text_escape.cpp; the emitters of tools/report.cpp and prometheus.cpp; the core_owners
// parser of src/tenancy.cpp). Input: any bytes, taken as the command name
// (comm) of a core's owner. Invariants, beyond no crash and no sanitizer
// report (src/text_escape.hpp, docs/cli-json.md#strings, docs/metrics.md):
//   - kernel_unescape() undoes the driver's escaping of core_owners (blank,
//     backslash, control and non-ASCII bytes as \xHH), and a core_owners
//     line with the escaped name parses back to exactly these bytes;
//   - text_escape(): no control byte (C0, DEL, C1), valid UTF-8, and the
//     bytes come back by undoing \\ \n \t \r \xHH (two names never print
//     the same);
//   - utf8_valid() is valid UTF-8 and leaves valid UTF-8 as it is;
//   - prom_label_value() escapes only backslash, double quote and newline,
//     is valid UTF-8, and unescapes to utf8_valid() of the name;
//   - `list --json` and `metrics --json` of a device whose core the name
//     owns (json_text) are valid UTF-8 JSON that nlohmann parses, with the
//     name (U+FFFD for bytes that are not UTF-8) as every "comm";
//   - `metrics --prom` (prometheus_text) is valid exposition text, line by
//     line, and its comm label unescapes to that same string;
//   - `list` and `metrics` as text have the lines a plain name gives them.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "devices.hpp"
#include "libneuron/tenancy.hpp"
#include "report.hpp"
#include "text_escape.hpp"
#include "utf8.hpp"

namespace {

using namespace neuron;
namespace d = neuron::detail;

/// The driver's escaping of core_owners as its comment states it
/// (kernel/neuron_sysfs.c: string_escape_mem(ESCAPE_NAP | ESCAPE_APPEND |
/// ESCAPE_HEX, " \\")): printable ASCII other than blank and backslash as it
/// is, every other byte as \xHH.
std::string kernel_escape(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    const auto b = static_cast<std::uint8_t>(c);
    if (b > 0x20 && b < 0x7f && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 0xf];
    }
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // text_escape writes lower case only
}

/// text_escape()'s output back to bytes; nullopt-like false when it holds a
/// sequence text_escape() does not write.
bool text_unescape(std::string_view s, std::string& out) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return false;
    switch (s[i]) {
      case '\\': out += '\\'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'x': {
        if (s.size() - i < 3) return false;
        const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
        if (hi < 0 || lo < 0) return false;
        out += static_cast<char>(hi << 4 | lo);
        i += 2;
        break;
      }
      default: return false;
    }
  }
  return true;
}

/// One Prometheus label value (text format 0.0.4) from s[i], just after its
/// opening quote, to its closing quote: the unescaped value, i past the
/// quote. False when an escape other than \\ \" \n appears, a raw newline
/// appears, or the quote never closes.
bool prom_value(std::string_view s, std::size_t& i, std::string& out) {
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      ++i;
      return true;
    }
    if (c == '\n') return false;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == s.size()) return false;
    if (s[i] == '\\') out += '\\';
    else if (s[i] == '"') out += '"';
    else if (s[i] == 'n') out += '\n';
    else return false;
  }
  return false;
}

bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

/// Checks one line of the exposition; returns the comm label's value of a
/// neuron_core_owner_info sample in `comm`.
void check_prom_line(std::string_view line, std::vector<std::string>& comms) {
  FUZZ_CHECK(utf8::valid(line), "not UTF-8: {}", line);
  if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) return;
  FUZZ_CHECK(!line.empty() && line[0] != '#', "line '{}'", line);
  std::size_t i = 0;
  while (i < line.size() && name_char(line[i], i == 0)) ++i;
  FUZZ_CHECK(i > 0, "no metric name: {}", line);
  const std::string_view metric = line.substr(0, i);
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      const std::size_t n0 = i;
      while (i < line.size() && name_char(line[i], i == n0)) ++i;
      FUZZ_CHECK(i > n0 && i + 1 < line.size() && line[i] == '=' && line[i + 1] == '"', "label at {}: {}", n0, line);
      const std::string_view label = line.substr(n0, i - n0);
      i += 2;
      std::string value;
      FUZZ_CHECK(prom_value(line, i, value), "label {} value: {}", label, line);
      if (metric == "neuron_core_owner_info" && label == "comm") comms.push_back(value);
      if (i < line.size() && line[i] == ',') ++i;
    }
    FUZZ_CHECK(i < line.size() && line[i] == '}', "labels do not close: {}", line);
    ++i;
  }
  FUZZ_CHECK(i < line.size() && line[i] == ' ' && i + 1 < line.size(), "no value: {}", line);
  const std::string_view value = line.substr(i + 1);
  FUZZ_CHECK(value.find_first_not_of("0123456789.e+-") == std::string_view::npos, "value '{}': {}", value, line);
}

void collect_comms(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "comm" && v.is_string()) out.push_back(v.get<std::string>());
      collect_comms(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) collect_comms(v, out);
  }
}

std::vector<cli::DeviceSample> sample(const std::string& comm) {
  cli::DeviceSample dev;
  dev.index = 0;
  dev.name = "nnq0";
  dev.path = "/dev/nnq0";
  dev.pci_address = "0000:00:04.0";
  dev.local_cpulist = "0-1";
  cli::CoreSample c;
  c.core = 0;
  c.owner = CoreOwner{0, 1234, comm};
  c.uid = 1000;
  dev.cores.push_back(c);
  cli::CoreSample free;
  free.core = 1;
  free.owner = CoreOwner{1, std::nullopt, ""};
  dev.cores.push_back(free);
  return {dev};
}

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void check_json(const nlohmann::json& doc, const std::string& want, const char* what) {
  const std::string text = d::json_text(doc);
  FUZZ_CHECK(utf8::valid(text), "{} is not UTF-8", what);
  const auto back = nlohmann::json::parse(text, nullptr, false);
  FUZZ_CHECK(!back.is_discarded(), "{} does not parse: {}", what, text);
  std::vector<std::string> comms;
  collect_comms(back, comms);
  FUZZ_CHECK(!comms.empty(), "{} has no comm: {}", what, text);
  for (const auto& c : comms) FUZZ_CHECK(c == want, "{}: comm '{}', expected '{}'", what, c, want);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string x(reinterpret_cast<const char*>(data), size);

  // the driver's escaping, undone
  const std::string esc = kernel_escape(x);
  FUZZ_CHECK(d::kernel_unescape(esc) == x, "kernel_unescape(kernel escape) differs for {}", esc);
  auto owners = parse_core_owners("0 - -\n1 1234 " + esc + "\n");
  FUZZ_CHECK(owners && owners->size() == 2 && (*owners)[1].pid == 1234 && (*owners)[1].comm == x,
             "core_owners line with {} does not parse back", esc);
  if (auto raw = parse_core_owners(x); !raw)
    FUZZ_CHECK(raw.error().code == make_error_code(errc::bad_message), "{}", raw.error().message());

  // text: no control byte, valid UTF-8, reversible
  const std::string t = d::text_escape(x);
  FUZZ_CHECK(utf8::valid(t), "text_escape is not UTF-8: {}", t);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto b = static_cast<std::uint8_t>(t[i]);
    FUZZ_CHECK(b >= 0x20 && b != 0x7f, "text_escape leaves byte 0x{:02x}", b);
    FUZZ_CHECK(!(b == 0xc2 && i + 1 < t.size() && static_cast<std::uint8_t>(t[i + 1]) <= 0x9f),
               "text_escape leaves a C1 control");
  }
  std::string back;
  FUZZ_CHECK(text_unescape(t, back) && back == x, "text_escape is not reversible: {}", t);
  FUZZ_CHECK(owner_text((*owners)[1]).find('\n') == std::string::npos, "owner_text has a newline");

  // UTF-8 as it is, or with U+FFFD
  const std::string u = d::utf8_valid(x);
  FUZZ_CHECK(utf8::valid(u), "utf8_valid is not UTF-8");
  if (utf8::valid(x)) FUZZ_CHECK(u == x, "utf8_valid changed valid UTF-8");

  // a Prometheus label value
  const std::string pv = d::prom_label_value(x);
  FUZZ_CHECK(utf8::valid(pv), "prom_label_value is not UTF-8");
  std::size_t at = 0;
  std::string unq;
  const std::string quoted = pv + "\"";
  FUZZ_CHECK(prom_value(quoted, at, unq) && at == quoted.size() && unq == u, "prom_label_value: {}", pv);

  // the CLI's documents
  const auto devs = sample(x);
  check_json(cli::list_json(devs), u, "list --json");
  check_json(cli::metrics_json({0, 1, 1.0}, devs), u, "metrics --json");
  const std::string prom = cli::prometheus_text(devs);
  std::vector<std::string> comms;
  std::size_t start = 0;
  while (start < prom.size()) {
    const std::size_t nl = prom.find('\n', start);
    FUZZ_CHECK(nl != std::string::npos, "the exposition does not end in a newline");
    check_prom_line(std::string_view(prom).substr(start, nl - start), comms);
    start = nl + 1;
  }
  FUZZ_CHECK(comms.size() == 1 && comms[0] == u, "{} comm labels", comms.size());

  static const auto plain = sample("x");
  static const std::size_t list_lines = count_lines(cli::list_text(plain));
  static const std::size_t metrics_lines = count_lines(cli::metrics_text({0, 1, 1.0}, plain));
  FUZZ_CHECK(count_lines(cli::list_text(devs)) == list_lines, "list adds lines for {}", t);
  FUZZ_CHECK(count_lines(cli::metrics_text({0, 1, 1.0}, devs)) == metrics_lines, "metrics adds lines for {}", t);
  return 0;
}
