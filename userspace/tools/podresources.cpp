// SPDX-License-Identifier: MIT
//
// The kubelet's PodResources v1 List (podresources.hpp). The gRPC part is
// built only with NEURON_BUILD_K8S (NEURON_HAVE_GRPC).
#include "podresources.hpp"

#include <charconv>
#include <chrono>
#include <string_view>

#ifdef NEURON_HAVE_GRPC
#include <grpcpp/grpcpp.h>

#include "podresources_v1.grpc.pb.h"
#endif

namespace neuron::cli {
namespace {

std::optional<unsigned> num(std::string_view s) {
  unsigned v = 0;
  auto [p, e] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || e != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

PodLabels pod_labels(const std::vector<ContainerDevices>& list, const std::string& prefix,
                     unsigned (*cores_of)(unsigned, const void*), const void* ctx) {
  PodLabels out;
  for (const auto& c : list) {
    const bool core = c.resource == prefix + "/core";
    const bool device = c.resource == prefix + "/device";
    if (!core && !device) continue;
    for (std::string_view id : c.ids) {
      if (!id.starts_with("nnq")) continue;
      id.remove_prefix(3);
      const auto dash = id.find("-core");
      if (core && dash != std::string_view::npos) {
        auto d = num(id.substr(0, dash));
        auto k = num(id.substr(dash + 5));
        if (d && k) out.emplace(std::pair{*d, *k}, c.ref);
      } else if (device && dash == std::string_view::npos) {
        if (auto d = num(id))
          for (unsigned k = 0, n = cores_of(*d, ctx); k < n; ++k) out.emplace(std::pair{*d, k}, c.ref);
      }
    }
  }
  return out;
}

#ifdef NEURON_HAVE_GRPC
struct PodResourcesClient::Impl {
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesClient::PodResourcesClient(std::string socket) : socket_(std::move(socket)) {}
PodResourcesClient::~PodResourcesClient() = default;

std::optional<std::vector<ContainerDevices>> PodResourcesClient::list(std::string& error) {
  if (!impl_) {
    impl_ = std::make_unique<Impl>();
    impl_->stub = v1::PodResourcesLister::NewStub(
        grpc::CreateChannel("unix://" + socket_, grpc::InsecureChannelCredentials()));
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::ListPodResourcesRequest q;
  v1::ListPodResourcesResponse r;
  const auto st = impl_->stub->List(&ctx, q, &r);
  if (!st.ok()) {
    error = "List on " + socket_ + ": " + st.error_message();
    return std::nullopt;
  }
  std::vector<ContainerDevices> out;
  for (const auto& p : r.pod_resources())
    for (const auto& c : p.containers())
      for (const auto& d : c.devices())
        out.push_back({{p.name(), p.namespace_(), c.name()}, d.resource_name(),
                       std::vector<std::string>(d.device_ids().begin(), d.device_ids().end())});
  return out;
}
#else
struct PodResourcesClient::Impl {};
PodResourcesClient::PodResourcesClient(std::string socket) : socket_(std::move(socket)) {}
PodResourcesClient::~PodResourcesClient() = default;
std::optional<std::vector<ContainerDevices>> PodResourcesClient::list(std::string& error) {
  error = "neuron-nq was built without gRPC (NEURON_BUILD_K8S=OFF): no pod labels";
  return std::nullopt;
}
#endif

}  // namespace neuron::cli
