// SPDX-License-Identifier: MIT
//
// What the neuron-nq command files share: the options structs of the
// commands, the options several commands take, and the functions that
// register each command family with the CLI11 app. main() calls the
// add_*_commands functions in help order, parses, and runs the Command whose
// subcommand was given.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libneuron/device.hpp"
#include "libneuron/tenancy.hpp"
#include "number.hpp"

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace neuron::cli {

/// A subcommand and what runs it once parsed.
struct Command {
  CLI::App* app = nullptr;   // the subcommand, owned by the parent CLI::App
  std::function<int()> run;  // returns the exit status (output.hpp: kExitOk, kExitUsage, ...)
};
using Commands = std::vector<Command>;

/// Options of neuron-nq itself, given before or after the subcommand.
struct GlobalArgs {
  std::optional<std::string> cores;  // --cores LIST: overrides NEURON_VISIBLE_CORES
  bool peak_rss = false;             // --peak-rss: print VmHWM on stderr at exit
  /// --cores as libneuron takes it (nullopt: NEURON_VISIBLE_CORES decides).
  [[nodiscard]] std::optional<CoreList> core_list() const {
    if (!cores) return std::nullopt;
    return CoreList{*cores, "--cores"};
  }
};
/// Shared by main() (which fills it while parsing) and the commands.
using Globals = std::shared_ptr<const GlobalArgs>;

/// A number in an option, a program file or a sysfs attribute: the
/// assembler's parser (src/number.hpp, docs/cli-json.md#numbers).
using neuron::detail::parse_number;

/// A CLI11 transform for an integer option: the value must satisfy
/// parse_number(v, max) and is rewritten in decimal before CLI11 converts it
/// (so "010" is ten and "-1", "1e3" or "0x" are refused: exit 1).
CLI::Validator number_option(std::uint64_t max);
/// A CLI11 check for an option in seconds: a finite decimal number (no nan,
/// inf or hex float) in [min, max], else exit 1 naming the range.
CLI::Validator seconds_option(double min, double max);

/// Add --cores to the app (main() sets app.fallthrough() first, so it may
/// also follow the subcommand).
void add_global_options(CLI::App& app, GlobalArgs& g);

/// Options of the commands that address one device: info, reset, features, stats.
struct DeviceArgs {
  std::string device = kDefaultDevicePath;
  unsigned core = 0;   // reset, features
  bool json = false;   // list, info, stats
  std::string engine;  // reset: pe, act, pool, dve or sp
  std::string set;     // features: the new value, "" = only show
};

/// Options of run, submit and trace (and monitor --run).
struct RunArgs {
  std::string file;
  std::string device = kDefaultDevicePath;
  unsigned timeout_ms = 5000;
  bool timeout_given = false;  // run, trace: --timeout given, so NEURON_RT_EXEC_TIMEOUT is not read
  bool json = false;
  bool no_trace = false;
  bool stop_on_fatal = false;
  std::string features;  // "" = the program's directive, if any
  std::string route;     // run --route WORD: the ROUTE word of the program's cores; "" = as they are
  bool throttle = false; // run --throttle: arm throttle notifications for the run (CAP_SYS_ADMIN)
  std::string dma_queues;              // run --dma-queues LIST: DMA queues armed on the program's cores
  bool axi_evt_sem = false;            // run --axi-evt-sem: host EVT_SEM writes make records
  std::vector<std::string> sem_sets;   // run --sem-set [CORE:]INDEX=VALUE: host writes after submit
  std::string perfetto;
  std::optional<CoreList> cores;  // the global --cores, set when the command runs
  // run and monitor in an error storm (tools/storm.hpp)
  bool verbose = false;        // --verbose: every record on its own line
  double interval = 1.0;       // --interval S: seconds between group lines (run: 5)
  unsigned group_lines = 5;    // --group-lines N: error groups shown per interval
  unsigned record_lines = 40;  // --record-lines N: other records shown per interval (run: 20 in all)
  unsigned repeat = 1;         // --repeat N: run the program N times
  bool detach = false;         // submit --detach: the program goes to the cores' owner, submit exits
};

/// Add --verbose, --interval, --group-lines, --record-lines and --repeat
/// (run, monitor) to a subcommand; `a` must outlive its parsing.
void add_storm_options(CLI::App& sub, RunArgs& a);

/// Options of monitor.
struct MonitorArgs {
  std::string device = kDefaultDevicePath;
  unsigned core = 0;
  std::vector<unsigned> queues;  // default 0..5
  bool json = false;
  std::uint64_t count = 0;       // 0: no limit
  double duration = 0;           // seconds, 0: no limit
  std::uint32_t size = 65536;
  bool lossy = false;
  bool no_events = false;
  bool all_edges = false;
  bool until_done = false;  // --until-done: stop when --run's last run has stopped
  /// --passive: observe --core without taking it: no queue, no ownership
  /// (cmd_observe.cpp; privileges in docs/cli-json.md#observe)
  bool passive = false;
  /// --grant-submit [UID]: grant the monitored core to this user (a number
  /// or a name; "" = our own effective uid) for detached submits
  std::optional<std::string> grant_submit;
  std::optional<std::uint32_t> grant_uid;  // grant_submit resolved before the device is opened
  RunArgs run;  // run.file: submit this after setting up
};

/// Add the --device,-d option (default shown) to a subcommand; `device`
/// must outlive `sub`'s parsing.
CLI::Option* add_device_option(CLI::App& sub, std::string& device);

/// Each adds its subcommands to `app` (in help order) and appends one
/// Command per subcommand to `out`; the options live as long as the Command.
/// info (cmd_info.cpp).
void add_info_commands(CLI::App& app, Commands& out);
/// list, metrics (cmd_metrics.cpp).
void add_metrics_commands(CLI::App& app, Commands& out);
/// asm, run, submit, trace (cmd_run.cpp; submit is cmd_submit.cpp).
void add_run_commands(CLI::App& app, Commands& out, const Globals& g);
/// reset, features (cmd_engine.cpp).
void add_engine_commands(CLI::App& app, Commands& out);
/// monitor, stats (cmd_monitor.cpp).
void add_monitor_commands(CLI::App& app, Commands& out, const Globals& g);
/// submit (cmd_submit.cpp), which add_run_commands() registers between run
/// and trace.
void add_submit_command(CLI::App& app, Commands& out, const Globals& g);
/// stats (cmd_stats.cpp), which add_monitor_commands() registers after monitor.
void add_stats_command(CLI::App& app, Commands& out);
/// monitor --passive (cmd_observe.cpp), run by monitor's option checks.
int cmd_observe(const MonitorArgs& a);
/// top (cmd_top.cpp).
void add_top_commands(CLI::App& app, Commands& out);
/// coredump (cmd_coredump.cpp).
void add_coredump_commands(CLI::App& app, Commands& out);
/// cdi generate (cmd_cdi.cpp).
void add_cdi_commands(CLI::App& app, Commands& out);

}  // namespace neuron::cli
