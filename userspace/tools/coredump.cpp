// SPDX-License-Identifier: MIT
//
// The NNQCORE devcoredump: parse, text, JSON (coredump.hpp).
#include "coredump.hpp"

#include <fmt/format.h>

#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "libneuron/assembler.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/format.hpp"
#include "output.hpp"

namespace neuron::cli {
namespace {

constexpr std::size_t kHeaderBytes = sizeof(neuron_coredump_header);  // 72
constexpr std::size_t kEngineBytes = sizeof(neuron_coredump_engine);  // 24
constexpr std::size_t kQueueBytes = sizeof(neuron_coredump_queue);    // 32
constexpr std::size_t kInsnBytes = sizeof(neuron_emu_insn);           // 32
static_assert(kHeaderBytes == 72 && kEngineBytes == 24 && kQueueBytes == 32 && kInsnBytes == 32);

Unexpected bad(const std::string& path, const std::string& why) {
  return unexpected(make_error_code(errc::invalid_argument), fmt::format("coredump {}: {}", path, why));
}

}  // namespace

Result<Dump> parse_coredump(std::span<const char> b, const std::string& path) {
  Dump d;
  if (b.size() < kHeaderBytes)
    return bad(path, fmt::format("{} bytes is shorter than the {}-byte header", b.size(), kHeaderBytes));
  std::memcpy(&d.h, b.data(), kHeaderBytes);
  if (std::memcmp(d.h.magic, NEURON_COREDUMP_MAGIC, sizeof(d.h.magic)) != 0)
    return bad(path, "not a devcoredump of nnq (magic is not \"NNQCORE\")");
  if (d.h.version == 0 || d.h.version > NEURON_COREDUMP_VERSION)
    return bad(path, fmt::format("version {} is not one this neuron-nq reads (1..{})", d.h.version,
                                 NEURON_COREDUMP_VERSION));
  if (d.h.total_size != b.size())
    return bad(path, fmt::format("total_size {} but the file holds {} bytes", d.h.total_size, b.size()));
  if (d.h.header_size < kHeaderBytes || d.h.header_size > b.size())
    return bad(path, fmt::format("header_size {} outside {}..{}", d.h.header_size, kHeaderBytes, b.size()));
  std::size_t off = d.h.header_size;
  auto take = [&](void* dst, std::size_t n, const char* what) -> std::optional<Unexpected> {
    if (b.size() - off < n) return bad(path, fmt::format("truncated: {} ends past total_size {}", what, b.size()));
    std::memcpy(dst, b.data() + off, n);
    off += n;
    return std::nullopt;
  };
  d.engines.resize(d.h.num_engines > b.size() / kEngineBytes ? 0 : d.h.num_engines);
  if (d.engines.size() != d.h.num_engines)
    return bad(path, fmt::format("num_engines {} does not fit in {} bytes", d.h.num_engines, b.size()));
  for (auto& e : d.engines)
    if (auto err = take(&e, kEngineBytes, "the engines")) return *err;
  for (std::uint32_t i = 0; i < d.h.num_queues; ++i) {
    DumpQueue q;
    if (auto err = take(&q.q, kQueueBytes, "the queues")) return *err;
    if (q.q.rec_count > (b.size() - off) / NEURON_ISA_NOTIFICATION_NBYTES)
      return bad(path, fmt::format("truncated: queue {}'s {} records end past total_size {}", q.q.queue,
                                   q.q.rec_count, b.size()));
    q.records.resize(q.q.rec_count);
    for (auto& r : q.records)
      if (auto err = take(r.bytes.data(), r.bytes.size(), "the records")) return *err;
    d.queues.push_back(std::move(q));
  }
  if (d.h.insn_count > (b.size() - off) / kInsnBytes)
    return bad(path, fmt::format("truncated: {} instructions end past total_size {}", d.h.insn_count, b.size()));
  d.insns.resize(d.h.insn_count);
  for (auto& in : d.insns)
    if (auto err = take(&in, kInsnBytes, "the program")) return *err;
  return d;
}

namespace {

std::string cause_name(std::uint32_t cause) {
  switch (cause) {
    case NEURON_COREDUMP_HANG: return "HANG";
    case NEURON_COREDUMP_HALTED: return "HALTED";
    default: return fmt::format("CAUSE_{}", cause);
  }
}

/// LAST_ERROR: 0xff is none; otherwise the TPB error's name and id.
std::optional<std::string> last_error_name(std::uint32_t id) {
  if (id == 0xff) return std::nullopt;
  return fmt::format("{} (0x{:02x})", tpb_error_name(static_cast<std::uint8_t>(id)), id);
}

std::string time_text(std::uint64_t ns) {
  return fmt::format("{}.{:09} s", ns / 1000000000u, ns % 1000000000u);
}

}  // namespace

std::string coredump_text(const Dump& d, const std::string& path) {
  std::string s;
  auto out = std::back_inserter(s);
  const auto& h = d.h;
  fmt::format_to(out, "{}: NNQCORE version {}, {} bytes\n", path, h.version, h.total_size);
  fmt::format_to(out, "nnq{} core {}: {} of {} at pc {} (hang timeout {} ms), captured at {} (CLOCK_MONOTONIC)\n", h.device,
                      h.core, cause_name(h.cause), engine_name(h.engine), h.pc, h.timeout_ms, time_text(h.timestamp_ns));
  fmt::format_to(out, "engines:\n");
  for (std::size_t e = 0; e < d.engines.size(); ++e) {
    const auto& x = d.engines[e];
    fmt::format_to(out, "  {:<4} {:<7} pc {} exec_count {} soft_reset_counter {} prog_count {} last_error {}\n",
                        engine_name(static_cast<unsigned>(e)), engine_state_name(x.state), x.pc, x.exec_count,
                        x.soft_reset_counter, x.prog_count, last_error_name(x.last_error).value_or("none"));
  }
  for (const auto& q : d.queues) {
    fmt::format_to(out, "queue {}: size {} flags 0x{:x} head {} tail {}, the last {} records:\n", q.q.queue, q.q.size,
                        q.q.flags, q.q.head, q.q.tail, q.q.rec_count);
    for (const auto& r : q.records)
      fmt::format_to(out, "  {}  {}\n", r.hex(), to_text(decode(r, queue_class(q.q.queue))));
  }
  if (d.insns.empty()) {
    fmt::format_to(out, "program: no instructions in the dump\n");
    return s;
  }
  fmt::format_to(out, "program, instructions {}..{}:\n", h.insn_first, h.insn_first + d.insns.size() - 1);
  for (std::size_t i = 0; i < d.insns.size(); ++i) {
    const std::uint64_t idx = std::uint64_t{h.insn_first} + i;
    fmt::format_to(out, "  {} {:>4}  {}\n", idx == h.pc ? "=>" : "  ", idx, disassemble(d.insns[i]));
  }
  return s;
}

nlohmann::json coredump_json(const Dump& d, const std::string& path) {
  const auto& h = d.h;
  nlohmann::json j = {{"schema", kJsonSchemaVersion},
                      {"object", "coredump"},
                      {"path", path},
                      {"version", h.version},
                      {"total_size", h.total_size},
                      {"device", h.device},
                      {"core", h.core},
                      {"engine", engine_name(h.engine)},
                      {"cause", cause_name(h.cause)},
                      {"pc", h.pc},
                      {"timestamp_ns", h.timestamp_ns},
                      {"timeout_ms", h.timeout_ms}};
  j["engines"] = nlohmann::json::array();
  for (std::size_t e = 0; e < d.engines.size(); ++e) {
    const auto& x = d.engines[e];
    const auto le = last_error_name(x.last_error);
    j["engines"].push_back({{"engine", engine_name(static_cast<unsigned>(e))},
                            {"state", engine_state_name(x.state)},
                            {"pc", x.pc},
                            {"exec_count", x.exec_count},
                            {"soft_reset_counter", x.soft_reset_counter},
                            {"prog_count", x.prog_count},
                            {"last_error", le ? nlohmann::json(x.last_error) : nlohmann::json(nullptr)}});
  }
  j["queues"] = nlohmann::json::array();
  for (const auto& q : d.queues) {
    nlohmann::json recs = nlohmann::json::array();
    for (const auto& r : q.records) {
      const auto dec = decode(r, queue_class(q.q.queue));
      recs.push_back({{"hex", r.hex()}, {"text", to_text(dec)}, {"record", to_json(dec)}});
    }
    j["queues"].push_back({{"queue", q.q.queue},
                           {"flags", q.q.flags},
                           {"size", q.q.size},
                           {"head", q.q.head},
                           {"tail", q.q.tail},
                           {"records", std::move(recs)}});
  }
  nlohmann::json insns = nlohmann::json::array();
  for (std::size_t i = 0; i < d.insns.size(); ++i)
    insns.push_back({{"index", std::uint64_t{h.insn_first} + i}, {"text", disassemble(d.insns[i])}});
  j["program"] = {{"first", h.insn_first}, {"insns", std::move(insns)}};
  return j;
}

}  // namespace neuron::cli
