// SPDX-License-Identifier: MIT
//
// neuron-nq metrics: every --interval seconds, sample every device
// (devices.hpp) and print a report (text, or one JSON document per line
// with --json), and with --prometheus FILE write the Prometheus text file
// for node_exporter's textfile collector, atomically (docs/metrics.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <sys/stat.h>

#include "cli.hpp"
#include "devices.hpp"
#include "output.hpp"
#include "report.hpp"

namespace neuron::cli {
namespace {

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

struct MetricsArgs {
  double interval = 5.0;
  std::uint64_t count = 0;  // 0: until SIGINT/SIGTERM
  bool json = false;
  std::string prometheus;
  std::string root;  // hidden, for tests: sysfs, /dev and /proc under this directory
  // the kubelet's PodResources socket (docs/k8s.md#pod-metrics); "" = none
  std::string pod_resources = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string resource_prefix = "neuron.example";
  // the helper neuron-pod-resources (the neuron-device-plugin package) as
  // installed, so neuron-nq links no gRPC; hidden, for tests: the built one
  std::string helper = NEURON_POD_RESOURCES_HELPER;
};

unsigned cores_of(unsigned index, const void* ctx) {
  for (const auto& d : *static_cast<const std::vector<DeviceSample>*>(ctx))
    if (d.index == index) return static_cast<unsigned>(d.cores.size());
  return 0;
}

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Sleep `s` seconds unless a signal asks us to stop first.
void sleep_for(double s) {
  const std::int64_t end = monotonic_ns() + static_cast<std::int64_t>(s * 1e9);
  while (!g_stop) {
    const std::int64_t left = end - monotonic_ns();
    if (left <= 0) return;
    timespec ts{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
    nanosleep(&ts, nullptr);  // EINTR on a signal: the loop looks at g_stop
  }
}

Sources sources_under(const std::string& root) {
  Sources s;
  if (!root.empty()) {
    s.sysfs_class = root + "/sys/class/nnq";
    s.dev_dir = root + "/dev";
    s.proc = root + "/proc";
  }
  return s;
}

int cmd_metrics(const MetricsArgs& a) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: nanosleep returns
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const Sources src = sources_under(a.root);
  bool none = true;
  // --prometheus: a failed write is reported (once per run of failures, and
  // when it works again) and tried again at the next report: a full disk or
  // a directory that comes back later does not end the daemon. The exit
  // status says whether the last report's write failed (2).
  bool write_failed = false;
  std::uint64_t write_failures = 0;
  // pod labels: no socket is no kubelet (quiet); a failing List is said
  // once per run of failures, and the series go out unlabelled
  bool pods_failed = false;
  for (std::uint64_t n = 0; !g_stop && (a.count == 0 || n < a.count); ++n) {
    if (n) sleep_for(a.interval);
    if (g_stop) break;
    const ReportHeader h{n, realtime_ns(), a.interval};
    const auto devs = sample_devices(src);
    none = devs.empty();
    if (none) fmt::print(stderr, "neuron-nq: no {} devices (is nnq.ko loaded and the device present?)\n", src.sysfs_class);
    if (!a.prometheus.empty()) {
      std::optional<PodLabels> pods;
      struct stat sb {};
      if (!a.pod_resources.empty() && ::stat(a.pod_resources.c_str(), &sb) == 0) {
        std::string err;
        if (auto l = list_pod_resources(a.helper, a.pod_resources, err)) {
          pods = pod_labels(*l, a.resource_prefix, cores_of, &devs);
          if (pods_failed) fmt::print(stderr, "neuron-nq: metrics: pod labels again from {}\n", a.pod_resources);
          pods_failed = false;
        } else if (!pods_failed) {
          fmt::print(stderr, "neuron-nq: metrics: report {}: no pod labels: {}\n", n, err);
          pods_failed = true;
        }
      }
      auto st = write_file_atomic(a.prometheus, prometheus_text(devs, pods ? &*pods : nullptr));
      if (!st) {
        ++write_failures;
        if (!write_failed)
          fmt::print(stderr, "neuron-nq: metrics: report {}: {} (trying again at every report)\n", n, st.error().message());
        write_failed = true;
      } else if (write_failed) {
        fmt::print(stderr, "neuron-nq: metrics: report {}: wrote {} again after {} failed report(s)\n", n, a.prometheus,
                   write_failures);
        write_failed = false;
        write_failures = 0;
      }
    }
    if (a.json) fmt::print("{}\n", json_text(metrics_json(h, devs)));
    else if (a.prometheus.empty()) fmt::print("{}", metrics_text(h, devs));
    std::fflush(stdout);
  }
  return none || write_failed ? kExitDevice : kExitOk;
}

int cmd_list(const std::string& root, bool json) {
  const Sources src = [&] {
    Sources s = sources_under(root);
    s.engines = false;
    return s;
  }();
  const auto devs = sample_devices(src);
  if (devs.empty())
    fmt::print(stderr, "neuron-nq: no {} devices (is nnq.ko loaded and the device present?)\n", src.sysfs_class);
  if (json) fmt::print("{}\n", json_text(list_json(devs), 2));
  else fmt::print("{}", list_text(devs));
  return devs.empty() ? kExitDevice : kExitOk;
}

}  // namespace

void add_metrics_commands(CLI::App& app, Commands& out) {
  struct ListArgs {
    bool json = false;
    std::string root;
  };
  auto la = std::make_shared<ListArgs>();
  auto* list = app.add_subcommand(
      "list", "List the devices: PCI address, NUMA node, local CPUs, generation, cores and each core's owner");
  list->add_flag("--json", la->json, "JSON output (docs/cli-json.md#list)");
  list->add_option("--root", la->root, "Read sysfs, /dev and /proc under this directory (tests)")->group("");
  out.push_back({list, [la] { return cmd_list(la->root, la->json); }});

  auto a = std::make_shared<MetricsArgs>();
  auto* m = app.add_subcommand("metrics",
                               "Periodic reports of every device's counters, error and execution summaries "
                               "(docs/metrics.md); --prometheus FILE for node_exporter");
  m->add_option("--interval,-i", a->interval, "Seconds between reports")
      ->capture_default_str()
      ->check(seconds_option(0.01, 86400));
  m->add_option("--count,-n", a->count, "Stop after this many reports (0: until SIGINT or SIGTERM)")
      ->capture_default_str()
      ->transform(number_option(UINT64_MAX));
  m->add_flag("--json", a->json, "One JSON document per report, one per line (docs/cli-json.md#metrics)");
  m->add_option("--prometheus,-p", a->prometheus,
                "Write each report to FILE in the Prometheus text format (FILE.tmp, then rename)");
  m->add_option("--pod-resources", a->pod_resources,
                "The kubelet's PodResources socket: pod, namespace, container labels on per-core "
                "Prometheus series (\"\" or no socket: none)")
      ->capture_default_str();
  m->add_option("--resource-prefix", a->resource_prefix, "Vendor domain of the device plugin's resources")
      ->capture_default_str();
  m->add_option("--root", a->root, "Read sysfs, /dev and /proc under this directory (tests)")->group("");
  m->add_option("--pod-resources-helper", a->helper, "The neuron-pod-resources program (tests)")->group("");
  out.push_back({m, [a] { return cmd_metrics(*a); }});
}

}  // namespace neuron::cli
