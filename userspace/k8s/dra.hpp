// SPDX-License-Identifier: MIT
//
// What neuron-dra-plugin decides, without gRPC or HTTP (docs/k8s.md#dra):
// the ResourceSlices (resource.k8s.io/v1) of a node's devices, the check of
// a ResourceClaim's allocation before it is prepared, the per-claim CDI
// spec, and the checkpoint of prepared claims. The inventory and its health
// are inventory.hpp's, shared with neuron-device-plugin.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inventory.hpp"

namespace neuron::k8s::dra {

/// The published per-slice limits of resource.k8s.io/v1 ResourceSliceSpec
/// (docs/decisions/0043-dra-driver.md#slices): at most 128 devices, 64
/// when any device consumes counters (all of ours do); at most 8 counter
/// sets in sharedCounters.
inline constexpr std::size_t kMaxDevicesWithCounters = 64;
inline constexpr std::size_t kMaxCounterSets = 8;

/// Who publishes: the driver name (a DNS subdomain, the resource prefix)
/// and the node, whose name is also the pool's.
struct Publisher {
  std::string driver;
  std::string node;
};

/// The ResourceSlice objects (apiVersion resource.k8s.io/v1) of `devices`
/// for pool generation `generation`: per healthy device a counter set
/// "nnqN-cores" with a counter "coreC" of value 1 per healthy core, a
/// device entry per core consuming its counter, and the whole device
/// "nnqN" consuming all of them, so a core and its whole device are never
/// both allocatable. Attributes: device (string "nnqN"), kind ("core" or
/// "device"), core (int, cores only), cores (int, whole devices only),
/// numaNode (int, when known), generation (string from `generations`, by
/// device ID, "unknown" when absent). A device's set and its entries stay
/// in one slice; slices are filled up to kMaxDevicesWithCounters entries
/// and kMaxCounterSets sets; one slice with no devices when none is
/// healthy (the pool then says so). Names "<node>-<driver, dots as
/// dashes>-g<generation>-<i>".
std::vector<nlohmann::json> slices(const Publisher& who, const std::vector<Device>& devices,
                                   const std::map<std::string, std::string>& generations,
                                   std::int64_t generation);

/// One device of a claim, as prepared: the claim's request name, the pool
/// and device from the allocation result, and the device nodes it gives.
struct Prepared {
  std::string request;
  std::string pool;
  std::string device;
  std::vector<std::string> nodes;  ///< "nnqN" or "nnqN-coreC"
};

/// The devices of this driver that a ResourceClaim's allocation gives this
/// node, or why it cannot be prepared, naming the field:
/// "metadata.uid" (not the claim the kubelet named),
/// "status.allocation.devices.results" (missing, not a list, none of ours),
/// "status.allocation.devices.results[i].<request|driver|pool|device>"
/// (not a string; another node's pool; a device the pool does not have or
/// that is unhealthy; one device twice).
struct ClaimDevices {
  std::vector<Prepared> devices;
  std::optional<std::string> error;
};
ClaimDevices check_claim(const nlohmann::json& claim, const std::string& uid, const Publisher& who,
                         const std::vector<Device>& devices);

/// Whether `uid` is a claim UID the plugin may use in a file name: 1 to 63
/// of [a-z0-9-], starting and ending alphanumeric (Kubernetes UIDs are).
bool valid_uid(const std::string& uid);

/// A prepared claim, as the checkpoint keeps it.
struct ClaimRecord {
  std::string ns;
  std::string name;
  std::vector<Prepared> devices;
};
using Checkpoint = std::map<std::string, ClaimRecord>;  ///< by claim UID

/// The checkpoint as JSON text ({"version":1,"claims":{UID:{...}}}) and
/// back; from_text returns nullopt and sets `err` on anything malformed.
std::string to_text(const Checkpoint& c);
std::optional<Checkpoint> from_text(const std::string& text, std::string& err);

/// A device that `devices` would share with a claim in `held` other than
/// `uid` (the same device, or a core and its whole device): "nnq0 (claim
/// UID)", or nullopt.
std::optional<std::string> overlap(const Checkpoint& held, const std::string& uid,
                                   const std::vector<Prepared>& devices);

/// The per-claim CDI kind, file name and device IDs: kind "<driver>/claim",
/// file "<driver>-claim_<uid>.json", device "<uid>-<device>".
std::string claim_cdi_kind(const std::string& driver);
std::string claim_cdi_file(const std::string& driver, const std::string& uid);
std::string claim_cdi_id(const std::string& driver, const std::string& uid, const std::string& device);

/// The CDI spec text of a prepared claim (cdi_spec_of).
std::string claim_cdi_spec(const std::string& driver, const std::string& uid, const std::vector<Prepared>& devices,
                           const std::string& dev_root);

}  // namespace neuron::k8s::dra
