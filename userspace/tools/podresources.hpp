// SPDX-License-Identifier: MIT
//
// Which pod, namespace and container hold each Neuron core, from the
// kubelet's PodResources API v1 List (docs/k8s.md#pod-metrics), for the
// labels of neuron-nq metrics' per-core Prometheus series.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace neuron::cli {

/// The holder of a core: pod name, its namespace, the container's name.
struct PodRef {
  std::string pod, ns, container;
};

/// (device N, core C) -> its holder.
using PodLabels = std::map<std::pair<unsigned, unsigned>, PodRef>;

/// One container's devices of one resource, as List returns them.
struct ContainerDevices {
  PodRef ref;
  std::string resource;          ///< "neuron.example/core"
  std::vector<std::string> ids;  ///< "nnq0-core1" (core resource) or "nnq0" (device resource)
};

/// Map List's answer to cores: IDs "nnqN-coreC" of resource "<prefix>/core"
/// are core C of device N; IDs "nnqN" of "<prefix>/device" are every core of
/// device N (`cores_of(N)` says how many). Other resources and malformed
/// IDs are skipped; the first holder of a core wins.
PodLabels pod_labels(const std::vector<ContainerDevices>& list, const std::string& prefix,
                     unsigned (*cores_of)(unsigned, const void*), const void* ctx);

/// A PodResources client on one socket. list() returns the containers'
/// devices, or nullopt with `error` set ("connect: ...", "List: ..."):
/// a 2 s deadline per call. Without gRPC support in this build, always
/// nullopt ("built without gRPC").
class PodResourcesClient {
 public:
  explicit PodResourcesClient(std::string socket);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;
  std::optional<std::vector<ContainerDevices>> list(std::string& error);

 private:
  struct Impl;
  std::string socket_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuron::cli
