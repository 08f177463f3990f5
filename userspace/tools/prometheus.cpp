// SPDX-License-Identifier: MIT
//
// metrics --prometheus: the text exposition of one report (families, HELP,
// TYPE, labels: docs/metrics.md#names) and the textfile written whole
// (report.hpp).
#include "report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <map>

#include "output.hpp"
#include "report_fields.hpp"
#include "text_escape.hpp"

namespace neuron::cli {

std::string prom_label(std::string_view v) { return detail::prom_label_value(v); }

std::string prometheus_text(const std::vector<DeviceSample>& devs, const PodLabels* pods) {
  // the pod, namespace and container labels of a core, or ""
  const auto pod = [pods](unsigned dev, unsigned core) -> std::string {
    if (!pods) return {};
    auto it = pods->find({dev, core});
    if (it == pods->end()) return {};
    return fmt::format(",pod=\"{}\",namespace=\"{}\",container=\"{}\"", prom_label(it->second.pod),
                       prom_label(it->second.ns), prom_label(it->second.container));
  };
  // Each family once, its HELP and TYPE first, then every sample of it.
  struct Family {
    const char* name;
    const char* type;
    const char* help;
    std::string samples;
  };
  std::vector<Family> fams;
  std::map<std::string, std::size_t> at;
  const auto fam = [&](const char* name, const char* type, const char* help) -> std::string& {
    auto it = at.find(name);
    if (it == at.end()) {
      it = at.emplace(name, fams.size()).first;
      fams.push_back({name, type, help, {}});
    }
    return fams[it->second].samples;
  };
  const auto line = [](std::string& out, const char* name, const std::string& labels, auto value) {
    out += fmt::format("{}{{{}}} {}\n", name, labels, value);
  };

  fam("neuron_devices", "gauge", "Neuron devices (/sys/class/nnq/nnqN) present.") +=
      fmt::format("neuron_devices {}\n", devs.size());
  for (const auto& d : devs) {
    const std::string dl = fmt::format("device=\"{}\"", d.index);
    line(fam("neuron_device_info", "gauge",
             "Always 1: the device's PCI address, NUMA node, local CPUs and generation as labels."),
         "neuron_device_info",
         fmt::format("{},pci_address=\"{}\",numa_node=\"{}\",local_cpulist=\"{}\",gen=\"{}\"", dl,
                     prom_label(d.pci_address), d.numa_node ? std::to_string(*d.numa_node) : "",
                     prom_label(d.local_cpulist), d.info ? gen_name(d.info->gen) : ""),
         1);
    line(fam("neuron_device_cores", "gauge", "Cores of the device."), "neuron_device_cores", dl, num_cores(d));
    line(fam("neuron_collect_errors", "gauge",
             "Sources of this device that could not be read in this report (node, core_owners, counter files, "
             "engine status)."),
         "neuron_collect_errors", dl, d.errors());
    // a counter that could not be read has no sample (absent, never 0);
    // neuron_collect_errors counts the files that failed
    if (d.throttle_edges)
      line(fam("neuron_throttle_edges_total", "counter", "Throttle interrupt edges handled since the driver probed."),
           "neuron_throttle_edges_total", dl, *d.throttle_edges);
    if (d.fault_edges)
      line(fam("neuron_fault_edges_total", "counter", "Device fault interrupt edges handled since probe."),
           "neuron_fault_edges_total", dl, *d.fault_edges);
    if (d.spurious)
      line(fam("neuron_spurious_interrupts_total", "counter", "Interrupts with no cause bit set, since probe."),
           "neuron_spurious_interrupts_total", dl, *d.spurious);
    if (d.faults)
      for (const auto& [k, v] : *d.faults)
        line(fam("neuron_faults_total", "counter", "Device faults by fault status bit, since probe."),
             "neuron_faults_total", fmt::format("{},fault=\"{}\"", dl, prom_label(k)), v);
    if (d.resets)
      for (const auto& [k, v] : *d.resets)
        line(fam("neuron_resets_total", "counter", "Times the driver tore every queue down, by cause, since probe."),
             "neuron_resets_total", fmt::format("{},cause=\"{}\"", dl, prom_label(k)), v);
    if (d.records_lost)
      line(fam("neuron_reset_records_lost_total", "counter",
               "Records consumers had not read when a reset took their rings, since probe."),
           "neuron_reset_records_lost_total", dl, *d.records_lost);
    if (d.fanout_edges)
      line(fam("neuron_event_fanout_edges_total", "counter", "Edges handed to open files' event queues."),
           "neuron_event_fanout_edges_total", dl, *d.fanout_edges);
    if (d.fanout_copies)
      line(fam("neuron_event_fanout_copies_total", "counter", "Events queued to open files (one per file per edge)."),
           "neuron_event_fanout_copies_total", dl, *d.fanout_copies);
    for (const auto& c : d.cores) {
      const std::string cl = fmt::format("{},core=\"{}\"{}", dl, c.core, pod(d.index, c.core));
      if (c.owner) {
        line(fam("neuron_core_owned", "gauge", "1 when an open file owns the core, 0 when it is free."),
             "neuron_core_owned", cl, c.owner->is_free() ? 0 : 1);
        if (!c.owner->is_free())
          line(fam("neuron_core_owner_info", "gauge", "Always 1: the owner's PID, uid and command as labels."),
               "neuron_core_owner_info",
               fmt::format("{},pid=\"{}\",uid=\"{}\",comm=\"{}\"", cl, *c.owner->pid,
                           c.uid ? std::to_string(*c.uid) : "", prom_label(c.owner->comm)),
               1);
      }
      if (d.edges_known)
        line(fam("neuron_notific_edges_total", "counter", "NOTIFIC interrupt edges of the core handled since probe."),
             "neuron_notific_edges_total", cl, c.notific_edges);
      if (d.intr_known)
        for (unsigned b = 0; b < c.intr.size(); ++b)
          line(fam("neuron_notific_cause_edges_total", "counter",
                   "NOTIFIC interrupt edges that carried each tpb_notific_intr cause, since probe."),
               "neuron_notific_cause_edges_total", fmt::format("{},cause=\"{}\"", cl, cause_name(b)), c.intr[b]);
      if (d.threshold_known)
        for (unsigned q = 0; q < c.threshold.size(); ++q)
          line(fam("neuron_threshold_interrupts_total", "counter",
                   "Threshold interrupts of each software queue of the core, since probe."),
               "neuron_threshold_interrupts_total", fmt::format("{},queue=\"{}\"", cl, q), c.threshold[q]);
      if (d.axi_known)
        line(fam("neuron_axi_evt_sem_dropped_total", "counter",
                 "AXI_EVT_SEM records the core lost (AXI_DROPPED) since the function's last reset."),
             "neuron_axi_evt_sem_dropped_total", cl, c.axi_dropped);
      if (d.storms_known) {
        line(fam("neuron_interrupt_storms_total", "counter", "Interrupt storms detected and rate limited on the core."),
             "neuron_interrupt_storms_total", cl, c.storms);
        line(fam("neuron_interrupt_storm_masked_causes", "gauge",
                 "Interrupt causes of the core masked by storm control right now."),
             "neuron_interrupt_storm_masked_causes", cl, __builtin_popcount(c.storm_masked));
      }
    }
    for (const auto& e : d.engines) {
      const std::string el =
          fmt::format("{},core=\"{}\"{},engine=\"{}\"", dl, e.core, pod(d.index, e.core), engine_name(e.engine));
      for (auto st : kStates)
        line(fam("neuron_engine_state", "gauge", "1 for the engine's current state, 0 for the others."),
             "neuron_engine_state", fmt::format("{},state=\"{}\"", el, engine_state_name(st)), e.state == st ? 1 : 0);
      line(fam("neuron_engine_programs_started_total", "counter", "Programs started on the engine."),
           "neuron_engine_programs_started_total", el, e.runs);
      line(fam("neuron_engine_instructions_retired_total", "counter", "Instructions the engine retired since probe."),
           "neuron_engine_instructions_retired_total", el, e.retired);
      line(fam("neuron_engine_next_instruction", "gauge", "Index of the engine's next instruction."),
           "neuron_engine_next_instruction", el, e.pc);
      if (e.state == NEURON_ENGINE_HALTED)
        line(fam("neuron_engine_halted_info", "gauge", "Always 1 for a halted engine: its last fatal error as a label."),
             "neuron_engine_halted_info", fmt::format("{},error=\"{}\"", el, last_error_name(e.last_error)), 1);
    }
  }
  std::string out;
  for (const auto& f : fams) out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", f.name, f.help, f.name, f.type, f.samples);
  return out;
}

Status write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return unexpected(Error::from_errno(errno, "open " + tmp));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::unlink(tmp.c_str());
      return unexpected(Error::from_errno(err, "write " + tmp));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return unexpected(Error::from_errno(err, "fsync " + tmp));
  }
  fd.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return unexpected(Error::from_errno(err, "rename " + tmp + " to " + path));
  }
  return {};
}

}  // namespace neuron::cli
