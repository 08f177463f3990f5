#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fake kubelet's v1beta1 messages against golden wire bytes.

Usage: wire_golden.py PROTO_DIR GOLDEN_FILE

The messages are the ones fake_kubelet.py and vm_kubelet.py speak with
(kubelet.load_messages: protoc --python_out from our .proto, Debian's
python3-protobuf). GOLDEN_FILE (tests/data/v1beta1-golden.txt,
docs/k8s.md#golden) holds the bytes of each message encoded by hand from
the published field numbers; each is decoded into the values written
below, and those values encoded back must give exactly the bytes.
test_wire_golden.cpp does the same with the plugin's C++ messages: a field
number wrong in the .proto, which both sides share, fails both.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet  # noqa: E402

proto_dir, golden_file = sys.argv[1:]
failures = []


def load_golden(path):
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] == "message":
                cur = words[1]
                out[cur] = b""
            elif words[0] == "end":
                cur = None
            else:
                assert cur, f"bytes outside a message: {line!r}"
                out[cur] += bytes(int(w, 16) for w in words)
    return out


def check(cond, what, detail=None):
    """One result line; DETAIL (the decoded message) only on a failure."""
    print(("  ok   " if cond else "  FAIL ") + what
          + ("" if cond or detail is None else f": got {detail}"), flush=True)
    if not cond:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    pb = kubelet.load_messages(proto_dir, tmp)
golden = load_golden(golden_file)
tested = set()


def decode_and_encode(name, built):
    """NAME's golden bytes decoded into a fresh message; `built` (the same
    values, set by hand) encoded must be the golden bytes."""
    tested.add(name)
    want = golden.get(name)
    check(want is not None, f"{name}: in the golden file")
    got = built.SerializeToString()
    check(got == want, f"{name}: encodes to the golden bytes"
          + ("" if got == want else f" (got {got.hex(' ')}, golden {(want or b'').hex(' ')})"))
    decoded = type(built)()
    try:
        decoded.ParseFromString(want or b"")
    except Exception as e:  # a wrong wire type: protobuf's DecodeError
        check(False, f"{name}: decodes ({e})")
    return decoded


m = pb.RegisterRequest(version="v1beta1", endpoint="neuron-core.sock",
                       resource_name="neuron.example/core",
                       options=pb.DevicePluginOptions(pre_start_required=True,
                                                      get_preferred_allocation_available=True))
d = decode_and_encode("RegisterRequest", m)
check(d.version == "v1beta1" and d.endpoint == "neuron-core.sock"
      and d.resource_name == "neuron.example/core"
      and d.options.pre_start_required and d.options.get_preferred_allocation_available,
      "RegisterRequest: decodes to the values", d)

for name in ("Empty", "PreStartContainerResponse"):
    d = decode_and_encode(name, getattr(pb, name)())
    check(d.ByteSize() == 0, f"{name}: decodes to an empty message")

d = decode_and_encode("DevicePluginOptions", pb.DevicePluginOptions(
    pre_start_required=True, get_preferred_allocation_available=True))
check(d.pre_start_required and d.get_preferred_allocation_available,
      "DevicePluginOptions: decodes to the values", d)

m = pb.ListAndWatchResponse(devices=[
    pb.Device(ID="nnq0-core1", health="Healthy",
              topology=pb.TopologyInfo(nodes=[pb.NUMANode(ID=1)])),
    pb.Device(ID="nnq1", health="Unhealthy",
              topology=pb.TopologyInfo(nodes=[pb.NUMANode(ID=0)]))])
d = decode_and_encode("ListAndWatchResponse", m)
check([(x.ID, x.health, [n.ID for n in x.topology.nodes]) for x in d.devices]
      == [("nnq0-core1", "Healthy", [1]), ("nnq1", "Unhealthy", [0])],
      "ListAndWatchResponse: decodes to the values", d)

m = pb.PreferredAllocationRequest(container_requests=[pb.ContainerPreferredAllocationRequest(
    available_deviceIDs=["nnq0-core0", "nnq0-core1"], must_include_deviceIDs=["nnq0-core1"],
    allocation_size=2)])
d = decode_and_encode("PreferredAllocationRequest", m)
r = d.container_requests
check(len(r) == 1 and list(r[0].available_deviceIDs) == ["nnq0-core0", "nnq0-core1"]
      and list(r[0].must_include_deviceIDs) == ["nnq0-core1"] and r[0].allocation_size == 2,
      "PreferredAllocationRequest: decodes to the values", d)

m = pb.PreferredAllocationResponse(container_responses=[
    pb.ContainerPreferredAllocationResponse(deviceIDs=["nnq0-core0", "nnq0-core1"])])
d = decode_and_encode("PreferredAllocationResponse", m)
check([list(x.deviceIDs) for x in d.container_responses] == [["nnq0-core0", "nnq0-core1"]],
      "PreferredAllocationResponse: decodes to the values", d)

m = pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=["nnq0-core1"])])
d = decode_and_encode("AllocateRequest", m)
check([list(x.devices_ids) for x in d.container_requests] == [["nnq0-core1"]],
      "AllocateRequest: decodes to the values", d)

m = pb.AllocateResponse(container_responses=[pb.ContainerAllocateResponse(
    envs={"NEURON_VISIBLE_CORES": "1"},
    mounts=[pb.Mount(container_path="/m", host_path="/h", read_only=True)],
    devices=[pb.DeviceSpec(container_path="/dev/nnq0-core1", host_path="/dev/nnq0-core1",
                           permissions="rw")],
    annotations={"a": "b"},
    cdi_devices=[pb.CDIDevice(name="neuron.example/core=nnq0-core1")])])
d = decode_and_encode("AllocateResponse", m)
r = d.container_responses
check(len(r) == 1 and dict(r[0].envs) == {"NEURON_VISIBLE_CORES": "1"}
      and [(x.container_path, x.host_path, x.read_only) for x in r[0].mounts] == [("/m", "/h", True)]
      and [(x.container_path, x.host_path, x.permissions) for x in r[0].devices]
      == [("/dev/nnq0-core1", "/dev/nnq0-core1", "rw")]
      and dict(r[0].annotations) == {"a": "b"}
      and [x.name for x in r[0].cdi_devices] == ["neuron.example/core=nnq0-core1"],
      "AllocateResponse: decodes to the values", d)

d = decode_and_encode("PreStartContainerRequest", pb.PreStartContainerRequest(devices_ids=["nnq0-core1"]))
check(list(d.devices_ids) == ["nnq0-core1"], "PreStartContainerRequest: decodes to the values", d)

check(tested == set(golden), f"every golden message tested (untested: {sorted(set(golden) - tested)})")
print(f"wire_golden: {len(failures)} failed")
sys.exit(1 if failures else 0)
