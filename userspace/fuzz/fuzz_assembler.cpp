// SPDX-License-Identifier: MIT
//
// Fuzz target: the .nq assembler (src/assembler.cpp, docs/program-syntax.md).
// Input: any bytes as program text. Invariants, beyond no crash and no
// sanitizer report:
//   - a failure is errc::parse_error with at most 20 messages, one a line
//     (libneuron/assembler.hpp);
//   - a program has a source line per instruction, no engine image above
//     NEURON_MAX_PROGRAM_INSNS slots, every data reference names a block and
//     an instruction, and program_image() of it has image_slots() slots
//     (libneuron/program.hpp);
//   - disassemble() gives text assemble() accepts ("in the syntax assemble()
//     accepts") and that text assembles to the same program, byte for byte:
//     same features, engines, instructions, data blocks and references; the
//     listing of the listing is the listing.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "check.hpp"
#include "libneuron/assembler.hpp"
#include "libneuron/program.hpp"

namespace {

using neuron::EngineProgram;
using neuron::Program;

bool same_insn(const neuron_emu_insn& a, const neuron_emu_insn& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_program(const Program& p) {
  for (const auto& e : p.engines) {
    FUZZ_CHECK(e.engine < NEURON_ENGINES_PER_CORE, "engine {}", e.engine);
    FUZZ_CHECK(e.lines.size() == e.insns.size(), "{} lines for {} instructions", e.lines.size(), e.insns.size());
    FUZZ_CHECK(neuron::image_slots(e) <= NEURON_MAX_PROGRAM_INSNS, "image of {} slots", neuron::image_slots(e));
    for (const auto& r : e.refs) {
      FUZZ_CHECK(r.pc < e.insns.size(), "reference at pc {} of {}", r.pc, e.insns.size());
      FUZZ_CHECK(r.block < e.data.size(), "reference to block {} of {}", r.block, e.data.size());
    }
    // a base low enough that every address fits the 32-bit fields
    auto img = neuron::program_image(e, 0x1000);
    FUZZ_CHECK(img.has_value(), "program_image: {}", img ? "" : img.error().message());
    FUZZ_CHECK(img->size() == neuron::image_slots(e), "image of {} slots, image_slots() says {}", img->size(),
               neuron::image_slots(e));
  }
}

void check_same(const Program& a, const Program& b, const std::string& listing) {
  FUZZ_CHECK(a.features == b.features, "features differ after the round trip:\n{}", listing);
  FUZZ_CHECK(a.engines.size() == b.engines.size(), "{} engines, {} after the round trip:\n{}", a.engines.size(),
             b.engines.size(), listing);
  for (std::size_t i = 0; i < a.engines.size(); ++i) {
    const EngineProgram& x = a.engines[i];
    const EngineProgram& y = b.engines[i];
    FUZZ_CHECK(x.core == y.core && x.engine == y.engine, "engine {} moved in the round trip:\n{}", i, listing);
    FUZZ_CHECK(x.insns.size() == y.insns.size(), "engine {}: {} instructions, {} after the round trip:\n{}", i,
               x.insns.size(), y.insns.size(), listing);
    for (std::size_t k = 0; k < x.insns.size(); ++k)
      FUZZ_CHECK(same_insn(x.insns[k], y.insns[k]), "engine {} pc {} differs after the round trip:\n{}", i, k,
                 listing);
    FUZZ_CHECK(x.data.size() == y.data.size(), "engine {}: data blocks differ:\n{}", i, listing);
    for (std::size_t k = 0; k < x.data.size(); ++k)
      FUZZ_CHECK(x.data[k].name == y.data[k].name && x.data[k].u32 == y.data[k].u32 &&
                     x.data[k].bytes == y.data[k].bytes,
                 "engine {} data block {} differs after the round trip:\n{}", i, k, listing);
    FUZZ_CHECK(x.refs.size() == y.refs.size(), "engine {}: references differ:\n{}", i, listing);
    for (std::size_t k = 0; k < x.refs.size(); ++k)
      FUZZ_CHECK(x.refs[k].pc == y.refs[k].pc && x.refs[k].field == y.refs[k].field &&
                     x.refs[k].block == y.refs[k].block,
                 "engine {} reference {} differs after the round trip:\n{}", i, k, listing);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = neuron::assemble(text, "fuzz.nq");
  if (!p) {
    const auto& e = p.error();
    FUZZ_CHECK(e.code == neuron::make_error_code(neuron::errc::parse_error), "error {}", e.message());
    std::size_t lines = 1;
    for (char c : e.what) lines += c == '\n';
    FUZZ_CHECK(!e.what.empty() && lines <= 20, "{} error lines:\n{}", lines, e.what);
    return 0;
  }
  check_program(*p);
  const std::string listing = neuron::disassemble(*p);
  auto q = neuron::assemble(listing, "listing");
  FUZZ_CHECK(q.has_value(), "the listing does not assemble: {}\n{}", q ? "" : q.error().message(), listing);
  check_same(*p, *q, listing);
  const std::string again = neuron::disassemble(*q);
  FUZZ_CHECK(again == listing, "the listing of the listing differs:\n{}\n---\n{}", listing, again);
  return 0;
}
