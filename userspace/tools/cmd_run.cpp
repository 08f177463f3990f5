// SPDX-License-Identifier: MIT
//
// neuron-nq asm, run and trace: assemble a program; run it and print every
// record with a summary (text or JSON, run_summary.hpp); run it and write a
// Perfetto/Chrome trace of its instructions. submit is cmd_submit.cpp,
// registered here between run and trace. Each claims the
// program's cores and device memory first (libneuron's ProgramClaim), within
// the global --cores or NEURON_VISIBLE_CORES, except a detached submit,
// whose program runs on another process's cores and memory.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "cli.hpp"
#include "exec_timeout.hpp"
#include "output.hpp"
#include "program.hpp"
#include "run_summary.hpp"
#include "storm.hpp"

namespace neuron::cli {
namespace {

int cmd_asm(const std::string& file) {
  auto prog = assemble_file(file);
  // a parse error: the assembler's "FILE:LINE: ..." lines; else why the file
  // did not open or read ("open x.nq: No such file or directory")
  if (!prog) return print_program_error(prog.error());
  // a program's own data (docs/program-syntax.md#data): its bytes, in the header
  std::size_t data_bytes = 0;
  for (const auto& e : prog->engines)
    for (const auto& b : e.data) data_bytes += b.bytes.size();
  fmt::print("# {}: {} instructions{} on {} engine(s)\n{}", file, prog->instruction_count(),
             data_bytes ? fmt::format(", {} bytes of data", data_bytes) : std::string(), prog->engines.size(),
             disassemble(*prog));
  return kExitOk;
}

struct Ran {
  Program program;
  ExecResult result;
};

/// --sem-set [CORE:]INDEX=VALUE (CORE: the program's lowest core if left out).
Result<SemWrite> parse_sem_set(const std::string& text, unsigned default_core) {
  const auto bad = [&](const std::string& why) {
    return unexpected(errc::invalid_argument, fmt::format("--sem-set '{}': {} (expected [CORE:]INDEX=VALUE, e.g. "
                                                          "0:3=1)",
                                                          text, why));
  };
  const auto eq = text.find('=');
  if (eq == std::string::npos) return bad("no '='");
  std::string left = text.substr(0, eq);
  SemWrite w;
  w.core = default_core;
  w.op = NEURON_SEM_SET;
  if (const auto colon = left.find(':'); colon != std::string::npos) {
    const auto c = parse_u32(left.substr(0, colon));
    if (!c || *c >= kMaxCores) return bad("CORE is not a core number");
    w.core = *c;
    left = left.substr(colon + 1);
  }
  const auto i = parse_u32(left);
  if (!i || *i >= NEURON_EVT_SEM_COUNT) return bad(fmt::format("INDEX is not a number below {}", NEURON_EVT_SEM_COUNT));
  const auto v = parse_u32(text.substr(eq + 1));
  if (!v) return bad("VALUE is not a 32-bit number");
  w.index = *i;
  w.value = *v;
  return w;
}

/// How long run and trace wait (docs/decisions/0037-exec-timeout.md): --timeout
/// if given, else NEURON_RT_EXEC_TIMEOUT's seconds if set, else 5000 ms.
/// Errors: the variable's, naming it (exit 1 before the device is opened).
Result<std::chrono::milliseconds> run_budget(const RunArgs& a) {
  return detail::resolve_exec_timeout(a.timeout_given ? std::chrono::milliseconds(a.timeout_ms)
                                                      : kExecTimeoutFromEnv);
}

/// "5.0 s", or "no limit" for NEURON_RT_EXEC_TIMEOUT=0.
std::string budget_text(std::chrono::milliseconds budget) {
  return budget == std::chrono::milliseconds::max() ? std::string("no limit")
                                                    : fmt::format("{:.1f} s", static_cast<double>(budget.count()) / 1000.0);
}

/// A TIMEOUT's line (docs/hardware.md#exec-timeout) on stderr, as execute() made it.
void print_timeout_line(const ExecResult& r) {
  if (r.status == ExecStatus::Timeout && r.error) fmt::print(stderr, "{}\n", r.error->what);
}

ExecOptions exec_options(const RunArgs& a, bool trace, std::chrono::milliseconds budget) {
  ExecOptions o;
  o.timeout = budget;
  o.trace = trace;
  o.queue_size = 4096;
  o.queues = 6;
  o.halt_ends_wait = a.stop_on_fatal;
  o.cores = a.cores;
  // checked by the option's number_option(UINT32_MAX)
  if (!a.route.empty()) o.route = static_cast<std::uint32_t>(std::stoul(a.route, nullptr, 0));
  o.axi_evt_sem = a.axi_evt_sem;
  return o;
}

/// The completion-notification options of run (--dma-queues, --sem-set)
/// into `o`; errors name the option.
Status notification_options(const RunArgs& a, const Program& prog, ExecOptions& o) {
  if (!a.dma_queues.empty()) {
    auto m = parse_core_list(a.dma_queues, NEURON_DMA_ENGINES);
    if (!m)
      return unexpected(errc::invalid_argument,
                        fmt::format("--dma-queues '{}': expected DMA queues 0-{}, e.g. 0-3 or 0,2", a.dma_queues,
                                    NEURON_DMA_ENGINES - 1));
    o.dma_queues = static_cast<std::uint16_t>(*m);
  }
  const auto cores = prog.cores();
  for (const auto& s : a.sem_sets) {
    auto w = parse_sem_set(s, cores.empty() ? 0 : *cores.begin());
    if (!w) return unexpected(std::move(w).error());
    o.sem_writes.push_back(*w);
  }
  return {};
}

Result<Ran> run_program(const RunArgs& a, bool trace) {
  auto prog = load_program(a.file, a.features);
  if (!prog) return unexpected(std::move(prog).error());
  if (auto st = check_cores_early(*prog, a.cores); !st) return unexpected(std::move(st).error());
  const auto budget = run_budget(a);
  if (!budget) return unexpected(budget.error());
  auto dev = Device::open(a.device);
  if (!dev) return unexpected(std::move(dev).error());
  ExecOptions o = exec_options(a, trace, *budget);
  Progress progress(!a.json || !::isatty(STDOUT_FILENO));
  o.progress = [&](const ExecProgress& p) {
    if (p.elapsed > std::chrono::milliseconds(500))
      progress.update("neuron-nq run: waiting {:.1f} s of {}: {} records, {}/{} engines done",
                      std::chrono::duration<double>(p.elapsed).count(), budget_text(*budget), p.records,
                      p.engines_done, p.engines);
  };
  ExecResult r = execute(*dev, *prog, o);
  progress.clear();
  if (r.status == ExecStatus::Failure && r.error) return unexpected(*r.error);
  return Ran{std::move(prog).value(), std::move(r)};
}

/// Prints what the Storm holds: record lines as they come, group lines once
/// per interval (on the thread that called execute(), never the drain's).
class RunPrinter {
 public:
  RunPrinter(std::FILE* out, Storm& storm, const Program& prog, bool json, double interval_s)
      : out_(out), storm_(storm), prog_(prog), json_(json),
        interval_ns_(static_cast<std::int64_t>(interval_s * 1e9)), start_(monotonic_ns()),
        next_(start_ + interval_ns_) {}

  void header(const std::optional<std::uint32_t>& features) {
    if (json_) return;
    if (features) fmt::print(out_, "feature flags set on the program's cores: {}\n", features_text(*features));
    fmt::print(out_, "{:>14}  {:<4} {:<3} {:<16} {}\n", "time(s)", "core", "q", "type", "record");
  }

  /// Print the records shown so far and, once an interval has passed (or
  /// at the end), the interval's groups.
  void pump(bool final) {
    auto shown = storm_.take_shown();
    std::stable_sort(shown.begin(), shown.end(),
                     [](const Shown& a, const Shown& b) { return a.rec.timestamp_ps() < b.rec.timestamp_ps(); });
    for (const auto& s : shown) {
      const Decoded& d = s.decoded;  // execute()'s, with the core's route
      const std::string text = record_sentence(d, prog_, s.core);
      if (json_)
        fmt::print(out_, "{}\n", json_text(record_json(s.core, s.queue, d, text)));
      else
        fmt::print(out_, "{:>14}  {:<4} {:<3} {:<16} {}\n", format_time(meta_of(d).timestamp), s.core, s.queue,
                   notific_type_name(s.rec.notific_type()), text);
    }
    const std::int64_t now = monotonic_ns();
    if (final || now >= next_) {
      const auto iv = storm_.take_interval();
      print_interval(out_, iv, storm_.options().group_lines, json_,
                     fmt::format("{:>14}  errors", fmt::format("+{:.1f}s", static_cast<double>(now - start_) / 1e9)),
                     index_++);
      while (next_ <= now) next_ += interval_ns_;
    }
    std::fflush(out_);
  }

 private:
  std::FILE* out_;
  Storm& storm_;
  const Program& prog_;
  bool json_;
  std::int64_t interval_ns_, start_, next_;
  unsigned index_ = 0;
};

int cmd_run(const RunArgs& a) {
  auto prog = load_program(a.file, a.features);
  if (!prog) return print_program_error(prog.error());
  if (auto st = check_cores_early(*prog, a.cores); !st) return fail(st.error());
  ExecOptions armed;  // checked before the device is opened
  if (auto s = notification_options(a, *prog, armed); !s) return fail(s.error());
  const auto budget = run_budget(a);
  if (!budget) return fail(budget.error());
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());

  Storm storm({a.verbose, a.record_lines, true, a.group_lines, Storm::Options{}.max_buffered}, *prog);
  RunPrinter printer(stdout, storm, *prog, a.json, a.interval);
  ExecOptions o = exec_options(a, !a.no_trace, *budget);
  o.keep_records = false;  // the Storm counts them: memory does not grow with the records
  o.on_record = [&storm](const CollectedRecord& c) { storm.add(c.core, c.queue, c.raw, c.decoded, monotonic_ns()); };
  o.progress_interval = std::chrono::milliseconds(100);
  Progress progress(!a.json || !::isatty(STDOUT_FILENO));
  unsigned run_no = 0;
  o.progress = [&](const ExecProgress& p) {
    progress.clear();
    printer.pump(false);
    if (p.elapsed > std::chrono::milliseconds(500))
      progress.update("neuron-nq run{}: waiting {:.1f} s of {}: {} records, {}/{} engines done",
                      a.repeat > 1 ? fmt::format(" {}/{}", run_no + 1, a.repeat) : "",
                      std::chrono::duration<double>(p.elapsed).count(), budget_text(*budget), p.records,
                      p.engines_done, p.engines);
  };

  o.dma_queues = armed.dma_queues;
  o.sem_writes = armed.sem_writes;
  RunTotals t;
  std::optional<std::uint32_t> features = prog->features;
  if (!a.features.empty()) features = parse_u32(a.features);
  printer.header(features);
  // --throttle: device-wide, so armed for these runs only and disarmed after
  // (docs/hardware.md#throttle; EPERM without CAP_SYS_ADMIN)
  if (a.throttle)
    if (auto st = dev->throttle(true); !st) return fail(st.error());
  for (run_no = 0; run_no < a.repeat; ++run_no) {
    ExecResult r = execute(*dev, *prog, o);
    progress.clear();
    if (r.status == ExecStatus::Failure && r.error) {
      if (a.throttle) (void)dev->throttle(false);
      printer.pump(true);
      return fail(*r.error);
    }
    if (a.verbose && a.json)
      for (const auto& e : r.events)
        fmt::print("{}\n", json_text(edge_json(edge_fields(e))));
    add_run(t, r);
    printer.pump(false);
    print_timeout_line(r);
    // a stuck or overflowing run makes the next one meaningless
    if (r.status == ExecStatus::Timeout || r.status == ExecStatus::SwNqOverflow) break;
  }
  if (a.throttle) (void)dev->throttle(false);
  printer.pump(true);
  const auto st = storm.totals();
  if (a.json) print_run_summary_json(stdout, t, *prog, st, a.group_lines);
  else print_run_summary_text(stdout, t, *prog, st, a.group_lines);
  std::fflush(stdout);
  return exit_code(t.status);
}

int cmd_trace(const RunArgs& a) {
  auto res = run_program(a, true);
  if (!res) return print_parse_or_device_error(res.error());
  print_timeout_line(res->result);
  TraceStats st;
  const auto j = chrome_trace(res->result.records, &st);
  std::ofstream out(a.perfetto);
  if (!out) {
    fmt::print(stderr, "neuron-nq: cannot write {}\n", a.perfetto);
    return kExitDevice;
  }
  out << json_text(j) << "\n";
  fmt::print("{}: {} slices, {} instant events ({} unmatched starts, {} unmatched ends); status {}; "
             "open it in ui.perfetto.dev\n",
             a.perfetto, st.slices, st.instants, st.unmatched_starts, st.unmatched_ends,
             status_name(res->result.status));
  return exit_code(res->result.status);
}


/// run's and trace's --timeout (docs/decisions/0037-exec-timeout.md).
constexpr const char* kTimeoutHelp =
    "Milliseconds to wait for the engines (if not given: NEURON_RT_EXEC_TIMEOUT, whole seconds, 0 for no limit; "
    "else 5000)";

}  // namespace

void add_run_commands(CLI::App& app, Commands& out, const Globals& g) {
  auto asm_file = std::make_shared<std::string>();
  auto* asmc = app.add_subcommand("asm", "Assemble a program and print its listing (no device needed)");
  asmc->add_option("FILE", *asm_file, "Program file (docs/program-syntax.md)")->required();
  out.push_back({asmc, [asm_file] { return cmd_asm(*asm_file); }});

  auto ra = std::make_shared<RunArgs>();
  ra->interval = 5;       // run is not interactive: fewer progress lines
  ra->record_lines = 20;  // for the whole run
  auto* run = app.add_subcommand("run", "Assemble, submit with trace, wait, drain and print every record");
  run->add_option("FILE", ra->file, "Program file (docs/program-syntax.md)")->required();
  add_device_option(*run, ra->device);
  auto* run_timeout = run->add_option("--timeout", ra->timeout_ms, kTimeoutHelp)
      ->capture_default_str()
      ->transform(number_option(UINT32_MAX));
  run->add_flag("--json", ra->json, "JSON Lines: one object per line (docs/cli-json.md)");
  run->add_flag("--no-trace", ra->no_trace, "Submit without INST_START/INST_END tracing");
  run->add_option("--features", ra->features,
                  "NEURON_FEATURE_FLAGS for the program's cores, e.g. 0x2 (DGE packet notification); "
                  "overrides the program's `features` directive")
      ->check(number_option(UINT32_MAX));
  run->add_flag("--stop-on-fatal", ra->stop_on_fatal,
                "Stop waiting when an engine reports a fatal error (status COMPLETED_WITH_ERR instead of TIMEOUT)");
  run->add_option("--route", ra->route,
                  "NOTIFIC ROUTE word for the program's cores, 4 bits per record class (trace, EXPLICIT, "
                  "EVT_SEM, error, throttle, DGE, DMA from bit 0), e.g. 0x03249867; default: as they are "
                  "(docs/hardware.md#nq-routing)")
      ->check(number_option(UINT32_MAX));
  run->add_flag("--throttle", ra->throttle,
                "Arm throttle notifications (device-wide, CAP_SYS_ADMIN) for the run: throttle records, "
                "status COMPLETED_THROTTLED (exit 7) when nothing worse happens");
  run->add_option("--dma-queues", ra->dma_queues,
                  "Arm these DMA queues (0-15, e.g. 0-3) on the program's cores for the run: a DMA record per "
                  "engine of each DGE copy's split (docs/device-model.md#dma-engines)");
  run->add_flag("--axi-evt-sem", ra->axi_evt_sem,
                "Arm AXI_EVT_SEM records on the program's cores for the run: one per host EVT_SEM write "
                "(--sem-set); the records the device lost are counted (AXI_DROPPED; docs/decisions/0025-axi-dropped.md)");
  run->add_option("--sem-set", ra->sem_sets,
                  "Host write after submitting, [CORE:]INDEX=VALUE (SEM_SET; CORE defaults to the program's "
                  "lowest): wakes a program waiting on the semaphore; repeat for more, made in order");
  add_storm_options(*run, *ra);
  out.push_back({run, [ra, g, run_timeout] {
                   ra->cores = g->core_list();
                   ra->timeout_given = run_timeout->count() > 0;
                   return cmd_run(*ra);
                 }});

  add_submit_command(app, out, g);

  auto ta = std::make_shared<RunArgs>();
  auto* trace = app.add_subcommand("trace", "Run a program and write a Perfetto/Chrome trace of its instructions");
  trace->add_option("FILE", ta->file, "Program file")->required();
  trace->add_option("--perfetto", ta->perfetto, "Output JSON trace file")->required();
  add_device_option(*trace, ta->device);
  auto* trace_timeout = trace->add_option("--timeout", ta->timeout_ms, kTimeoutHelp)
      ->capture_default_str()
      ->transform(number_option(UINT32_MAX));
  trace->add_option("--features", ta->features, "NEURON_FEATURE_FLAGS for the program's cores")
      ->check(number_option(UINT32_MAX));
  out.push_back({trace, [ta, g, trace_timeout] {
                   ta->cores = g->core_list();
                   ta->timeout_given = trace_timeout->count() > 0;
                   return cmd_trace(*ta);
                 }});
}

}  // namespace neuron::cli
