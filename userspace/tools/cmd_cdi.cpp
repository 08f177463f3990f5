// SPDX-License-Identifier: MIT
//
// neuron-nq cdi generate: a CDI spec per kind (core nodes, whole devices)
// for a container runtime that resolves the CDI names neuron-device-plugin
// returns from Allocate (docs/k8s.md#cdi).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli.hpp"
#include "inventory.hpp"
#include "output.hpp"

namespace neuron::cli {
namespace {

struct CdiArgs {
  std::string kind = "all";
  std::string output = "/etc/cdi";
  std::string prefix = "neuron.example";
  std::string root;  // hidden, for tests: sysfs and /dev under this directory
};

/// Write `text` to `path` through path.tmp and a rename (a runtime that
/// rescans the directory never reads half a spec). False with a message.
bool write_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      fmt::print(stderr, "neuron-nq: cdi: write {}: {}\n", tmp, std::strerror(errno));
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    fmt::print(stderr, "neuron-nq: cdi: rename {} to {}: {}\n", tmp, path, std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

int cmd_cdi_generate(const CdiArgs& a) {
  k8s::Roots roots;
  if (!a.root.empty()) {
    roots.sys = a.root + "/sys";
    roots.dev = a.root + "/dev";
  }
  const auto devices = k8s::scan(roots);
  if (devices.empty()) {
    fmt::print(stderr, "neuron-nq: cdi: no Neuron device under {}/class/nnq\n", roots.sys);
    return kExitDevice;
  }
  std::error_code ec;
  std::filesystem::create_directories(a.output, ec);
  int status = kExitOk;
  for (auto kind : {k8s::Kind::core, k8s::Kind::device}) {
    const bool is_core = kind == k8s::Kind::core;
    if (a.kind != "all" && a.kind != (is_core ? "core" : "device")) continue;
    std::size_t n = 0;
    for (const auto& d : devices) n += is_core ? d.cores.size() : 1;
    const std::string path = fmt::format("{}/{}-{}.json", a.output, a.prefix, is_core ? "core" : "device");
    if (!write_atomic(path, k8s::cdi_spec(a.prefix, kind, devices, roots.dev))) {
      status = kExitDevice;
      continue;
    }
    fmt::print("{}: {} {}, kind {}\n", path, n, is_core ? "core nodes" : "devices",
               k8s::resource_name(a.prefix, kind));
  }
  return status;
}

}  // namespace

void add_cdi_commands(CLI::App& app, Commands& out) {
  auto a = std::make_shared<CdiArgs>();
  auto* cdi = app.add_subcommand("cdi", "Container Device Interface specs of the Neuron nodes (docs/k8s.md#cdi)");
  cdi->require_subcommand(1);
  auto* gen = cdi->add_subcommand("generate", "Write a CDI spec per kind: every core node, every device");
  gen->add_option("--kind", a->kind, "core, device or all")
      ->capture_default_str()
      ->check(CLI::IsMember({"core", "device", "all"}));
  gen->add_option("--output,-o", a->output, "Directory for the specs (<prefix>-core.json, <prefix>-device.json)")
      ->capture_default_str();
  gen->add_option("--prefix", a->prefix, "Vendor domain of the CDI kinds (and the plugin's resources)")
      ->capture_default_str();
  gen->add_option("--root", a->root, "Read sysfs and /dev under this directory (tests)")->group("");
  out.push_back({cdi, [a] { return cmd_cdi_generate(*a); }});
}

}  // namespace neuron::cli
