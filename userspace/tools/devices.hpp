// SPDX-License-Identifier: MIT
//
// What `neuron-nq list` and `neuron-nq metrics` know about each device: one
// DeviceSample per /sys/class/nnq/nnqN, taken from the driver's read-only
// sysfs attributes (kernel/neuron_sysfs.c), the PCI device's sysfs
// directory (numa_node, local_cpulist), /proc (the owner's user), and the
// device node's DEVICE_INFO and ENGINE_STATUS ioctls. Every source may fail
// on its own (a user outside the group `neuron` cannot open the node; a
// device being removed loses its files): its error is kept beside the rest
// and the other sources still count (docs/metrics.md#sources).
//
// The parsers are pure (text in, values out) and name the file and line of
// the first thing they do not understand.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libneuron/device.hpp"
#include "libneuron/result.hpp"
#include "libneuron/tenancy.hpp"

namespace neuron::cli {

/// Where the samples come from; tests point these at a fake tree.
struct Sources {
  std::string sysfs_class = "/sys/class/nnq";  ///< holds nnq0, nnq1, ...
  std::string dev_dir = "/dev";                ///< holds the nodes nnq0, ...
  std::string proc = "/proc";                  ///< /proc/PID/status gives an owner's uid
  bool engines = true;                         ///< ask ENGINE_STATUS of every engine (metrics)
};

/// One line of a "key n n ..." sysfs file: key is "core<c>" (core set) or a name.
struct CounterLine {
  std::optional<unsigned> core;  ///< "core<c>" lines
  std::string name;              ///< the other lines' first word
  std::vector<std::uint64_t> values;
};

/// Parse a counter file of kernel/neuron_sysfs.c: lines "core<c> v..." and
/// "name v...", values decimal or 0x-hex, each line with `min_values` or
/// more values. errc::bad_message names `file` and the line.
Result<std::vector<CounterLine>> parse_counter_lines(std::string_view text, const std::string& file,
                                                     unsigned min_values = 1);

/// An Error as list and metrics show a failed source: a parse error's own
/// words (file, line, what), else Error::message().
std::string source_error(const Error& e);

/// The real uid ("Uid:" line, first field) in a /proc/PID/status text.
std::optional<unsigned> parse_status_uid(std::string_view status);

/// One core of a device: its owner (core_owners; the uid from /proc when
/// the PID is visible) and the interrupt counters of its NOTIFIC block.
struct CoreSample {
  unsigned core = 0;
  std::optional<CoreOwner> owner;                                 ///< nullopt: core_owners failed
  std::optional<unsigned> uid;                                    ///< the owner's real uid, when known
  std::array<std::uint64_t, NEURON_NOTIFIC_INTR_BITS> intr{};     ///< intr_counts: edges per cause bit
  std::array<std::uint64_t, NEURON_NUM_SW_QUEUES> threshold{};    ///< threshold_counts: per queue
  std::uint64_t notific_edges = 0;                                ///< edge_counts
  std::uint64_t storms = 0;                                       ///< intr_storms: storms detected
  std::uint32_t storm_masked = 0;                                 ///< intr_storms: causes masked now
  std::uint64_t axi_dropped = 0;  ///< axi_dropped: AXI_EVT_SEM records lost since the function's reset
};

/// One engine's NEURON_IOC_ENGINE_STATUS.
struct EngineSample {
  unsigned core = 0, engine = 0;
  std::uint32_t state = 0;         ///< enum neuron_engine_state
  std::uint32_t pc = 0;            ///< program counter
  std::uint32_t runs = 0;          ///< soft_reset_counter: programs started
  std::uint32_t last_error = 0xff; ///< error_id of the last fatal error, 0xff none
  std::uint64_t retired = 0;       ///< exec_count: instructions retired since probe
};

/// Everything one device says, with each source's error ("" = it worked).
struct DeviceSample {
  unsigned index = 0;       ///< N of nnqN
  std::string name;         ///< "nnq0"
  std::string path;         ///< "/dev/nnq0"
  std::string pci_address;  ///< "0000:01:00.0" (the device link's name), "" unknown
  std::optional<int> numa_node;  ///< -1: no NUMA information (sysfs says so)
  std::string local_cpulist;     ///< "0-3", "" unknown
  std::optional<DeviceInfo> info;
  std::string info_error;
  std::vector<CoreSample> cores;  ///< one per core_owners line (or per counter line)
  std::string owners_error;
  // A counter whose file did not read or parse, or which its file does not
  // have, is nullopt (shown as null, "unknown", or no Prometheus sample),
  // never 0 (docs/metrics.md#sources).
  std::optional<std::uint64_t> throttle_edges, spurious;  ///< intr_counts
  std::optional<std::uint64_t> fault_edges;               ///< edge_counts
  std::optional<std::map<std::string, std::uint64_t>> faults;  ///< fault_counts: dma_error, intr_storm, unnamed
  std::optional<std::map<std::string, std::uint64_t>> resets;  ///< reset_counts: remove, flr, ...
  std::optional<std::uint64_t> records_lost;                   ///< reset_counts records_lost
  std::optional<std::uint64_t> fanout_edges, fanout_copies;    ///< event_fanout
  /// Whether each per-core counter file was read: the CoreSample fields it
  /// fills mean nothing otherwise.
  bool intr_known = false;       ///< intr_counts: CoreSample::intr
  bool threshold_known = false;  ///< threshold_counts: CoreSample::threshold
  bool edges_known = false;      ///< edge_counts: CoreSample::notific_edges
  bool storms_known = false;     ///< intr_storms: CoreSample::storms, storm_masked
  bool axi_known = false;        ///< axi_dropped: CoreSample::axi_dropped (docs/decisions/0025-axi-dropped.md)
  std::vector<std::string> counter_errors;      ///< one per counter file that failed
  std::vector<EngineSample> engines;
  std::string engines_error;
  /// Sources that failed (info, owners, each counter file, engines).
  [[nodiscard]] unsigned errors() const;
};

/// N of every nnqN directory in `sysfs_class`, sorted.
std::vector<unsigned> device_indices(const std::string& sysfs_class);

/// Sample device N from every source.
DeviceSample sample_device(unsigned index, const Sources& src);

/// Sample every device in src.sysfs_class, sorted by N.
std::vector<DeviceSample> sample_devices(const Sources& src);

/// "free", "uid 1000 PID 1234 (python3)", "PID not visible here (python3)".
std::string core_owner_text(const CoreSample& c);

}  // namespace neuron::cli
