// SPDX-License-Identifier: MIT
//
// Command-line options that several neuron-nq commands take (cli.hpp).
#include "cli.hpp"

#include <CLI/CLI.hpp>

namespace neuron::cli {

void add_global_options(CLI::App& app, GlobalArgs& g) {
  app.add_option_function<std::string>(
      "--cores", [&g](const std::string& v) { g.cores = v; },
      "Cores the program commands (run, submit, trace, monitor) may use, e.g. 0-1,3; overrides "
      "NEURON_VISIBLE_CORES")
      ->type_name("LIST");
  app.add_flag("--peak-rss", g.peak_rss, "Print the peak resident memory (VmHWM) on stderr at exit");
}

void add_storm_options(CLI::App& sub, RunArgs& a) {
  sub.add_flag("--verbose,-v", a.verbose, "Print every record on its own line (default: error groups per interval)");
  sub.add_option("--interval", a.interval, "Seconds between the lines of error groups")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  sub.add_option("--group-lines", a.group_lines, "Error groups (type, core, engine, pc) shown per interval")
      ->capture_default_str();
  sub.add_option("--record-lines", a.record_lines,
                 "Other records shown without --verbose: per interval (monitor), in all (run)")
      ->capture_default_str();
  sub.add_option("--repeat", a.repeat, "Run the program this many times, one after the other")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
}

CLI::Option* add_device_option(CLI::App& sub, std::string& device) {
  return sub.add_option("--device,-d", device, "Device node")->capture_default_str();
}

}  // namespace neuron::cli
