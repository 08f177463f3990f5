// SPDX-License-Identifier: MIT
//
// neuron-nq reset and features: reset one engine (clears a fatal halt);
// show or set a core's NEURON_FEATURE_FLAGS.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli.hpp"
#include "output.hpp"
#include "program.hpp"

namespace neuron::cli {
namespace {

int cmd_reset(const DeviceArgs& a) {
  const std::string engine = lower(a.engine);
  const int e = engine_from_name(engine);
  if (e < 0) {
    fmt::print(stderr, "neuron-nq: unknown engine '{}'; engines are pe, act, pool, dve, sp\n", engine);
    return kExitError;
  }
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  if (auto s = dev->engine_reset(a.core, static_cast<unsigned>(e)); !s) return fail(s.error());
  fmt::print("core {} {} reset\n", a.core, engine_name(static_cast<unsigned>(e)));
  return kExitOk;
}

int cmd_features(const DeviceArgs& a) {
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  if (!a.set.empty()) {
    const auto v = parse_u32(a.set);
    if (!v) {
      fmt::print(stderr, "neuron-nq: --set '{}' is not a number\n", a.set);
      return kExitError;
    }
    if (auto s = dev->set_feature_flags(a.core, *v); !s) return fail(s.error());
  }
  auto f = dev->feature_flags(a.core);
  if (!f) return fail(f.error());
  fmt::print("core {} feature flags: {}\n", a.core, features_text(*f));
  return kExitOk;
}

}  // namespace

void add_engine_commands(CLI::App& app, Commands& out) {
  auto ra = std::make_shared<DeviceArgs>();
  auto* reset = app.add_subcommand("reset", "Reset an engine (clears a fatal halt)");
  add_device_option(*reset, ra->device);
  reset->add_option("--core", ra->core, "Core index")->capture_default_str()->transform(number_option(kMaxCores - 1));
  reset->add_option("--engine", ra->engine, "pe, act, pool, dve or sp")->required();
  out.push_back({reset, [ra] { return cmd_reset(*ra); }});

  auto fa = std::make_shared<DeviceArgs>();
  auto* features = app.add_subcommand("features", "Show or set a core's NEURON_FEATURE_FLAGS (local register 38)");
  add_device_option(*features, fa->device);
  features->add_option("--core", fa->core, "Core index")->capture_default_str()->transform(number_option(kMaxCores - 1));
  features->add_option("--set", fa->set, "New value, e.g. 0x2 (bit 1: DGE packet notification)")
      ->check(number_option(UINT32_MAX));
  out.push_back({features, [fa] { return cmd_features(*fa); }});
}

}  // namespace neuron::cli
