// SPDX-License-Identifier: MIT
//
// Fuzz target: the record decoder and its text and JSON (src/decode.cpp,
// src/format.cpp; libneuron/decode.hpp, format.hpp, json.hpp).
// Input: byte 0 picks the queue hint, byte 1 the core, bytes 2..5 a NOTIFIC
// route word; then up to 8 16-byte records, each decoded under that hint
// and under the route's class of every queue. Invariants, beyond no crash and no
// sanitizer report:
//   - decode() reads what the record says: notific_type, header, timestamp
//     (meta_of); an Unknown keeps the 16 bytes untouched; the same bytes
//     decode the same way again;
//   - to_text() is one line (no newline), explain() too, with or without the
//     program that ran;
//   - to_json() is valid UTF-8 JSON that parses back to itself, with "kind"
//     = kind_name(), "notific_type", "device_time_ps", "phase",
//     "sw_overflow", "hw_overflow" as the record has them
//     (docs/cli-json.md#record);
//   - a throttle record is not an error (is_error / is_throttle);
//   - hex() is the 16 bytes as 47 characters.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>

#include "check.hpp"
#include "libneuron/assembler.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/format.hpp"
#include "libneuron/json.hpp"

namespace {

using neuron::Decoded;
using neuron::QueueClass;
using neuron::Record;

/// A program with DGE copies and $S writes, so explain(e, program, core)
/// takes its DGE paths for records whose pc lands on them.
const neuron::Program& sample_program() {
  static const neuron::Program p = [] {
    auto r = neuron::assemble(R"(
[pe]
reg 3 0x1000
reg 4 0x10
dge src=0x10 dst=0x20 len=4 bc_src=3 bc_dst=4,quiet indirect=raw:0x05 backend=2
dge src=0x800 dst=0x900 len=0x7ff bc_src=3 offsets=wide elem=4
nop
[pool]
reg 5 7
dge src=0x1 dst=0x2 len=3 bc_dst=5 indirect=raw:0x06 idx=0x40
halt
)",
                              "sample.nq");
    if (!r) {
      std::fprintf(stderr, "sample program: %s\n", r.error().message().c_str());
      std::abort();
    }
    return *r;
  }();
  return p;
}

bool one_line(const std::string& s) { return s.find('\n') == std::string::npos; }

void check_record(const Record& r, QueueClass hint, unsigned core) {
  const Decoded d = neuron::decode(r, hint);
  const auto& m = neuron::meta_of(d);
  FUZZ_CHECK(m.notific_type == r.notific_type(), "notific_type {} of {}", m.notific_type, r.hex());
  FUZZ_CHECK(m.header.raw == r.header(), "header {} of {}", m.header.raw, r.hex());
  FUZZ_CHECK(m.timestamp.ps == r.timestamp_ps(), "timestamp of {}", r.hex());
  FUZZ_CHECK(m.header.phase() == r.phase() && m.header.sw_overflow() == r.sw_overflow() &&
                 m.header.hw_overflow() == r.hw_overflow(),
             "header bits of {}", r.hex());
  if (const auto* u = std::get_if<neuron::Unknown>(&d))
    FUZZ_CHECK(u->bytes == r.bytes, "Unknown changed the bytes of {}", r.hex());
  const Decoded again = neuron::decode(r, hint);
  FUZZ_CHECK(d.index() == again.index(), "{} decodes two ways", r.hex());

  const std::string text = neuron::to_text(d);
  FUZZ_CHECK(!text.empty() && one_line(text), "to_text of {}: '{}'", r.hex(), text);
  if (const auto* e = std::get_if<neuron::TpbError>(&d)) {
    const std::string x = neuron::explain(*e, sample_program(), core);
    FUZZ_CHECK(!x.empty() && one_line(x), "explain with the program of {}: '{}'", r.hex(), x);
  }
  FUZZ_CHECK(!(neuron::is_throttle(d) && neuron::is_error(d)), "{} is both a throttle and an error", r.hex());
  (void)neuron::format_time(m.timestamp);

  const nlohmann::json j = neuron::to_json(d);
  std::string dumped;
  try {
    dumped = j.dump();  // strict: throws on a string that is not UTF-8
  } catch (const nlohmann::json::exception& ex) {
    FUZZ_CHECK(false, "to_json of {} is not valid UTF-8: {}", r.hex(), ex.what());
  }
  const auto back = nlohmann::json::parse(dumped, nullptr, false);
  FUZZ_CHECK(!back.is_discarded() && back == j, "to_json of {} does not parse back: {}", r.hex(), dumped);
  FUZZ_CHECK(j.value("kind", "") == neuron::kind_name(d), "kind in {}", dumped);
  FUZZ_CHECK(j.at("type").is_string(), "type in {}", dumped);
  FUZZ_CHECK(j.at("notific_type") == m.notific_type, "notific_type in {}", dumped);
  FUZZ_CHECK(j.at("device_time_ps") == r.timestamp_ps(), "device_time_ps in {}", dumped);
  FUZZ_CHECK(j.at("phase") == (r.phase() ? 1 : 0), "phase in {}", dumped);
  FUZZ_CHECK(j.at("sw_overflow") == r.sw_overflow() && j.at("hw_overflow") == r.hw_overflow(), "overflow in {}",
             dumped);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  const auto hint = static_cast<QueueClass>(data[0] % 8);
  const unsigned core = data[1] % 4;
  std::uint32_t route;
  std::memcpy(&route, data + 2, sizeof route);
  data += 6;
  size -= 6;
  // the hint, and each class the route gives a queue, once
  std::uint32_t classes = 1u << static_cast<unsigned>(hint);
  for (unsigned q = 0; q < NEURON_NUM_SW_QUEUES; ++q)
    classes |= 1u << static_cast<unsigned>(neuron::queue_class(q, route));
  // at most 8 records an input: the JSON round trip of each is what costs
  for (unsigned n = 0; n < 8 && size >= sizeof(Record); ++n, data += sizeof(Record), size -= sizeof(Record)) {
    Record r;
    std::memcpy(r.bytes.data(), data, r.bytes.size());
    const std::string hex = r.hex();
    FUZZ_CHECK(hex.size() == 47, "hex() '{}'", hex);
    // the full check once per way the record decodes (the hint matters for
    // EXPLICIT on the DGE queue only); the text of every class
    std::uint32_t kinds = 0;
    for (unsigned c = 0; c < 8; ++c) {
      if (!(classes & (1u << c))) continue;
      const auto qc = static_cast<QueueClass>(c);
      const auto kind = neuron::decode(r, qc).index();
      if (kinds & (1u << kind)) {
        FUZZ_CHECK(one_line(neuron::to_text(neuron::decode(r, qc))), "to_text of {}", hex);
        continue;
      }
      kinds |= 1u << kind;
      check_record(r, qc, core);
    }
    if (auto dge = neuron::decode_dge_metadata(r)) FUZZ_CHECK(dge->meta.notific_type == r.notific_type(), "dge");
  }
  (void)neuron::notific_cause_names(route);
  return 0;
}
