#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# neuron-nq metrics' pod labels (docs/k8s.md#pod-metrics) against a fake
# kubelet PodResources v1 server in Python (Debian's grpcio/protobuf; its
# message classes generated here from our .proto, nothing shared with the
# C++ side), on the CLI tests' fake tree (userspace/tests/data/cli/root:
# nnq0 and nnq1, two cores each). Checks hand-written sample lines, that
# Debian's promtool accepts the file, and that a dead kubelet (socket left,
# nobody serving) costs the labels only. Prints the labelled file.
# Usage (from the top directory): pod_metrics.py NEURON_NQ HELPER PROTO_DIR WORKDIR
# (HELPER: the built neuron-pod-resources, which neuron-nq runs for List)
import os
import shutil
import socket
import subprocess
import sys
from concurrent import futures

import grpc

nq, helper, proto_dir, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
subprocess.run(["protoc", "-I", proto_dir, "--python_out=" + work, "podresources_v1.proto"], check=True)
sys.path.insert(0, work)
import podresources_v1_pb2 as pb  # noqa: E402

fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        fails.append(what)


def container(name, resource, ids):
    return pb.ContainerResources(name=name, devices=[pb.ContainerDevices(resource_name=resource, device_ids=ids)])


ANSWER = pb.ListPodResourcesResponse(pod_resources=[
    pb.PodResources(name="trainer-0", namespace="ml", containers=[
        container("worker", "neuron.example/core", ["nnq0-core1"])]),
    pb.PodResources(name="infer-7", namespace="serving", containers=[
        container("server", "neuron.example/device", ["nnq1"])]),
    pb.PodResources(name="gpu-job", namespace="ml", containers=[          # another vendor's resource
        container("main", "example.com/gpu", ["nnq0-core0"])]),
    pb.PodResources(name="odd", namespace="x", containers=[               # malformed IDs
        container("c", "neuron.example/core", ["nnqX-core1", "nnq0-core", "nnq0"])]),
])
calls = []


def list_pods(req, ctx):
    calls.append(1)
    return ANSWER


sock = os.path.join(work, "kubelet.sock")
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
    "List": grpc.unary_unary_rpc_method_handler(
        list_pods, request_deserializer=pb.ListPodResourcesRequest.FromString,
        response_serializer=pb.ListPodResourcesResponse.SerializeToString)}),))
server.add_insecure_port("unix:" + sock)
server.start()


def metrics(out):
    return subprocess.run([nq, "metrics", "--count", "1", "--prometheus", out, "--root",
                           "userspace/tests/data/cli/root", "--pod-resources", sock,
                           "--pod-resources-helper", helper],
                          capture_output=True, text=True)


out = os.path.join(work, "pods.prom")
r = metrics(out)
check(r.returncode == 0 and r.stderr == "", f"metrics with a kubelet: exit {r.returncode}, stderr {r.stderr!r}")
check(len(calls) == 1, "one List call")
text = open(out).read()
print("---- labelled per-core series (neuron_core_owned, neuron_notific_edges_total)")
for line in text.splitlines():
    if line.startswith(("neuron_core_owned{", "neuron_notific_edges_total{")):
        print("  " + line)
want = [
    'neuron_core_owned{device="0",core="0"} 0',
    'neuron_core_owned{device="0",core="1",pod="trainer-0",namespace="ml",container="worker"} 1',
    'neuron_core_owned{device="1",core="0",pod="infer-7",namespace="serving",container="server"} 0',
    'neuron_core_owned{device="1",core="1",pod="infer-7",namespace="serving",container="server"} 1',
    'neuron_notific_edges_total{device="0",core="1",pod="trainer-0",namespace="ml",container="worker"} 15',
    'neuron_notific_cause_edges_total{device="0",core="1",pod="trainer-0",namespace="ml",container="worker",'
    'cause="THRESHOLD"} 12',
]
lines = text.splitlines()
for w in want:
    check(w in lines, w)
check('neuron_device_cores{device="0"} 2' in lines, "per-device series keep their labels")
check(not any('pod="gpu-job"' in x or 'pod="odd"' in x for x in lines), "other resources and malformed IDs ignored")

promtool = subprocess.run(["sh", "-c", "scripts/fetch-promtool.sh | tail -1"], capture_output=True, text=True).stdout.strip()
if promtool:
    p = subprocess.run([promtool, "check", "metrics"], stdin=open(out), capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == "" and p.stderr == "",
          f"promtool check metrics: exit {p.returncode} {p.stdout}{p.stderr}".strip())
else:
    check(False, "promtool available (scripts/fetch-promtool.sh)")

# a dead kubelet: the socket stays, nobody answers (bound, not listening)
server.stop(0).wait()
dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
dead.bind(sock)
out2 = os.path.join(work, "dead.prom")
r = metrics(out2)
check(r.returncode == 0 and "no pod labels" in r.stderr, f"dead kubelet: exit {r.returncode}, says {r.stderr.strip()!r}")
check(open(out2).read() == open("userspace/tests/data/cli/metrics-fake.prom").read(),
      "dead kubelet: the unlabelled file, as metrics-fake.prom")
# no kubelet at all: no socket, quiet
dead.close()
os.unlink(sock)
r = metrics(out2)
check(r.returncode == 0 and r.stderr == "", "no kubelet: exit 0, nothing on stderr")
print("pod metrics: " + ("FAILED: " + "; ".join(fails) if fails else "all checks passed"))
sys.exit(1 if fails else 0)
