// SPDX-License-Identifier: MIT
//
// What list and metrics print from device samples (devices.hpp): pure
// functions, so the tests render hand-made samples against golden files.
// The JSON keys are docs/cli-json.md#list and #metrics; the Prometheus
// names, types and labels are docs/metrics.md.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "devices.hpp"
#include "podresources.hpp"
#include "libneuron/result.hpp"

namespace neuron::cli {

/// `list` as text: one line per device (node, PCI address, NUMA node,
/// local CPUs, generation, cores, engines, device memory), then one line
/// per core with its owner.
std::string list_text(const std::vector<DeviceSample>& devs);

/// `list --json` (docs/cli-json.md#list).
nlohmann::json list_json(const std::vector<DeviceSample>& devs);

/// One `metrics` report's header fields.
struct ReportHeader {
  std::uint64_t report = 0;   ///< 0, 1, ... within this run
  std::int64_t time_ns = 0;   ///< CLOCK_REALTIME of the sample, ns
  double interval_s = 0;      ///< --interval
};

/// The error summary of a device: edges of each error cause
/// (docs/metrics.md#error-summary), device faults, records lost to resets.
nlohmann::json error_summary(const DeviceSample& d);
/// The execution summary: engines by state, halted engines by error,
/// programs started, instructions retired (docs/metrics.md#execution-summary).
nlohmann::json execution_summary(const DeviceSample& d);

/// One `metrics --json` report (docs/cli-json.md#metrics), one line.
nlohmann::json metrics_json(const ReportHeader& h, const std::vector<DeviceSample>& devs);

/// One `metrics` report as text.
std::string metrics_text(const ReportHeader& h, const std::vector<DeviceSample>& devs);

/// The Prometheus text exposition (version 0.0.4) of one report, for
/// node_exporter's textfile collector (docs/metrics.md#names).
/// With `pods`, every per-core and per-engine series of a core some
/// container holds also has pod, namespace and container labels
/// (docs/k8s.md#pod-metrics).
std::string prometheus_text(const std::vector<DeviceSample>& devs, const PodLabels* pods = nullptr);

/// A Prometheus label value escaped (src/text_escape.hpp
/// prom_label_value()): backslash, double quote, newline as \\, \", \n;
/// bytes that are not UTF-8 as U+FFFD. Never fails.
std::string prom_label(std::string_view v);

/// Write `text` to PATH.tmp, fsync it, rename() it over PATH (readers see
/// the old file or the new one, never half of one). Errors name the file.
Status write_file_atomic(const std::string& path, const std::string& text);

}  // namespace neuron::cli
