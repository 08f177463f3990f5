// SPDX-License-Identifier: MIT
//
// neuron-nq: look at Neuron devices and run programs on their engines.
// This file builds the CLI11 app from the command families (cli.hpp) and
// dispatches to the one given; the commands live in cmd_*.cpp.
//
//   neuron-nq list     [--json]
//   neuron-nq metrics  [--interval S] [--count N] [--json] [--prometheus FILE]
//   neuron-nq info     [--device /dev/nnq0] [--json]
//   neuron-nq asm      FILE                      assemble and print the listing
//   neuron-nq run      FILE [--device D] [--timeout MS] [--json] [--no-trace] [--features V] [--stop-on-fatal]
//                      [--verbose] [--interval S] [--group-lines N] [--record-lines N] [--repeat N]
//   neuron-nq submit   FILE [--device D] [--no-trace] [--features V] [--timeout MS]   no records
//   neuron-nq trace    FILE --perfetto OUT.json [--device D] [--timeout MS]
//   neuron-nq reset    --core C --engine E [--device D]
//   neuron-nq features [--core C] [--set V] [--device D]
//   neuron-nq monitor  [--core N] [--queue Q]... [--json] [--count N] [--duration S] [--run FILE] ...
//   neuron-nq stats    [--device D] [--json]
//   neuron-nq coredump [FILE] [--json]           decode a devcoredump of a hung/halted core
//   neuron-nq --cores LIST ...   the cores run, submit, trace and monitor may
//                                use (overrides NEURON_VISIBLE_CORES)
//   neuron-nq --version | --help | --peak-rss ...
//
// Exit status (output.hpp, docs/cli-json.md#exit-codes): 0 success, 1 usage
// or input error, 2 device or system error, 3 TIMEOUT, 4 COMPLETED_WITH_ERR,
// 5 SW_NQ_OVERFLOW, 6 another runtime status, 7 COMPLETED_THROTTLED. CLI11's
// own codes never leak.
#include <CLI/CLI.hpp>

#include <memory>

#include "cli.hpp"
#include "output.hpp"

int main(int argc, char** argv) {
  namespace nc = neuron::cli;
  CLI::App app{"neuron-nq: Neuron notification queues — list devices, run programs, show the records"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand too (set before adding them)
  auto globals = std::make_shared<nc::GlobalArgs>();
  nc::add_global_options(app, *globals);

  nc::Commands commands;
  nc::add_metrics_commands(app, commands);           // list, metrics
  nc::add_info_commands(app, commands);              // info
  nc::add_run_commands(app, commands, globals);      // asm, run, submit, trace
  nc::add_engine_commands(app, commands);            // reset, features
  nc::add_monitor_commands(app, commands, globals);  // monitor, stats
  nc::add_top_commands(app, commands);               // top
  nc::add_coredump_commands(app, commands);          // coredump
  nc::add_cdi_commands(app, commands);               // cdi generate

  app.set_version_flag("--version", std::string("neuron-nq ") + NEURON_VERSION + " (JSON schema " +
                                        std::to_string(nc::kJsonSchemaVersion) + ")");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    app.exit(e);
    return nc::kExitOk;
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the hint to --help
    return nc::kExitUsage;
  }

  int status = nc::kExitUsage;
  for (const auto& c : commands)
    if (*c.app) {
      status = c.run();
      break;
    }
  if (globals->peak_rss) fmt::print(stderr, "neuron-nq: peak resident memory {} kB (VmHWM)\n", nc::peak_rss_kb());
  return status;
}
