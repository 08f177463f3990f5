// SPDX-License-Identifier: MIT
//
// neuron-nq: look at Neuron devices and run programs on their engines.
//
//   neuron-nq list
//   neuron-nq info  [--device /dev/neuron0] [--json]
//   neuron-nq asm   FILE                      assemble and print the listing
//   neuron-nq run   FILE [--device D] [--timeout MS] [--json] [--no-trace]
//   neuron-nq trace FILE --perfetto OUT.json [--device D] [--timeout MS]
//   neuron-nq reset --core C --engine E [--device D]
//   neuron-nq monitor | stats                 not yet (need eventfd binding / netlink)
//
// Exit status: 0 success (run: status OK), 1 usage or device error,
// 2 not implemented, 3 run finished with a non-OK status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "libneuron/neuron.hpp"

using namespace neuron;

namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitNotYet = 2, kExitStatus = 3;

const char* gen_name(std::uint32_t gen) {
  switch (gen) {
    case NEURON_GEN_SUNDA: return "sunda";
    case NEURON_GEN_CAYMAN: return "cayman";
    default: return "unknown";
  }
}

int fail(const Error& e) {
  fmt::print(stderr, "neuron-nq: {}\n", e.message());
  return kExitError;
}

nlohmann::json info_json(const DeviceInfo& i) {
  return {{"abi_version", i.abi_version},
          {"vendor", fmt::format("0x{:04x}", i.vendor)},
          {"device", fmt::format("0x{:04x}", i.device)},
          {"num_cores", i.num_cores},
          {"engines_per_core", i.engines_per_core},
          {"queues_per_core", i.queues_per_core},
          {"gen", gen_name(i.gen)},
          {"mem_size", i.mem_size},
          {"nq_size_min", i.nq_size_min},
          {"nq_size_max", i.nq_size_max},
          {"max_program_insns", i.max_program_insns},
          {"timestamp_inc_ps", i.timestamp_inc_ps}};
}

int cmd_list() {
  const auto devs = Device::list();
  if (devs.empty()) {
    fmt::print(stderr, "neuron-nq: no /dev/neuron* devices (is neuron.ko loaded and the device present?)\n");
    return kExitError;
  }
  for (const auto& path : devs) {
    auto dev = Device::open(path);
    if (!dev) {
      fmt::print("{}: {}\n", path, dev.error().message());
      continue;
    }
    auto info = dev->info();
    if (!info) {
      fmt::print("{}: {}\n", path, info.error().message());
      continue;
    }
    fmt::print("{}: {:04x}:{:04x} {} cores x {} engines, {} queues/core, gen {}, {} MiB device memory\n", path,
               info->vendor, info->device, info->num_cores, info->engines_per_core, info->queues_per_core,
               gen_name(info->gen), info->mem_size >> 20);
  }
  return kExitOk;
}

int cmd_info(const std::string& path, bool json) {
  auto dev = Device::open(path);
  if (!dev) return fail(dev.error());
  auto info = dev->info();
  if (!info) return fail(info.error());
  nlohmann::json j = info_json(*info);
  j["path"] = path;
  j["engines"] = nlohmann::json::array();
  if (!json) {
    fmt::print("{}\n  PCI {:04x}:{:04x}, ABI {}, gen {}\n  {} cores, {} engines/core, {} queues/core\n", path,
               info->vendor, info->device, info->abi_version, gen_name(info->gen), info->num_cores,
               info->engines_per_core, info->queues_per_core);
    fmt::print("  device memory {} MiB; queue sizes {}..{} bytes; {} instructions per submit; timestamp {} ps/tick\n",
               info->mem_size >> 20, info->nq_size_min, info->nq_size_max, info->max_program_insns,
               info->timestamp_inc_ps);
  }
  for (unsigned c = 0; c < info->num_cores; ++c)
    for (unsigned e = 0; e < info->engines_per_core; ++e) {
      auto st = dev->engine_status(c, e);
      if (!st) return fail(st.error());
      const std::string last = st->last_error == 0xff ? "none" : tpb_error_name(static_cast<std::uint8_t>(st->last_error));
      j["engines"].push_back({{"core", c}, {"engine", engine_name(e)}, {"state", engine_state_name(st->state)},
                              {"pc", st->pc}, {"soft_reset_counter", st->soft_reset_counter},
                              {"last_error", last}, {"exec_count", st->exec_count}});
      if (!json)
        fmt::print("  core {} {:<4} {:<8} pc {:<5} runs {:<5} retired {:<10} last error {}\n", c, engine_name(e),
                   engine_state_name(st->state), st->pc, st->soft_reset_counter, st->exec_count, last);
    }
  if (json) fmt::print("{}\n", j.dump(2));
  return kExitOk;
}

int cmd_asm(const std::string& file) {
  auto prog = assemble_file(file);
  if (!prog) {
    fmt::print(stderr, "{}\n", prog.error().what.empty() ? prog.error().message() : prog.error().what);
    return kExitError;
  }
  fmt::print("# {}: {} instructions on {} engine(s)\n{}", file, prog->instruction_count(), prog->engines.size(),
             disassemble(*prog));
  return kExitOk;
}

struct RunArgs {
  std::string file;
  std::string device = "/dev/neuron0";
  unsigned timeout_ms = 5000;
  bool json = false;
  bool no_trace = false;
  std::string perfetto;
};

Result<ExecResult> run_program(const RunArgs& a, bool trace) {
  auto prog = assemble_file(a.file);
  if (!prog) return unexpected(std::move(prog).error());
  auto dev = Device::open(a.device);
  if (!dev) return unexpected(std::move(dev).error());
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(a.timeout_ms);
  o.trace = trace;
  o.queue_size = 4096;
  o.queues = 6;
  o.halt_ends_wait = true;  // the CLI stops waiting once every engine is IDLE or HALTED
  ExecResult r = execute(*dev, *prog, o);
  if (r.status == ExecStatus::Failure && r.error) return unexpected(*r.error);
  return r;
}

int print_parse_or_device_error(const Error& e) {
  if (e.code == make_error_code(errc::parse_error)) {
    fmt::print(stderr, "{}\n", e.what);
    return kExitError;
  }
  return fail(e);
}

int cmd_run(const RunArgs& a) {
  auto res = run_program(a, !a.no_trace);
  if (!res) return print_parse_or_device_error(res.error());
  ExecResult& r = *res;
  sort_by_timestamp(r.records);

  std::map<std::string, std::size_t> per_type;
  std::size_t errors = 0;
  for (const auto& c : r.records) {
    ++per_type[notific_type_name(c.raw.notific_type())];
    if (is_error(c.decoded)) ++errors;
  }

  if (a.json) {
    nlohmann::json j;
    j["records"] = nlohmann::json::array();
    for (const auto& c : r.records) {
      auto rec = to_json(c.decoded);
      rec["core"] = c.core;
      rec["queue"] = c.queue;
      j["records"].push_back(std::move(rec));
    }
    nlohmann::json engines = nlohmann::json::array();
    for (const auto& st : r.engines)
      engines.push_back({{"core", st.core}, {"engine", engine_name(st.engine)},
                         {"state", engine_state_name(st.state)}, {"pc", st.pc}});
    j["summary"] = {{"status", status_name(r.status)},
                    {"status_code", static_cast<int>(r.status)},
                    {"records", r.records.size()},
                    {"per_type", per_type},
                    {"errors", errors},
                    {"lost", r.lost},
                    {"engines", engines},
                    {"elapsed_ms", std::chrono::duration<double, std::milli>(r.elapsed).count()}};
    if (r.first_error) j["summary"]["first_error"] = to_text(r.first_error->decoded);
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{:>14}  {:<4} {:<3} {:<16} {}\n", "time(s)", "core", "q", "type", "record");
    for (const auto& c : r.records)
      fmt::print("{:>14}  {:<4} {:<3} {:<16} {}\n", format_time(meta_of(c.decoded).timestamp), c.core, c.queue,
                 notific_type_name(c.raw.notific_type()), to_text(c.decoded));
    fmt::print("\nsummary: {} records", r.records.size());
    for (const auto& [type, n] : per_type) fmt::print(", {} {}", n, type);
    fmt::print("\n");
    fmt::print("errors: {}{}\n", errors, r.first_error ? " — first: " + to_text(r.first_error->decoded) : "");
    if (r.lost) fmt::print("lost to overflow: {} records\n", r.lost);
    for (const auto& st : r.engines)
      fmt::print("engine core {} {:<4} {}{}\n", st.core, engine_name(st.engine), engine_state_name(st.state),
                 st.state == NEURON_ENGINE_HALTED ? " (fatal: reset with `neuron-nq reset`)" : "");
    fmt::print("status: {} ({}) in {:.1f} ms\n", status_name(r.status), static_cast<int>(r.status),
               std::chrono::duration<double, std::milli>(r.elapsed).count());
  }
  return r.status == ExecStatus::Ok ? kExitOk : kExitStatus;
}

int cmd_trace(const RunArgs& a) {
  auto res = run_program(a, true);
  if (!res) return print_parse_or_device_error(res.error());
  TraceStats st;
  const auto j = chrome_trace(res->records, &st);
  std::ofstream out(a.perfetto);
  if (!out) {
    fmt::print(stderr, "neuron-nq: cannot write {}\n", a.perfetto);
    return kExitError;
  }
  out << j.dump() << "\n";
  fmt::print("{}: {} slices, {} instant events ({} unmatched starts, {} unmatched ends); status {}; "
             "open it in ui.perfetto.dev\n",
             a.perfetto, st.slices, st.instants, st.unmatched_starts, st.unmatched_ends, status_name(res->status));
  return res->status == ExecStatus::Ok ? kExitOk : kExitStatus;
}

int cmd_reset(const std::string& device, unsigned core, const std::string& engine) {
  const int e = engine_from_name(engine);
  if (e < 0) {
    fmt::print(stderr, "neuron-nq: unknown engine '{}'; engines are pe, act, pool, dve, sp\n", engine);
    return kExitError;
  }
  auto dev = Device::open(device);
  if (!dev) return fail(dev.error());
  if (auto s = dev->engine_reset(core, static_cast<unsigned>(e)); !s) return fail(s.error());
  fmt::print("core {} {} reset\n", core, engine_name(static_cast<unsigned>(e)));
  return kExitOk;
}

int not_yet(const char* what, const char* needs) {
  fmt::print(stderr, "neuron-nq {}: not yet — it needs {}\n", what, needs);
  return kExitNotYet;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"neuron-nq: Neuron notification queues — list devices, run programs, show the records"};
  app.require_subcommand(1);

  auto* list = app.add_subcommand("list", "List /dev/neuron* devices");

  std::string device = "/dev/neuron0";
  bool json = false;
  auto* info = app.add_subcommand("info", "Show a device and the state of its engines");
  info->add_option("--device,-d", device, "Device node")->capture_default_str();
  info->add_flag("--json", json, "JSON output");

  std::string asm_file;
  auto* asmc = app.add_subcommand("asm", "Assemble a program and print its listing (no device needed)");
  asmc->add_option("FILE", asm_file, "Program file (docs/program-syntax.md)")->required();

  RunArgs ra;
  auto* run = app.add_subcommand("run", "Assemble, submit with trace, wait, drain and print every record");
  run->add_option("FILE", ra.file, "Program file (docs/program-syntax.md)")->required();
  run->add_option("--device,-d", ra.device, "Device node")->capture_default_str();
  run->add_option("--timeout", ra.timeout_ms, "Milliseconds to wait for the engines")->capture_default_str();
  run->add_flag("--json", ra.json, "JSON output");
  run->add_flag("--no-trace", ra.no_trace, "Submit without INST_START/INST_END tracing");

  RunArgs ta;
  auto* trace = app.add_subcommand("trace", "Run a program and write a Perfetto/Chrome trace of its instructions");
  trace->add_option("FILE", ta.file, "Program file")->required();
  trace->add_option("--perfetto", ta.perfetto, "Output JSON trace file")->required();
  trace->add_option("--device,-d", ta.device, "Device node")->capture_default_str();
  trace->add_option("--timeout", ta.timeout_ms, "Milliseconds to wait for the engines")->capture_default_str();

  unsigned core = 0;
  std::string engine;
  auto* reset = app.add_subcommand("reset", "Reset an engine (clears a fatal halt)");
  reset->add_option("--device,-d", device, "Device node")->capture_default_str();
  reset->add_option("--core", core, "Core index")->capture_default_str();
  reset->add_option("--engine", engine, "pe, act, pool, dve or sp")->required();

  auto* monitor = app.add_subcommand("monitor", "Live decoded record stream (not yet)");
  monitor->allow_extras();
  auto* stats = app.add_subcommand("stats", "Per-queue counters (not yet)");
  stats->allow_extras();

  CLI11_PARSE(app, argc, argv);

  if (*list) return cmd_list();
  if (*info) return cmd_info(device, json);
  if (*asmc) return cmd_asm(asm_file);
  if (*run) return cmd_run(ra);
  if (*trace) return cmd_trace(ta);
  if (*reset) return cmd_reset(device, core, engine);
  if (*monitor) return not_yet("monitor", "eventfd binding and the netlink event family in the driver (issue 5)");
  if (*stats) return not_yet("stats", "per-queue edge counters from the driver's netlink get-nq (issue 5)");
  return kExitError;
}
