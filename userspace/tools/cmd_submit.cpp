// SPDX-License-Identifier: MIT
//
// neuron-nq submit: start a program and wait for its engines to stop,
// reading no records (the cores stay ours meanwhile); or, with --detach,
// hand it to the cores' owner and exit (docs/decisions/0024-submit-detach.md).
// Registered by add_run_commands(), between run and trace.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>

#include "cli.hpp"
#include "output.hpp"
#include "program.hpp"

namespace neuron::cli {
namespace {

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

void add_submit_command(CLI::App& app, Commands& out, const Globals& g) {
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
}

}  // namespace neuron::cli
