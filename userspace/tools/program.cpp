// SPDX-License-Identifier: MIT
//
// Loading and starting programs for the neuron-nq commands (program.hpp).
#include "program.hpp"

#include "cli.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

namespace neuron::cli {

std::optional<std::uint32_t> parse_u32(const std::string& s) {
  const auto v = parse_number(s, UINT32_MAX);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

Result<Program> load_program(const std::string& file, const std::string& features) {
  auto prog = assemble_file(file);
  if (!prog) return prog;
  if (!features.empty()) {
    const auto f = parse_u32(features);
    if (!f) return unexpected(errc::invalid_argument, fmt::format("--features '{}' is not a number", features));
    prog->features = *f;
  }
  return prog;
}

Status check_cores_early(const Program& prog, const std::optional<CoreList>& cores) {
  auto visible = visible_cores(cores, kMaxCores);
  if (!visible) return unexpected(std::move(visible).error());
  return check_program_cores(prog, *visible);
}

Status submit_engine(const Device& dev, const Program& prog, const EngineProgram& e, std::uint32_t flags) {
  if (e.data.empty()) return dev.submit(e.core, e.engine, e.insns, flags);
  auto info = dev.info();
  if (!info) return unexpected(std::move(info).error());
  auto img = program_image(e, program_area_offset(*info, e.core, e.engine));
  if (!img) return unexpected(img.error().code, prog.name + ":" + img.error().what.substr(5));  // "line N: ..."
  return dev.submit(e.core, e.engine, *img, flags);
}

Result<StartedProgram> start_program(const Device& dev, const Program& prog, bool trace,
                                     const std::optional<CoreList>& cores) {
  StartedProgram started{std::make_unique<DeviceTarget>(dev), {}};
  auto claim = ProgramClaim::make(*started.target, prog, {cores, true});
  if (!claim) return unexpected(std::move(claim).error());
  started.claim = std::move(claim).value();
  if (prog.features)
    for (unsigned core : prog.cores())
      if (auto s = dev.set_feature_flags(core, *prog.features); !s) return unexpected(std::move(s).error());
  for (const auto& e : prog.engines)
    if (auto s = submit_engine(dev, prog, e, trace ? NEURON_SUBMIT_F_TRACE : 0u); !s)
      return unexpected(std::move(s).error());
  return started;
}

std::string busy_engines(const Device& dev, unsigned core) {
  std::string s;
  for (unsigned e = 0; e < NEURON_ENGINES_PER_CORE; ++e) {
    auto st = dev.engine_status(core, e);
    if (st && (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING))
      s += (s.empty() ? "" : ",") + engine_name(e);
  }
  return s;
}

}  // namespace neuron::cli
