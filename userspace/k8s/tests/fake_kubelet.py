#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# A fake kubelet for neuron-device-plugin (docs/k8s.md#tests), written from
# the published device-plugin API v1beta1 in Python with Debian's grpcio and
# protobuf. Its message classes are generated here, at test time, from our
# .proto by protoc --python_out; the calls go through grpcio's generic
# handlers and multi-callables, so nothing generated is shared with the C++
# plugin.
#
# It builds a fake /sys, /dev and /proc tree, serves Registration on
# <kubelet>/device-plugins/kubelet.sock, starts the plugin, and checks:
# registration, ListAndWatch, health flips (state attribute, removal) within
# 1 s, GetPreferredAllocation, Allocate, PreStartContainer's reclaim and
# refusal, hostile requests refused with INVALID_ARGUMENT, the partition
# (nnq3 offered whole, the others as cores: no core can go to two pods, the
# kubelet's own accounting refuses the double allocation), registration
# again after kubelet.sock is re-created, and the CDI specs under --cdi-dir:
# a stale one of ours removed at start, each version the plugin writes
# (watched every 2 ms) valid against the CDI schema (cdi_schema.py) and the
# expected one, rewritten on a removal and a hot-plug (not on a health
# flip), removed on exit. Prints a transcript; exit 0 when every check holds.
#
# Usage: fake_kubelet.py PLUGIN_BINARY PROTO_DIR
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import json

import grpc

sys.dont_write_bytecode = True  # the tests run from the source tree, which stays clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdi_schema  # noqa: E402
import kubelet  # noqa: E402
from kubelet import DeviceManager, Kubelet, Plugin, Watch, check, code_of, say, summary  # noqa: E402

PLUGIN, PROTO_DIR = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="nfk-")
pb = kubelet.load_messages(PROTO_DIR, tmp)

# ---------------------------------------------------------------- fake tree
# nnq0: NUMA 0, cores 0-3; nnq1: NUMA 0, cores 0-1; nnq2: NUMA 1, cores 0-3,
# these three offered as cores (the default --partition); nnq3: NUMA 1,
# cores 0-1, offered whole (--device-partition nnq3=whole)
SYS, DEV, PROC, KUBELET, CDI = (os.path.join(tmp, d) for d in ("sys", "dev", "proc", "kubelet", "cdi"))
PLUGINS = os.path.join(KUBELET, "device-plugins")
for d in (DEV, PROC, PLUGINS, CDI):
    os.makedirs(d)
LAYOUT = {0: (0, 4), 1: (0, 2), 2: (1, 4), 3: (1, 2)}
WHOLE = [3]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def add_device(n, numa, cores):
    write(f"{SYS}/class/nnq/nnq{n}/device/numa_node", f"{numa}\n")
    write(f"{SYS}/class/nnq/nnq{n}/state", "online\n")
    write(f"{SYS}/class/nnq/nnq{n}/core_owners", "".join(f"{c} - -\n" for c in range(cores)))
    for c in range(cores):
        write(f"{SYS}/class/nnq/nnq{n}-core{c}/core", f"{c}\n")
        write(f"{DEV}/nnq{n}-core{c}", "")
    write(f"{DEV}/nnq{n}", "")  # the device's node last: a device without it is not there yet


for n, (numa, cores) in LAYOUT.items():
    add_device(n, numa, cores)

ALL_CORES = [f"nnq{n}-core{c}" for n, (_, k) in LAYOUT.items() if n not in WHOLE for c in range(k)]
CDI_CORE = "neuron.example-core_device-plugin.cdi-0.5.0.json"
CDI_DEVICE = "neuron.example-device_device-plugin.cdi-0.5.0.json"


def cdi_spec(kind, names):
    """The spec we expect, by hand: one CDI device per node, given by hostPath
    under the fake /dev."""
    return {"cdiVersion": "0.5.0", "kind": f"neuron.example/{kind}", "devices": [
        {"name": i, "containerEdits": {"deviceNodes": [
            {"path": f"/dev/{i}", "hostPath": f"{DEV}/{i}", "type": "c", "permissions": "rw"}]}} for i in names]}


class CdiWatch:
    """Every version of every file under CDI, read every 2 ms: a spec
    renamed into place is read whole or not at all."""

    def __init__(self):
        self.versions = []  # (time, file name, text), each change
        self.others = set()  # names seen that are not .json (temporary files)
        self.last = {}
        self.stop = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stop:
            for name in os.listdir(CDI):
                if not name.endswith(".json"):
                    self.others.add(name)
                    continue
                try:
                    with open(os.path.join(CDI, name)) as f:
                        text = f.read()
                except FileNotFoundError:
                    continue
                if self.last.get(name) != text:
                    self.last[name] = text
                    self.versions.append((time.monotonic(), name, text))
            time.sleep(0.002)

    def until(self, name, want, since, timeout=1.0):
        """The time of the first version of NAME at or after SINCE that parses to WANT."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for t, n, text in list(self.versions):
                if n == name and t >= since and json.loads(text) == want:
                    return t
            time.sleep(0.01)
        return None


class SpecWatch(Watch):
    """A Watch that reads the core spec on disk as each answer arrives, the
    spec with the answer: (time, health map, (response, spec text))."""

    def _run(self):
        try:
            for r in self.call:
                try:
                    with open(os.path.join(CDI, CDI_CORE)) as f:
                        text = f.read()
                except FileNotFoundError:
                    text = ""
                self.q.put((time.monotonic(), {d.ID: d.health for d in r.devices}, (r, text)))
        except grpc.RpcError:
            pass


def core_ids(devices):
    return [f"nnq{n}-core{c}" for n in devices for c in range(LAYOUT.get(n, (0, 2))[1])]


# left in the CDI directory: a spec of ours from another cdiVersion (an
# earlier plugin killed before it could remove it), one of our temporary
# files, and another vendor's spec, which stays
write(f"{CDI}/neuron.example-core_device-plugin.cdi-0.4.0.json", json.dumps(cdi_spec("core", ["nnq0-core0"])))
write(f"{CDI}/.neuron.example-device_device-plugin.cdi-0.5.0.json.Xy12Zw", "{")
write(f"{CDI}/other.vendor-gpu.json", '{"cdiVersion": "0.3.0", "kind": "other.vendor/gpu", "devices": []}')
cdiw = CdiWatch()

say("== the flags: a --device-partition that is not nnqN=cores|whole")
for bad in ("nnq1=half", "gpu0=whole", "nnq01=whole"):
    r = subprocess.run([PLUGIN, "--device-partition", bad], capture_output=True, text=True, timeout=10)
    say(f"  $ neuron-device-plugin --device-partition {bad} <- exit {r.returncode}: {r.stderr.strip()[:100]}")
    check(r.returncode != 0 and bad in r.stderr, f"--device-partition {bad} refused")

kub = Kubelet(PLUGINS)
say(f"fake kubelet: serving Registration on {PLUGINS}/kubelet.sock")
t_start = time.monotonic()
proc = subprocess.Popen([PLUGIN, "--dev-root", DEV, "--sys-root", SYS, "--proc-root", PROC,
                         "--kubelet-dir", KUBELET, "--poll-ms", "100", "--no-uevents",
                         "--reclaim-grace", "1", "--cdi-dir", CDI, "--device-partition", "nnq3=whole"],
                        stderr=(log := open(os.path.join(tmp, "plugin.log"), "w")))
try:
    say("== registration")
    regs = kub.take(2)
    for name, r in sorted(regs.items()):
        say(f"  <- Register version={r.version} endpoint={r.endpoint} resource_name={r.resource_name} "
            f"pre_start_required={r.options.pre_start_required} "
            f"get_preferred_allocation_available={r.options.get_preferred_allocation_available}")
        check(os.path.exists(os.path.join(PLUGINS, r.endpoint)), f"{r.endpoint} was served before Register")
    check(set(regs) == {"neuron.example/core", "neuron.example/device"}, "both resources registered")
    check(all(r.version == "v1beta1" for r in regs.values()), "version v1beta1")
    core = Plugin(PLUGINS, regs["neuron.example/core"].endpoint)
    dev = Plugin(PLUGINS, regs["neuron.example/device"].endpoint)
    o = core.options(pb.Empty(), timeout=5)
    say(f"  -> GetDevicePluginOptions: pre_start_required={o.pre_start_required} "
        f"get_preferred_allocation_available={o.get_preferred_allocation_available}")
    check(o.pre_start_required and o.get_preferred_allocation_available, "core options")

    say("== ListAndWatch")
    w = Watch(core)
    first = w.until(lambda h: True, 5)
    check(first is not None, "first list")
    _, h, r = first
    say(f"  <- {summary(h)}")
    for d in r.devices[:1] + r.devices[-1:]:
        say(f"     ID={d.ID} health={d.health} topology.nodes={[n.ID for n in d.topology.nodes]}")
    check(sorted(h) == sorted(ALL_CORES), "the 10 core IDs")
    check(all(v == "Healthy" for v in h.values()), "all Healthy")
    check([n.ID for d in r.devices if d.ID == "nnq2-core3" for n in d.topology.nodes] == [1],
          "nnq2-core3 on NUMA node 1")
    wd = Watch(dev)
    fd = wd.until(lambda h: True, 5)
    if fd:
        say(f"  <- device resource: {summary(fd[1])}: {sorted(fd[1])}")
    check(fd is not None and sorted(fd[1]) == ["nnq3"], "device resource lists nnq3 only (the one offered whole)")
    check(not any(i.startswith("nnq3-") for i in h), "core resource lists none of nnq3's cores")

    say("== CDI specs at start")
    spec_core = cdi_spec("core", ALL_CORES)
    spec_dev = cdi_spec("device", ["nnq3"])
    for name, want in ((CDI_CORE, spec_core), (CDI_DEVICE, spec_dev)):
        t = cdiw.until(name, want, t_start, 5)
        check(t is not None, f"{name}: the expected spec ({len(want['devices'])} CDI devices)")
    say(f"  <- {CDI}: {sorted(os.listdir(CDI))}")
    check(sorted(os.listdir(CDI)) == sorted([CDI_CORE, CDI_DEVICE, "other.vendor-gpu.json"]),
          "our stale spec and temporary file removed, the other vendor's kept")
    check(all(os.stat(f"{CDI}/{n}").st_mode & 0o777 == 0o644 for n in (CDI_CORE, CDI_DEVICE)), "mode 0644")

    say("== health flips (fake sysfs)")
    for what, action, undo, ids in (
            ("nnq0 state offline (FLR/offline reset)", lambda: write(f"{SYS}/class/nnq/nnq0/state", "offline\n"),
             lambda: write(f"{SYS}/class/nnq/nnq0/state", "online\n"), [f"nnq0-core{c}" for c in range(4)]),
            ("nnq2 state pci_error (fatal AER)", lambda: write(f"{SYS}/class/nnq/nnq2/state", "pci_error\n"),
             lambda: write(f"{SYS}/class/nnq/nnq2/state", "online\n"), [f"nnq2-core{c}" for c in range(4)]),
            ("nnq1 removed (node and sysfs gone)",
             lambda: (os.rename(f"{DEV}/nnq1", f"{tmp}/nnq1.node"),
                      os.rename(f"{SYS}/class/nnq/nnq1", f"{tmp}/nnq1.sys")),
             lambda: (os.rename(f"{tmp}/nnq1.node", f"{DEV}/nnq1"),
                      os.rename(f"{tmp}/nnq1.sys", f"{SYS}/class/nnq/nnq1")), ["nnq1-core0", "nnq1-core1"])):
        t0 = time.monotonic()
        action()
        got = w.until(lambda h, ids=ids: all(h.get(i) == "Unhealthy" for i in ids), 1.0)
        if "removed" in what:
            t = cdiw.until(CDI_CORE, cdi_spec("core", core_ids([0, 2])), t0)
            check(t is not None, f"{what}: {CDI_CORE} rewritten without nnq1's cores within 1 s")
            if t:
                say(f"  <- {CDI_CORE}: nnq0-core0..3, nnq2-core0..3  [{(t - t0) * 1000:.0f} ms]")
        check(got is not None, f"{what}: {','.join(ids)} Unhealthy within 1 s")
        if got:
            say(f"  <- {summary(got[1])}  [{(got[0] - t0) * 1000:.0f} ms]")
            check(sum(v != "Healthy" for v in got[1].values()) == len(ids), "only those")
        t0 = time.monotonic()
        undo()
        got = w.until(lambda h: all(v == "Healthy" for v in h.values()), 1.0)
        if "removed" in what:
            t = cdiw.until(CDI_CORE, spec_core, t0)
            check(t is not None, f"{what}: {CDI_CORE} rewritten with nnq1's cores again within 1 s")
        check(got is not None, f"{what}: recovery, all Healthy again within 1 s")
        if got:
            say(f"  <- {summary(got[1])}  [{(got[0] - t0) * 1000:.0f} ms]")

    say("== GetPreferredAllocation")
    # (available, must_include, size) -> expected, by hand from docs/k8s.md#preferred-allocation
    cases = [
        (ALL_CORES, [], 2, ["nnq1-core0", "nnq1-core1"]),            # the one device that fits best
        (ALL_CORES, [], 3, ["nnq0-core0", "nnq0-core1", "nnq0-core2"]),  # tie: lowest N
        (["nnq0-core0", "nnq0-core2", "nnq0-core3"] + [f"nnq2-core{c}" for c in range(4)], [], 2,
         ["nnq0-core2", "nnq0-core3"]),                             # contiguous run on nnq0
        (ALL_CORES, ["nnq2-core1"], 3, ["nnq2-core0", "nnq2-core1", "nnq2-core2"]),  # with must_include
        (ALL_CORES, [], 6, ["nnq0-core0", "nnq0-core1", "nnq0-core2", "nnq0-core3",
                            "nnq1-core0", "nnq1-core1"]),           # one NUMA node (0)
        (ALL_CORES, [], 9, ["nnq0-core0", "nnq0-core1", "nnq0-core2", "nnq0-core3", "nnq1-core0",
                            "nnq2-core0", "nnq2-core1", "nnq2-core2", "nnq2-core3"]),  # anywhere
    ]
    for avail, must, size, want in cases:
        req = pb.PreferredAllocationRequest(container_requests=[pb.ContainerPreferredAllocationRequest(
            available_deviceIDs=avail, must_include_deviceIDs=must, allocation_size=size)])
        got = list(core.preferred(req, timeout=5).container_responses[0].deviceIDs)
        say(f"  -> size {size} of {len(avail)} available, must {must} <- {got}")
        check(got == want, f"preferred {want}")

    say("== Allocate")
    a = core.allocate(pb.AllocateRequest(container_requests=[
        pb.ContainerAllocateRequest(devices_ids=["nnq0-core1", "nnq0-core2"])]), timeout=5)
    cr = a.container_responses[0]
    for d in cr.devices:
        say(f"  <- DeviceSpec container_path={d.container_path} host_path={d.host_path} permissions={d.permissions}")
    say(f"  <- envs {dict(sorted(cr.envs.items()))}")
    say(f"  <- cdi_devices {[c.name for c in cr.cdi_devices]}")
    check([(d.container_path, d.host_path, d.permissions) for d in cr.devices] ==
          [("/dev/nnq0-core1", DEV + "/nnq0-core1", "rw"), ("/dev/nnq0-core2", DEV + "/nnq0-core2", "rw")],
          "core nodes as DeviceSpecs, rw")
    check(cr.envs["NEURON_VISIBLE_CORES"] == "1-2", "NEURON_VISIBLE_CORES=1-2")
    check([c.name for c in cr.cdi_devices] == ["neuron.example/core=nnq0-core1", "neuron.example/core=nnq0-core2"],
          "CDI names")
    with open(f"{CDI}/{CDI_CORE}") as f:
        on_disk = json.load(f)
    check(all(c.name.partition("=")[0] == on_disk["kind"] and
              c.name.partition("=")[2] in [d["name"] for d in on_disk["devices"]] for c in cr.cdi_devices),
          f"each CDI name resolves in {CDI_CORE} (its kind, a device of that name)")
    a = dev.allocate(pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=["nnq3"])]),
                     timeout=5)
    check([(d.container_path, d.permissions) for d in a.container_responses[0].devices] == [("/dev/nnq3", "rw")]
          and [c.name for c in a.container_responses[0].cdi_devices] == ["neuron.example/device=nnq3"],
          "device resource: /dev/nnq3 rw, neuron.example/device=nnq3")

    say("== hostile requests")
    IA = grpc.StatusCode.INVALID_ARGUMENT
    hostile = [
        ("Allocate unknown ID", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["nnq9-core0"])])),
        ("Allocate duplicate ID", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["nnq0-core1", "nnq0-core1"])])),
        ("Allocate 11 cores of 10", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=ALL_CORES + ["nnq0-core0"])])),
        ("Allocate nothing", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=[])])),
        ("Allocate a device ID on the core resource", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["nnq0"])])),
        ("Allocate a 1 MB ID", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["x" * 1000000])])),
        ("Preferred size 11", core.preferred, pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=ALL_CORES, allocation_size=11)])),
        ("Preferred size -1", core.preferred, pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=ALL_CORES, allocation_size=-1)])),
        ("Preferred duplicate available", core.preferred, pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=["nnq0-core0", "nnq0-core0"],
                                                   allocation_size=1)])),
        ("Preferred must_include not available", core.preferred, pb.PreferredAllocationRequest(
            container_requests=[pb.ContainerPreferredAllocationRequest(
                available_deviceIDs=["nnq0-core0"], must_include_deviceIDs=["nnq0-core1"], allocation_size=1)])),
        ("PreStartContainer unknown ID", core.prestart, pb.PreStartContainerRequest(devices_ids=["../../etc"])),
    ]
    for what, fn, req in hostile:
        c, det = code_of(fn, req)
        say(f"  -> {what} <- {c.name}: {det[:90]}")
        check(c == IA, f"{what}: INVALID_ARGUMENT")
    check(proc.poll() is None, "the plugin is still running")

    say("== a core goes to one pod: nnq3 whole, the others as cores")
    # the kubelet's accounting is per resource; pod-a asks 3 cores, pod-b a
    # whole device, pod-c another; by hand: pod-a gets nnq0's cores 0-2 (the
    # preferred table's "3 of all"), pod-b nnq3 (the only device offered
    # whole), pod-c nothing
    dm = DeviceManager({"neuron.example/core": core, "neuron.example/device": dev})
    pods = {}
    for pod, res, n, want in (("pod-a", "neuron.example/core", 3, ["nnq0-core0", "nnq0-core1", "nnq0-core2"]),
                              ("pod-b", "neuron.example/device", 1, ["nnq3"]),
                              ("pod-c", "neuron.example/device", 1, None)):
        ids, why = dm.admit(pod, res, n)
        say(f"  -> {pod}: {res}: {n} <- {ids if ids else 'refused: ' + why}")
        check(ids == want, f"{pod}: {want if want else 'refused'}")
        pods[pod] = ids or []

    def cores_of(i):
        dv, _, c = i.partition("-core")
        n = int(dv[3:])
        return {(n, int(c))} if c else {(n, k) for k in range(LAYOUT[n][1])}

    held = {}
    for pod, ids in pods.items():
        for i in ids:
            for k in cores_of(i):
                held.setdefault(k, []).append(pod)
    twice = {f"nnq{n}-core{c}": p for (n, c), p in sorted(held.items()) if len(p) > 1}
    say(f"  <- cores held: {len(held)}, by two pods: {twice if twice else 'none'}")
    check(not twice, "no core given to two pods")
    ids, why = dm.admit_ids("pod-d", "neuron.example/core", ["nnq0-core1"])
    say(f"  -> pod-d: neuron.example/core nnq0-core1 again <- {ids if ids else 'refused: ' + why}")
    check(ids is None and "pod-a" in why, "an ID already given is not given again")
    for what, fn, req in (
            ("Allocate nnq0 on the device resource (nnq0 is offered as cores)", dev.allocate,
             pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=["nnq0"])])),
            ("Allocate nnq3-core0 on the core resource (nnq3 is offered whole)", core.allocate,
             pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=["nnq3-core0"])])),
            ("Allocate nnq2-core3 for two containers in one request", core.allocate,
             pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=["nnq2-core3"]),
                                                    pb.ContainerAllocateRequest(devices_ids=["nnq2-core3"])]))):
        c, det = code_of(fn, req)
        say(f"  -> {what} <- {c.name}: {det[:100]}")
        check(c == grpc.StatusCode.INVALID_ARGUMENT, f"{what}: INVALID_ARGUMENT")

    say("== PreStartContainer")
    # core 1 of nnq0 still owned by PID 4242, which has exited (no /proc/4242):
    # the driver frees it 300 ms later, when the last holder of the file closes it
    write(f"{SYS}/class/nnq/nnq0/core_owners", "0 - -\n1 4242 python3\n2 - -\n3 - -\n")
    threading.Timer(0.3, lambda: write(f"{SYS}/class/nnq/nnq0/core_owners",
                                       "0 - -\n1 - -\n2 - -\n3 - -\n")).start()
    t0 = time.monotonic()
    c, det = code_of(core.prestart, pb.PreStartContainerRequest(devices_ids=["nnq0-core1"]))
    say(f"  -> nnq0-core1 held by exited PID 4242, freed after 300 ms <- {c.name} "
        f"[{(time.monotonic() - t0) * 1000:.0f} ms]")
    check(c == grpc.StatusCode.OK, "reclaimed once the driver frees it")
    # core 2 owned by a live PID 4343 (/proc/4343 exists): refused after the grace
    os.makedirs(f"{PROC}/4343")
    write(f"{SYS}/class/nnq/nnq0/core_owners", "0 - -\n1 - -\n2 4343 train.py\n3 - -\n")
    c, det = code_of(core.prestart, pb.PreStartContainerRequest(devices_ids=["nnq0-core2"]))
    say(f"  -> nnq0-core2 held by live PID 4343 <- {c.name}: {det}")
    check(c == grpc.StatusCode.FAILED_PRECONDITION and "4343" in det, "live owner refused, named")
    write(f"{SYS}/class/nnq/nnq0/core_owners", "0 - -\n1 - -\n2 - -\n3 - -\n")
    # a whole device gets the same check: nnq3 (offered whole) with its core 1
    # still owned by the live PID 4343 is refused, naming the core
    check(all(r.options.pre_start_required for r in regs.values()), "both resources ask for PreStartContainer")
    write(f"{SYS}/class/nnq/nnq3/core_owners", "0 - -\n1 4343 train.py\n")
    c, det = code_of(dev.prestart, pb.PreStartContainerRequest(devices_ids=["nnq3"]))
    say(f"  -> whole nnq3, its core 1 held by live PID 4343 <- {c.name}: {det}")
    check(c == grpc.StatusCode.FAILED_PRECONDITION and "nnq3-core1" in det and "4343" in det,
          "whole device with a held core refused, core and owner named")
    write(f"{SYS}/class/nnq/nnq3/core_owners", "0 - -\n1 - -\n")
    c, det = code_of(dev.prestart, pb.PreStartContainerRequest(devices_ids=["nnq3"]))
    say(f"  -> whole nnq3, all cores free <- {c.name}")
    check(c == grpc.StatusCode.OK, "whole device with free cores passes")

    say("== kubelet restart: kubelet.sock re-created, plugin sockets removed")
    kub.stop()
    for f in os.listdir(PLUGINS):
        os.unlink(os.path.join(PLUGINS, f))
    t0 = time.monotonic()
    kub = Kubelet(PLUGINS)
    regs = kub.take(2, 5)
    say(f"  <- Register again: {sorted(regs)} [{(time.monotonic() - t0) * 1000:.0f} ms]")
    check(set(regs) == {"neuron.example/core", "neuron.example/device"}, "both registered again")
    core = Plugin(PLUGINS, regs["neuron.example/core"].endpoint) if regs else core
    w = Watch(core)
    got = w.until(lambda h: True, 5)
    check(got is not None and len(got[1]) == 10, "ListAndWatch on the new socket")
    if got:
        say(f"  <- {summary(got[1])}")

    say("== hot-plug: nnq4 (NUMA 1, 2 cores) comes, then goes")
    sw = SpecWatch(core)
    check(sw.until(lambda h: True, 5) is not None, "a second ListAndWatch stream")
    t0 = time.monotonic()
    add_device(4, 1, 2)
    t = cdiw.until(CDI_CORE, cdi_spec("core", core_ids([0, 1, 2, 4])), t0)
    got = sw.until(lambda h: h.get("nnq4-core1") == "Healthy", 1.0)
    check(t is not None, f"{CDI_CORE} rewritten with nnq4's cores within 1 s")
    check(got is not None and len(got[1]) == 12, "ListAndWatch: 12 cores, nnq4's Healthy")
    if t and got:
        say(f"  <- {CDI_CORE}: 12 cores [{(t - t0) * 1000:.0f} ms]; ListAndWatch {summary(got[1])} "
            f"[{(got[0] - t0) * 1000:.0f} ms]")
        check(got[2][1] and json.loads(got[2][1]) == cdi_spec("core", core_ids([0, 1, 2, 4])),
              "the spec on disk as that answer arrived already names nnq4's cores")
    t0 = time.monotonic()
    os.unlink(f"{DEV}/nnq4")
    shutil.rmtree(f"{SYS}/class/nnq/nnq4")
    t = cdiw.until(CDI_CORE, spec_core, t0)
    got = sw.until(lambda h: h.get("nnq4-core0") == "Unhealthy", 1.0)
    check(t is not None, f"{CDI_CORE} rewritten without nnq4's cores within 1 s")
    if t and got:
        say(f"  <- {CDI_CORE}: 10 cores [{(t - t0) * 1000:.0f} ms]; ListAndWatch {summary(got[1])}")
    check(proc.poll() is None, "the plugin is still running")
finally:
    log.close()
    rc = kubelet.stop_plugin(proc, os.path.join(tmp, "plugin.log"))
    check(rc == 0, f"plugin exits 0 on SIGTERM (got {rc})")
    kub.stop()
    time.sleep(0.05)
    cdiw.stop = True

say("== CDI: every version the plugin wrote")
for t, name, text in cdiw.versions:
    if name == "other.vendor-gpu.json" or "0.4.0" in name:
        continue
    try:
        spec = json.loads(text)
        errs = cdi_schema.errors(spec, name)
    except ValueError as e:
        spec, errs = {}, [f"not JSON: {e}"]
    say(f"  {(t - t_start) * 1000:6.0f} ms  {name}: {len(spec.get('devices', []))} CDI devices: "
        f"{'valid' if not errs else '; '.join(errs)}")
    check(not errs, f"{name}: valid against the CDI schema and the CDI library's loading rules")
ours = [(n, json.loads(x)) for _, n, x in cdiw.versions if n in (CDI_CORE, CDI_DEVICE)]
want = [(CDI_CORE, spec_core), (CDI_DEVICE, spec_dev), (CDI_CORE, cdi_spec("core", core_ids([0, 2]))),
        (CDI_CORE, spec_core), (CDI_CORE, cdi_spec("core", core_ids([0, 1, 2, 4]))), (CDI_CORE, spec_core)]
check(sorted(ours[:2], key=str) == sorted(want[:2], key=str) and ours[2:] == want[2:],
      "the versions: both at start, then the core spec at nnq1's removal, its return, nnq4's plug and its "
      "removal; none at a health flip")
with open(os.path.join(tmp, "plugin.log")) as f:
    wrote = sum("CDI: wrote" in line for line in f)
check(wrote == len(ours), f"every spec the plugin wrote was seen ({wrote} written, {len(ours)} seen)")
check(not any(n.endswith((".json", ".yaml")) for n in cdiw.others),
      f"no temporary file a runtime would read (seen: {sorted(cdiw.others)})")
say(f"  <- after exit: {sorted(os.listdir(CDI))}")
check(sorted(os.listdir(CDI)) == ["other.vendor-gpu.json"], "our specs removed on exit, the other vendor's kept")
shutil.rmtree(tmp, ignore_errors=True)

say(f"fake kubelet: {'FAILED: ' + '; '.join(kubelet.failures) if kubelet.failures else 'all checks passed'}")
sys.exit(1 if kubelet.failures else 0)
