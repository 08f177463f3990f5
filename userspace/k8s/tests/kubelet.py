# SPDX-License-Identifier: MIT
#
# The kubelet's side of the device-plugin API v1beta1, written from its
# published documentation with Debian's grpcio and protobuf, for the fake
# kubelets (fake_kubelet.py on a fake tree, vm_kubelet.py against the real
# driver in a VM; docs/k8s.md#tests). The messages come from protoc
# --python_out run on our .proto; the calls go through grpcio's generic
# handlers and multi-callables, so nothing generated is shared with the C++
# plugin.
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc

pb = None
failures = []


def load_messages(proto_dir, out_dir):
    """Generate deviceplugin_v1beta1_pb2 from PROTO_DIR into OUT_DIR (or, with
    PROTO_DIR None, import the one already in OUT_DIR) and return it."""
    global pb
    if proto_dir:
        subprocess.run(["protoc", "-I", proto_dir, "--python_out=" + out_dir,
                        "deviceplugin_v1beta1.proto"], check=True)
    sys.path.insert(0, out_dir)
    import deviceplugin_v1beta1_pb2
    pb = deviceplugin_v1beta1_pb2
    return pb


def say(line):
    print(line, flush=True)


def check(cond, what):
    say(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        failures.append(what)


class Kubelet:
    """Registration served on PLUGINS/kubelet.sock; every Register request
    goes to a queue."""

    def __init__(self, plugins):
        self.registrations = queue.Queue()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(
                self._register, request_deserializer=pb.RegisterRequest.FromString,
                response_serializer=pb.Empty.SerializeToString)}),))
        self.server.add_insecure_port("unix:" + os.path.join(plugins, "kubelet.sock"))
        self.server.start()

    def _register(self, req, ctx):
        self.registrations.put(req)
        return pb.Empty()

    def take(self, n, timeout=10.0):
        """Up to N registrations within TIMEOUT seconds, by resource name."""
        got = {}
        end = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < end:
            try:
                r = self.registrations.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            got[r.resource_name] = r
        return got

    def stop(self):
        self.server.stop(0).wait()


class Plugin:
    """Calls into one of the plugin's sockets under PLUGINS."""

    def __init__(self, plugins, endpoint):
        self.ch = grpc.insecure_channel("unix:" + os.path.join(plugins, endpoint))
        m = "/v1beta1.DevicePlugin/"
        self.options = self.ch.unary_unary(m + "GetDevicePluginOptions", pb.Empty.SerializeToString,
                                           pb.DevicePluginOptions.FromString)
        self.list_and_watch = self.ch.unary_stream(m + "ListAndWatch", pb.Empty.SerializeToString,
                                                   pb.ListAndWatchResponse.FromString)
        self.preferred = self.ch.unary_unary(m + "GetPreferredAllocation",
                                             pb.PreferredAllocationRequest.SerializeToString,
                                             pb.PreferredAllocationResponse.FromString)
        self.allocate = self.ch.unary_unary(m + "Allocate", pb.AllocateRequest.SerializeToString,
                                            pb.AllocateResponse.FromString)
        self.prestart = self.ch.unary_unary(m + "PreStartContainer",
                                            pb.PreStartContainerRequest.SerializeToString,
                                            pb.PreStartContainerResponse.FromString)


class Watch:
    """ListAndWatch in a thread: every response with its arrival time."""

    def __init__(self, plugin):
        self.q = queue.Queue()
        self.call = plugin.list_and_watch(pb.Empty())
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            for r in self.call:
                self.q.put((time.monotonic(), {d.ID: d.health for d in r.devices}, r))
        except grpc.RpcError:
            pass

    def until(self, pred, timeout):
        """The first response whose {ID: health} satisfies PRED within TIMEOUT
        seconds, as (arrival time, health map, response), or None."""
        end = time.monotonic() + timeout
        while True:
            try:
                t, h, r = self.q.get(timeout=max(0.001, end - time.monotonic()))
            except queue.Empty:
                return None
            if pred(h):
                return t, h, r


def summary(h):
    bad = sorted(k for k, v in h.items() if v != "Healthy")
    return f"{len(h)} IDs, Unhealthy: {', '.join(bad) if bad else 'none'}"


def code_of(fn, *a):
    """The gRPC status code and details of FN(*A)."""
    try:
        fn(*a, timeout=5)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details()


def stop_plugin(proc, log_path):
    """SIGTERM the plugin, wait up to 10 s (then kill it), print its log;
    returns its exit status, or "killed"."""
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = "killed"
    say("== plugin log")
    with open(log_path) as f:
        for line in f:
            say("  | " + line.rstrip())
    return rc


def listed(plugin):
    """The IDs PLUGIN lists Healthy now (the first answer of a new
    ListAndWatch stream, which is the current list)."""
    call = plugin.list_and_watch(pb.Empty(), timeout=5)
    try:
        r = next(iter(call))
    finally:
        call.cancel()
    return [d.ID for d in r.devices if d.health == "Healthy"]


class DeviceManager:
    """The kubelet's device manager, as the device-plugin documentation
    describes it, reduced to what the double-allocation checks need: per
    resource, the capacity is what its plugin lists Healthy; an ID given to
    a pod stays given until the pod ends (never here); a request is met only
    from IDs of that resource not given yet, chosen with
    GetPreferredAllocation and then Allocate'd, or refused as the kubelet
    refuses it. It keeps no account across resources: whatever keeps a core
    from two pods through two resources has to be in what the plugins list."""

    def __init__(self, plugins):
        self.plugins = plugins  # resource name -> Plugin
        self.given = {}  # (resource, ID) -> pod

    def admit(self, pod, resource, n):
        """N IDs of RESOURCE for POD: (IDs, None) or (None, the refusal)."""
        p = self.plugins[resource]
        free = [i for i in listed(p) if (resource, i) not in self.given]
        if len(free) < n:
            return None, (f"requested number of devices unavailable for {resource}. "
                          f"Requested: {n}, Available: {len(free)}")
        ids = list(p.preferred(pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=free, allocation_size=n)]),
            timeout=5).container_responses[0].deviceIDs)
        return self.admit_ids(pod, resource, ids)

    def admit_ids(self, pod, resource, ids):
        """These IDS of RESOURCE for POD: refused when one is given already."""
        for i in ids:
            if (resource, i) in self.given:
                return None, f"{resource} {i} is already allocated to {self.given[(resource, i)]}"
        self.plugins[resource].allocate(pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=ids)]), timeout=5)
        for i in ids:
            self.given[(resource, i)] = pod
        return ids, None
