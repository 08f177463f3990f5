// SPDX-License-Identifier: MIT
//
// neuron-nq info: one device's parameters, core owners (sysfs core_owners: PID and command), feature
// flags and engine states (text or JSON). `list` is in cmd_metrics.cpp
// (devices.hpp: the samples list and metrics share).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <memory>
#include <string>

#include "cli.hpp"
#include "output.hpp"

namespace neuron::cli {
namespace {

nlohmann::json info_json(const DeviceInfo& i) {
  return {{"abi_version", i.abi_version},
          {"pci_vendor_id", fmt::format("0x{:04x}", i.vendor)},
          {"pci_device_id", fmt::format("0x{:04x}", i.device)},
          {"num_cores", i.num_cores},
          {"engines_per_core", i.engines_per_core},
          {"queues_per_core", i.queues_per_core},
          {"gen", gen_name(i.gen)},
          {"mem_size", i.mem_size},
          {"nq_size_min", i.nq_size_min},
          {"nq_size_max", i.nq_size_max},
          {"max_program_insns", i.max_program_insns},
          {"timestamp_inc_ps", i.timestamp_inc_ps},
          {"mem_alloc_limit", i.mem_alloc_limit}};
}

nlohmann::json owner_json(const CoreOwner& o) {
  nlohmann::json j = {{"core", o.core}, {"pid", nullptr}, {"comm", nullptr}};
  if (!o.is_free()) {
    j["pid"] = *o.pid;
    j["comm"] = o.comm;
  }
  return j;
}

int cmd_info(const std::string& path, bool json) {
  // read-write when we may (the feature flags need it: FEATURE_FLAGS is not a
  // read-only ioctl), else read-only: DEVICE_INFO and ENGINE_STATUS are, so a
  // member of group neuron without write access still sees the rest
  auto dev = Device::open(path);
  bool read_only = false;
  if (!dev && (dev.error().code == std::errc::permission_denied || dev.error().code == std::errc::read_only_file_system)) {
    dev = Device::open_read_only(path);
    read_only = true;
  }
  if (!dev) return fail(dev.error());
  if (read_only && !json) fmt::print(stderr, "neuron-nq: info: {} opened read-only: feature flags need write access\n", path);
  auto info = dev->info();
  if (!info) return fail(info.error());
  nlohmann::json j = info_json(*info);
  j["schema"] = kJsonSchemaVersion;
  j["object"] = "info";
  j["path"] = path;
  j["engines"] = nlohmann::json::array();
  j["features"] = nlohmann::json::array();
  auto owners = dev->core_owners();
  j["owners"] = nlohmann::json::array();
  if (owners)
    for (const auto& o : *owners) j["owners"].push_back(owner_json(o));
  else
    j["owners_error"] = owners.error().message();
  if (!json) {
    fmt::print("{}\n  PCI {:04x}:{:04x}, ABI {}, gen {}\n  {} cores, {} engines/core, {} queues/core\n", path,
               info->vendor, info->device, info->abi_version, gen_name(info->gen), info->num_cores,
               info->engines_per_core, info->queues_per_core);
    fmt::print("  device memory {} MiB; queue sizes {}..{} bytes; {} instructions per submit; timestamp {} ps/tick\n",
               info->mem_size >> 20, info->nq_size_min, info->nq_size_max, info->max_program_insns,
               info->timestamp_inc_ps);
    fmt::print("  programs may allocate device memory [0, 0x{:x}) (mem_alloc_limit)\n", info->mem_alloc_limit);
    if (!owners) fmt::print("  core owners: unknown ({})\n", owners.error().message());
  }
  for (unsigned c = 0; c < info->num_cores; ++c) {
    if (!json && owners)
      for (const auto& o : *owners)
        if (o.core == c) fmt::print("  core {} owner: {}\n", c, owner_text(o));
    auto f = read_only ? Result<std::uint32_t>(unexpected(Error::from_errno(EBADF, "feature flags (read-only open)")))
                       : dev->feature_flags(c);
    if (f) j["features"].push_back({{"core", c}, {"flags", *f}});
    else j["features"].push_back({{"core", c}, {"error", f.error().message()}});
    if (!json)
      fmt::print("  core {} feature flags: {}\n", c,
                 f ? features_text(*f)
                   : (f.error().code == std::errc::operation_not_supported ? std::string("none (no register on this generation)")
                                                                          : f.error().message()));
    for (unsigned e = 0; e < info->engines_per_core; ++e) {
      auto st = dev->engine_status(c, e);
      if (!st) return fail(st.error());
      const std::string last = st->last_error == 0xff ? "none" : tpb_error_name(static_cast<std::uint8_t>(st->last_error));
      j["engines"].push_back({{"core", c}, {"engine", engine_name(e)}, {"state", engine_state_name(st->state)},
                              {"program_counter", st->pc}, {"soft_reset_counter", st->soft_reset_counter},
                              {"last_error", last}, {"exec_count", st->exec_count}});
      if (!json)
        fmt::print("  core {} {:<4} {:<8} pc {:<5} runs {:<5} retired {:<10} last error {}\n", c, engine_name(e),
                   engine_state_name(st->state), st->pc, st->soft_reset_counter, st->exec_count, last);
    }
  }
  if (json) fmt::print("{}\n", json_text(j, 2));
  return kExitOk;
}

}  // namespace

void add_info_commands(CLI::App& app, Commands& out) {
  auto a = std::make_shared<DeviceArgs>();
  auto* info = app.add_subcommand("info", "Show a device, who owns each core, its feature flags and its engines' state");
  add_device_option(*info, a->device);
  info->add_flag("--json", a->json, "JSON output");
  out.push_back({info, [a] { return cmd_info(a->device, a->json); }});
}

}  // namespace neuron::cli
