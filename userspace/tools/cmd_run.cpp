// SPDX-License-Identifier: MIT
//
// neuron-nq asm, run, submit and trace: assemble a program; run it and print
// every record with a summary (text or JSON); start it and wait for its
// engines, or (submit --detach) hand it to the cores' owner and exit; run
// it and write a Perfetto/Chrome trace of its instructions. Each claims the
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
#include "output.hpp"
#include "program.hpp"
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

ExecOptions exec_options(const RunArgs& a, bool trace) {
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(a.timeout_ms);
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
  auto dev = Device::open(a.device);
  if (!dev) return unexpected(std::move(dev).error());
  ExecOptions o = exec_options(a, trace);
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

/// How bad a status is, to report the worst of several runs (--repeat).
int severity(ExecStatus s) {
  switch (s) {
    case ExecStatus::Ok: return 0;
    case ExecStatus::CompletedThrottled: return 1;
    case ExecStatus::CompletedWithError: return 2;
    case ExecStatus::Timeout: return 3;
    case ExecStatus::SwNqOverflow: return 4;
    case ExecStatus::Failure: return 6;
  }
  return 5;
}

/// What the runs of `run` add up to (several with --repeat).
struct RunTotals {
  ExecStatus status = ExecStatus::Ok;
  unsigned runs = 0;
  bool completed = true;
  std::optional<CollectedRecord> first_error;
  std::optional<CollectedRecord> first_throttle;  // a condition, not an error
  std::uint64_t throttle_records = 0;
  std::map<std::string, std::size_t> edges;  // "NOTIFIC THRESHOLD" -> edges
  std::uint64_t n_edges = 0, lost = 0, wakes = 0, late_records = 0, reaper_events = 0;
  std::vector<EngineStatus> engines;  // of the last run
  std::optional<std::uint32_t> features;
  std::map<unsigned, std::uint32_t> routes;  // of the last run: each core's ROUTE word
  std::map<unsigned, Device::NotifyTriggers> triggers;  // of the last run: what was armed
  bool axi_counted = true;                    // every run's AXI_DROPPED was read
  std::uint64_t axi_dropped = 0;              // AXI_EVT_SEM records lost, all runs
  double elapsed_ms = 0;
};

void add_run(RunTotals& t, const ExecResult& r) {
  if (t.runs++ == 0 || severity(r.status) > severity(t.status)) t.status = r.status;
  t.completed = t.completed && r.completed;
  if (!t.first_error && r.first_error) t.first_error = r.first_error;
  if (!t.first_throttle && r.first_throttle) t.first_throttle = r.first_throttle;
  t.throttle_records += r.throttle_records;
  for (const auto& e : r.events) {
    ++t.n_edges;
    std::string key = edge_name(e.edge);
    if (e.edge == NEURON_EDGE_NOTIFIC) key += " " + notific_cause_names(e.cause);
    if (e.edge == NEURON_EDGE_ENGINE_STOPPED) key += " " + stop_cause_name(e.cause);
    ++t.edges[key];
  }
  t.lost += r.lost;
  t.wakes += r.reaper.wakes;
  t.late_records += r.reaper.late_records;
  t.reaper_events += r.reaper.events;
  t.engines = r.engines;
  t.features = r.features;
  t.routes = r.routes;
  t.triggers = r.triggers;
  if (r.axi_dropped) t.axi_dropped += *r.axi_dropped;
  else t.axi_counted = false;
  t.elapsed_ms += std::chrono::duration<double, std::milli>(r.elapsed).count();
}

std::string edges_summary(const std::map<std::string, std::size_t>& n) {
  std::string s;
  for (const auto& [k, v] : n) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", k, v);
  return s;
}

std::string first_error_text(const CollectedRecord& c, const Program& prog) {
  return record_sentence(c.decoded, prog, c.core);
}

void print_run_summary_json(std::FILE* out, const RunTotals& t, const Program& prog, const Storm::Totals& st,
                            unsigned group_lines) {
  nlohmann::json engines = nlohmann::json::array();
  for (const auto& e : t.engines)
    engines.push_back({{"core", e.core}, {"engine", engine_name(e.engine)}, {"state", engine_state_name(e.state)},
                       {"program_counter", e.pc}});
  nlohmann::json j = totals_json(st, group_lines);
  j["schema"] = kJsonSchemaVersion;
  j["object"] = "summary";
  j["command"] = "run";
  j["status"] = status_name(t.status);
  j["status_code"] = static_cast<int>(t.status);
  j["exit_code"] = exit_code(t.status);
  j["completed"] = t.completed;
  j["runs"] = t.runs;
  j["edges"] = t.edges;
  j["lost"] = t.lost;
  j["engines"] = engines;
  j["reaper"] = {{"wakes", t.wakes}, {"late_records", t.late_records}, {"events", t.reaper_events}};
  j["elapsed_ms"] = t.elapsed_ms;
  j["features"] = t.features ? nlohmann::json(*t.features) : nlohmann::json(nullptr);
  j["first_error"] = t.first_error ? nlohmann::json(first_error_text(*t.first_error, prog)) : nlohmann::json(nullptr);
  nlohmann::json routes = nlohmann::json::object();
  for (const auto& [core, route] : t.routes) routes[std::to_string(core)] = fmt::format("{:#010x}", route);
  j["routes"] = routes;
  j["throttle_records"] = t.throttle_records;
  nlohmann::json armed = nlohmann::json::object();
  bool axi = false;
  for (const auto& [core, tr] : t.triggers) {
    armed[std::to_string(core)] = {{"dma_queues", fmt::format("{:#06x}", tr.dma_armed)}, {"axi_evt_sem", tr.axi_armed}};
    axi = axi || tr.axi_armed;
  }
  j["notifications"] = armed;
  // null: not armed, or a driver that does not count them
  j["axi_dropped"] = axi && t.axi_counted ? nlohmann::json(t.axi_dropped) : nlohmann::json(nullptr);
  j["first_throttle"] =
      t.first_throttle ? nlohmann::json(first_error_text(*t.first_throttle, prog)) : nlohmann::json(nullptr);
  fmt::print(out, "{}\n", json_text(j));
}

void print_run_summary_text(std::FILE* out, const RunTotals& t, const Program& prog, const Storm::Totals& st,
                            unsigned group_lines) {
  fmt::print(out, "\n");
  if (t.runs > 1) fmt::print(out, "runs: {}\n", t.runs);
  print_totals_text(out, st, group_lines);
  for (const auto& [core, route] : t.routes)
    if (route != NEURON_ROUTE_DEFAULT) fmt::print(out, "core {} route: {:#010x}\n", core, route);
  for (const auto& [core, tr] : t.triggers) {
    fmt::print(out, "core {} notifications: DMA queues {:#06x}, AXI_EVT_SEM {}\n", core, tr.dma_armed,
               tr.axi_armed ? "on" : "off");
    if (!tr.axi_armed) continue;
    if (tr.axi_dropped)
      fmt::print(out, "core {} AXI_EVT_SEM records lost (AXI_DROPPED): {}\n", core, *tr.axi_dropped);
    else
      fmt::print(out, "core {} AXI_EVT_SEM records lost: not counted by this driver (no NEURON_CAP_AXI_DROPPED)\n",
                 core);
  }
  if (t.first_error) fmt::print(out, "first error: {}\n", first_error_text(*t.first_error, prog));
  if (t.throttle_records)
    fmt::print(out, "throttled: {} throttle record{} (not errors), first: {}\n", t.throttle_records,
               t.throttle_records == 1 ? "" : "s", first_error_text(*t.first_throttle, prog));
  if (!t.edges.empty()) fmt::print(out, "interrupt edges meanwhile: {}\n", edges_summary(t.edges));
  if (t.lost) fmt::print(out, "lost to overflow: {} records\n", t.lost);
  for (const auto& e : t.engines)
    fmt::print(out, "engine core {} {:<4} {}{}\n", e.core, engine_name(e.engine), engine_state_name(e.state),
               e.state == NEURON_ENGINE_HALTED
                   ? fmt::format(" (fatal: reset with `neuron-nq reset --core {} --engine {}`)", e.core,
                                 lower(engine_name(e.engine)))
                   : std::string());
  std::string why;
  if (t.status == ExecStatus::Timeout)
    why = t.first_error ? " — no completion record arrived in time; the error above is why"
                        : " — no completion record arrived in time (an engine still running or waiting?)";
  fmt::print(out, "status: {} ({}) in {:.1f} ms{}; exit status {}\n", status_name(t.status),
             static_cast<int>(t.status), t.elapsed_ms, why, exit_code(t.status));
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
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());

  Storm storm({a.verbose, a.record_lines, true, a.group_lines, Storm::Options{}.max_buffered}, *prog);
  RunPrinter printer(stdout, storm, *prog, a.json, a.interval);
  ExecOptions o = exec_options(a, !a.no_trace);
  o.keep_records = false;  // the Storm counts them: memory does not grow with the records
  o.on_record = [&storm](const CollectedRecord& c) { storm.add(c.core, c.queue, c.raw, c.decoded, monotonic_ns()); };
  o.progress_interval = std::chrono::milliseconds(100);
  Progress progress(!a.json || !::isatty(STDOUT_FILENO));
  unsigned run_no = 0;
  o.progress = [&](const ExecProgress& p) {
    progress.clear();
    printer.pump(false);
    if (p.elapsed > std::chrono::milliseconds(500))
      progress.update("neuron-nq run{}: waiting {:.1f} s of {:.1f} s: {} records, {}/{} engines done",
                      a.repeat > 1 ? fmt::format(" {}/{}", run_no + 1, a.repeat) : "",
                      std::chrono::duration<double>(p.elapsed).count(), a.timeout_ms / 1000.0, p.records,
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

/// Poll ENGINE_STATUS of the program's engines until none runs or waits, at
/// most a.timeout_ms; the exit status: 0 all stopped, 4 one HALTED (fatal),
/// 3 still busy at the timeout (the caller's claim then resets them).
int wait_engines(const Device& dev, const Program& prog, const RunArgs& a) {
  const std::int64_t deadline = monotonic_ns() + std::int64_t{a.timeout_ms} * 1'000'000;
  for (;;) {
    std::string busy, halted;
    for (const auto& e : prog.engines) {
      auto st = dev.engine_status(e.core, e.engine);
      if (!st) return fail(st.error());
      const std::string name = fmt::format(" core {} {}", e.core, engine_name(e.engine));
      if (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING) busy += name;
      if (st->state == NEURON_ENGINE_HALTED) halted += name;
    }
    if (busy.empty()) {
      fmt::print("{}: every engine stopped{}\n", a.file, halted.empty() ? "" : "; HALTED (fatal):" + halted);
      return halted.empty() ? kExitOk : kExitCompletedWithErr;
    }
    if (monotonic_ns() >= deadline) {
      fmt::print("{}: still running or waiting after {} ms:{}; reset now\n", a.file, a.timeout_ms, busy);
      return kExitTimeout;  // the caller's claim resets them
    }
    ::usleep(10'000);
  }
}

// A program runs only while the open file that owns its cores lives (the
// driver stops its engines when the file closes), so submit holds the device
// until the engines stop, polling ENGINE_STATUS; it reads no records.
int cmd_submit_and_wait(const RunArgs& a) {
  auto prog = load_program(a.file, a.features);
  if (!prog) return print_program_error(prog.error());
  if (auto st = check_cores_early(*prog, a.cores); !st) return fail(st.error());
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  auto started = start_program(*dev, *prog, !a.no_trace, a.cores);
  if (!started) return fail(started.error());
  fmt::print("{}: started {} engine(s){}; waiting up to {} ms for them to stop (no records are read: "
             "`neuron-nq run` or `monitor --run` show them)\n",
             a.file, prog->engines.size(), prog->features ? ", feature flags " + features_text(*prog->features) : "",
             a.timeout_ms);
  std::fflush(stdout);
  return wait_engines(*dev, *prog, a);
}

/// "core 0 PE, core 0 ACT" for the engines of a program.
std::string engines_text(const Program& prog) {
  std::string s;
  for (const auto& e : prog.engines) s += fmt::format("{}core {} {}", s.empty() ? "" : ", ", e.core, engine_name(e.engine));
  return s;
}

// submit --detach (docs/decisions/0024-submit-detach.md): the program goes to
// cores another open file owns, through the owner's grant
// (NEURON_IOC_CORE_GRANT, `monitor --grant-submit`), with
// NEURON_SUBMIT_F_DETACH. It then belongs to that owner: its records reach the
// owner's queues, its DGE_COPY ranges are the owner's memory, and our exit
// does not stop it, so submit exits as soon as the engines are started.
int cmd_submit_detached(const RunArgs& a) {
  auto prog = load_program(a.file, a.features);
  if (!prog) return print_program_error(prog.error());
  if (prog->features) {
    fmt::print(stderr, "neuron-nq: submit --detach: {} sets feature flags ({}), which only the cores' owner may do; "
                       "drop the `features` directive or --features\n",
               a.file, features_text(*prog->features));
    return kExitUsage;
  }
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  auto info = dev->info();
  if (!info) return fail(info.error());
  if (!(info->capabilities & NEURON_CAP_SUBMIT_GRANT))
    return fail(Error::make(make_error_code(std::errc::function_not_supported),
                            fmt::format("{}: this driver has no detached submit (NEURON_CAP_SUBMIT_GRANT); submit "
                                        "without --detach",
                                        a.device)));
  auto visible = visible_cores(a.cores, info->num_cores, info->file_cores);
  if (!visible) return fail(visible.error());
  if (auto s = check_program_cores(*prog, *visible); !s) return fail(s.error());
  // who holds each core: a core nobody holds would become ours and the
  // program would stop when we exit, which is what --detach is to avoid
  auto owners = dev->core_owners();
  if (!owners) return fail(owners.error());
  std::string holders;
  for (unsigned core : prog->cores()) {
    const auto it = std::find_if(owners->begin(), owners->end(), [&](const CoreOwner& o) { return o.core == core; });
    if (it == owners->end() || it->is_free())
      return fail(Error::make(make_error_code(std::errc::no_such_process),
                              fmt::format("core {} has no owner: a detached program belongs to the core's owner, and "
                                          "nobody holds the core (start the holder first, e.g. `neuron-nq monitor "
                                          "--core {} --grant-submit {}`, or submit without --detach)",
                                          core, core, ::geteuid())));
    holders += fmt::format("{}core {}: {}", holders.empty() ? "" : "; ", core, owner_text(*it));
  }
  const std::uint32_t flags = NEURON_SUBMIT_F_DETACH | (a.no_trace ? 0u : NEURON_SUBMIT_F_TRACE);
  std::string started;
  for (const auto& e : prog->engines) {
    if (auto s = submit_engine(*dev, *prog, e, flags); !s) {
      Error err = std::move(s).error();
      if (err.code == std::errc::operation_not_permitted)
        err.what += fmt::format(" (core {} is not granted to this user, uid {}: its owner runs `neuron-nq monitor "
                                "--core {} --grant-submit {}`, docs/decisions/0024-submit-detach.md)",
                                e.core, ::geteuid(), e.core, ::geteuid());
      if (!started.empty())
        fmt::print(stderr, "neuron-nq: submit --detach: started before the error, and left to the owner:{}\n", started);
      return fail(err);
    }
    started += fmt::format(" core {} {}", e.core, engine_name(e.engine));
  }
  // the owner may have left between the check and the submit: then the
  // call took the free core for us, and the program lives as long as we do
  std::uint64_t want = 0;
  for (unsigned core : prog->cores()) want |= std::uint64_t{1} << core;
  if (auto owned = dev->acquire_cores(0); owned && (*owned & want)) {
    fmt::print("{}: started {} engine(s) ({}), but core(s) {} had lost their owner and are ours now: waiting up to {} "
               "ms for the engines to stop, as submit without --detach does\n",
               a.file, prog->engines.size(), engines_text(*prog), core_list_text(*owned & want), a.timeout_ms);
    std::fflush(stdout);
    const int st = wait_engines(*dev, *prog, a);
    if (st == kExitTimeout)
      for (const auto& e : prog->engines) (void)dev->engine_reset(e.core, e.engine);
    return st;
  }
  fmt::print("{}: started {} engine(s) detached: {}. The program now belongs to the cores' owner ({}): its records go "
             "to that owner's queues, and only the owner (an engine reset, giving the core up, its exit) or a device "
             "reset stops it; submit exits now\n",
             a.file, prog->engines.size(), engines_text(*prog), holders);
  return kExitOk;
}

int cmd_submit(const RunArgs& a) { return a.detach ? cmd_submit_detached(a) : cmd_submit_and_wait(a); }

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
  run->add_option("--timeout", ra->timeout_ms, "Milliseconds to wait for the engines")
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
  out.push_back({run, [ra, g] {
                   ra->cores = g->core_list();
                   return cmd_run(*ra);
                 }});

  auto sa = std::make_shared<RunArgs>();
  auto* submit = app.add_subcommand(
      "submit", "Start a program and wait for its engines to stop, reading no records (the cores stay ours meanwhile); "
                "with --detach, hand it to the cores' owner and exit at once");
  submit->add_option("FILE", sa->file, "Program file")->required();
  add_device_option(*submit, sa->device);
  submit->add_flag("--no-trace", sa->no_trace, "Submit without tracing");
  auto* features = submit->add_option("--features", sa->features, "NEURON_FEATURE_FLAGS to set first, e.g. 0x2")
                       ->check(number_option(UINT32_MAX));
  auto* timeout =
      submit->add_option("--timeout", sa->timeout_ms, "Milliseconds to wait for the engines to stop; then they are reset")
          ->capture_default_str()
          ->transform(number_option(UINT32_MAX));
  submit->add_flag("--detach", sa->detach,
                   "Submit to cores another process holds and granted us (its `monitor --grant-submit`): the program "
                   "then belongs to that process, its records go to its queues, and submit exits once the engines "
                   "are started (docs/decisions/0024-submit-detach.md)")
      ->excludes(features)
      ->excludes(timeout);
  out.push_back({submit, [sa, g] {
                   sa->cores = g->core_list();
                   return cmd_submit(*sa);
                 }});

  auto ta = std::make_shared<RunArgs>();
  auto* trace = app.add_subcommand("trace", "Run a program and write a Perfetto/Chrome trace of its instructions");
  trace->add_option("FILE", ta->file, "Program file")->required();
  trace->add_option("--perfetto", ta->perfetto, "Output JSON trace file")->required();
  add_device_option(*trace, ta->device);
  trace->add_option("--timeout", ta->timeout_ms, "Milliseconds to wait for the engines")
      ->capture_default_str()
      ->transform(number_option(UINT32_MAX));
  trace->add_option("--features", ta->features, "NEURON_FEATURE_FLAGS for the program's cores")
      ->check(number_option(UINT32_MAX));
  out.push_back({trace, [ta, g] {
                   ta->cores = g->core_list();
                   return cmd_trace(*ta);
                 }});
}

}  // namespace neuron::cli
