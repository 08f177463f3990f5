// SPDX-License-Identifier: MIT
//
// neuron-nq cdi generate: a static CDI spec per kind (core nodes, whole
// devices) of every node present now, for a runtime used without
// neuron-device-plugin (which writes and keeps current its own specs under
// /var/run/cdi) (docs/k8s.md#cdi). The spec text and the atomic write are
// the plugin's (k8s/inventory.cpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
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
    const std::string name = fmt::format("{}-{}.json", a.prefix, is_core ? "core" : "device");
    const std::string path = a.output + "/" + name;
    const std::string text = k8s::cdi_spec(a.prefix, kind, devices, roots.dev, &n);
    if (auto err = k8s::write_atomic(a.output, name, text)) {
      fmt::print(stderr, "neuron-nq: cdi: {}\n", *err);
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
  // --resource-prefix: the name the plugin and `metrics` give the same domain
  gen->add_option("--resource-prefix,--prefix", a->prefix,
                  "Vendor domain of the CDI kinds (and the plugin's resources)")
      ->capture_default_str();
  gen->add_option("--root", a->root, "Read sysfs and /dev under this directory (tests)")->group("");
  out.push_back({cdi, [a] { return cmd_cdi_generate(*a); }});
}

}  // namespace neuron::cli
