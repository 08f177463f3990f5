// SPDX-License-Identifier: MIT
//
// What the Kubernetes side (neuron-device-plugin, neuron-nq cdi) knows about
// the node's Neuron devices, read from sysfs and /dev under configurable
// roots so tests use a fake tree (docs/k8s.md#inventory):
//
//   <sys>/class/nnq/nnqN/                 a device; device/numa_node its NUMA node,
//                                         state (when present) "online" or not
//   <sys>/class/nnq/nnqN-coreC/core       a core node's core number C
//   <dev>/nnqN, <dev>/nnqN-coreC          the device nodes
//
// No gRPC here: the allocation policy and the ID checks are plain functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neuron::k8s {

/// Filesystem roots; every path the plugin and `neuron-nq cdi` read is under one.
struct Roots {
  std::string dev = "/dev";
  std::string sys = "/sys";
  std::string proc = "/proc";
};

/// One core node, /dev/nnqN-coreC.
struct Core {
  unsigned core = 0;  ///< C, from the node's sysfs `core` attribute
  std::string id;     ///< "nnqN-coreC": the device-plugin ID and CDI device name
  bool healthy = false;
  bool present = false;  ///< its node exists (a CDI spec names only present nodes)
};

/// One device, /dev/nnqN, with its core nodes in core order.
struct Device {
  unsigned index = 0;   ///< N
  std::string id;       ///< "nnqN"
  int numa_node = -1;   ///< -1: unknown (no topology is advertised)
  bool healthy = false;
  std::string why;      ///< why not healthy: "removed", "state offline", ...
  bool present = false; ///< its node and sysfs directory exist
  std::vector<Core> cores;
};

/// Read the devices and core nodes present now, ordered by N then C, with
/// their health: a device is healthy when its sysfs directory and node
/// exist and its `state` attribute (if the driver has one) reads "online";
/// a core when its device is healthy and its own node and sysfs directory
/// exist. Entries that are neither nnqN nor nnqN-coreC are skipped.
std::vector<Device> scan(const Roots& roots);

/// Merge a fresh scan into what was seen before: a device or core that has
/// gone stays listed, Unhealthy ("removed"), so the kubelet sees it fail
/// rather than vanish. Returns the merged list (sorted).
std::vector<Device> merge_seen(const std::vector<Device>& before, std::vector<Device> now);

/// The two resources: cores and whole devices.
enum class Kind { core, device };

/// How a device is offered (docs/k8s.md#partition): as its cores (resource
/// core) or whole (resource device), never both, so that no core can go
/// to two pods through the two resources.
enum class Partition { cores, whole };

/// The node's mode and per-device exceptions ("nnqN" -> mode).
struct PartitionPolicy {
  Partition node = Partition::cores;
  std::map<std::string, Partition> per_device;
  Partition of(const std::string& device_id) const;
};

/// "cores" or "whole"; nullopt for anything else.
std::optional<Partition> parse_partition(std::string_view s);

/// The devices offered as `kind` under `p`: for Kind::device those offered
/// whole, for Kind::core those offered as cores (each with its cores).
std::vector<Device> offered(const std::vector<Device>& devices, Kind kind, const PartitionPolicy& p);

/// One allocatable unit of a resource, for the allocation policy.
struct Unit {
  std::string id;
  unsigned device = 0;  ///< N of its device
  unsigned pos = 0;     ///< C for a core, N for a device (contiguity)
  int numa_node = -1;
};

/// Every unit of `kind` in `devices`, keyed by ID.
std::map<std::string, Unit> units(const std::vector<Device>& devices, Kind kind);

/// A request the plugin refuses (gRPC INVALID_ARGUMENT), with the reason.
struct Refusal {
  std::string message;
};

/// Check a list of IDs from the kubelet: each known, none twice, at most as
/// many as exist. `field` names the request field in the message.
std::optional<Refusal> check_ids(const std::map<std::string, Unit>& known,
                                 const std::vector<std::string>& ids, const std::string& field);

/// GetPreferredAllocation for one container (docs/k8s.md#preferred-allocation):
/// `size` units from `available`, always including `must_include`; units on
/// one device first (the device that already holds must_include, then the
/// one with the fewest available that fits, then the lowest N), else on one
/// NUMA node, else anywhere; within a device a contiguous run of positions
/// where one exists. Refuses unknown or repeated IDs, must_include not in
/// available, size < 1, size < |must_include| or size > |available|.
/// Returns the IDs, sorted by device then position, or the refusal.
struct Preferred {
  std::vector<std::string> ids;
  std::optional<Refusal> refused;
};
Preferred preferred_allocation(const std::map<std::string, Unit>& known,
                               const std::vector<std::string>& available,
                               const std::vector<std::string>& must_include, int size);

/// The CDI device name of a unit: "<prefix>/core=nnq0-core1", "<prefix>/device=nnq0".
std::string cdi_name(const std::string& prefix, Kind kind, const std::string& id);

/// The extended resource name: "<prefix>/core" or "<prefix>/device".
std::string resource_name(const std::string& prefix, Kind kind);

/// The cdiVersion of our specs: 0.5.0, the first with hostPath, the newest
/// Debian 12's podman 4.3 and its CDI library (0.5.2) read.
inline constexpr const char* kCdiVersion = "0.5.0";

/// The CDI spec (JSON text, cdiVersion kCdiVersion) of one kind: every
/// present device or core node in `devices` (a core only when its device is
/// present too) with its containerEdits.deviceNodes (path, type "c",
/// permissions "rw"). The number of CDI devices in it goes to `count` when
/// given. docs/k8s.md#cdi.
std::string cdi_spec(const std::string& prefix, Kind kind, const std::vector<Device>& devices,
                     const std::string& dev_root = "/dev", std::size_t* count = nullptr);

/// One CDI device: its name within the spec's kind and the device nodes
/// ("nnqN", "nnqN-coreC": under /dev in the container, under dev_root on
/// the host) its containerEdits give.
struct CdiEntry {
  std::string name;
  std::vector<std::string> nodes;
};

/// A CDI spec (JSON text, cdiVersion kCdiVersion) of `kind` ("vendor/class")
/// with one device per entry, each node path "c", permissions "rw".
/// cdi_spec and the DRA driver's per-claim specs are both written by it.
/// docs/k8s.md#cdi.
std::string cdi_spec_of(const std::string& kind, const std::vector<CdiEntry>& entries,
                        const std::string& dev_root = "/dev");

/// Write `text` to `dir`/`name` atomically: into a new temporary file in
/// `dir` (".<name>.XXXXXX": hidden, and no .json or .yaml suffix, so a
/// runtime scanning the directory for CDI specs never reads it), fsync,
/// mode 0644, rename over `dir`/`name`, fsync of `dir`. A reader sees the
/// old file or the new one, never a part. nullopt, or what failed.
std::optional<std::string> write_atomic(const std::string& dir, const std::string& name,
                                        const std::string& text);

}  // namespace neuron::k8s
