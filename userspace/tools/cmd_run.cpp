// SPDX-License-Identifier: MIT
//
// neuron-nq asm, run, submit and trace: assemble a program; run it and print
// every record with a summary (text or JSON); start it without waiting; run
// it and write a Perfetto/Chrome trace of its instructions. Each claims the
// program's cores and device memory first (libneuron's ProgramClaim), within
// the global --cores or NEURON_VISIBLE_CORES.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "cli.hpp"
#include "output.hpp"
#include "program.hpp"

namespace neuron::cli {
namespace {

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

struct Ran {
  Program program;
  ExecResult result;
};

Result<Ran> run_program(const RunArgs& a, bool trace) {
  auto prog = load_program(a.file, a.features);
  if (!prog) return unexpected(std::move(prog).error());
  auto dev = Device::open(a.device);
  if (!dev) return unexpected(std::move(dev).error());
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(a.timeout_ms);
  o.trace = trace;
  o.queue_size = 4096;
  o.queues = 6;
  o.halt_ends_wait = a.stop_on_fatal;
  o.cores = a.cores;
  Progress progress(!a.json || !::isatty(STDOUT_FILENO));
  o.progress = [&](const ExecProgress& p) {
    if (p.elapsed > std::chrono::milliseconds(500))
      progress.update("neuron-nq run: waiting {:.1f} s of {:.1f} s: {} records, {}/{} engines done",
                      std::chrono::duration<double>(p.elapsed).count(), a.timeout_ms / 1000.0, p.records,
                      p.engines_done, p.engines);
  };
  ExecResult r = execute(*dev, *prog, o);
  progress.clear();
  if (r.status == ExecStatus::Failure && r.error) return unexpected(*r.error);
  return Ran{std::move(prog).value(), std::move(r)};
}

/// One line for a record; TPB_ERROR in words that point at the program.
std::string record_text(const CollectedRecord& c, const Program& p) {
  if (const auto* e = std::get_if<TpbError>(&c.decoded)) {
    std::string s = "TPB_ERROR " + explain(*e, p, c.core);
    if (e->meta.header.sw_overflow()) s += " [SW OVERFLOW]";
    return s;
  }
  return to_text(c.decoded);
}

std::string edges_summary(const std::vector<Event>& events) {
  std::map<std::string, std::size_t> n;
  for (const auto& e : events) {
    const std::string k = e.edge == NEURON_EDGE_NOTIFIC ? "NOTIFIC " + notific_cause_names(e.cause) : edge_name(e.edge);
    ++n[k];
  }
  std::string s;
  for (const auto& [k, v] : n) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", k, v);
  return s;
}

/// What run counts over the records: records per type, error records.
struct RunCounts {
  std::map<std::string, std::size_t> per_type;
  std::size_t errors = 0;
};

void print_run_json(const ExecResult& r, const Program& prog, const RunCounts& n) {
  nlohmann::json j;
  j["records"] = nlohmann::json::array();
  for (const auto& c : r.records) {
    auto rec = to_json(c.decoded);
    rec["core"] = c.core;
    rec["queue"] = c.queue;
    if (const auto* e = std::get_if<TpbError>(&c.decoded)) rec["text"] = explain(*e, prog, c.core);
    j["records"].push_back(std::move(rec));
  }
  nlohmann::json engines = nlohmann::json::array();
  for (const auto& st : r.engines)
    engines.push_back({{"core", st.core}, {"engine", engine_name(st.engine)},
                       {"state", engine_state_name(st.state)}, {"pc", st.pc}});
  nlohmann::json edges = nlohmann::json::array();
  for (const auto& e : r.events)
    edges.push_back({{"timestamp_ns", e.timestamp_ns}, {"core", e.core}, {"edge", edge_name(e.edge)},
                     {"cause", e.cause}, {"causes", e.edge == NEURON_EDGE_NOTIFIC ? notific_cause_names(e.cause) : ""},
                     {"queues", e.queues}, {"count", e.count}});
  j["edges"] = edges;
  j["summary"] = {{"status", status_name(r.status)},
                  {"status_code", static_cast<int>(r.status)},
                  {"completed", r.completed},
                  {"records", r.records.size()},
                  {"per_type", n.per_type},
                  {"errors", n.errors},
                  {"lost", r.lost},
                  {"engines", engines},
                  {"reaper", {{"wakes", r.reaper.wakes}, {"late_records", r.reaper.late_records},
                              {"events", r.reaper.events}}},
                  {"elapsed_ms", std::chrono::duration<double, std::milli>(r.elapsed).count()}};
  if (r.features) j["summary"]["features"] = *r.features;
  if (r.first_error) {
    const auto* e = std::get_if<TpbError>(&r.first_error->decoded);
    j["summary"]["first_error"] = e ? explain(*e, prog, r.first_error->core) : to_text(r.first_error->decoded);
  }
  fmt::print("{}\n", j.dump(2));
}

void print_run_text(const ExecResult& r, const Program& prog, const RunCounts& n) {
  if (r.features) fmt::print("feature flags set on the program's cores: {}\n", features_text(*r.features));
  fmt::print("{:>14}  {:<4} {:<3} {:<16} {}\n", "time(s)", "core", "q", "type", "record");
  for (const auto& c : r.records)
    fmt::print("{:>14}  {:<4} {:<3} {:<16} {}\n", format_time(meta_of(c.decoded).timestamp), c.core, c.queue,
               notific_type_name(c.raw.notific_type()), record_text(c, prog));
  fmt::print("\nsummary: {} records", r.records.size());
  for (const auto& [type, count] : n.per_type) fmt::print(", {} {}", count, type);
  fmt::print("\n");
  if (r.first_error) {
    const auto* e = std::get_if<TpbError>(&r.first_error->decoded);
    fmt::print("errors: {} — first: {}\n", n.errors,
               e ? "TPB_ERROR " + explain(*e, prog, r.first_error->core) : to_text(r.first_error->decoded));
  } else {
    fmt::print("errors: 0\n");
  }
  if (!r.events.empty()) fmt::print("interrupt edges meanwhile: {}\n", edges_summary(r.events));
  if (r.lost) fmt::print("lost to overflow: {} records\n", r.lost);
  for (const auto& st : r.engines)
    fmt::print("engine core {} {:<4} {}{}\n", st.core, engine_name(st.engine), engine_state_name(st.state),
               st.state == NEURON_ENGINE_HALTED
                   ? fmt::format(" (fatal: reset with `neuron-nq reset --core {} --engine {}`)", st.core,
                                 lower(engine_name(st.engine)))
                   : std::string());
  std::string why;
  if (r.status == ExecStatus::Timeout)
    why = r.first_error ? " — no completion record arrived in time; the error above is why"
                        : " — no completion record arrived in time (an engine still running or waiting?)";
  fmt::print("status: {} ({}) in {:.1f} ms{}\n", status_name(r.status), static_cast<int>(r.status),
             std::chrono::duration<double, std::milli>(r.elapsed).count(), why);
}

int cmd_run(const RunArgs& a) {
  auto res = run_program(a, !a.no_trace);
  if (!res) return print_parse_or_device_error(res.error());
  const Program& prog = res->program;
  ExecResult& r = res->result;
  sort_by_timestamp(r.records);

  RunCounts n;
  for (const auto& c : r.records) {
    ++n.per_type[notific_type_name(c.raw.notific_type())];
    if (is_error(c.decoded)) ++n.errors;
  }
  if (a.json) print_run_json(r, prog, n);
  else print_run_text(r, prog, n);
  return r.status == ExecStatus::Ok ? kExitOk : kExitStatus;
}

int cmd_trace(const RunArgs& a) {
  auto res = run_program(a, true);
  if (!res) return print_parse_or_device_error(res.error());
  TraceStats st;
  const auto j = chrome_trace(res->result.records, &st);
  std::ofstream out(a.perfetto);
  if (!out) {
    fmt::print(stderr, "neuron-nq: cannot write {}\n", a.perfetto);
    return kExitError;
  }
  out << j.dump() << "\n";
  fmt::print("{}: {} slices, {} instant events ({} unmatched starts, {} unmatched ends); status {}; "
             "open it in ui.perfetto.dev\n",
             a.perfetto, st.slices, st.instants, st.unmatched_starts, st.unmatched_ends,
             status_name(res->result.status));
  return res->result.status == ExecStatus::Ok ? kExitOk : kExitStatus;
}

// A program runs only while the open file that owns its cores lives (the
// driver stops its engines when the file closes), so submit holds the device
// until the engines stop, polling ENGINE_STATUS; it reads no records.
int cmd_submit(const RunArgs& a) {
  auto prog = load_program(a.file, a.features);
  if (!prog) return print_parse_or_device_error(prog.error());
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  auto started = start_program(*dev, *prog, !a.no_trace, a.cores);
  if (!started) return fail(started.error());
  fmt::print("{}: started {} engine(s){}; waiting up to {} ms for them to stop (no records are read: "
             "`neuron-nq run` or `monitor --run` show them)\n",
             a.file, prog->engines.size(), prog->features ? ", feature flags " + features_text(*prog->features) : "",
             a.timeout_ms);
  std::fflush(stdout);
  const std::int64_t deadline = monotonic_ns() + std::int64_t{a.timeout_ms} * 1'000'000;
  for (;;) {
    std::string busy, halted;
    for (const auto& e : prog->engines) {
      auto st = dev->engine_status(e.core, e.engine);
      if (!st) return fail(st.error());
      const std::string name = fmt::format(" core {} {}", e.core, engine_name(e.engine));
      if (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING) busy += name;
      if (st->state == NEURON_ENGINE_HALTED) halted += name;
    }
    if (busy.empty()) {
      fmt::print("{}: every engine stopped{}\n", a.file, halted.empty() ? "" : "; HALTED (fatal):" + halted);
      return halted.empty() ? kExitOk : kExitStatus;
    }
    if (monotonic_ns() >= deadline) {
      fmt::print("{}: still running or waiting after {} ms:{}; reset now\n", a.file, a.timeout_ms, busy);
      return kExitStatus;  // `started` resets them
    }
    ::usleep(10'000);
  }
}

}  // namespace

void add_run_commands(CLI::App& app, Commands& out, const Globals& g) {
  auto asm_file = std::make_shared<std::string>();
  auto* asmc = app.add_subcommand("asm", "Assemble a program and print its listing (no device needed)");
  asmc->add_option("FILE", *asm_file, "Program file (docs/program-syntax.md)")->required();
  out.push_back({asmc, [asm_file] { return cmd_asm(*asm_file); }});

  auto ra = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "Assemble, submit with trace, wait, drain and print every record");
  run->add_option("FILE", ra->file, "Program file (docs/program-syntax.md)")->required();
  add_device_option(*run, ra->device);
  run->add_option("--timeout", ra->timeout_ms, "Milliseconds to wait for the engines")->capture_default_str();
  run->add_flag("--json", ra->json, "JSON output");
  run->add_flag("--no-trace", ra->no_trace, "Submit without INST_START/INST_END tracing");
  run->add_option("--features", ra->features,
                  "NEURON_FEATURE_FLAGS for the program's cores, e.g. 0x2 (DGE packet notification); "
                  "overrides the program's `features` directive");
  run->add_flag("--stop-on-fatal", ra->stop_on_fatal,
                "Stop waiting when an engine reports a fatal error (status COMPLETED_WITH_ERR instead of TIMEOUT)");
  out.push_back({run, [ra, g] {
                   ra->cores = g->core_list();
                   return cmd_run(*ra);
                 }});

  auto sa = std::make_shared<RunArgs>();
  auto* submit = app.add_subcommand(
      "submit", "Start a program and wait for its engines to stop, reading no records (the cores stay ours meanwhile)");
  submit->add_option("FILE", sa->file, "Program file")->required();
  add_device_option(*submit, sa->device);
  submit->add_flag("--no-trace", sa->no_trace, "Submit without tracing");
  submit->add_option("--features", sa->features, "NEURON_FEATURE_FLAGS to set first, e.g. 0x2");
  submit->add_option("--timeout", sa->timeout_ms, "Milliseconds to wait for the engines to stop; then they are reset")
      ->capture_default_str();
  out.push_back({submit, [sa, g] {
                   sa->cores = g->core_list();
                   return cmd_submit(*sa);
                 }});

  auto ta = std::make_shared<RunArgs>();
  auto* trace = app.add_subcommand("trace", "Run a program and write a Perfetto/Chrome trace of its instructions");
  trace->add_option("FILE", ta->file, "Program file")->required();
  trace->add_option("--perfetto", ta->perfetto, "Output JSON trace file")->required();
  add_device_option(*trace, ta->device);
  trace->add_option("--timeout", ta->timeout_ms, "Milliseconds to wait for the engines")->capture_default_str();
  trace->add_option("--features", ta->features, "NEURON_FEATURE_FLAGS for the program's cores");
  out.push_back({trace, [ta, g] {
                   ta->cores = g->core_list();
                   return cmd_trace(*ta);
                 }});
}

}  // namespace neuron::cli
