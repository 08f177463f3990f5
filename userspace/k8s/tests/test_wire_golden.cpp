// SPDX-License-Identifier: MIT
//
// The plugin's v1beta1 messages (the C++ classes protoc generates from
// k8s/proto/deviceplugin_v1beta1.proto, which plugin.cpp sends and
// receives) against golden bytes encoded by hand from the published field
// numbers (tests/data/v1beta1-golden.txt, docs/k8s.md#golden): each message
// decodes the bytes into the values written below and encodes those values
// back into exactly the bytes. wire_golden.py does the same with the fake
// kubelet's Python messages, so a field number wrong in the .proto, which
// both sides would share, fails both.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "deviceplugin_v1beta1.pb.h"

namespace {

// The golden file's messages: name -> bytes ("message NAME", hex, "end").
std::map<std::string, std::string> load_golden() {
    std::map<std::string, std::string> out;
    std::ifstream in(NEURON_K8S_GOLDEN);
    EXPECT_TRUE(in) << "cannot read " << NEURON_K8S_GOLDEN;
    std::string line, cur;
    bool open = false;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string w;
        if (!(words >> w))
            continue;
        if (w == "message") {
            words >> cur;
            out[cur];
            open = true;
        } else if (w == "end") {
            open = false;
        } else {
            EXPECT_TRUE(open) << "bytes outside a message: " << line;
            do {
                out[cur].push_back(static_cast<char>(std::stoi(w, nullptr, 16)));
            } while (words >> w);
        }
    }
    return out;
}

const std::map<std::string, std::string>& golden() {
    static const auto g = load_golden();
    return g;
}

// Decodes NAME's golden bytes into a fresh M and encodes `built` (the same
// values, set by hand): the encoding must be the golden bytes.
template <typename M>
M decode_and_encode(const std::string& name, const M& built) {
    const auto it = golden().find(name);
    EXPECT_NE(it, golden().end()) << name << " not in the golden file";
    M decoded;
    if (it == golden().end())
        return decoded;
    EXPECT_TRUE(decoded.ParseFromString(it->second)) << name;
    std::string encoded;
    EXPECT_TRUE(built.SerializeToString(&encoded)) << name;
    EXPECT_EQ(encoded, it->second) << name << ": encoding differs from the golden bytes";
    return decoded;
}

TEST(WireGolden, RegisterRequest) {
    v1beta1::RegisterRequest m;
    m.set_version("v1beta1");
    m.set_endpoint("neuron-core.sock");
    m.set_resource_name("neuron.example/core");
    m.mutable_options()->set_pre_start_required(true);
    m.mutable_options()->set_get_preferred_allocation_available(true);
    const auto d = decode_and_encode("RegisterRequest", m);
    EXPECT_EQ(d.version(), "v1beta1");
    EXPECT_EQ(d.endpoint(), "neuron-core.sock");
    EXPECT_EQ(d.resource_name(), "neuron.example/core");
    EXPECT_TRUE(d.options().pre_start_required());
    EXPECT_TRUE(d.options().get_preferred_allocation_available());
}

TEST(WireGolden, EmptyMessages) {
    EXPECT_EQ(decode_and_encode("Empty", v1beta1::Empty()).ByteSizeLong(), 0u);
    EXPECT_EQ(decode_and_encode("PreStartContainerResponse", v1beta1::PreStartContainerResponse())
                  .ByteSizeLong(),
              0u);
}

TEST(WireGolden, DevicePluginOptions) {
    v1beta1::DevicePluginOptions m;
    m.set_pre_start_required(true);
    m.set_get_preferred_allocation_available(true);
    const auto d = decode_and_encode("DevicePluginOptions", m);
    EXPECT_TRUE(d.pre_start_required());
    EXPECT_TRUE(d.get_preferred_allocation_available());
}

TEST(WireGolden, ListAndWatchResponse) {
    v1beta1::ListAndWatchResponse m;
    auto* a = m.add_devices();
    a->set_id("nnq0-core1");
    a->set_health("Healthy");
    a->mutable_topology()->add_nodes()->set_id(1);
    auto* b = m.add_devices();
    b->set_id("nnq1");
    b->set_health("Unhealthy");
    b->mutable_topology()->add_nodes()->set_id(0);
    const auto d = decode_and_encode("ListAndWatchResponse", m);
    ASSERT_EQ(d.devices_size(), 2);
    EXPECT_EQ(d.devices(0).id(), "nnq0-core1");
    EXPECT_EQ(d.devices(0).health(), "Healthy");
    ASSERT_EQ(d.devices(0).topology().nodes_size(), 1);
    EXPECT_EQ(d.devices(0).topology().nodes(0).id(), 1);
    EXPECT_EQ(d.devices(1).id(), "nnq1");
    EXPECT_EQ(d.devices(1).health(), "Unhealthy");
    ASSERT_EQ(d.devices(1).topology().nodes_size(), 1);
    EXPECT_EQ(d.devices(1).topology().nodes(0).id(), 0);
}

TEST(WireGolden, PreferredAllocationRequest) {
    v1beta1::PreferredAllocationRequest m;
    auto* c = m.add_container_requests();
    c->add_available_deviceids("nnq0-core0");
    c->add_available_deviceids("nnq0-core1");
    c->add_must_include_deviceids("nnq0-core1");
    c->set_allocation_size(2);
    const auto d = decode_and_encode("PreferredAllocationRequest", m);
    ASSERT_EQ(d.container_requests_size(), 1);
    const auto& r = d.container_requests(0);
    ASSERT_EQ(r.available_deviceids_size(), 2);
    EXPECT_EQ(r.available_deviceids(0), "nnq0-core0");
    EXPECT_EQ(r.available_deviceids(1), "nnq0-core1");
    ASSERT_EQ(r.must_include_deviceids_size(), 1);
    EXPECT_EQ(r.must_include_deviceids(0), "nnq0-core1");
    EXPECT_EQ(r.allocation_size(), 2);
}

TEST(WireGolden, PreferredAllocationResponse) {
    v1beta1::PreferredAllocationResponse m;
    auto* c = m.add_container_responses();
    c->add_deviceids("nnq0-core0");
    c->add_deviceids("nnq0-core1");
    const auto d = decode_and_encode("PreferredAllocationResponse", m);
    ASSERT_EQ(d.container_responses_size(), 1);
    ASSERT_EQ(d.container_responses(0).deviceids_size(), 2);
    EXPECT_EQ(d.container_responses(0).deviceids(0), "nnq0-core0");
    EXPECT_EQ(d.container_responses(0).deviceids(1), "nnq0-core1");
}

TEST(WireGolden, AllocateRequest) {
    v1beta1::AllocateRequest m;
    m.add_container_requests()->add_devices_ids("nnq0-core1");
    const auto d = decode_and_encode("AllocateRequest", m);
    ASSERT_EQ(d.container_requests_size(), 1);
    ASSERT_EQ(d.container_requests(0).devices_ids_size(), 1);
    EXPECT_EQ(d.container_requests(0).devices_ids(0), "nnq0-core1");
}

TEST(WireGolden, AllocateResponse) {
    v1beta1::AllocateResponse m;
    auto* c = m.add_container_responses();
    (*c->mutable_envs())["NEURON_VISIBLE_CORES"] = "1";
    auto* mount = c->add_mounts();
    mount->set_container_path("/m");
    mount->set_host_path("/h");
    mount->set_read_only(true);
    auto* dev = c->add_devices();
    dev->set_container_path("/dev/nnq0-core1");
    dev->set_host_path("/dev/nnq0-core1");
    dev->set_permissions("rw");
    (*c->mutable_annotations())["a"] = "b";
    c->add_cdi_devices()->set_name("neuron.example/core=nnq0-core1");
    const auto d = decode_and_encode("AllocateResponse", m);
    ASSERT_EQ(d.container_responses_size(), 1);
    const auto& r = d.container_responses(0);
    ASSERT_EQ(r.envs_size(), 1);
    EXPECT_EQ(r.envs().at("NEURON_VISIBLE_CORES"), "1");
    ASSERT_EQ(r.mounts_size(), 1);
    EXPECT_EQ(r.mounts(0).container_path(), "/m");
    EXPECT_EQ(r.mounts(0).host_path(), "/h");
    EXPECT_TRUE(r.mounts(0).read_only());
    ASSERT_EQ(r.devices_size(), 1);
    EXPECT_EQ(r.devices(0).container_path(), "/dev/nnq0-core1");
    EXPECT_EQ(r.devices(0).host_path(), "/dev/nnq0-core1");
    EXPECT_EQ(r.devices(0).permissions(), "rw");
    ASSERT_EQ(r.annotations_size(), 1);
    EXPECT_EQ(r.annotations().at("a"), "b");
    ASSERT_EQ(r.cdi_devices_size(), 1);
    EXPECT_EQ(r.cdi_devices(0).name(), "neuron.example/core=nnq0-core1");
}

TEST(WireGolden, PreStartContainerRequest) {
    v1beta1::PreStartContainerRequest m;
    m.add_devices_ids("nnq0-core1");
    const auto d = decode_and_encode("PreStartContainerRequest", m);
    ASSERT_EQ(d.devices_ids_size(), 1);
    EXPECT_EQ(d.devices_ids(0), "nnq0-core1");
}

// Every message of the golden file is one a test above checks.
TEST(WireGolden, EveryGoldenMessageTested) {
    std::string names;
    for (const auto& [name, bytes] : golden())
        names += name + " ";
    EXPECT_EQ(names,
              "AllocateRequest AllocateResponse DevicePluginOptions Empty ListAndWatchResponse "
              "PreStartContainerRequest PreStartContainerResponse PreferredAllocationRequest "
              "PreferredAllocationResponse RegisterRequest ");
}

}  // namespace
