// SPDX-License-Identifier: MIT
//
// Which pod, namespace and container hold each Neuron core, from the
// kubelet's PodResources API v1 List (docs/k8s.md#pod-metrics), for the
// labels of neuron-nq metrics' per-core Prometheus series.
#pragma once

#include <map>
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

/// Parse the helper's output: "pod\tnamespace\tcontainer\tresource\tid"
/// lines, grouped into one entry per line. Malformed lines are skipped.
std::vector<ContainerDevices> parse_helper_output(const std::string& text);

/// PodResources v1 List on `socket` through `helper` (run with the socket as
/// its one argument, its stdout and stderr read back; the helper has a 2 s
/// deadline). The containers' devices, or nullopt with `error` set to the
/// helper's message or why it could not run.
std::optional<std::vector<ContainerDevices>> list_pod_resources(const std::string& helper, const std::string& socket,
                                                                std::string& error);

}  // namespace neuron::cli
