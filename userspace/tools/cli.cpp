// SPDX-License-Identifier: MIT
//
// Command-line options that several neuron-nq commands take (cli.hpp).
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace neuron::cli {

CLI::Validator number_option(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& v) -> std::string {
        const auto n = parse_number(v, max);
        if (!n) return fmt::format("'{}' is not a number from 0 to {} (decimal, 0x hex or 0b binary)", v, max);
        v = std::to_string(*n);
        return {};
      },
      "NUMBER");
}

CLI::Validator seconds_option(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& v) -> std::string {
        double d = 0;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d, std::chars_format::general);
        if (ec != std::errc() || p != v.data() + v.size() || !std::isfinite(d) || d < min || d > max)
          return fmt::format("'{}' is not a number of seconds from {} to {}", v, min, max);
        return {};
      },
      fmt::format("SECONDS in [{} - {}]", min, max));
}

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
      ->check(seconds_option(0.01, 3600.0));
  sub.add_option("--group-lines", a.group_lines, "Error groups (type, core, engine, pc) shown per interval")
      ->capture_default_str()
      ->transform(number_option(UINT32_MAX));
  sub.add_option("--record-lines", a.record_lines,
                 "Other records shown without --verbose: per interval (monitor), in all (run)")
      ->capture_default_str()
      ->transform(number_option(UINT32_MAX));
  sub.add_option("--repeat", a.repeat, "Run the program this many times, one after the other")
      ->capture_default_str()
      ->transform(number_option(UINT32_MAX))
      ->check(CLI::Range(1u, 1000000u));
}

CLI::Option* add_device_option(CLI::App& sub, std::string& device) {
  return sub.add_option("--device,-d", device, "Device node")->capture_default_str();
}

}  // namespace neuron::cli
