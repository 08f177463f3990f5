// SPDX-License-Identifier: MIT
//
// neuron-pod-resources SOCKET: the kubelet's PodResources v1 List on SOCKET,
// printed one device ID a line as "pod<TAB>namespace<TAB>container<TAB>
// resource<TAB>id" (tabs and newlines inside a name become blanks). Exit 0,
// or 1 with one line on stderr ("List on SOCKET: ..."); a 2 s deadline.
// neuron-nq metrics runs it for its pod labels (docs/k8s.md#pod-metrics), so
// neuron-nq itself does not link gRPC (it also runs in the test VMs).
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "podresources_v1.grpc.pb.h"

namespace {

std::string clean(std::string s) {
  for (auto& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: neuron-pod-resources SOCKET (the kubelet's pod-resources/kubelet.sock)\n");
    return 1;
  }
  const std::string sock = argv[1];
  auto stub = v1::PodResourcesLister::NewStub(grpc::CreateChannel("unix://" + sock, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::ListPodResourcesRequest q;
  v1::ListPodResourcesResponse r;
  const auto st = stub->List(&ctx, q, &r);
  if (!st.ok()) {
    std::fprintf(stderr, "List on %s: %s\n", sock.c_str(), st.error_message().c_str());
    return 1;
  }
  for (const auto& p : r.pod_resources())
    for (const auto& c : p.containers())
      for (const auto& d : c.devices())
        for (const auto& id : d.device_ids())
          std::printf("%s\t%s\t%s\t%s\t%s\n", clean(p.name()).c_str(), clean(p.namespace_()).c_str(),
                      clean(c.name()).c_str(), clean(d.resource_name()).c_str(), clean(id).c_str());
  return std::fflush(stdout) == 0 ? 0 : 1;
}
