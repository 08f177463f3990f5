// SPDX-License-Identifier: MIT
//
// neuron-nq coredump [FILE] [--json]: decode a devcoredump the driver took of
// a hung or halted core (the NNQCORE format of include/uapi/linux/neuron.h,
// struct neuron_coredump_header and what follows it; docs/decisions.md#coredump)
// into text or one JSON object (docs/cli-json.md#coredump). Without FILE it
// reads the newest /sys/class/devcoredump/devcd<M>/data whose failing device
// is bound to nnq. It only reads: writing to the data file frees the dump.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "libneuron/assembler.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/format.hpp"
#include "output.hpp"
#include "uapi/linux/neuron.h"

namespace neuron::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kHeaderBytes = sizeof(neuron_coredump_header);  // 72
constexpr std::size_t kEngineBytes = sizeof(neuron_coredump_engine);  // 24
constexpr std::size_t kQueueBytes = sizeof(neuron_coredump_queue);    // 32
constexpr std::size_t kInsnBytes = sizeof(neuron_emu_insn);           // 32
static_assert(kHeaderBytes == 72 && kEngineBytes == 24 && kQueueBytes == 32 && kInsnBytes == 32);

struct DumpQueue {
  neuron_coredump_queue q{};
  std::vector<Record> records;
};

struct Dump {
  neuron_coredump_header h{};
  std::vector<neuron_coredump_engine> engines;
  std::vector<DumpQueue> queues;
  std::vector<neuron_emu_insn> insns;
};

Unexpected bad(const std::string& path, const std::string& why) {
  return unexpected(make_error_code(errc::invalid_argument), fmt::format("coredump {}: {}", path, why));
}

/// The dump's parts, checked against each other and the file's size; every
/// field is little-endian as the UAPI says, read on a little-endian host.
Result<Dump> parse(const std::vector<char>& b, const std::string& path) {
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

void print_text(const Dump& d, const std::string& path) {
  const auto& h = d.h;
  fmt::print("{}: NNQCORE version {}, {} bytes\n", path, h.version, h.total_size);
  fmt::print("nnq{} core {}: {} of {} at pc {} (hang timeout {} ms), captured at {} (CLOCK_MONOTONIC)\n", h.device,
             h.core, cause_name(h.cause), engine_name(h.engine), h.pc, h.timeout_ms, time_text(h.timestamp_ns));
  fmt::print("engines:\n");
  for (std::size_t e = 0; e < d.engines.size(); ++e) {
    const auto& x = d.engines[e];
    fmt::print("  {:<4} {:<7} pc {} exec_count {} soft_reset_counter {} prog_count {} last_error {}\n",
               engine_name(static_cast<unsigned>(e)), engine_state_name(x.state), x.pc, x.exec_count,
               x.soft_reset_counter, x.prog_count, last_error_name(x.last_error).value_or("none"));
  }
  for (const auto& q : d.queues) {
    fmt::print("queue {}: size {} flags 0x{:x} head {} tail {}, the last {} records:\n", q.q.queue, q.q.size,
               q.q.flags, q.q.head, q.q.tail, q.q.rec_count);
    for (const auto& r : q.records)
      fmt::print("  {}  {}\n", r.hex(), to_text(decode(r, queue_class(q.q.queue))));
  }
  if (d.insns.empty()) {
    fmt::print("program: no instructions in the dump\n");
    return;
  }
  fmt::print("program, instructions {}..{}:\n", h.insn_first, h.insn_first + d.insns.size() - 1);
  for (std::size_t i = 0; i < d.insns.size(); ++i) {
    const std::uint64_t idx = std::uint64_t{h.insn_first} + i;
    fmt::print("  {} {:>4}  {}\n", idx == h.pc ? "=>" : "  ", idx, disassemble(d.insns[i]));
  }
}

nlohmann::json to_json_dump(const Dump& d, const std::string& path) {
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

/// The newest devcoredump (highest M) under `root` whose failing device's
/// driver is nnq; nullopt when there is none.
std::optional<std::string> newest_dump(const fs::path& root) {
  std::error_code ec;
  std::optional<std::string> best;
  unsigned long best_m = 0;
  for (const auto& ent : fs::directory_iterator(root, ec)) {
    const std::string name = ent.path().filename().string();
    if (name.rfind("devcd", 0) != 0) continue;
    const auto m = parse_number(std::string_view(name).substr(5), UINT32_MAX);
    if (!m) continue;
    std::error_code ec2;
    const auto drv = fs::read_symlink(ent.path() / "failing_device" / "driver", ec2);
    if (ec2 || drv.filename() != "nnq") continue;
    if (!best || *m > best_m) {
      best = (ent.path() / "data").string();
      best_m = *m;
    }
  }
  return best;
}

int cmd_coredump(std::string path, bool json) {
  const bool given = !path.empty();
  if (!given) {
    const auto p = newest_dump("/sys/class/devcoredump");
    if (!p) {
      fmt::print(stderr,
                 "neuron-nq: coredump: no devcoredump of nnq in /sys/class/devcoredump (the driver takes one "
                 "per hang or halt; the kernel frees it after 5 minutes or when its data file is written)\n");
      return kExitDevice;
    }
    path = *p;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // a FILE that does not open is the caller's input; /sys's is the system's
    const int status = fail(Error::from_errno(errno, fmt::format("open {}", path)));
    return given ? kExitUsage : status;
  }
  std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return fail(Error::from_errno(errno, fmt::format("read {}", path)));
  auto d = parse(b, path);
  if (!d) return fail(d.error());
  if (json) fmt::print("{}\n", json_text(to_json_dump(*d, path), 2));
  else print_text(*d, path);
  return kExitOk;
}

}  // namespace

void add_coredump_commands(CLI::App& app, Commands& out) {
  struct Args {
    std::string file;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("coredump", "Decode a devcoredump of a hung or halted core (default: the newest of nnq)");
  sub->add_option("file", a->file, "A devcoredump data file (default: the newest /sys/class/devcoredump/devcd*/data of nnq)");
  sub->add_flag("--json", a->json, "JSON output");
  out.push_back({sub, [a] { return cmd_coredump(a->file, a->json); }});
}

}  // namespace neuron::cli
