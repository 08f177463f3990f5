// SPDX-License-Identifier: MIT
//
// neuron-nq coredump [FILE] [--json]: decode a devcoredump the driver took of
// a hung or halted core (the NNQCORE format of include/uapi/linux/neuron.h,
// struct neuron_coredump_header and what follows it;
// docs/decisions/0013-coredump.md)
// into text or one JSON object (docs/cli-json.md#coredump). Without FILE it
// reads the newest /sys/class/devcoredump/devcd<M>/data whose failing device
// is bound to nnq. It only reads: writing to the data file frees the dump.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "coredump.hpp"
#include "output.hpp"

namespace neuron::cli {
namespace {

namespace fs = std::filesystem;

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
  auto d = parse_coredump(b, path);
  if (!d) return fail(d.error());
  if (json) fmt::print("{}\n", json_text(coredump_json(*d, path), 2));
  else fmt::print("{}", coredump_text(*d, path));
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
