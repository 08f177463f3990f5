// SPDX-License-Identifier: MIT
//
// Fuzz target: the NNQCORE devcoredump decoder of `neuron-nq coredump`
// (tools/coredump.cpp: parse_coredump, coredump_text, coredump_json).
// Input: byte 0 is a mode, the rest the dump. With bit 0 of the mode set,
// the harness writes the magic and total_size (the input's size) into the
// header first, so the mutations reach the parts behind those two checks;
// otherwise the bytes go in as they are. Invariants, beyond no crash and no
// sanitizer report:
//   - a refused dump is errc::invalid_argument, naming the file;
//   - an accepted one holds exactly what the header counts (num_engines
//     engines, num_queues queues, rec_count records each, insn_count
//     instructions), total_size is the input's size, and the parts fit in it;
//   - the text has one line per header line, engine, queue, record and
//     instruction (a record or an instruction cannot add or end a line);
//   - the JSON (json_text, as the CLI prints it) is valid UTF-8 JSON and
//     parses back with the same counts.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "check.hpp"
#include "coredump.hpp"
#include "text_escape.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool fix = data[0] & 1;
  std::vector<char> b(data + 1, data + size);
  if (fix && b.size() >= sizeof(neuron_coredump_header)) {
    std::memcpy(b.data() + offsetof(neuron_coredump_header, magic), NEURON_COREDUMP_MAGIC, 8);
    const auto total = static_cast<std::uint32_t>(b.size());
    std::memcpy(b.data() + offsetof(neuron_coredump_header, total_size), &total, sizeof total);
  }
  const std::string path = "fuzz.bin";
  auto d = neuron::cli::parse_coredump(b, path);
  if (!d) {
    FUZZ_CHECK(d.error().code == neuron::make_error_code(neuron::errc::invalid_argument), "{}",
               d.error().message());
    FUZZ_CHECK(d.error().what.rfind("coredump " + path + ": ", 0) == 0, "{}", d.error().what);
    return 0;
  }
  const auto& h = d->h;
  FUZZ_CHECK(h.total_size == b.size(), "total_size {} of {} bytes", h.total_size, b.size());
  FUZZ_CHECK(d->engines.size() == h.num_engines && d->queues.size() == h.num_queues &&
                 d->insns.size() == h.insn_count,
             "parts {} {} {} against the header's {} {} {}", d->engines.size(), d->queues.size(), d->insns.size(),
             h.num_engines, h.num_queues, h.insn_count);
  std::size_t records = 0;
  for (const auto& q : d->queues) {
    FUZZ_CHECK(q.records.size() == q.q.rec_count, "queue {}: {} records, rec_count {}", q.q.queue,
               q.records.size(), q.q.rec_count);
    records += q.records.size();
  }
  const std::size_t bytes = h.header_size + d->engines.size() * sizeof(neuron_coredump_engine) +
                            d->queues.size() * sizeof(neuron_coredump_queue) + records * 16 +
                            d->insns.size() * sizeof(neuron_emu_insn);
  FUZZ_CHECK(bytes <= b.size(), "the parts take {} bytes of {}", bytes, b.size());

  const std::string text = neuron::cli::coredump_text(*d, path);
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  const std::size_t want = 3 + d->engines.size() + d->queues.size() + records + 1 + d->insns.size();
  FUZZ_CHECK(!text.empty() && text.back() == '\n' && lines == want, "{} text lines, {} expected:\n{}", lines, want,
             text);

  const std::string js = neuron::detail::json_text(neuron::cli::coredump_json(*d, path), 2);
  const auto j = nlohmann::json::parse(js, nullptr, false);
  FUZZ_CHECK(!j.is_discarded(), "the JSON does not parse:\n{}", js);
  FUZZ_CHECK(j.at("engines").size() == d->engines.size() && j.at("queues").size() == d->queues.size() &&
                 j.at("program").at("insns").size() == d->insns.size(),
             "JSON counts:\n{}", js);
  return 0;
}
