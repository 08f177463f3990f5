// SPDX-License-Identifier: MIT
//
// Command-line options that several neuron-nq commands take (cli.hpp).
#include "cli.hpp"

#include <CLI/CLI.hpp>

namespace neuron::cli {

CLI::Option* add_device_option(CLI::App& sub, std::string& device) {
  return sub.add_option("--device,-d", device, "Device node")->capture_default_str();
}

}  // namespace neuron::cli
