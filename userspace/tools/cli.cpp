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
}

CLI::Option* add_device_option(CLI::App& sub, std::string& device) {
  return sub.add_option("--device,-d", device, "Device node")->capture_default_str();
}

}  // namespace neuron::cli
