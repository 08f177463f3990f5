// SPDX-License-Identifier: MIT
//
// neuron-nq: look at Neuron devices and run programs on their engines.
//
//   neuron-nq list
//   neuron-nq info     [--device /dev/neuron0] [--json]
//   neuron-nq asm      FILE                      assemble and print the listing
//   neuron-nq run      FILE [--device D] [--timeout MS] [--json] [--no-trace] [--features V] [--stop-on-fatal]
//   neuron-nq submit   FILE [--device D] [--no-trace] [--features V]   start it, do not wait
//   neuron-nq trace    FILE --perfetto OUT.json [--device D] [--timeout MS]
//   neuron-nq reset    --core C --engine E [--device D]
//   neuron-nq features [--core C] [--set V] [--device D]
//   neuron-nq monitor  [--core N] [--queue Q]... [--json] [--count N] [--duration S] [--run FILE] ...
//   neuron-nq stats    [--device D] [--json]
//
// Exit status: 0 success (run: status OK), 1 usage or device error,
// 3 run finished with a non-OK status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include "libneuron/neuron.hpp"

using namespace neuron;

namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitStatus = 3;

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

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// A one-line status on stderr, only when stderr is a terminal (quiet when
/// piped or redirected), at most 10 updates a second.
class Progress {
 public:
  explicit Progress(bool wanted) : on_(wanted && ::isatty(STDERR_FILENO)) {}
  ~Progress() { clear(); }
  template <class... Args>
  void update(fmt::format_string<Args...> f, Args&&... args) {
    if (!on_) return;
    const auto now = monotonic_ns();
    if (now - last_ < 100'000'000) return;
    last_ = now;
    fmt::print(stderr, "\r\033[K{}", fmt::format(f, std::forward<Args>(args)...));
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (on_ && shown_) fmt::print(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
  std::int64_t last_ = 0;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::optional<std::uint32_t> parse_u32(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(s.c_str(), &end, 0);
  if (*end != '\0' || errno || v > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

std::string features_text(std::uint32_t f) {
  std::string s = fmt::format("0x{:x}", f);
  std::string names;
  const auto add = [&names](const char* n) { names += (names.empty() ? "" : ", ") + std::string(n); };
  if (f & NEURON_FEATURE_DVE_PERF_MODE) add("DVE perf mode");
  if (f & NEURON_FEATURE_DGE_PACKET_NOTIF) add("DGE packet notification");
  if (f & NEURON_FEATURE_EVT_ACCEL_ADDR) add("EVT accel address");
  return names.empty() ? s : s + " (" + names + ")";
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

// ------------------------------------------------------------------ list / info
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
  j["features"] = nlohmann::json::array();
  if (!json) {
    fmt::print("{}\n  PCI {:04x}:{:04x}, ABI {}, gen {}\n  {} cores, {} engines/core, {} queues/core\n", path,
               info->vendor, info->device, info->abi_version, gen_name(info->gen), info->num_cores,
               info->engines_per_core, info->queues_per_core);
    fmt::print("  device memory {} MiB; queue sizes {}..{} bytes; {} instructions per submit; timestamp {} ps/tick\n",
               info->mem_size >> 20, info->nq_size_min, info->nq_size_max, info->max_program_insns,
               info->timestamp_inc_ps);
  }
  for (unsigned c = 0; c < info->num_cores; ++c) {
    auto f = dev->feature_flags(c);
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
                              {"pc", st->pc}, {"soft_reset_counter", st->soft_reset_counter},
                              {"last_error", last}, {"exec_count", st->exec_count}});
      if (!json)
        fmt::print("  core {} {:<4} {:<8} pc {:<5} runs {:<5} retired {:<10} last error {}\n", c, engine_name(e),
                   engine_state_name(st->state), st->pc, st->soft_reset_counter, st->exec_count, last);
    }
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

// ------------------------------------------------------------------ run / trace / submit
struct RunArgs {
  std::string file;
  std::string device = "/dev/neuron0";
  unsigned timeout_ms = 5000;
  bool json = false;
  bool no_trace = false;
  bool stop_on_fatal = false;
  std::string features;  // "" = the program's directive, if any
  std::string perfetto;
};

int print_parse_or_device_error(const Error& e) {
  if (e.code == make_error_code(errc::parse_error)) {
    fmt::print(stderr, "{}\n", e.what);
    return kExitError;
  }
  return fail(e);
}

/// The program, with --features applied over its directive.
Result<Program> load_program(const RunArgs& a) {
  auto prog = assemble_file(a.file);
  if (!prog) return prog;
  if (!a.features.empty()) {
    const auto f = parse_u32(a.features);
    if (!f) return unexpected(errc::invalid_argument, fmt::format("--features '{}' is not a number", a.features));
    prog->features = *f;
  }
  return prog;
}

struct Ran {
  Program program;
  ExecResult result;
};

Result<Ran> run_program(const RunArgs& a, bool trace) {
  auto prog = load_program(a);
  if (!prog) return unexpected(std::move(prog).error());
  auto dev = Device::open(a.device);
  if (!dev) return unexpected(std::move(dev).error());
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(a.timeout_ms);
  o.trace = trace;
  o.queue_size = 4096;
  o.queues = 6;
  o.halt_ends_wait = a.stop_on_fatal;
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

int cmd_run(const RunArgs& a) {
  auto res = run_program(a, !a.no_trace);
  if (!res) return print_parse_or_device_error(res.error());
  const Program& prog = res->program;
  ExecResult& r = res->result;
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
                    {"per_type", per_type},
                    {"errors", errors},
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
  } else {
    if (r.features) fmt::print("feature flags set on the program's cores: {}\n", features_text(*r.features));
    fmt::print("{:>14}  {:<4} {:<3} {:<16} {}\n", "time(s)", "core", "q", "type", "record");
    for (const auto& c : r.records)
      fmt::print("{:>14}  {:<4} {:<3} {:<16} {}\n", format_time(meta_of(c.decoded).timestamp), c.core, c.queue,
                 notific_type_name(c.raw.notific_type()), record_text(c, prog));
    fmt::print("\nsummary: {} records", r.records.size());
    for (const auto& [type, n] : per_type) fmt::print(", {} {}", n, type);
    fmt::print("\n");
    if (r.first_error) {
      const auto* e = std::get_if<TpbError>(&r.first_error->decoded);
      fmt::print("errors: {} — first: {}\n", errors,
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

/// Set the program's feature flags (if any) and start every engine.
Status start_program(const Device& dev, const Program& prog, bool trace) {
  if (prog.features)
    for (unsigned core : prog.cores())
      if (auto s = dev.set_feature_flags(core, *prog.features); !s) return s;
  for (const auto& e : prog.engines)
    if (auto s = dev.submit(e.core, e.engine, e.insns, trace ? NEURON_SUBMIT_F_TRACE : 0u); !s) return s;
  return {};
}

int cmd_submit(const RunArgs& a) {
  auto prog = load_program(a);
  if (!prog) return print_parse_or_device_error(prog.error());
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  if (auto s = start_program(*dev, *prog, !a.no_trace); !s) return fail(s.error());
  fmt::print("{}: started {} engine(s){}; the records go to whoever holds the queues (e.g. neuron-nq monitor)\n",
             a.file, prog->engines.size(), prog->features ? ", feature flags " + features_text(*prog->features) : "");
  return kExitOk;
}

int cmd_reset(const std::string& device, unsigned core, std::string engine) {
  std::transform(engine.begin(), engine.end(), engine.begin(), [](unsigned char c) { return std::tolower(c); });
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

int cmd_features(const std::string& device, unsigned core, const std::string& set) {
  auto dev = Device::open(device);
  if (!dev) return fail(dev.error());
  if (!set.empty()) {
    const auto v = parse_u32(set);
    if (!v) {
      fmt::print(stderr, "neuron-nq: --set '{}' is not a number\n", set);
      return kExitError;
    }
    if (auto s = dev->set_feature_flags(core, *v); !s) return fail(s.error());
  }
  auto f = dev->feature_flags(core);
  if (!f) return fail(f.error());
  fmt::print("core {} feature flags: {}\n", core, features_text(*f));
  return kExitOk;
}

// ------------------------------------------------------------------ monitor
struct MonitorArgs {
  std::string device = "/dev/neuron0";
  unsigned core = 0;
  std::vector<unsigned> queues;  // default 0..5
  bool json = false;
  std::uint64_t count = 0;       // 0: no limit
  double duration = 0;           // seconds, 0: no limit
  std::uint32_t size = 65536;
  bool lossy = false;
  bool no_events = false;
  bool all_edges = false;
  RunArgs run;  // run.file: submit this after setting up
};

/// One line of the merged stream, on the CLOCK_MONOTONIC axis.
struct Item {
  std::int64_t t_ns = 0;       // CLOCK_MONOTONIC (records: mapped from device time)
  std::uint64_t seq = 0;       // arrival order, the tie-break
  bool is_record = false;
  unsigned core = 0, queue = 0;
  Record rec;
  NetlinkEvent ev;
};

/*
 * Putting two clocks on one axis. Records carry device time: picoseconds of
 * the emulated device's clock (QEMU_CLOCK_VIRTUAL, docs/hardware.md#timestamp:
 * 1 ps units). Edge events carry the guest kernel's CLOCK_MONOTONIC in ns,
 * taken when the interrupt handler ran. There is no register that samples both
 * at once, so the monitor estimates the offset from the records themselves:
 * when the reaper drains a record it reads CLOCK_MONOTONIC; that arrival time
 * is never earlier than the record's true time, so
 *     offset = min over records (arrival_ns - device_ps / 1000)
 * is an upper bound on the true offset that tightens to within one
 * wake-up latency (the fastest record's interrupt + reaper wake-up) as
 * records arrive. Record times are mapped as device_ns + offset. The error
 * is therefore one-sided: a record can appear up to that latency LATE
 * relative to the edges around it, never early; and if the two clocks drift
 * (TCG), the estimate follows the fastest recent record only as far as the
 * min allows. To keep the output in order while the offset settles, lines
 * are held for a short window (150 ms) and sorted before printing. Each
 * line also shows the raw device time, and the JSON carries both clocks and
 * the offset used.
 */
class Merger {
 public:
  static constexpr std::int64_t kWindowNs = 150'000'000;

  void add_records(std::int64_t arrival_ns, unsigned core, unsigned queue, std::span<const Record> recs) {
    for (const auto& r : recs) {
      const std::int64_t dev_ns = static_cast<std::int64_t>(r.timestamp_ps() / 1000);
      const std::int64_t off = arrival_ns - dev_ns;
      if (!offset_ || off < *offset_) offset_ = off;
      Item it;
      it.is_record = true;
      it.core = core;
      it.queue = queue;
      it.rec = r;
      it.seq = seq_++;
      pending_.push_back(it);
    }
  }
  void add_event(const NetlinkEvent& e) {
    Item it;
    it.ev = e;
    it.t_ns = static_cast<std::int64_t>(e.timestamp_ns);
    it.seq = seq_++;
    pending_.push_back(it);
  }
  /// Items older than the window (all with `all`), in time order.
  std::vector<Item> take(std::int64_t now_ns, bool all) {
    for (auto& it : pending_)
      if (it.is_record) it.t_ns = static_cast<std::int64_t>(it.rec.timestamp_ps() / 1000) + offset_.value_or(0);
    std::stable_sort(pending_.begin(), pending_.end(), [](const Item& a, const Item& b) {
      return a.t_ns != b.t_ns ? a.t_ns < b.t_ns : a.seq < b.seq;
    });
    std::vector<Item> out;
    std::size_t n = 0;
    while (n < pending_.size() && (all || pending_[n].t_ns < now_ns - kWindowNs)) ++n;
    out.assign(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
    return out;
  }
  [[nodiscard]] std::optional<std::int64_t> offset() const { return offset_; }

 private:
  std::vector<Item> pending_;
  std::optional<std::int64_t> offset_;
  std::uint64_t seq_ = 0;
};

std::string ns_text(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:09}", neg ? "-" : "", a / 1'000'000'000ull, a % 1'000'000'000ull);
}

int cmd_monitor(const MonitorArgs& a) {
  if (a.queues.empty()) return kExitError;
  auto dev = Device::open(a.device);
  if (!dev) return fail(dev.error());
  const auto dev_index = dev->index();

  std::optional<EventMonitor> mon;
  if (!a.no_events) {
    auto m = EventMonitor::open(true);
    if (!m) return fail(m.error());
    mon = std::move(m).value();
  }

  // Ctrl-C / SIGTERM through a signalfd; blocked before the reaper thread
  // starts so it inherits the mask and the signal comes here.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  if (::pthread_sigmask(SIG_BLOCK, &sigs, nullptr) != 0) return fail(Error::from_errno(errno, "sigprocmask"));
  UniqueFd sigfd(::signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK));
  UniqueFd notify(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!sigfd || !notify) return fail(Error::from_errno(errno, "signalfd/eventfd"));

  std::vector<std::unique_ptr<ReapQueue>> queues;
  std::uint32_t our_queues = 0;
  for (unsigned q : a.queues) {
    NotificationQueue::Options o;
    o.size = a.size;
    o.flags = a.lossy ? NEURON_NQ_F_IGNORE_FULL : 0u;
    o.threshold = 1;
    o.eventfd = true;
    auto nq = NotificationQueue::create(*dev, a.core, q, o);
    if (!nq) return fail(nq.error());
    queues.push_back(make_reap_queue(std::move(nq).value()));
    our_queues |= 1u << q;
  }

  struct Batch {
    std::int64_t arrival_ns;
    unsigned core, queue;
    std::vector<Record> recs;
  };
  // The reaper hands batches over; when the printer falls behind by
  // kMaxInbox records the reaper waits, the rings fill and (backpressure)
  // the engines stall: nothing is lost and memory stays bounded.
  constexpr std::size_t kMaxInbox = 1 << 16;
  std::mutex mu;
  std::condition_variable room;
  std::deque<Batch> inbox;
  std::size_t inbox_records = 0;
  bool closing = false;
  Reaper::Options ro;
  ro.on_records = [&](unsigned core, unsigned queue, std::span<const Record> recs) {
    Batch b{monotonic_ns(), core, queue, {recs.begin(), recs.end()}};
    {
      std::unique_lock lk(mu);
      room.wait(lk, [&] { return closing || inbox_records < kMaxInbox; });
      inbox_records += b.recs.size();
      inbox.push_back(std::move(b));
    }
    const std::uint64_t one = 1;
    (void)!::write(notify.get(), &one, sizeof one);
  };
  auto reaper = Reaper::start(std::move(queues), nullptr, std::move(ro));
  if (!reaper) return fail(reaper.error());

  Program prog;
  if (!a.run.file.empty()) {
    auto p = load_program(a.run);
    if (!p) return print_parse_or_device_error(p.error());
    prog = std::move(p).value();
    if (auto s = start_program(*dev, prog, !a.run.no_trace); !s) return fail(s.error());
  }

  Merger merger;
  std::uint64_t shown = 0, n_records = 0, n_edges = 0, hidden_edges = 0;
  const bool to_tty = ::isatty(STDOUT_FILENO);
  Progress progress(!to_tty);
  const auto queue_list = [&] {
    std::string s;
    for (unsigned q : a.queues) s += (s.empty() ? "" : ",") + std::to_string(q);
    return s;
  }();
  if (!a.json && to_tty)
    fmt::print(stderr, "monitor: core {} queues {} of {}{}; Ctrl-C to stop\n", a.core, queue_list, a.device,
               mon ? ", edges from netlink family \"neuron\"" : "");

  const auto emit = [&](const std::vector<Item>& items) {
    for (const auto& it : items) {
      if (a.count && shown >= a.count) return;
      ++shown;
      if (it.is_record) {
        const Decoded d = decode(it.rec, queue_class(it.queue));
        std::string text;
        if (const auto* e = std::get_if<TpbError>(&d); e && !prog.engines.empty()) text = "TPB_ERROR " + explain(*e, prog, it.core);
        else text = to_text(d);
        if (a.json) {
          auto j = to_json(d);
          nlohmann::json line = {{"source", "record"},     {"time_ns", it.t_ns},
                                 {"clock", "monotonic"},  {"device_ps", it.rec.timestamp_ps()},
                                 {"offset_ns", merger.offset().value_or(0)}, {"core", it.core},
                                 {"queue", it.queue},     {"record", j},
                                 {"text", text}};
          fmt::print("{}\n", line.dump());
        } else {
          fmt::print("{:>18}  rec   c{} q{}  {:<16} {}   [device {}]\n", ns_text(it.t_ns), it.core, it.queue,
                     notific_type_name(it.rec.notific_type()), text, format_time(Timestamp{it.rec.timestamp_ps()}));
        }
      } else {
        const auto& e = it.ev;
        const std::string causes = e.edge == NEURON_EDGE_NOTIFIC ? notific_cause_names(e.cause) : "";
        if (a.json) {
          nlohmann::json line = {{"source", "edge"}, {"time_ns", it.t_ns},  {"clock", "monotonic"},
                                 {"device", e.device}, {"core", e.core},  {"edge", edge_name(e.edge)},
                                 {"cause", e.cause},  {"causes", causes}, {"queues", e.queues},
                                 {"count", e.count}};
          fmt::print("{}\n", line.dump());
        } else {
          std::string what = edge_name(e.edge);
          if (e.edge == NEURON_EDGE_NOTIFIC) what += " " + causes;
          else what += fmt::format(" cause 0x{:x}", e.cause);
          if (e.queues) what += fmt::format(" queues 0x{:x}", e.queues);
          fmt::print("{:>18}  edge  c{}     {} (edge #{} of this core and vector)\n", ns_text(it.t_ns), e.core, what,
                     e.count);
        }
      }
    }
    std::fflush(stdout);
  };

  const std::int64_t start = monotonic_ns();
  const std::int64_t end = a.duration > 0 ? start + static_cast<std::int64_t>(a.duration * 1e9) : INT64_MAX;
  std::vector<NetlinkEvent> evs;
  bool stop = false;
  while (!stop) {
    const std::int64_t now = monotonic_ns();
    if (now >= end) break;
    pollfd p[3] = {{sigfd.get(), POLLIN, 0}, {notify.get(), POLLIN, 0}, {mon ? mon->fd() : -1, POLLIN, 0}};
    const int ms = static_cast<int>(std::min<std::int64_t>(50, (end - now) / 1'000'000 + 1));
    if (::poll(p, 3, ms) < 0 && errno != EINTR) return fail(Error::from_errno(errno, "poll (monitor)"));
    if (p[0].revents & POLLIN) stop = true;
    if (p[1].revents & POLLIN) {
      std::uint64_t v;
      (void)!::read(notify.get(), &v, sizeof v);
    }
    {
      std::deque<Batch> got;
      {
        std::lock_guard lk(mu);
        got.swap(inbox);
        inbox_records = 0;
      }
      room.notify_all();
      for (auto& b : got) {
        n_records += b.recs.size();
        merger.add_records(b.arrival_ns, b.core, b.queue, b.recs);
      }
    }
    if (mon) {
      evs.clear();
      auto n = mon->receive(evs, std::chrono::milliseconds(0));
      if (!n) return fail(n.error());
      for (const auto& e : evs) {
        if (dev_index && e.device != *dev_index) continue;
        if (e.edge == NEURON_EDGE_NOTIFIC && e.core != a.core) continue;
        // our own threshold edges (the reaper's wake-ups) are hidden unless asked for
        if (!a.all_edges && e.edge == NEURON_EDGE_NOTIFIC && e.cause == (1u << NEURON_NOTIFIC_INTR_THRESHOLD) &&
            (e.queues & ~our_queues) == 0) {
          ++hidden_edges;
          continue;
        }
        ++n_edges;
        merger.add_event(e);
      }
    }
    emit(merger.take(monotonic_ns(), false));
    if (a.count && shown >= a.count) break;
    progress.update("monitor: {} records, {} edges, {:.1f} s", n_records, n_edges, static_cast<double>(monotonic_ns() - start) / 1e9);
  }
  {
    std::lock_guard lk(mu);
    closing = true;  // a reaper waiting for room must not block its own stop
  }
  room.notify_all();
  (*reaper)->stop();
  {
    std::lock_guard lk(mu);
    for (auto& b : inbox) {
      n_records += b.recs.size();
      merger.add_records(b.arrival_ns, b.core, b.queue, b.recs);
    }
  }
  emit(merger.take(monotonic_ns(), true));
  progress.clear();
  const auto st = (*reaper)->stats();
  if (!a.json || !to_tty)
    fmt::print(stderr,
               "monitor: {} records, {} edges shown ({} own threshold edges hidden), {} lines printed; "
               "device->monotonic offset {} s (min over records of arrival - device time); reaper woke {} times{}{}\n",
               n_records, n_edges, hidden_edges, shown, merger.offset() ? ns_text(*merger.offset()) : "unknown",
               st.wakes, st.lost ? fmt::format(", {} records lost to overwrite", st.lost) : "",
               mon && mon->overruns() ? fmt::format(", netlink socket overran {} times (edges lost)", mon->overruns())
                                      : "");
  return kExitOk;
}

// ------------------------------------------------------------------ stats
int cmd_stats(const std::string& device, bool json) {
  auto dev = Device::open(device);
  std::optional<std::uint32_t> idx;
  if (dev) idx = dev->index();
  auto mon = EventMonitor::open(false);
  if (!mon) return fail(mon.error());
  auto devs = mon->get_device(idx);
  if (!devs) return fail(devs.error());
  auto nqs = mon->get_nq(idx);
  if (!nqs) return fail(nqs.error());
  if (json) {
    nlohmann::json j;
    j["devices"] = nlohmann::json::array();
    for (const auto& d : *devs) {
      nlohmann::json cores = nlohmann::json::array();
      for (const auto& c : d.cores) {
        nlohmann::json per;
        for (unsigned i = 0; i < c.counts.size(); ++i) per[notific_cause_names(1u << i)] = c.counts[i];
        cores.push_back({{"core", c.core}, {"edges", per}});
      }
      j["devices"].push_back({{"device", d.device}, {"num_cores", d.num_cores}, {"gen", gen_name(d.gen)},
                              {"mem_size", d.mem_size}, {"cores", cores}, {"throttle_edges", d.throttle_count},
                              {"fault_edges", d.fault_count}});
    }
    j["queues"] = nlohmann::json::array();
    for (const auto& q : *nqs)
      j["queues"].push_back({{"device", q.device}, {"core", q.core}, {"queue", q.queue}, {"head", q.head},
                             {"tail", q.tail}, {"unread", q.tail - q.head}, {"phase", q.phase}, {"size", q.size},
                             {"flags", q.flags}, {"records", q.tail}, {"overflows", q.overflow_count},
                             {"drops", q.drop_count}, {"edges", q.threshold_count}});
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  for (const auto& d : *devs) {
    fmt::print("neuron{}: {} cores, gen {}, {} MiB; throttle edges {}, fault edges {}\n", d.device, d.num_cores,
               gen_name(d.gen), d.mem_size >> 20, d.throttle_count, d.fault_count);
    for (const auto& c : d.cores) {
      std::string s;
      std::uint64_t total = 0;
      for (unsigned i = 0; i < c.counts.size(); ++i) {
        total += c.counts[i];
        if (c.counts[i]) s += fmt::format(" {} {}", notific_cause_names(1u << i), c.counts[i]);
      }
      fmt::print("  core {} NOTIFIC edges by cause: {}\n", c.core, total ? s.substr(1) : "none");
    }
  }
  if (nqs->empty()) {
    fmt::print("no live queues (a queue lives while the file that made it, e.g. `neuron-nq run` or `monitor`, "
               "holds it)\n");
    return kExitOk;
  }
  fmt::print("{:<6} {:<4} {:<5} {:>8} {:<11} {:>10} {:>10} {:>6} {:>5} {:>10} {:>9} {:>6} {:>7}\n", "device", "core",
             "queue", "size", "policy", "head", "tail", "unread", "phase", "records", "overflows", "drops", "edges");
  for (const auto& q : *nqs)
    fmt::print("{:<6} {:<4} {:<5} {:>8} {:<11} {:>10} {:>10} {:>6} {:>5} {:>10} {:>9} {:>6} {:>7}\n", q.device, q.core,
               q.queue, q.size, (q.flags & NEURON_NQ_F_IGNORE_FULL) ? "ignore-full" : "backpress.", q.head, q.tail,
               q.tail - q.head, q.phase, q.tail, q.overflow_count, q.drop_count, q.threshold_count);
  fmt::print("(records = TAIL: written since the queue was made; overflows, drops: since it was made; edges = "
             "threshold interrupts of this core/queue slot since the driver was loaded)\n");
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"neuron-nq: Neuron notification queues — list devices, run programs, show the records"};
  app.require_subcommand(1);

  auto* list = app.add_subcommand("list", "List /dev/neuron* devices");

  std::string device = "/dev/neuron0";
  bool json = false;
  auto* info = app.add_subcommand("info", "Show a device, its feature flags and the state of its engines");
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
  run->add_option("--features", ra.features,
                  "NEURON_FEATURE_FLAGS for the program's cores, e.g. 0x2 (DGE packet notification); "
                  "overrides the program's `features` directive");
  run->add_flag("--stop-on-fatal", ra.stop_on_fatal,
                "Stop waiting when an engine reports a fatal error (status COMPLETED_WITH_ERR instead of TIMEOUT)");

  RunArgs sa;
  auto* submit = app.add_subcommand("submit", "Start a program and return (records go to the queues' owner)");
  submit->add_option("FILE", sa.file, "Program file")->required();
  submit->add_option("--device,-d", sa.device, "Device node")->capture_default_str();
  submit->add_flag("--no-trace", sa.no_trace, "Submit without tracing");
  submit->add_option("--features", sa.features, "NEURON_FEATURE_FLAGS to set first, e.g. 0x2");

  RunArgs ta;
  auto* trace = app.add_subcommand("trace", "Run a program and write a Perfetto/Chrome trace of its instructions");
  trace->add_option("FILE", ta.file, "Program file")->required();
  trace->add_option("--perfetto", ta.perfetto, "Output JSON trace file")->required();
  trace->add_option("--device,-d", ta.device, "Device node")->capture_default_str();
  trace->add_option("--timeout", ta.timeout_ms, "Milliseconds to wait for the engines")->capture_default_str();
  trace->add_option("--features", ta.features, "NEURON_FEATURE_FLAGS for the program's cores");

  unsigned core = 0;
  std::string engine;
  auto* reset = app.add_subcommand("reset", "Reset an engine (clears a fatal halt)");
  reset->add_option("--device,-d", device, "Device node")->capture_default_str();
  reset->add_option("--core", core, "Core index")->capture_default_str();
  reset->add_option("--engine", engine, "pe, act, pool, dve or sp")->required();

  std::string set;
  auto* features = app.add_subcommand("features", "Show or set a core's NEURON_FEATURE_FLAGS (local register 38)");
  features->add_option("--device,-d", device, "Device node")->capture_default_str();
  features->add_option("--core", core, "Core index")->capture_default_str();
  features->add_option("--set", set, "New value, e.g. 0x2 (bit 1: DGE packet notification)");

  MonitorArgs ma;
  auto* monitor = app.add_subcommand(
      "monitor", "Live stream of ring records (drains the queues it makes) and interrupt edges (netlink), in time order");
  monitor->add_option("--device,-d", ma.device, "Device node")->capture_default_str();
  monitor->add_option("--core", ma.core, "Core whose queues to drain")->capture_default_str();
  monitor->add_option("--queue,-q", ma.queues, "Queue to make and drain (repeatable; default 0..5)");
  monitor->add_flag("--json", ma.json, "One JSON object per line");
  monitor->add_option("--count", ma.count, "Stop after this many lines (records + edges)");
  monitor->add_option("--duration", ma.duration, "Stop after this many seconds");
  monitor->add_option("--size", ma.size, "Ring bytes per queue")->capture_default_str();
  monitor->add_flag("--lossy", ma.lossy, "Ignore-full queues (overwrite when full) instead of backpressure");
  monitor->add_flag("--no-events", ma.no_events, "Records only, no netlink edges");
  monitor->add_flag("--all-edges", ma.all_edges, "Also show the threshold edges of the monitor's own queues");
  monitor->add_option("--run", ma.run.file, "Start this program once the queues are ready");
  monitor->add_option("--features", ma.run.features, "NEURON_FEATURE_FLAGS for --run");
  monitor->add_flag("--no-trace", ma.run.no_trace, "Start --run without tracing");

  auto* stats = app.add_subcommand("stats", "Per queue: records, overflows, drops, edges; per core: edges by cause");
  stats->add_option("--device,-d", device, "Device node")->capture_default_str();
  stats->add_flag("--json", json, "JSON output");

  CLI11_PARSE(app, argc, argv);

  if (*list) return cmd_list();
  if (*info) return cmd_info(device, json);
  if (*asmc) return cmd_asm(asm_file);
  if (*run) return cmd_run(ra);
  if (*submit) return cmd_submit(sa);
  if (*trace) return cmd_trace(ta);
  if (*reset) return cmd_reset(device, core, engine);
  if (*features) return cmd_features(device, core, set);
  if (*monitor) {
    if (ma.queues.empty()) ma.queues = {0, 1, 2, 3, 4, 5};
    for (unsigned q : ma.queues)
      if (q >= NEURON_NUM_SW_QUEUES) {
        fmt::print(stderr, "neuron-nq: queue {} out of range 0..{}\n", q, NEURON_NUM_SW_QUEUES - 1);
        return kExitError;
      }
    ma.run.device = ma.device;
    return cmd_monitor(ma);
  }
  if (*stats) return cmd_stats(device, json);
  return kExitError;
}
